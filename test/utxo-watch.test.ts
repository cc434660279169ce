/**
 * Watch filters on a Bitcoin-family instance (CHAIN=LTC, INDEXER=on, CONFIRMATIONS=2), in front of a real
 * regtest Litecoin Core holding the shared test chain (test/support/utxoChain.ts), with PostgreSQL:
 * - addresses: the codec of the chain's network against the node's own `validateaddress` (valid or not,
 *   and its canonical form), every kind of address the node makes; filters on legacy, p2sh-segwit and bech32
 *   addresses; another chain's addresses refused (422 over REST, -32602 over JSON-RPC) naming the field and
 *   the chain; `contract_address` refused naming the chain;
 * - every result of check and check_v2 of every processed block compared exactly with what `truth`
 *   computes by the net rule (deposits, withdrawals including their fee, change back to the sender, a
 *   consolidation, a coinbase to a watched address, an OP_RETURN output, a transaction that pays an address
 *   back exactly what it spends); `lastBlockNumber` CONFIRMATIONS deep;
 * - the `watch_filters` subscription with `"pending": true` over a real WebSocket: a payment and its child
 *   as they enter the mempool, then their confirmed results as the block's; a payment whose input a mined
 *   block spends otherwise (a double spend), and one the mempool replaces (`-mempoolreplacement`), each
 *   notified again with `"removed": true`; the keys' results kept apart; `pending` refused on an EVM chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { ChainInfo } from "../src/blockchain";
import { hashKey } from "../src/db/apiKeys";
import { createBlockQueries } from "../src/db/blockQueries";
import { base58checkDecode, base58checkEncode } from "../src/families/utxo/addressEncodings";
import { utxoAddressesFor } from "../src/families/utxo/addresses";
import { createUtxoWatchMatcher } from "../src/families/utxo/watchMatcher";
import { toJson } from "../src/json";
import { startLitecoind } from "./support/litecoind";
import { expectResultsOfKeysAsEach } from "./support/resultsOfKeys";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";
import {
  buildUtxoChain,
  coins,
  filterBlockOf,
  filterResultOf,
  type Truth,
  type TruthBlock,
  type TruthTransaction,
  type UtxoChain,
} from "./support/utxoChain";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const KEY_A = "utxo-watch-a";
const KEY_B = "utxo-watch-b";
const DEPTH = 2;
const ENV = {
  CHAIN: "LTC",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  CONFIRMATIONS: String(DEPTH),
  API_KEYS: `${KEY_A},${KEY_B}`,
};
const LTC_REGTEST: ChainInfo = {
  chainId: 2n,
  blockchain: "LTC",
  nativeSymbol: "LTC",
  nativeDecimals: 8,
  confirmations: DEPTH,
  blockTimeMs: 1_000,
  devChain: true,
  network: "regtest",
};
const codec = utxoAddressesFor(LTC_REGTEST);
/** What a refused address's 422 says it should be. */
const SHOULD_BE =
  "Input should be an address of Litecoin's regtest: base58check P2PKH (version 111) or P2SH (version 58 or 196), or bech32/bech32m with the prefix rltc";
/** Real addresses of other networks: Litecoin's main chain (a BIP-44 test vector), Bitcoin's main chain. */
const LTC_MAINNET = "LTVdcw8fdTTK4TcebTZ4jiiCbvTXaRxZNh";
const BTC_MAINNET = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa";
/** How long a pending or removed notification may take: a mempool read a second, a removal's grace. */
const NOTIFY_MS = 15_000;

let chain: UtxoChain;
let service: TestService;
let truth: Truth;
/** A transaction that pays `external` back exactly what it spends from it (the fee from another input). */
let evenTxid: string;
/** The filters of each key, by address kind. */
const filters: Record<string, { id: string; address: string }[]> = { [KEY_A]: [], [KEY_B]: [] };

const as = (key: string) => ({ headers: { "x-api-key": key } });
const watch = (method: string, path: string, body: unknown, key: string) =>
  post(`${service.url}/watch_filters/${path}`, body, { ...as(key), method });
