/**
 * The Bitcoin family's one follower of the node's mempool (families/utxo/mempoolFollower.ts), read by the
 * Esplora API and by the `watch_filters` subscription's pending matches, on a Bitcoin-family instance
 * (CHAIN=LTC, INDEXER=on) in front of a real regtest Litecoin Core, through a proxy that counts the node's
 * calls and fails some on demand (a fault a real node cannot make at will). The mempool: SPENDS transactions
 * signed here (test/support/rawTransactions.ts), each spending one output of a confirmed fan-out, so the
 * node's limit of 25 descendants is never near; A_TXS of them pay the address `a` (half at the highest fee
 * rates of the mempool, half at the lowest), some pay `u` and `v` (each with confirmed outputs too).
 * - While the reads of `a`'s transactions fail, every mempool read of the Esplora API is a 503 with
 *   Retry-After, never a partial 200; the failed reads are tried again with backoff; then every answer is
 *   whole, and the pending subscription gets `a`'s results, none "removed";
 * - each transaction is read from the node once (its entry and itself), for the Esplora API and the pending
 *   subscription alike, at most MAX_READS_IN_FLIGHT at once; never `getrawmempool true`;
 * - `GET /esplora/mempool` through mempool.js's getMempool is the node's mempool as electrs counts it
 *   (vsize ceil(weight / 4), the node's), from the view, with no node call per request;
 * - UTXO_MAX counts the mempool's outputs;
 * - MEMPOOL_MAX_MB: past it the lowest fee rates are left out (the backlog still counts them), and a
 *   stopped service's follower asks nothing more;
 * - failing mempool reads are logged at most once a minute each kind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import mempoolJS from "@mempool/mempool.js";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { type NodeProxy, startProxy } from "./support/proxy";
import { type Coin, type Key, keyOf, signedTransaction } from "./support/rawTransactions";
import { post, startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const KEY = "mempool-test-key";
const UTXO_MAX = 20;
const ENV = {
  CHAIN: "LTC",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  API_KEYS: KEY,
  UTXO_MAX: String(UTXO_MAX),
  LOG_LEVEL: "warn",
};
/** Mempool transactions, and those of them paying `a`. */
const SPENDS = 2_100;
const A_TXS = 50;
/** `u` and `v` hold this many confirmed outputs; the mempool pays `u` one more than UTXO_MAX allows. */
const CONFIRMED_EACH = 15;
const U_PENDING = UTXO_MAX - CONFIRMED_EACH + 1;
const V_PENDING = UTXO_MAX - CONFIRMED_EACH;
/** Values in satoshis. */
const FAN_VALUE = 2_000_000n;
const PAYMENT = 100_000n;
const HELD = 1_000_000n;
/** Fees: `a`'s first half above every other transaction's, its second half below; the rest between. */
const feeOf = (i: number) =>
  i < A_TXS / 2 ? 100_000n + BigInt(i) : i < A_TXS ? 3_000n + BigInt(i) : 10_000n + BigInt(i);
/** The node's clock (setmocktime): held in March 2020, so that MWEB never activates (bench/utxoBulkChain.ts). */
const CLOCK_S = Date.UTC(2020, 2, 1) / 1000;
/** The follower's MAX_READS_IN_FLIGHT. */
const MAX_READS_IN_FLIGHT = 64;
/** Time for a request written before a stop to reach the proxy on a loaded machine. */
const IN_TRANSIT_MS = 300;
/** How long a stretch of the test may take at most. */
const STRETCH_MS = 60_000;

let node: LitecoinNode;
let proxy: NodeProxy;
let service: TestService;
const logs: { msg: string }[] = [];
let socket: TestSocket;
let pending: string;
let filterId: string;

