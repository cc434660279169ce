/**
 * Watch filters against a real anvil and PostgreSQL: the chain of known movements is indexed, two API keys
 * register filters, and `check` / `check_v2` must give, block by block, exactly the results docs/interface.md §5
 * defines, built here from what the chain was made to move.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { ChainInfo } from "../src/blockchain";
import { hashKey } from "../src/db/apiKeys";
import { createBlockQueries } from "../src/db/blockQueries";
import { createEvmWatchMatcher } from "../src/families/evm/watchMatcher";
import { nodeEngine, rpc } from "./support/chain";
import { fillTokenBlocks, MOVEMENTS_ANVIL_ARGS, type Movements, makeMovements } from "./support/movements";
import { startProxy } from "./support/proxy";
import { expectResultsOfKeysAsEach } from "./support/resultsOfKeys";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

const KEY_A = "key-alpha";
const KEY_B = "key-beta";
const ENV = { INDEXER: "on", HEAD_POLL_MS: "50", API_KEYS: `${KEY_A},${KEY_B}` };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Filter {
  id: string;
  address: string;
  contract: string | null;
  withApproval: boolean;
}

let anvilUrl: string;
let movements: Movements;
let service: TestService;
let head: number;
/** The block with one transferMany to many recipients (for paging past 1000 results). */
let crowd: { block: number; token: string; recipients: string[] };
const blockOf = new Map<number, { hash: string; created_at: string }>();

const as = (key: string | undefined) => (key ? { headers: { "x-api-key": key } } : {});
const call = (method: string, path: string, body: unknown, key?: string) =>
  post(`${service.url}/watch_filters/${path}`, body, { ...as(key), method });
const add = async (key: string, body: Record<string, unknown>): Promise<string> => {
  const answer = await call("POST", "add", body, key);
  expect(answer.status).toBe(200);
  return answer.json.filter_id;
};
const check = (key: string, block: number, offset?: number, path = "check") =>
  call("POST", path, offset === undefined ? { block_number: block } : { block_number: block, offset }, key);