const lastBlockNumber = async () =>
  (await watch("GET", "lastBlockNumber", undefined, KEY_A)).json.block_number as number;

/** Every result of a block for a key: check's (or check_v2's) pages, by offset. */
async function checkAll(key: string, block: number, path = "check"): Promise<unknown[]> {
  const all: unknown[] = [];
  for (let offset = 0; ; offset += 1_000) {
    const answer = await watch("POST", path, { block_number: block, offset }, key);
    expect(answer.status).toBe(200);
    all.push(...answer.json.filters);
    if (answer.json.filters.length < 1_000) return all;
  }
}

// ---------------------------------------------------------------------------------------------------------
// What the results must be, from the truth (the node's answers), by the net rule

/** One transaction's results for a key's filters (by filter id), with `block` as given. */
function expectedOf(tx: TruthTransaction, key: string, block: unknown) {
  const sorted = [...filters[key]!].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return sorted.flatMap((f) => filterResultOf(tx, f, block) ?? []);
}

function expectedBlock(b: TruthBlock, key: string) {
  const block = filterBlockOf(b);
  return b.transactions.flatMap((tx) => expectedOf(tx, key, block));
}

// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  // Replacement on: a payment the mempool replaces is one way a transaction leaves it unmined.
  chain = await buildUtxoChain(await startLitecoind({ args: ["-mempoolreplacement=1"] }));
  const { addresses } = chain;
  // `external` gets back exactly what it spends; the fee comes from a coin of the miner.
  const own = await chain.outputOf(chain.txs.opReturn, addresses.external);
  const coin = await chain.minerCoin();
  evenTxid = await chain.spend(
    [own, coin],
    [
      { address: addresses.external, value: own.value },
      { address: addresses.miner, value: coin.value - 43_000n },
    ],
  );
  await chain.mineWith([evenTxid]);
  // Every block of the build CONFIRMATIONS deep.
  for (let i = 0; i < DEPTH; i++) await chain.mineWith([]);
  truth = await chain.truth();
  service = await startTestService({ upstreamUrls: [chain.node.url], env: ENV });
  for (const [kind, address] of Object.entries(addresses)) {
    if (kind === "miner") continue;
    const added = await watch("POST", "add", { address }, KEY_A);
    expect(added.status).toBe(200);
    filters[KEY_A]!.push({ id: added.json.filter_id, address });
  }
  // A second filter on one address (with_approval: nothing to approve here) gives a second result.
  const second = await watch("POST", "add", { address: addresses.legacy, with_approval: true }, KEY_A);
  filters[KEY_A]!.push({ id: second.json.filter_id, address: addresses.legacy });
  const b = await watch("POST", "add", { address: addresses.bech32 }, KEY_B);
  filters[KEY_B]!.push({ id: b.json.filter_id, address: addresses.bech32 });
  await until(
    "the index to process the chain",
    async () => ((await lastBlockNumber()) === truth.tip - DEPTH ? true : undefined),
    120_000,
  );
}, 400_000);

afterAll(async () => {
  await service?.stop();
});