const keys = { funder: keyOf("mempool-funder"), spender: keyOf("mempool-spender") };
const addressKeys = { a: keyOf("mempool-a"), u: keyOf("mempool-u"), v: keyOf("mempool-v") };
const addresses = { a: "", u: "", v: "", spender: "" };
let fanTxid = "";
/** The mempool transactions made: txid, hex, its fee and whom it pays. */
interface Made {
  txid: string;
  hex: string;
  fee: bigint;
  payee: "a" | "u" | "v" | "other";
}
const made: Made[] = [];
/** The txids of `a`'s transactions. */
let aTxids: Set<string>;
/** When each of `a`'s reads reached the proxy, and whether they fail now. */
const aAttempts = new Map<string, number[]>();
let aReadsFail = true;
/** When they stopped failing. */
let releasedAt = 0;

const esplora = async (path: string, base = service.url) => {
  const response = await fetch(`${base}/esplora${path}`, { headers: { "x-api-key": KEY } });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    retryAfter: response.headers.get("retry-after"),
    text: await response.text(),
  };
};
const rpc = <T = any>(method: string, params: unknown[] = []) => node.rpc<T>(method, params);
const addressOf = async (key: Key) => {
  const decoded = await rpc("decodescript", [key.script.toString("hex")]);
  return (decoded.address ?? decoded.addresses?.[0] ?? decoded.segwit?.address) as string;
};
const byTxid = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The confirmed fan-out: SPENDS outputs to the spender, CONFIRMED_EACH each to `u` and `v`. */
async function fanOut() {
  const descriptor = `raw(${keys.funder.script.toString("hex")})`;
  await rpc("setmocktime", [CLOCK_S]);
  await rpc("generatetodescriptor", [101, descriptor]);
  const coinbase = (await rpc("getblock", [await rpc("getblockhash", [1]), 2])).tx[0];
  const funding: Coin = {
    txid: Buffer.from(coinbase.txid, "hex").reverse(),
    vout: 0,
    value: 5_000_000_000n,
    key: keys.funder,
  };
  const outputs = [
    ...Array.from({ length: SPENDS }, () => ({ script: keys.spender.script, value: FAN_VALUE })),
    ...Array.from({ length: CONFIRMED_EACH }, () => ({ script: addressKeys.u.script, value: HELD })),
    ...Array.from({ length: CONFIRMED_EACH }, () => ({ script: addressKeys.v.script, value: HELD })),
  ];
  const spent = outputs.reduce((s, o) => s + o.value, 0n);
  const fan = signedTransaction(
    [funding],
    [...outputs, { script: keys.funder.script, value: funding.value - spent - 100_000n }],
  );
  await rpc("setmocktime", [CLOCK_S + 60]);
  await rpc("generateblock", [descriptor, [fan.hex]]);
  fanTxid = fan.id;
  return fan;
}

/** The mempool's transactions, signed (not sent): each spends output i of the fan-out. */
function spends(fan: { txid: Buffer }) {
  const other = keyOf("mempool-other");
  for (let i = 0; i < SPENDS; i++) {
    const payee =
      i < A_TXS ? "a" : i < A_TXS + U_PENDING ? "u" : i < A_TXS + U_PENDING + V_PENDING ? "v" : "other";
    const to = payee === "other" ? other : addressKeys[payee];
    const paid = payee === "u" || payee === "v" ? HELD : PAYMENT;
    const fee = feeOf(i);
    const tx = signedTransaction(
      [{ txid: fan.txid, vout: i, value: FAN_VALUE, key: keys.spender }],
      [
        { script: to.script, value: paid },
        { script: keys.spender.script, value: FAN_VALUE - paid - fee },
      ],
    );
    made.push({ txid: tx.id, hex: tx.hex, fee, payee });
  }
}

/** Sends the transactions to the node, a few hundred a batch. */
async function send(txs: readonly Made[]) {
  for (let i = 0; i < txs.length; i += 300) {
    const batch = txs.slice(i, i + 300).map((t, n) => ({
      jsonrpc: "1.0",
      id: n,
      method: "sendrawtransaction",
      params: [t.hex],
    }));
    const answers = JSON.parse((await node.post(JSON.stringify(batch))).text) as { error: unknown }[];
    expect(answers.filter((a) => a.error !== null)).toEqual([]);
  }
}