beforeAll(async () => {
  const anvil = await newAnvil(MOVEMENTS_ANVIL_ARGS);
  anvilUrl = anvil.url;
  movements = await makeMovements(anvil.url);
  const recipients = Array.from(
    { length: 600 },
    (_, i) => `0x${(0xbeef0000 + i).toString(16).padStart(40, "0")}`,
  );
  const filled = await fillTokenBlocks(anvil.url, { blocks: 1, recipients: () => recipients });
  crowd = { block: filled.head, token: filled.token, recipients };
  head = filled.head;
  const node = rpc(anvil.url);
  for (let n = 0; n <= head; n++) {
    const b = await node("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
    blockOf.set(n, {
      hash: b.hash,
      created_at: new Date(Number(b.timestamp) * 1000).toISOString().replace(".000Z", "Z"),
    });
  }
  service = await startTestService({ upstreamUrls: [anvil.url], env: ENV });
  // Processed, with every token's metadata read (it names `currency` and `decimals`).
  const sql = postgres(service.databaseUrl, { max: 1 });
  try {
    await until(
      "the index to catch up",
      async () => {
        const last = (await call("GET", "lastBlockNumber", undefined, KEY_A)).json?.block_number;
        const [tokens] = await sql`select count(*)::int as n from token_metadata`;
        return last === head && tokens!.n === 4 ? true : undefined;
      },
      30_000,
    );
  } finally {
    await sql.end();
  }
}, 120_000);

/** The results docs/interface.md §5 defines for one block and one key's filters, from the chain's known movements. */
function expected(n: number, filters: Filter[], v2: boolean) {
  const block = { ...blockOf.get(n)!, number: n };
  const rows: { key: [number, number, number, string]; result: unknown }[] = [];
  const direction = (f: Filter, from: string, to: string | null) =>
    from === f.address && to === f.address ? "unknown" : to === f.address ? "deposit" : "withdrawal";
  const base = (hash: string, fee: bigint, f: Filter) => ({
    transaction: { hash, fee: { value: fee, decimals: 18 }, fee_symbol: "ETH" },
    filter_id: f.id,
  });
  for (const t of movements.transfers) {
    if (t.blockNumber !== n || t.transferType === "erc721transfer") continue;
    for (const f of filters) {
      if (f.address !== t.from && f.address !== t.to) continue;
      if (f.contract !== null && f.contract !== t.contractAddress) continue;
      const native = t.transferType === "trx";
      rows.push({
        key: [t.transactionIndex, 0, t.logIndex ?? -1, f.id],
        result: {
          from_address: [t.from],
          to_address: [t.to],
          contract_address: native ? "" : t.contractAddress,
          type: native ? "trx" : "erc20",
          value: { value: t.value, decimals: t.decimals },
          currency: t.asset,
          ...base(t.transactionHash, t.fee, f),
          filter_target: { address: f.address, direction: direction(f, t.from, t.to) },
          block,
          trx_success: !t.transactionError,
        },
      });
    }
  }
  for (const a of movements.approvals) {
    if (a.blockNumber !== n) continue;
    for (const f of filters) {
      if (!f.withApproval || (f.address !== a.owner && f.address !== a.spender)) continue;
      if (f.contract !== null && f.contract !== a.contract) continue;
      rows.push({
        key: [a.transactionIndex, 0, a.logIndex, f.id],
        result: {
          from_address: [a.owner],
          to_address: [a.spender],
          contract_address: a.contract,
          type: "approval",
          value: { value: a.value, decimals: 18 },
          currency: "TST",
          ...base(a.transactionHash, a.fee, f),
          filter_target: { address: f.address, direction: "unknown" },
          block,
          trx_success: true,
        },
      });
    }
  }
  if (v2) {
    const order = new Map<string, number>();
    for (const i of movements.internal) {
      if (i.blockNumber !== n) continue;
      const k = order.get(i.transactionHash) ?? 0;
      order.set(i.transactionHash, k + 1);
      for (const f of filters) {
        if (f.contract !== null || (f.address !== i.from && f.address !== i.to)) continue;
        rows.push({
          key: [i.transactionIndex, 1, k, f.id],
          result: {
            from_address: [i.from],
            to_address: [i.to],
            contract_address: "",
            type: "trx",
            value: { value: i.value, decimals: 18 },
            currency: "ETH",
            ...base(i.transactionHash, i.fee, f),
            filter_target: { address: f.address, direction: direction(f, i.from, i.to) },
            block,
            trx_success: true,
          },
        });
      }
    }
  }
  rows.sort((x, y) => {
    for (let i = 0; i < 3; i++) if (x.key[i] !== y.key[i]) return (x.key[i] as number) - (y.key[i] as number);
    return x.key[3] < y.key[3] ? -1 : x.key[3] > y.key[3] ? 1 : 0;
  });
  // Parsed as the service's answers are: amounts exact.
  return exact(
    JSON.stringify(
      rows.map((r) => r.result),
      (_, v) => (typeof v === "bigint" ? `@${v}@` : v),
    ).replace(/"@(\d+)@"/g, "$1"),
  );
}

/** JSON.parse keeping long amounts exact (as strings), for comparisons. */
const exact = (text: string) => JSON.parse(text.replace(/("value":)(\d{16,})/g, '$1"$2"'));

describe("filters", () => {
  let filtersA: Filter[];
  let filtersB: Filter[];

  beforeAll(async () => {
    const { alice, bob, erin } = movements.accounts;
    const { token, forwarder, oldToken } = movements.contracts;
    const specs: Omit<Filter, "id">[] = [
      { address: alice, contract: null, withApproval: false },
      { address: bob, contract: token, withApproval: true },
      { address: forwarder, contract: null, withApproval: false },
      { address: erin, contract: oldToken, withApproval: false },
      { address: erin, contract: null, withApproval: true },
    ];
    filtersA = [];
    for (const s of specs) {
      const id = await add(KEY_A, {
        address: s.address,
        contract_address: s.contract,
        with_approval: s.withApproval,
      });
      filtersA.push({ id, ...s });
    }
    filtersB = [
      {
        id: await add(KEY_B, { address: alice.toUpperCase().replace("0X", "0x") }),
        address: alice,
        contract: null,
        withApproval: false,
      },
    ];
  });

  test("add gives a UUID, and the same filter again gives the same id", async () => {
    for (const f of [...filtersA, ...filtersB]) expect(f.id).toMatch(UUID);
    expect(new Set([...filtersA, ...filtersB].map((f) => f.id)).size).toBe(6);
    const again = await add(KEY_A, {
      address: `0x${movements.accounts.bob.slice(2).toUpperCase()}`,
      contract_address: movements.contracts.token.toUpperCase().replace("0X", "0x"),
      with_approval: true,
    });
    expect(again).toBe(filtersA[1]!.id);
    // Another key's identical filter is its own.
    expect(filtersB[0]!.id).not.toBe(filtersA[0]!.id);
    expect(await add(KEY_A, { address: movements.accounts.alice, with_approval: null })).toBe(
      filtersA[0]!.id,
    );
  });

  test("info and all show a key its own filters only", async () => {
    const infoOf = (key: string, f: Filter) => ({
      api_key: key,
      blockchain: "ETH",
      address: f.address,
      contract_address: f.contract ?? "",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      filter_id: f.id,
      with_approval: f.withApproval,
    });
    const all = await call("POST", "all", undefined, KEY_A);
    expect(all.json).toEqual({ filters: filtersA.map((f) => infoOf(KEY_A, f)) });
    expect((await call("POST", "all", undefined, KEY_B)).json).toEqual({
      filters: filtersB.map((f) => infoOf(KEY_B, f)),
    });
    const erin = movements.accounts.erin;
    expect((await call("POST", "info", { address: erin }, KEY_A)).json).toEqual({
      filters: filtersA.filter((f) => f.address === erin).map((f) => infoOf(KEY_A, f)),
    });
    expect((await call("POST", "info", { address: erin }, KEY_B)).json).toEqual({ filters: [] });
  });

  test("check and check_v2: every block, exactly the expected results, per key", async () => {
    let seen = 0;
    for (let n = 0; n < crowd.block - 2; n++) {
      for (const [key, filters] of [
        [KEY_A, filtersA],
        [KEY_B, filtersB],
      ] as const) {
        const v1 = await check(key, n);
        expect({ n, key, status: v1.status }).toEqual({ n, key, status: 200 });
        expect({ n, key, filters: exact(v1.text).filters }).toEqual({
          n,
          key,
          filters: expected(n, filters, false),
        });
        const v2 = await check(key, n, 0, "check_v2");
        expect({ n, key, filters: exact(v2.text).filters }).toEqual({
          n,
          key,
          filters: expected(n, filters, true),
        });
        seen += v2.json.filters.length;
      }
    }
    // The chain was made to exercise every kind of result.
    const all = Array.from({ length: crowd.block - 2 }, (_, n) => expected(n, filtersA, true)).flat();
    const kinds = new Set(all.map((r: any) => `${r.type}/${r.filter_target.direction}/${r.trx_success}`));
    expect([...kinds].sort()).toEqual([
      "approval/unknown/true",
      "erc20/deposit/true",
      "erc20/withdrawal/true",
      "trx/deposit/false",
      "trx/deposit/true",
      "trx/unknown/true",
      "trx/withdrawal/true",
    ]);
    expect(movements.internal.length).toBe(3);
    expect(seen).toBeGreaterThan(30);
  }, 60_000);

  test("the value moved inside contracts is only in check_v2", async () => {
    const forward = movements.internal[0]!;
    const v1 = await check(KEY_A, forward.blockNumber);
    const v2 = await check(KEY_A, forward.blockNumber, 0, "check_v2");
    const internal = v2.json.filters.filter((r: any) => r.from_address[0] === movements.contracts.forwarder);
    expect(
      internal.map((r: any) => [r.filter_target.address, r.filter_target.direction, r.to_address[0]]).sort(),
    ).toEqual(
      [
        [movements.contracts.forwarder, "withdrawal", movements.accounts.alice],
        [movements.accounts.alice, "deposit", movements.accounts.alice],
      ].sort(),
    );
    expect(v1.json.filters.some((r: any) => r.from_address[0] === movements.contracts.forwarder)).toBe(false);
  });

  test("paging a block of more than 1000 results with offset", async () => {
    const { alice } = movements.accounts;
    const crowdFilters: Filter[] = [];
    for (const address of crowd.recipients) {
      crowdFilters.push({ id: await add(KEY_B, { address }), address, contract: null, withApproval: false });
    }
    const receipts = await rpc(anvilUrl)<any[]>("eth_getBlockReceipts", [`0x${crowd.block.toString(16)}`]);
    const filterOf = new Map([...crowdFilters, ...filtersB].map((f) => [f.address, f]));
    // What the block holds for key B: alice's filter on every log and on the native deposit, and each
    // recipient's filter on its log.
    const want: [number, number, string, string][] = [];
    for (const r of receipts) {
      const index = Number(r.transactionIndex);
      if (r.logs.length === 0) {
        want.push([index, -1, filterOf.get(alice)!.id, "deposit"]);
        continue;
      }
      for (const log of r.logs) {
        const to = `0x${log.topics[2].slice(26)}`;
        want.push([index, Number(log.logIndex), filterOf.get(alice)!.id, "withdrawal"]);
        want.push([index, Number(log.logIndex), filterOf.get(to)!.id, "deposit"]);
      }
    }
    want.sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : 1));
    expect(want.length).toBe(1201);
    const pages: any[][] = [];
    for (let offset = 0; offset < 3000; offset += 1000) {
      const page = await check(KEY_B, crowd.block, offset);
      pages.push(page.json.filters);
      if (page.json.filters.length < 1000) break;
    }
    expect(pages.map((p) => p.length)).toEqual([1000, 201]);
    const ids = new Map(want.map((w) => [w[2], w]));
    expect(ids.size).toBe(601);
    expect(pages.flat().map((r) => [r.filter_id, r.filter_target.direction])).toEqual(
      want.map((w) => [w[2], w[3]]),
    );
    expect((await check(KEY_B, crowd.block, 1200)).json.filters).toHaveLength(1);
    expect((await check(KEY_B, crowd.block, 5000)).json.filters).toEqual([]);
    const v2 = await check(KEY_B, crowd.block, 1000, "check_v2");
    expect(v2.json.filters).toEqual(pages[1]);
  }, 60_000);

  test("a block not processed yet is a 404, never an empty list", async () => {
    const last = await call("GET", "lastBlockNumber", undefined, KEY_A);
    expect(last.json).toEqual({ block_number: head });
    for (const path of ["check", "check_v2"]) {
      const answer = await check(KEY_A, head + 1, 0, path);
      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({
        detail: `block ${head + 1} is not processed yet; the last processed block is ${head}`,
      });
    }
  });

  test("bad input: 422 naming the field; no key: 401", async () => {
    const bad = await call("POST", "add", { address: "0x12" }, KEY_A);
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "address"]);
    const badContract = await call(
      "POST",
      "add",
      { address: movements.accounts.bob, contract_address: "token" },
      KEY_A,
    );
    expect(badContract.json.detail[0].loc).toEqual(["body", "contract_address"]);
    expect((await call("POST", "info", { address: 5 }, KEY_A)).status).toBe(422);
    expect((await call("POST", "check", { block_number: -1 }, KEY_A)).status).toBe(422);
    expect((await call("POST", "check", { block_number: 1, offset: -1 }, KEY_A)).json.detail[0].loc).toEqual([
      "body",
      "offset",
    ]);
    expect((await call("POST", "all", undefined, undefined)).status).toBe(401);
    expect((await call("POST", "check", { block_number: 1 }, "not-a-key")).status).toBe(401);
  });

  test("remove: only the owner's key, then its results are gone", async () => {
    const erinNative = filtersA[4]!;
    const selfTransfer = movements.transfers.find((t) => t.from === t.to)!;
    const before = await check(KEY_A, selfTransfer.blockNumber);
    expect(before.json.filters.map((r: any) => r.filter_id)).toContain(erinNative.id);
    const foreign = await call("DELETE", "remove", { filter_id: erinNative.id }, KEY_B);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ detail: `no filter ${erinNative.id} for this API key` });
    const removed = await call("DELETE", "remove", { filter_id: erinNative.id }, KEY_A);
    expect(removed.json).toEqual({ detail: "filter removed", filter_id: erinNative.id });
    expect((await call("DELETE", "remove", { filter_id: erinNative.id }, KEY_A)).status).toBe(404);
    expect((await call("DELETE", "remove", { filter_id: "not-a-uuid" }, KEY_A)).status).toBe(404);
    const after = await check(KEY_A, selfTransfer.blockNumber);
    expect(after.json.filters.map((r: any) => r.filter_id)).not.toContain(erinNative.id);
    expect(exact(after.text).filters).toEqual(
      expected(selfTransfer.blockNumber, filtersA.slice(0, 4), false),
    );
  });
});