describe("addresses of the chain", () => {
  test("the codec agrees with the node's validateaddress on every kind, and on other networks' addresses", async () => {
    const { addresses, node } = chain;
    const kinds = await Promise.all(
      ["legacy", "p2sh-segwit", "bech32"].map((t) => node.rpc<string>("getnewaddress", ["", t])),
    );
    const p2sh = base58checkDecode(addresses.p2sh)!;
    const texts = [
      ...Object.values(addresses),
      ...kinds,
      addresses.bech32.toUpperCase(),
      addresses.bech32[0]!.toUpperCase() + addresses.bech32.slice(1),
      // The same script as `p2sh` in Bitcoin's P2SH version, which Litecoin reads too.
      base58checkEncode(196, p2sh.payload),
      base58checkEncode(5, p2sh.payload),
      `${addresses.legacy.slice(0, -1)}${addresses.legacy.endsWith("1") ? "2" : "1"}`,
      LTC_MAINNET,
      BTC_MAINNET,
      "bcrt1q9cp8am4j95xlzpf5ccrzzwef49xtccm57a3lph",
      "tltc1qu78xur5xnq6fjy83amy0qcjfau8m367defyhms",
      // Witness version 1 (bech32m) and version 0 spelt with bech32m's checksum.
      "rltc1pqurswpc8qurswpc8qurswpc8qurswpc8qurswpc8qurswpc8qursz7c3hy",
      "rltc1q9cp8am4j95xlzpf5ccrzzwef49xtccm5ef8cc9",
      "",
    ];
    for (const text of texts) {
      const answer = await node.rpc<{ isvalid: boolean; address?: string }>("validateaddress", [text]);
      expect({ text, ours: codec.canonical(text) }).toEqual({
        text,
        ours: answer.isvalid ? answer.address : undefined,
      });
    }
    for (const a of [...Object.values(addresses), ...kinds]) expect(codec.canonical(a)).toBe(a);
  });

  test("filters: one per address whatever its spelling; another chain's address or a contract refused", async () => {
    const { addresses } = chain;
    const bech32 = filters[KEY_A]!.find((f) => f.address === addresses.bech32)!;
    // The same address in capitals, and p2sh in Bitcoin's version: the same filters.
    expect((await watch("POST", "add", { address: addresses.bech32.toUpperCase() }, KEY_A)).json).toEqual({
      filter_id: bech32.id,
    });
    const older = base58checkEncode(196, base58checkDecode(addresses.p2sh)!.payload);
    const p2sh = filters[KEY_A]!.find((f) => f.address === addresses.p2sh)!;
    expect((await watch("POST", "add", { address: older }, KEY_A)).json).toEqual({ filter_id: p2sh.id });
    const info = await watch("POST", "info", { address: older }, KEY_A);
    expect(info.json.filters.map((f: any) => [f.address, f.contract_address, f.blockchain])).toEqual([
      [addresses.p2sh, "", "LTC"],
    ]);
    // Case is meaning in base58: another case is another text, no address.
    const legacyCase = addresses.legacy.replace(/[a-z]/, (c) => c.toUpperCase());
    for (const address of [
      LTC_MAINNET,
      BTC_MAINNET,
      "bcrt1q9cp8am4j95xlzpf5ccrzzwef49xtccm57a3lph",
      legacyCase,
    ]) {
      for (const path of ["add", "info"]) {
        const refused = await watch("POST", path, { address }, KEY_A);
        expect({ address, status: refused.status, body: refused.json }).toEqual({
          address,
          status: 422,
          body: { detail: [{ loc: ["body", "address"], msg: SHOULD_BE, type: "string_pattern_mismatch" }] },
        });
      }
    }
    const contract = await watch(
      "POST",
      "add",
      { address: addresses.legacy, contract_address: addresses.p2sh },
      KEY_A,
    );
    expect({ status: contract.status, body: contract.json }).toEqual({
      status: 422,
      body: {
        detail: [
          {
            loc: ["body", "contract_address"],
            msg: "Input should be null: LTC has no token contracts, a filter follows the coin",
            type: "none_required",
          },
        ],
      },
    });
    // JSON-RPC: -32602, naming the chain's addresses.
    const rpc = await post(
      `${service.url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 7, method: "watch_getTransfersByAddress", params: [{ addresses: LTC_MAINNET }] },
      as(KEY_A),
    );
    expect(rpc.json).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32602, message: `invalid params: params[0].addresses (query): ${SHOULD_BE}` },
    });
  });
});

describe("check and check_v2", () => {
  test("every result of every processed block is the net rule's, exactly, for each key", async () => {
    const last = await lastBlockNumber();
    expect(last).toBe(truth.tip - DEPTH);
    let results = 0;
    for (const b of truth.blocks.filter((x) => x.height <= last)) {
      for (const key of [KEY_A, KEY_B]) {
        const expected = expectedBlock(b, key);
        expect({ block: b.height, key, results: await checkAll(key, b.height) }).toEqual({
          block: b.height,
          key,
          results: expected,
        });
        expect(await checkAll(key, b.height, "check_v2")).toEqual(expected);
        results += expected.length;
      }
    }
    expect(results).toBeGreaterThan(30);
  }, 120_000);

  test("the chain's cases: deposit, withdrawal with its fee, change, consolidation, coinbase, OP_RETURN, net 0", async () => {
    const { txs, addresses } = chain;
    const resultOf = async (txid: string, address: string) => {
      const tx = truth.transactions.get(txid)!;
      const all = await checkAll(KEY_A, tx.height!);
      return all.filter(
        (r: any) => r.transaction.hash === txid && r.filter_target.address === address,
      ) as any[];
    };
    const brief = (r: any) => [r.filter_target.direction, r.value.value, r.transaction.fee.value];
    const fundFee = Number(truth.transactions.get(txs.fund)!.fee);
    expect((await resultOf(txs.fund, addresses.bech32)).map(brief)).toEqual([
      ["deposit", 1_050_000_000, fundFee],
    ]);
    // Change back to the sender: p2sh paid 4 LTC and the fee.
    expect((await resultOf(txs.change, addresses.p2sh)).map(brief)).toEqual([
      ["withdrawal", 400_045_500, 45_500],
    ]);
    // Two inputs of two addresses: each loses its input; the fee is in what left them.
    const multi = truth.transactions.get(txs.multiFrom)!;
    expect((await resultOf(txs.multiFrom, addresses.p2sh)).map(brief)).toEqual([
      ["withdrawal", Number(multi.inputs[1]!.value), 61_900],
    ]);
    // A consolidation loses the fee only; two filters on legacy: two results.
    expect((await resultOf(txs.consolidation, addresses.legacy)).map(brief)).toEqual([
      ["withdrawal", 52_100, 52_100],
      ["withdrawal", 52_100, 52_100],
    ]);
    const coinbase = await resultOf(txs.coinbase, addresses.coinbase);
    expect(coinbase.map((r) => [r.filter_target.direction, r.from_address, r.transaction.fee.value])).toEqual(
      [["deposit", [], 0]],
    );
    // The OP_RETURN output pays no address: not among to_address.
    expect((await resultOf(txs.opReturn, addresses.external))[0].to_address).toEqual([
      addresses.legacy,
      addresses.external,
      addresses.bech32,
    ]);
    expect((await resultOf(evenTxid, addresses.external)).map(brief)).toEqual([["unknown", 0, 43_000]]);
  });

  test("lastBlockNumber is CONFIRMATIONS below the head; a block above it is not processed yet", async () => {
    const last = await lastBlockNumber();
    const tip = await chain.node.rpc<number>("getblockcount");
    expect(last).toBe(tip - DEPTH);
    const above = await watch("POST", "check", { block_number: last + 1 }, KEY_A);
    expect({ status: above.status, body: above.json }).toEqual({
      status: 404,
      body: { detail: `block ${last + 1} is not processed yet; the last processed block is ${last}` },
    });
  });
});

describe("every key's results of a block at once (webhooks' producer)", () => {
  test("resultsOfKeys gives each key exactly results(key) and the net rule's, on every processed block; a key with none is absent", async () => {
    const sql = postgres(service.databaseUrl, { max: 2 });
    try {
      // Open mode's key (stored empty): a filter of its own on the legacy address.
      await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
        values ('\\x'::bytea, convert_to(${chain.addresses.legacy}, 'UTF8'), null, false)`;
      // The family reads its index only (no node call): no engine is given.
      const matcher = createUtxoWatchMatcher({
        sql,
        guard: (q) => q,
        engine: undefined as never,
        chain: LTC_REGTEST,
      });
      const blocks = createBlockQueries(sql);
      const [a, b, none] = [KEY_A, KEY_B, "utxo-watch-none"].map(hashKey);
      const keys = [a!, b!, none!, null];
      const last = await lastBlockNumber();
      let open = 0;
      for (const t of truth.blocks.filter((x) => x.height <= last)) {
        const block = { number: BigInt(t.height), ...(await blocks.block(BigInt(t.height)))! };
        for (const version of ["v1", "v2"] as const) {
          const { all } = await expectResultsOfKeysAsEach(matcher, keys, block, version);
          // As check answers them (amounts as JSON numbers): the net rule's.
          const answered = (key: string) => JSON.parse(toJson(all.get(key) ?? []));
          expect(answered(a!)).toEqual(expectedBlock(t, KEY_A));
          expect(answered(b!)).toEqual(expectedBlock(t, KEY_B));
          open += all.get(null)?.length ?? 0;
        }
      }
      expect(open).toBeGreaterThan(2);
    } finally {
      await sql`delete from watch_filters where key_hash = '\\x'::bytea`;
      await sql.end();
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------------------
// Pending

/** A signed payment from a coin of the miner (`replaceable`: BIP 125's opt-in); its txid and hex. */
async function payment(
  coin: { txid: string; vout: number; value: bigint },
  to: string,
  value: bigint,
  fee: bigint,
  replaceable = false,
) {
  const { node, addresses } = chain;
  const raw = await node.rpc<string>("createrawtransaction", [
    [{ txid: coin.txid, vout: coin.vout }],
    [{ [to]: coins(value) }, { [addresses.miner]: coins(coin.value - value - fee) }],
    0,
    replaceable,
  ]);
  const { hex } = await node.rpc<{ hex: string }>("signrawtransactionwithwallet", [raw]);
  const { txid } = await node.rpc<{ txid: string }>("decoderawtransaction", [hex]);
  return { txid, hex };
}

const subscribe = async (socket: TestSocket, options: unknown) => {
  const answer = await socket.request("eth_subscribe", ["watch_filters", options]);
  expect(answer.error).toBeUndefined();
  return answer.result as string;
};

/** The results of a mempool transaction for a key, as the subscription sends them. */
async function pendingOf(txid: string, key: string) {
  const snapshot = await chain.truth({ fromBlock: truth.tip });
  const tx = snapshot.mempool.find((t) => t.txid === txid)!;
  return expectedOf(tx, key, null).map((r) => ({ ...r, pending: true }));
}

describe("the watch_filters subscription with pending: true", () => {
  test("a payment and its child as they enter the mempool, then their block's results", async () => {
    const { addresses, node } = chain;
    const a = await connectSocket(wsUrl(service.url, KEY_A));
    const b = await connectSocket(wsUrl(service.url, KEY_B));
    const pendingA = await subscribe(a, { version: "v1", pending: true });
    const blocksA = await subscribe(a, { version: "v1" });
    const pendingB = await subscribe(b, { version: "v2", pending: true });
    // The chain's pendingIn and pendingOut were in the mempool before: never notified.
    const pay = await payment(await chain.minerCoin(), addresses.bech32, 90_000_000n, 25_000n);
    await node.rpc("sendrawtransaction", [pay.hex]);
    const first = await a.waitFor(pendingA, 1, NOTIFY_MS);
    expect(first).toEqual(await pendingOf(pay.txid, KEY_A));
    // Its child spends the payment's bech32 output: its input is read from the mempool's parent.
    const parentOut = await chain.outputOf(pay.txid, addresses.bech32);
    const child = await chain.spend(
      [parentOut],
      [
        { address: addresses.external, value: 50_000_000n },
        { address: addresses.legacy, value: parentOut.value - 50_000_000n - 33_000n },
      ],
    );
    const both = await a.waitFor(pendingA, 1 + 4, NOTIFY_MS);
    const childResults = await pendingOf(child, KEY_A);
    expect(childResults.map((r) => r.filter_target.direction).sort()).toEqual([
      "deposit",
      "deposit",
      "deposit",
      "withdrawal",
    ]);
    expect(both.slice(1)).toEqual(childResults);
    const onB = await b.waitFor(pendingB, 2, NOTIFY_MS);
    expect(onB).toEqual([...(await pendingOf(pay.txid, KEY_B)), ...(await pendingOf(child, KEY_B))]);
    // Mined, and CONFIRMATIONS deep: the block's results, as check gives them, on both subscriptions.
    const block = await chain.mineWith([pay.txid, child]);
    for (let i = 0; i < DEPTH; i++) await chain.mineWith([]);
    const height = (await node.rpc<{ height: number }>("getblockheader", [block])).height;
    await until("the block to be processed", async () =>
      (await lastBlockNumber()) >= height ? true : undefined,
    );
    const confirmed = await checkAll(KEY_A, height);
    expect(confirmed.length).toBe(5);
    expect(confirmed.map((r: any) => ({ ...r, block: null, pending: true }))).toEqual([
      ...first,
      ...childResults,
    ]);
    expect(await a.waitFor(pendingA, 5 + 5, NOTIFY_MS)).toEqual([...first, ...childResults, ...confirmed]);
    expect(await a.waitFor(blocksA, 5, NOTIFY_MS)).toEqual(confirmed);
    expect(await b.waitFor(pendingB, 2 + 2, NOTIFY_MS)).toEqual([
      ...onB,
      ...(await checkAll(KEY_B, height, "check_v2")),
    ]);
    // Nothing was said removed: both were mined.
    await Bun.sleep(4_000);
    expect(a.notifications(pendingA).length).toBe(10);
    a.close();
    b.close();
  }, 90_000);

  test("a payment a mined double spend conflicts out, and one the mempool replaces: removed", async () => {
    const { addresses, node } = chain;
    const a = await connectSocket(wsUrl(service.url, KEY_A));
    const pendingA = await subscribe(a, { pending: true });
    // A double spend mined: the block holds another spend of the payment's coin.
    const coin = await chain.minerCoin();
    const pay = await payment(coin, addresses.legacy, 70_000_000n, 25_000n);
    await node.rpc("sendrawtransaction", [pay.hex]);
    const paid = await pendingOf(pay.txid, KEY_A);
    expect(paid.length).toBe(2);
    expect(await a.waitFor(pendingA, 2, NOTIFY_MS)).toEqual(paid);
    const elsewhere = await node.rpc<string>("getnewaddress");
    const other = await payment(coin, elsewhere, 10_000_000n, 30_000n);
    await chain.mineWith([other.hex]);
    expect((await node.rpc<string[]>("getrawmempool")).includes(pay.txid)).toBe(false);
    const removed = paid.map((r) => ({ ...r, removed: true }));
    expect(await a.waitFor(pendingA, 4, NOTIFY_MS)).toEqual([...paid, ...removed]);
    // Replaced in the mempool (BIP 125, the node run with -mempoolreplacement=1), no block.
    const coin2 = await chain.minerCoin();
    const first = await payment(coin2, addresses.p2sh, 60_000_000n, 25_000n, true);
    await node.rpc("sendrawtransaction", [first.hex]);
    const firstResults = await pendingOf(first.txid, KEY_A);
    expect(await a.waitFor(pendingA, 5, NOTIFY_MS)).toEqual([...paid, ...removed, ...firstResults]);
    const replacement = await payment(coin2, elsewhere, 60_000_000n, 80_000n, true);
    await node.rpc("sendrawtransaction", [replacement.hex]);
    expect(await a.waitFor(pendingA, 6, NOTIFY_MS)).toEqual([
      ...paid,
      ...removed,
      ...firstResults,
      ...firstResults.map((r) => ({ ...r, removed: true })),
    ]);
    a.close();
  }, 90_000);

  test("an EVM chain's watch_filters refuses pending, naming the chain", async () => {
    const anvil = await newAnvil();
    const evm = await startTestService({ upstreamUrls: [anvil.url], env: { INDEXER: "on" } });
    const socket = await connectSocket(wsUrl(evm.url));
    const answer = await socket.request("eth_subscribe", ["watch_filters", { version: "v1", pending: true }]);
    expect(answer.error).toEqual({
      code: -32602,
      message:
        'invalid params: "pending" is not served on ETH: its watch filters match blocks only, not the nodes\' mempool',
    });
    expect((await socket.request("eth_subscribe", ["watch_filters", { pending: false }])).result).toMatch(
      /^0x[0-9a-f]{32}$/,
    );
    socket.close();
    await evm.stop();
  }, 60_000);
});