beforeAll(async () => {
  node = await startLitecoind();
  const fan = await fanOut();
  for (const name of ["a", "u", "v"] as const) addresses[name] = await addressOf(addressKeys[name]);
  addresses.spender = await addressOf(keys.spender);
  spends(fan);
  aTxids = new Set(made.filter((m) => m.payee === "a").map((m) => m.txid));
  proxy = startProxy(node.url);
  proxy.fail = (call) => {
    if (call?.method !== "getrawtransaction" || !aTxids.has(call.params?.[0])) return undefined;
    aAttempts.set(call.params[0], [...(aAttempts.get(call.params[0]) ?? []), performance.now()]);
    return aReadsFail ? { code: -1, message: "injected: the read failed" } : undefined;
  };
  service = await startTestService({
    upstreamUrls: [proxy.url],
    env: ENV,
    logWrite: (line) => logs.push(JSON.parse(line)),
  });
  const height = String(await rpc<number>("getblockcount"));
  await until(
    "the index to reach the node's tip",
    async () => ((await esplora("/blocks/tip/height")).text === height ? true : undefined),
    STRETCH_MS,
  );
  // A watch filter on `a`, and a pending subscription: it reads the mempool through the same follower.
  const added = await post(
    `${service.url}/watch_filters/add`,
    { address: addresses.a },
    {
      headers: { "x-api-key": KEY },
    },
  );
  expect(added.status).toBe(200);
  filterId = added.json.filter_id;
  socket = await connectSocket(wsUrl(service.url, KEY));
  const answer = await socket.request("eth_subscribe", ["watch_filters", { pending: true }]);
  expect(answer.error).toBeUndefined();
  pending = answer.result;
}, 180_000);

afterAll(async () => {
  socket?.close();
  await service?.stop();
});

/** What each mempool read of the Esplora API must answer once the view holds the whole mempool. */
function whole() {
  const ofA = made.filter((m) => m.payee === "a");
  const v = made.filter((m) => m.payee === "v");
  const stats = (funded: number, sum: bigint, txs: number) => ({
    funded_txo_count: funded,
    funded_txo_sum: Number(sum),
    spent_txo_count: 0,
    spent_txo_sum: 0,
    tx_count: txs,
  });
  const zero = stats(0, 0n, 0);
  return {
    // Newest first: the node's clock stood still, so every entry time is the same; then by txid.
    aTxids: ofA.map((m) => m.txid).sort(byTxid),
    aStats: {
      address: addresses.a,
      chain_stats: zero,
      mempool_stats: stats(A_TXS, PAYMENT * BigInt(A_TXS), A_TXS),
    },
    firstSpend: { spent: true, txid: made[0]!.txid, vin: 0, status: { confirmed: false } },
    vUtxos: [
      ...Array.from({ length: CONFIRMED_EACH }, (_, n) => `${fanTxid}:${SPENDS + CONFIRMED_EACH + n}:true`),
      ...v.map((m) => `${m.txid}:0:false`),
    ].sort(),
  };
}