describe("every key's results of a block at once (webhooks' producer)", () => {
  test("resultsOfKeys gives each key exactly results(key), v1 and v2, on every block; a key with none is absent", async () => {
    const sql = postgres(service.databaseUrl, { max: 2 });
    try {
      // Open mode's key (stored empty): a filter of its own on bob, approvals too.
      const { bob } = movements.accounts;
      await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
        values ('\\x'::bytea, decode(${bob.slice(2)}, 'hex'), null, true)`;
      const chain: ChainInfo = {
        chainId: 31337n,
        blockchain: "ETH",
        nativeSymbol: "ETH",
        nativeDecimals: 18,
        confirmations: 0,
        blockTimeMs: 1_000,
        devChain: true,
      };
      const matcher = createEvmWatchMatcher({ sql, guard: (q) => q, engine: nodeEngine(anvilUrl), chain });
      const blocks = createBlockQueries(sql);
      const [a, b, none] = [KEY_A, KEY_B, "key-without-filters"].map(hashKey);
      const keys = [a!, b!, none!, null];
      const seen = new Set<string>();
      for (let n = 0; n <= head; n++) {
        const block = { number: BigInt(n), ...(await blocks.block(BigInt(n)))! };
        for (const version of ["v1", "v2"] as const) {
          const { each } = await expectResultsOfKeysAsEach(matcher, keys, block, version);
          for (const [key, results] of each)
            for (const r of results)
              seen.add(`${version}:${key === null ? "open" : key.slice(0, 4)}:${r.type}`);
        }
      }
      // The blocks hold every kind for the keys: a contract's filter's tokens, approvals, v2's internal
      // value, open mode's; the crowd block more than a page of key B's.
      const kinds = (prefix: string) =>
        [...seen].filter((s) => s.startsWith(prefix)).map((s) => s.split(":")[2]);
      expect(new Set(kinds(`v1:${a!.slice(0, 4)}`))).toEqual(new Set(["trx", "erc20", "approval"]));
      expect(new Set(kinds("v1:open"))).toEqual(new Set(["trx", "erc20", "approval"]));
      expect(kinds(`v2:${none!.slice(0, 4)}`)).toEqual([]);
      const crowdResults = (
        await matcher.resultsOfKeys(
          keys,
          {
            number: BigInt(crowd.block),
            ...(await blocks.block(BigInt(crowd.block)))!,
          },
          "v1",
        )
      ).get(b!)!;
      expect(crowdResults).toHaveLength(1201);
      // v2 adds the value moved inside the forwarder for the keys watching its native coin.
      const forward = movements.internal[0]!;
      const fb = {
        number: BigInt(forward.blockNumber),
        ...(await blocks.block(BigInt(forward.blockNumber)))!,
      };
      const v1 = (await matcher.resultsOfKeys(keys, fb, "v1")).get(a!)!;
      const v2 = (await matcher.resultsOfKeys(keys, fb, "v2")).get(a!)!;
      expect(v2.length).toBeGreaterThan(v1.length);
      expect(v2.filter((r) => r.from_address[0] === movements.contracts.forwarder).length).toBeGreaterThan(0);
    } finally {
      await sql`delete from watch_filters where key_hash = '\\x'::bytea`;
      await sql.end();
    }
  }, 120_000);
});

describe("other chains and nodes", () => {
  test("without trace_block, check_v2 reads the call tracer and finds the same", async () => {
    const proxy = startProxy(anvilUrl, { hide: ["trace_block"] });
    const other = await startTestService({ upstreamUrls: [proxy.url], env: ENV });
    try {
      const forwarder = movements.contracts.forwarder;
      const id = (await post(`${other.url}/watch_filters/add`, { address: forwarder }, as(KEY_A))).json
        .filter_id;
      const mine = (await call("POST", "info", { address: forwarder }, KEY_A)).json.filters[0].filter_id;
      await until(
        "the index",
        async () => {
          const r = await post(`${other.url}/watch_filters/lastBlockNumber`, undefined, {
            ...as(KEY_A),
            method: "GET",
          });
          return r.json?.block_number === head ? true : undefined;
        },
        30_000,
      );
      for (const i of movements.internal) {
        const theirs = await post(
          `${other.url}/watch_filters/check_v2`,
          { block_number: i.blockNumber },
          as(KEY_A),
        );
        const ours = exact((await check(KEY_A, i.blockNumber, 0, "check_v2")).text).filters;
        const forwarderOnly = ours
          .filter((r: any) => r.filter_id === mine)
          .map((r: any) => ({ ...r, filter_id: id }));
        expect(forwarderOnly.length).toBeGreaterThan(1);
        expect(exact(theirs.text).filters).toEqual(forwarderOnly);
      }
      expect(proxy.callsOf("debug_traceBlockByNumber").length).toBeGreaterThan(0);
      expect(proxy.callsOf("trace_block").length).toBe(1);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