describe("while the view catches up", () => {
  test(
    "reads of a's transactions failing: every mempool read is a 503 with Retry-After, then whole; retried with backoff",
    async () => {
      const expected = whole();
      const reads = {
        txs: `/address/${addresses.a}/txs/mempool`,
        stats: `/address/${addresses.a}`,
        spend: `/tx/${fanTxid}/outspend/0`,
        utxos: `/address/${addresses.v}/utxo`,
      };
      /** One round of the reads: "behind" (all 503), "whole" (all exact), or a failed expectation. */
      async function round(): Promise<"behind" | "whole" | "mixed"> {
        const answers = await Promise.all(Object.values(reads).map((path) => esplora(path)));
        for (const a of answers) {
          if (a.status === 503) {
            expect({ type: a.type, retryAfter: a.retryAfter }).toEqual({
              type: "text/plain",
              retryAfter: "1",
            });
            expect(a.text).toMatch(
              /^\d+ of the \d+ transactions of the node's mempool are still to be read; retry shortly$/,
            );
            continue;
          }
          expect(a.status).toBe(200);
        }
        const [txs, stats, spend, utxos] = answers.map((a) =>
          a.status === 200 ? JSON.parse(a.text) : undefined,
        );
        if (txs) expect(txs.map((t: { txid: string }) => t.txid)).toEqual(expected.aTxids);
        if (stats) expect(stats).toEqual(expected.aStats);
        if (spend) expect(spend).toEqual(expected.firstSpend);
        if (utxos) {
          const seen = utxos.map((u: any) => `${u.txid}:${u.vout}:${u.status.confirmed}`).sort();
          expect(seen).toEqual(expected.vUtxos);
        }
        const behind = answers.filter((a) => a.status === 503).length;
        return behind === answers.length ? "behind" : behind === 0 ? "whole" : "mixed";
      }
      await send(made);
      // The follower's next listing holds them all (`a`'s were sent first): from then on, the reads wait for
      // `a`'s.
      await until(
        "the view to fall behind",
        async () => {
          const backlog = await esplora("/mempool");
          const a = await esplora(reads.txs);
          if (a.status === 503) return true;
          // Before that listing, the view holds the mempool as the one before listed it (empty): a view that
          // holds any of the new transactions holds every one of `a`'s, never a part of them.
          if (backlog.status === 200 && JSON.parse(backlog.text).count > 0) {
            expect(JSON.parse(a.text).map((t: { txid: string }) => t.txid)).toEqual(expected.aTxids);
          }
          return undefined;
        },
        STRETCH_MS,
      );
      let behindRounds = 0;
      for (const end = performance.now() + 3_000; performance.now() < end; ) {
        // A part of the mempool is never answered as the whole, even for one of the reads.
        expect(await round()).toBe("behind");
        behindRounds++;
        await Bun.sleep(100);
      }
      aReadsFail = false;
      releasedAt = performance.now();
      const faultMs = releasedAt - Math.min(...[...aAttempts.values()].map((times) => times[0]!));
      // A round may straddle the pass that completes the view (its four reads are requests of their own, and
      // the pass lands between two of them): each answer is still a 503 or the whole, as round() checks.
      await until(
        "the reads to be whole",
        async () => ((await round()) === "whole" ? true : undefined),
        STRETCH_MS,
      );
      expect(behindRounds).toBeGreaterThan(5);
      // Each of a's reads: tried again with backoff (a second at least, doubling), never once a request.
      for (const txid of aTxids) {
        const times = aAttempts.get(txid)!;
        const gaps = times.slice(1).map((t, i) => t - times[i]!);
        expect(gaps.every((g) => g >= 900)).toBe(true);
        expect(times.length).toBeGreaterThanOrEqual(2);
        expect(times.length).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(1 + faultMs / 1_000)));
      }
      // Never taken as gone: their pending results come as they are read, none "removed".
      const results = await socket.waitFor(pending, A_TXS, STRETCH_MS);
      const spender = addresses.spender;
      const expectedResults = made
        .filter((m) => m.payee === "a")
        .map((m) => ({
          from_address: [spender],
          to_address: [addresses.a, spender],
          contract_address: "",
          type: "trx",
          value: { value: Number(PAYMENT), decimals: 8 },
          currency: "LTC",
          transaction: { hash: m.txid, fee: { value: Number(m.fee), decimals: 8 }, fee_symbol: "LTC" },
          filter_id: filterId,
          filter_target: { address: addresses.a, direction: "deposit" },
          block: null,
          trx_success: true,
          pending: true,
        }));
      const byHash = (x: any, y: any) => byTxid(x.transaction.hash, y.transaction.hash);
      expect([...results].sort(byHash)).toEqual(expectedResults.sort(byHash));
    },
    STRETCH_MS * 2,
  );

  test("each transaction read from the node once for the API and the pending feed, at most MAX_READS_IN_FLIGHT at once, never getrawmempool true", async () => {
    const reads = (method: string) => {
      const count = new Map<string, number>();
      for (const c of proxy.callsOf(method))
        count.set(c.params[0] as string, (count.get(c.params[0] as string) ?? 0) + 1);
      return count;
    };
    const [entries, txs] = [reads("getmempoolentry"), reads("getrawtransaction")];
    for (const m of made) {
      if (aTxids.has(m.txid)) {
        // Read again only while its reads failed: the one that succeeded is the last.
        expect(aAttempts.get(m.txid)!.filter((t) => t > releasedAt).length).toBe(1);
        continue;
      }
      expect([m.txid, entries.get(m.txid), txs.get(m.txid)]).toEqual([m.txid, 1, 1]);
    }
    const peak = proxy.peakInFlight.get("getrawtransaction")!;
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(MAX_READS_IN_FLIGHT);
    expect(proxy.callsOf("getrawmempool").filter((c) => c.params?.[0] === true)).toEqual([]);
    // The view's answers are the node's own transactions.
    for (const txid of [...aTxids].slice(0, 5)) {
      const page = JSON.parse((await esplora(`/address/${addresses.a}/txs/mempool`)).text);
      expect(page.find((t: { txid: string }) => t.txid === txid)).toEqual(
        JSON.parse((await esplora(`/tx/${txid}`)).text),
      );
    }
  });
});

/** electrs' backlog (new_index/mempool.rs BacklogStats, util/fees.rs), written here from the node's entries. */
function electrsBacklog(entries: { weight: number; fee: number }[]) {
  const rows = entries
    .map((e) => ({ vsize: Math.ceil(e.weight / 4), fee: e.fee, rate: e.fee / (e.weight / 4) }))
    .sort((x, y) => x.rate - y.rate)
    .reverse();
  const histogram: [number, number][] = [];
  let bin = 0;
  let last = 0;
  for (const r of rows) {
    if (bin > 50_000 && last !== r.rate) {
      histogram.push([last, bin]);
      bin = 0;
    }
    last = r.rate;
    bin += r.vsize;
  }
  if (bin > 0) histogram.push([last, bin]);
  return {
    count: rows.length,
    vsize: rows.reduce((s, r) => s + r.vsize, 0),
    total_fee: rows.reduce((s, r) => s + r.fee, 0),
    fee_histogram: histogram,
  };
}

/** The node's mempool: each entry's weight, vsize and fee (in satoshis, exact: checked against what was made). */
async function nodeMempool() {
  const raw = await rpc<Record<string, { weight: number; vsize: number; fees: { base: number } }>>(
    "getrawmempool",
    [true],
  );
  const fees = new Map(made.map((m) => [m.txid, m.fee]));
  return Object.entries(raw).map(([txid, e]) => {
    expect(Math.round(e.fees.base * 1e8)).toBe(Number(fees.get(txid)));
    return { weight: e.weight, vsize: e.vsize, fee: Number(fees.get(txid)) };
  });
}

describe("GET /esplora/mempool", () => {
  test("mempool.js getMempool: the node's count, vsize and fees, electrs' histogram; no node call per request", async () => {
    const entries = await nodeMempool();
    expect(entries.length).toBe(SPENDS);
    const expected = electrsBacklog(entries);
    // ceil(weight / 4) is the node's own vsize.
    expect(expected.vsize).toBe(entries.reduce((s, e) => s + e.vsize, 0));
    const {
      bitcoin: { mempool },
    } = mempoolJS({
      hostname: "127.0.0.1",
      protocol: "http",
      config: { baseURL: `${service.url}/esplora/key/${KEY}/` },
    });
    const listings = proxy.callsOf("getrawmempool").length;
    const started = performance.now();
    for (let i = 0; i < 20; i++) expect((await mempool.getMempool()) as unknown).toEqual(expected);
    // The follower lists the mempool once a second, whatever the requests.
    const seconds = (performance.now() - started) / 1_000;
    expect(proxy.callsOf("getrawmempool").length - listings).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(proxy.callsOf("getrawmempool").filter((c) => c.params?.[0] === true)).toEqual([]);
  });
});

describe("UTXO_MAX", () => {
  test("counts the mempool's outputs: 15 confirmed and 6 pending is past 20; 15 and 5 is the whole list", async () => {
    expect(await esplora(`/address/${addresses.u}/utxo`)).toMatchObject({
      status: 400,
      type: "text/plain",
      text: `Too many unspent transaction outputs (>${UTXO_MAX}). Contact support to raise limits.`,
    });
    const v = JSON.parse((await esplora(`/address/${addresses.v}/utxo`)).text);
    expect(v.map((u: any) => `${u.txid}:${u.vout}:${u.status.confirmed}:${u.value}`).sort()).toEqual(
      whole().vUtxos.map((u) => `${u}:${HELD}`),
    );
  });
});

describe("MEMPOOL_MAX_MB", () => {
  test(
    "past it, the lowest fee rates are left out and still counted; a stopped service asks the node nothing more",
    async () => {
      const entries = await nodeMempool();
      const second = startProxy(node.url);
      const bounded = await startTestService({
        upstreamUrls: [second.url],
        databaseUrl: service.databaseUrl,
        env: { ...ENV, INDEXER: "off", MEMPOOL_MAX_MB: "1" },
      });
      try {
        const backlog = await until(
          "the bounded view to catch up",
          async () => {
            const a = await esplora("/mempool", bounded.url);
            return a.status === 200 ? JSON.parse(a.text) : undefined;
          },
          STRETCH_MS,
        );
        expect(backlog).toEqual(electrsBacklog(entries));
        // a's first half pays the highest fee rates of the mempool: kept; its second half the lowest: left out.
        const high = made.slice(0, A_TXS / 2).map((m) => m.txid);
        const txs = JSON.parse((await esplora(`/address/${addresses.a}/txs/mempool`, bounded.url)).text);
        expect(txs.map((t: { txid: string }) => t.txid)).toEqual(high.sort(byTxid));
        const stats = JSON.parse((await esplora(`/address/${addresses.a}`, bounded.url)).text);
        expect(stats.mempool_stats.tx_count).toBe(A_TXS / 2);
      } finally {
        await bounded.stop();
      }
      // A request written before the stop settled may reach the proxy (on this event loop) a moment after
      // it: the count starts once that moment has passed, and nothing may come in the next 1.5 s.
      await Bun.sleep(IN_TRANSIT_MS);
      const calls = second.calls.length;
      await Bun.sleep(1_500);
      expect(second.calls.slice(calls).map((c) => c.method)).toEqual([]);
    },
    STRETCH_MS * 2,
  );
});

describe("the log", () => {
  test("a failing mempool read is logged at most once a minute each kind", async () => {
    proxy.fail = (call) =>
      call?.method === "getrawmempool" ? { code: -1, message: "injected: the listing failed" } : undefined;
    const statuses = new Set<number>();
    try {
      for (const end = performance.now() + 3_000; performance.now() < end; ) {
        statuses.add((await esplora(`/address/${addresses.a}/txs/mempool`)).status);
        await Bun.sleep(200);
      }
    } finally {
      proxy.fail = undefined;
    }
    const mempoolWarnings = logs.filter((l) => /mempool/.test(l.msg)).map((l) => l.msg);
    expect(mempoolWarnings.sort()).toEqual([
      "a mempool transaction could not be read; it is read again later",
      "the node's mempool could not be listed; listing it again shortly",
    ]);
    // Meanwhile the view answered what it last read: the node's listing a few seconds old.
    expect([...statuses]).toEqual([200]);
  });
});
