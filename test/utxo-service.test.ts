/**
 * A Bitcoin-family instance with its index (CHAIN=LTC, INDEXER=on, in front of a real regtest Litecoin Core
 * whose wallet paid an address once before the start), as docs/interface.md §16 describes it:
 * - served beside the node's methods: the data operations over REST, JSON-RPC and WebSocket (an address's
 *   transfers, a block's, the day's figures, compared with what the node's own answers imply), watch filters
 *   over REST and the `watch_filters` subscription (a payment's result as `check` gives it);
 * - refused naming the chain: another family's methods and routes, the token operations among them (-32601,
 *   404 `{detail}`); wallet methods and names of no family the plain -32601;
 * - the index: sql/common/'s tables and sql/utxo/'s in the database, and what it wrote; the
 *   `gateway_indexer_*` series;
 * - the operator's view (/health, /status.json, the status page in a real Chromium, /metrics, the Grafana
 *   dashboard's series) shows the chain's head, upstreams, cache and the index's progress;
 * - the OpenAPI document lists the family's methods, the data operations with this family's Transfer and
 *   DayStats, the watch filters and the Esplora routes, nothing of another family, and examples that answer;
 * - the README's examples for this family answer what the node's answers say.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { UTXO_METHODS } from "../src/families/utxo/methods";
import { type Browser, launchBrowser } from "./support/browser";
import { type LitecoinNode, NodeRpcError, startLitecoind } from "./support/litecoind";
import { metric } from "./support/metrics";
import { codeBlocks, curlCommands, readmeSection, runCurl } from "./support/readme";
import { post, startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import {
  filterBlockOf,
  filterResultOf,
  iso,
  parseExact,
  readTruth,
  type Truth,
  type TruthDay,
  type TruthTransaction,
  type TruthTransfer,
} from "./support/utxoChain";
import { connectSocket, wsUrl } from "./support/ws";

const ROOT = join(import.meta.dir, "..");
const KEY = "utxo-service-key-0123456789";
/** Regtest coinbases mature after 100 blocks: the node starts with spendable coins. */
const START_BLOCKS = 101;
const GENESIS = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";
/** What the wallet pays `payee` before the start (sendtoaddress's coins), and in satoshis. */
const PAYMENT = "1.25";
const PAYMENT_SATOSHIS = 125_000_000n;
/** The design's allow-list (§12 "Gateway"): every one is in the document's method list. */
const ALLOW_LIST = [
  "getblockchaininfo",
  "getbestblockhash",
  "getblockcount",
  "getblockhash",
  "getblock",
  "getblockheader",
  "getblockstats",
  "getchaintips",
  "getdifficulty",
  "getrawtransaction",
  "gettxout",
  "getblockfilter",
  "getrawmempool",
  "getmempoolinfo",
  "getmempoolentry",
  "estimatesmartfee",
  "decoderawtransaction",
  "decodescript",
  "validateaddress",
  "sendrawtransaction",
  "testmempoolaccept",
];
/** The data operations of §2.1 this family serves (§16.5), in the order the service lists them. */
const DATA_OPERATIONS = [
  "watch_getTransfersByAddress",
  "watch_getTransfers",
  "watch_getBlockNumberByTimestamp",
  "watch_getStatsByDay",
  "watch_getBlockNumbersByDay",
];
const WATCH_FILTER_PATHS = [
  "/watch_filters/add",
  "/watch_filters/all",
  "/watch_filters/check",
  "/watch_filters/check_v2",
  "/watch_filters/info",
  "/watch_filters/lastBlockNumber",
  "/watch_filters/remove",
];
/** The webhook routes: served where the watch filters are (their deliveries are watch-filter results). */
const WEBHOOK_PATHS = [
  "/webhooks",
  "/webhooks/{id}",
  "/webhooks/{id}/deliveries",
  "/webhooks/{id}/deliveries/{delivery}/redeliver",
  "/webhooks/{id}/rotate",
  "/webhooks/{id}/test",
];
/** The series the index adds to /metrics (metrics.ts), whatever the family. */
const INDEXER_SERIES = [
  "gateway_indexer_blocks_total",
  "gateway_indexer_lag_blocks",
  "gateway_indexer_last_block",
  "gateway_indexer_leading",
  "gateway_indexer_maintenance_total",
  "gateway_indexer_reorgs_total",
  "gateway_indexer_transfers_total",
  "gateway_indexer_write_seconds_total",
];
/** What a refused address's 422 says it should be: an address of the network the node is on. */
const SHOULD_BE =
  "Input should be an address of Litecoin's regtest: base58check P2PKH (version 111) or P2SH (version 58 or 196), or bech32/bech32m with the prefix rltc";
const BTC_MAINNET = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa";
/** A watch_filters result is sent once its block is processed: a pass a second (WATCH_POLL_MS). */
const NOTIFY_MS = 15_000;

const EVM_REFUSAL = "it is a method of the evm family, and LTC is served by the utxo family";
const refused = (id: number, message: string) => ({ jsonrpc: "2.0", id, error: { code: -32601, message } });
const notServed = (method: string, why: string) => `the method ${method} is not served on LTC: ${why}`;

let node: LitecoinNode;
let service: TestService;
let browser: Browser | undefined;
/** An address of the node's wallet, paid PAYMENT once before the start: its one transfer is known. */
let payee: string;
let paymentTxid: string;
let paymentBlock: number;

const rpc = (body: unknown) => post(`${service.url}/node/jsonrpc`, body, { headers: { "x-api-key": KEY } });
const rest = (name: string, body: unknown) =>
  post(`${service.url}/node/rest/${name}`, body, { headers: { "x-api-key": KEY } });
const watch = (method: string, path: string, body?: unknown) =>
  post(`${service.url}/watch_filters/${path}`, body, { method, headers: { "x-api-key": KEY } });
const json = async (path: string) => (await fetch(`${service.url}${path}`)).json() as Promise<any>;
const metricsText = async () => (await fetch(`${service.url}/metrics`)).text();

/** The node's answer with its amounts as decimal text: the truth's satoshis never go through a float. */
async function exact<T = any>(method: string, params: unknown[]): Promise<T> {
  const { text } = await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
  const answer = parseExact<{ result: T; error: { code: number; message: string } | null }>(text);
  if (answer.error) throw new NodeRpcError(answer.error.code, answer.error.message);
  return answer.result;
}

/** What the node's chain implies now, from block 0 (the index's first: INDEX_FROM_BLOCK unset). */
const readChain = () => readTruth(exact, 0);

/** Waits until the service's head and its index are at the node's head; that height. */
async function indexed(): Promise<number> {
  const head = await node.rpc<number>("getblockcount");
  await until(
    "the service's head and its index at the node's head",
    async () => {
      const health = await json("/health");
      return health.head.number === head && health.indexer?.lastBlockNumber === head ? true : undefined;
    },
    30_000,
  );
  return head;
}

// ---------------------------------------------------------------------------------------------------------
// What the answers must be, written from the node's answers (docs/interface.md §16.5, §16.6)

/** A transfer row, its members in the interface's order (the answers' text is compared). */
const transferOf = (t: TruthTransfer) => ({
  blockNumber: t.blockNumber,
  blockTimestamp: iso(t.timestamp),
  transactionHash: t.transactionHash,
  transactionIndex: t.transactionIndex,
  logIndex: t.logIndex,
  contractAddress: null,
  transferType: "trx",
  from: t.from,
  fromAddresses: t.fromAddresses,
  to: t.to,
  value: Number(t.value),
  fee: Number(t.fee),
  transactionError: false,
  asset: "LTC",
  decimals: 8,
});
const dayStatsOf = (d: TruthDay | null) =>
  d && {
    date: d.date,
    fromBlock: d.fromBlock,
    toBlock: d.toBlock,
    blockCount: d.blockCount,
    transactionCount: d.transactionCount,
    transferCount: d.transferCount,
    activeAddresses: d.activeAddresses,
    totalOutput: Number(d.totalOutput),
    totalFees: Number(d.totalFees),
    minersReward: Number(d.minersReward),
    averageFeeRate: Number(d.averageFeeRate),
  };
const blockRangeOf = (truth: Truth, date: string) => {
  const of = truth.blocks.filter((b) => b.day === date);
  if (of.length === 0) return null;
  const [first, last] = [of[0]!.height, of[of.length - 1]!.height];
  return { date, fromBlock: first, toBlock: last, blockCount: last - first + 1 };
};
/** The last block whose time (the running maximum) is at or before `t`. */
const blockAt = (truth: Truth, t: number) => truth.blocks.findLast((b) => b.timestamp <= t)?.height;

/** A watch filter's result for a transaction of a block the filter's address takes part in. */
const filterResult = (tx: TruthTransaction, filter: { id: string; address: string }, truth: Truth) =>
  filterResultOf(tx, filter, filterBlockOf(truth.blocks[tx.height!]!))!;

/** Asks REST and JSON-RPC the same question: both must answer `result` exactly (as text). */
async function servedBoth(name: string, body: unknown, params: unknown[], result: unknown) {
  const text = JSON.stringify(result);
  const byRest = await rest(name, body);
  expect({ name, body, status: byRest.status, text: byRest.text }).toEqual({ name, body, status: 200, text });
  const byRpc = await rpc({ jsonrpc: "2.0", id: 1, method: name, params });
  expect({ name, params, text: byRpc.text }).toEqual({
    name,
    params,
    text: `{"jsonrpc":"2.0","id":1,"result":${text}}`,
  });
}

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(START_BLOCKS);
  payee = await node.rpc<string>("getnewaddress", ["", "bech32"]);
  paymentTxid = await node.rpc<string>("sendtoaddress", [payee, PAYMENT]);
  await node.mine(1);
  paymentBlock = START_BLOCKS + 1;
  service = await startTestService({
    upstreamUrls: [node.url],
    env: { CHAIN: "LTC", API_KEYS: KEY, INDEXER: "on" },
  });
  await indexed();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("what it serves beside the node's methods, and what it refuses naming the chain", () => {
  test("JSON-RPC: another family's methods, the token operations among them, are -32601 naming the chain; wallet methods and names of no family the plain -32601", async () => {
    for (const method of [
      "eth_blockNumber",
      "eth_getBlockByNumber",
      "net_version",
      "eth_sign",
      "debug_traceTransaction",
      "ext_getBlockReceipts",
      "watch_getTokenBalances",
      "watch_getTokenMetadata",
    ]) {
      const answer = await rpc({ jsonrpc: "2.0", id: 7, method, params: [] });
      expect([answer.status, answer.json]).toEqual([200, refused(7, notServed(method, EVM_REFUSAL))]);
    }
    // `stop` would end the node were it forwarded: it answers after.
    for (const method of ["sendtoaddress", "generatetoaddress", "stop", "foo_bar"]) {
      const answer = await rpc({ jsonrpc: "2.0", id: 8, method, params: [] });
      expect(answer.json).toEqual(refused(8, `the method ${method} does not exist or is not available`));
    }
    expect(await node.rpc<number>("getblockcount")).toBe(paymentBlock);
  });

  test("the data operations answer from the index, over REST and JSON-RPC: an address's transfers, a block's, the day's", async () => {
    const head = await indexed();
    const truth = await readChain();
    expect(truth.tip).toBe(head);
    // The payment the test made, as the node says it: one row, from the wallet's coin, fee inputs minus outputs.
    const rows = truth.transfers(payee);
    expect(rows.map((t) => [t.blockNumber, t.transactionHash, t.to, t.value])).toEqual([
      [paymentBlock, paymentTxid, payee, PAYMENT_SATOSHIS],
    ]);
    expect(rows[0]!.fee).toBeGreaterThan(0n);
    const byAddress = { addresses: payee };
    await servedBoth("watch_getTransfersByAddress", byAddress, [byAddress], rows.map(transferOf));
    // The bech32 address in capitals is the same address.
    const upper = { addresses: payee.toUpperCase() };
    await servedBoth("watch_getTransfersByAddress", upper, [upper], rows.map(transferOf));
    // An address the chain never saw: an empty page.
    const unused = { addresses: await node.rpc<string>("getnewaddress", ["", "legacy"]) };
    await servedBoth("watch_getTransfersByAddress", unused, [unused], []);
    // The payment's block: its coinbase's row, the payment's and its change's (a new address pays too).
    const range = { fromBlock: paymentBlock, toBlock: paymentBlock };
    const inBlock = truth.allTransfers(range);
    expect(inBlock.map((t) => [t.transactionIndex, t.from === "coinbase"])).toEqual([
      [0, true],
      [1, false],
      [1, false],
    ]);
    await servedBoth("watch_getTransfers", range, [range], inBlock.map(transferOf));
    // The payment block's time and day (block times are the running maximum of header times).
    const block = truth.blocks[paymentBlock]!;
    const t = block.timestamp;
    await servedBoth("watch_getBlockNumberByTimestamp", { timestamp: t }, [t], blockAt(truth, t));
    await servedBoth(
      "watch_getBlockNumbersByDay",
      { date: block.day },
      [block.day],
      blockRangeOf(truth, block.day),
    );
    const day = truth.day(block.day);
    expect(day?.totalFees).toBe(rows[0]!.fee);
    await servedBoth("watch_getStatsByDay", { timestamp: t }, [t], dayStatsOf(day));
  });

  test("in a batch, each element answers its own: the node's, the index's, the refusals", async () => {
    const truth = await readChain();
    const query = { addresses: payee };
    const answer = await rpc([
      { jsonrpc: "2.0", id: 1, method: "getblockhash", params: [0] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 3, method: "watch_getTransfersByAddress", params: [query] },
      { jsonrpc: "2.0", id: 4, method: "watch_getTokenBalances", params: [query] },
      { jsonrpc: "2.0", id: 5, method: "getblockcount", params: [] },
    ]);
    expect(answer.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: GENESIS },
      refused(2, notServed("eth_chainId", EVM_REFUSAL)),
      { jsonrpc: "2.0", id: 3, result: truth.transfers(payee).map(transferOf) },
      refused(4, notServed("watch_getTokenBalances", EVM_REFUSAL)),
      { jsonrpc: "2.0", id: 5, result: truth.tip },
    ]);
  });

  test("REST: another family's routes, the token routes among them, are 404 {detail} naming the chain; the node's methods have no REST form", async () => {
    for (const path of [
      "/node/rest/eth_blockNumber",
      "/node/rest/eth_getBlockByNumber",
      "/node/rest/get_token_balances",
      "/node/rest/get_token_metadata",
      "/node/rest/watch_getTokenBalances",
      "/node/stream/ext_getBlockReceipts",
    ]) {
      const answer = await post(`${service.url}${path}`, {}, { headers: { "x-api-key": KEY } });
      expect([path, answer.status, answer.json]).toEqual([
        path,
        404,
        { detail: `${path} is not served on LTC: ${EVM_REFUSAL}` },
      ]);
    }
    for (const path of ["/node/rest/getblockcount", "/node/rest/nothing", "/nothing"]) {
      const answer = await post(`${service.url}${path}`, {}, { headers: { "x-api-key": KEY } });
      expect([path, answer.status, answer.json]).toEqual([path, 404, { detail: "Not Found" }]);
    }
  });

  test("watch filters over REST: a filter on the payee, its payment's result by check and check_v2, another network's address refused", async () => {
    // CONFIRMATIONS is 1 on regtest: the payment's block is processed once a block is mined on it.
    await node.mine(1);
    const head = await indexed();
    await until("the filters' last processed block below the head", async () =>
      (await watch("GET", "lastBlockNumber")).json?.block_number === head - 1 ? true : undefined,
    );
    expect((await watch("GET", "lastBlockNumber")).json).toEqual({ block_number: head - 1 });
    const added = await watch("POST", "add", { address: payee });
    expect(added.status).toBe(200);
    const filter = { id: added.json.filter_id as string, address: payee };
    expect(filter.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // bech32 is kept in lower case: the same address in capitals is the same filter.
    expect((await watch("POST", "add", { address: payee.toUpperCase() })).json).toEqual({
      filter_id: filter.id,
    });
    const info = await watch("POST", "info", { address: payee });
    expect(info.json).toEqual({
      filters: [
        {
          api_key: KEY,
          blockchain: "LTC",
          address: payee,
          contract_address: "",
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          filter_id: filter.id,
          with_approval: false,
        },
      ],
    });
    const truth = await readChain();
    const expected = { filters: [filterResult(truth.transactions.get(paymentTxid)!, filter, truth)] };
    expect(expected.filters[0]!.filter_target.direction).toBe("deposit");
    expect(expected.filters[0]!.value.value).toBe(Number(PAYMENT_SATOSHIS));
    for (const path of ["check", "check_v2"]) {
      const answer = await watch("POST", path, { block_number: paymentBlock });
      expect([path, answer.status, answer.json]).toEqual([path, 200, expected]);
    }
    const other = await watch("POST", "add", { address: BTC_MAINNET });
    expect([other.status, other.json]).toEqual([
      422,
      { detail: [{ loc: ["body", "address"], msg: SHOULD_BE, type: "string_pattern_mismatch" }] },
    ]);
    const removed = await watch("DELETE", "remove", { filter_id: filter.id });
    expect(removed.json).toEqual({ detail: "filter removed", filter_id: filter.id });
    expect((await watch("POST", "info", { address: payee })).json).toEqual({ filters: [] });
  });

  test("over WebSocket as over HTTP; eth_subscribe serves newHeads and watch_filters, whose results are check's", async () => {
    const socket = await connectSocket(wsUrl(service.url, KEY));
    try {
      expect(await socket.request("eth_getBalance", ["x", "latest"])).toMatchObject({
        error: { code: -32601, message: notServed("eth_getBalance", EVM_REFUSAL) },
      });
      expect(await socket.request("watch_getTokenMetadata", [])).toMatchObject({
        error: { code: -32601, message: notServed("watch_getTokenMetadata", EVM_REFUSAL) },
      });
      const before = await readChain();
      expect((await socket.request("watch_getTransfersByAddress", [{ addresses: payee }])).result).toEqual(
        before.transfers(payee).map(transferOf),
      );
      expect(await socket.request("eth_subscribe", ["logs"])).toMatchObject({
        error: {
          code: -32602,
          message: 'invalid params: the subscription should be one of newHeads, watch_filters; got "logs"',
        },
      });
      const watched = await node.rpc<string>("getnewaddress", ["", "legacy"]);
      const added = await watch("POST", "add", { address: watched });
      const filter = { id: added.json.filter_id as string, address: watched };
      const heads = (await socket.request("eth_subscribe", ["newHeads"])).result as string;
      const v1 = (await socket.request("eth_subscribe", ["watch_filters", { version: "v1" }]))
        .result as string;
      const v2 = (await socket.request("eth_subscribe", ["watch_filters", { version: "v2" }]))
        .result as string;
      for (const id of [heads, v1, v2]) expect(id).toMatch(/^0x[0-9a-f]{32}$/);
      const txid = await node.rpc<string>("sendtoaddress", [watched, "0.5"]);
      const [mined] = await node.mine(1);
      const height = await node.rpc<number>("getblockcount");
      const [header] = await socket.waitFor(heads, 1, 10_000);
      expect([header.hash, header.height]).toEqual([mined, height]);
      // Processed one block deep (regtest's CONFIRMATIONS).
      await node.mine(1);
      await indexed();
      const truth = await readChain();
      const ours = filterResult(truth.transactions.get(txid)!, filter, truth);
      expect([ours.filter_target.direction, ours.value.value, ours.block.number]).toEqual([
        "deposit",
        50_000_000,
        height,
      ]);
      // Every result of the key's filters in that block, in check's order: the new filter's among them.
      for (const [id, path] of [
        [v1, "check"],
        [v2, "check_v2"],
      ] as const) {
        const checked = (await watch("POST", path, { block_number: height })).json.filters;
        expect(checked).toContainEqual(ours);
        expect(await socket.waitFor(id, checked.length, NOTIFY_MS)).toEqual(checked);
      }
      await watch("DELETE", "remove", { filter_id: filter.id });
    } finally {
      socket.close();
    }
  }, 60_000);
});

describe("the index", () => {
  test("the database holds sql/common/'s tables and sql/utxo/'s, and the blocks and outputs it wrote", async () => {
    const head = await indexed();
    const schema = (await json("/health")).database.schema;
    const sql = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const versions = (await sql`select version from ${sql(schema)}.schema_migrations order by version`).map(
        (r) => Number(r.version),
      );
      const files = ["common", "utxo"].flatMap((dir) =>
        readdirSync(join(ROOT, "sql", dir))
          .filter((f) => f.endsWith(".sql"))
          .map((f) => join(ROOT, "sql", dir, f)),
      );
      expect(versions).toEqual(
        files.map((f) => Number(f.slice(f.lastIndexOf("/") + 1).split("_")[0])).sort((a, b) => a - b),
      );
      const tables = (
        await sql`select table_name from information_schema.tables where table_schema = ${schema} order by 1`
      ).map((r) => r.table_name);
      // chain_identity: which chain the schema holds (db/chainSchema.ts), whatever the family.
      expect(tables).toEqual([
        "address_scripts",
        "address_totals",
        "address_transactions",
        "api_keys",
        "blocks",
        "bulk_load",
        "chain_identity",
        "daily_stats",
        "day_addresses",
        "indexer_state",
        "outputs",
        "rpc_filter_block_logs",
        "rpc_filters",
        "rpc_pending_transactions",
        "schema_migrations",
        "transactions",
        "watch_filters",
        "webhook_blocks",
        "webhook_deliveries",
        "webhook_endpoints",
        "webhook_progress",
      ]);
      // The list above is what those files make, and nothing of the EVM's index (sql/evm/).
      const declared = files.flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/create table if not exists (\w+)/g)].map((m) => m[1]!),
      );
      expect([...declared, "chain_identity", "schema_migrations"].sort()).toEqual(tables);
      const [state] = await sql`select first_block, last_block from ${sql(schema)}.indexer_state`;
      expect([Number(state!.first_block), Number(state!.last_block)]).toEqual([0, head]);
      const truth = await readChain();
      const [counts] = await sql`select (select count(*) from ${sql(schema)}.blocks) as blocks,
        (select count(*) from ${sql(schema)}.transactions) as transactions,
        (select count(*) from ${sql(schema)}.outputs) as outputs,
        (select count(*) from ${sql(schema)}.outputs where pays) as transfers`;
      const txs = truth.blocks.flatMap((b) => b.transactions);
      expect([counts!.blocks, counts!.transactions, counts!.outputs, counts!.transfers].map(Number)).toEqual([
        head + 1,
        txs.length,
        txs.reduce((n, tx) => n + tx.outputs.length, 0),
        truth.allTransfers().length,
      ]);
    } finally {
      await sql.end();
    }
  });

  test("/metrics has the gateway_indexer_* series: the index at the head, every block and output it wrote", async () => {
    const head = await indexed();
    const truth = await readChain();
    const text = await metricsText();
    const series = [...text.matchAll(/^# TYPE (gateway_indexer_\S+)/gm)].map((m) => m[1]!).sort();
    expect(series).toEqual(INDEXER_SERIES);
    const outputs = truth.blocks.reduce(
      (n, b) => n + b.transactions.reduce((m, tx) => m + tx.outputs.length, 0),
      0,
    );
    // One instance wrote the whole index from block 0; on this family the series named transfers counts
    // the outputs written (decode.ts `transfers`: what write groups and progress count), not transfer rows.
    expect(
      [
        "gateway_indexer_last_block",
        "gateway_indexer_lag_blocks",
        "gateway_indexer_leading",
        "gateway_indexer_blocks_total",
        "gateway_indexer_transfers_total",
        "gateway_indexer_reorgs_total",
      ].map((name) => [name, metric(text, name)]),
    ).toEqual([
      ["gateway_indexer_last_block", head],
      ["gateway_indexer_lag_blocks", 0],
      ["gateway_indexer_leading", 1],
      ["gateway_indexer_blocks_total", head + 1],
      ["gateway_indexer_transfers_total", outputs],
      ["gateway_indexer_reorgs_total", 0],
    ]);
    expect(metric(text, "gateway_head_block")).toBe(head);
  });
});

describe("the operator's view", () => {
  test("/health: chain LTC, the node's head, its upstream pushing (the long-poll), the index at the head", async () => {
    const [mined] = await node.mine(1);
    const height = await node.rpc<number>("getblockcount");
    const health = await until("the head and the index at the mined block", async () => {
      const h = await json("/health");
      return h.head.hash === mined && h.indexer.lastBlockNumber === height ? h : undefined;
    });
    expect(health).toEqual({
      status: "ok",
      chain: "LTC",
      chainId: "2",
      upstream: {
        status: "ok",
        headBlockNumber: height,
        upstreams: [
          {
            name: "upstream-1",
            url: node.bareUrl,
            state: "closed",
            headBlockNumber: height,
            batchLimit: 8,
            pushing: true,
          },
        ],
      },
      database: {
        status: "ok",
        embedded: false,
        schema: health.database.schema,
        latencyMs: health.database.latencyMs,
      },
      // Regtest: one block deep (CONFIRMATIONS 1); these nodes name no final block of their own.
      head: { number: height, hash: mined, finalized: height - 1, nodeFinal: null },
      cache: health.cache,
      indexer: { lastBlockNumber: height, headBlockNumber: height, lag: 0, leading: true },
    });
  });

  test("/status.json says what /health and /metrics say, its indexer section included", async () => {
    // A hit from memory to show: the same block twice.
    const hash = await node.rpc<string>("getblockhash", [1]);
    for (let i = 0; i < 2; i++) await rpc({ jsonrpc: "2.0", id: 1, method: "getblock", params: [hash, 1] });
    await until("two status samples", async () =>
      (await json("/status.json")).series.at.length > 0 ? true : undefined,
    );
    const head = await indexed();
    const status = await json("/status.json");
    const health = await json("/health");
    const metrics = await metricsText();
    expect([status.status, status.chain, status.chainId]).toEqual(["ok", "LTC", "2"]);
    expect(status.head.number).toBe(head);
    expect(status.head.number).toBe(metric(metrics, "gateway_head_block"));
    expect(status.head.finalized).toBe(health.head.finalized);
    expect(status.indexer).toMatchObject({
      enabled: true,
      leading: health.indexer.leading,
      lastBlockNumber: health.indexer.lastBlockNumber,
      lag: health.indexer.lag,
      backfilling: false,
      etaSeconds: null,
    });
    expect([status.indexer.lastBlockNumber, status.indexer.lag]).toEqual([head, 0]);
    expect(status.indexer.lag).toBe(metric(metrics, "gateway_indexer_lag_blocks"));
    expect(status.upstreams).toEqual([
      expect.objectContaining({ name: "upstream-1", state: "closed", pushing: true, behind: 0 }),
    ]);
    expect(metric(metrics, "gateway_upstream_pushing", { upstream: "upstream-1" })).toBe(1);
    expect(metric(metrics, "gateway_upstream_head_block", { upstream: "upstream-1" })).toBe(
      status.head.number,
    );
    expect(status.totals.cache.memoryHits).toBeGreaterThanOrEqual(1);
    expect(status.cache.memory.entries).toBe(health.cache.memory.entries);
    expect(status.totals.requests).toContainEqual({ operation: "getblock", outcome: "ok", count: 2 });
    // Both kinds this instance serves, as /metrics counts them.
    expect(Object.keys(status.websocket.subscriptions)).toEqual(["newHeads", "watch_filters"]);
    for (const kind of ["newHeads", "watch_filters"])
      expect(status.websocket.subscriptions[kind]).toBe(
        metric(metrics, "gateway_ws_subscriptions", { kind }),
      );
  });

  test("the status page in a real Chromium: the node's head, its upstream, the indexer card following it", async () => {
    browser = await launchBrowser();
    const page = await browser.open(`${service.url}/status`, { width: 1280, height: 1000 });
    try {
      await page.waitFor(`document.body.dataset.rendered !== undefined`, 10_000);
      const head = await indexed();
      const shown = (n: number) => JSON.stringify(n.toLocaleString("en-US"));
      await page.waitFor(`document.getElementById("indexer-last").textContent === ${shown(head)}`, 5_000);
      expect(await page.evaluate<string>(`document.getElementById("head-number").textContent`)).toBe(
        head.toLocaleString("en-US"),
      );
      expect(await page.evaluate<string>(`document.getElementById("chain").textContent`)).toStartWith("LTC");
      const upstream = `document.querySelector('#upstreams tr[data-upstream="upstream-1"]')`;
      expect(await page.evaluate<string>(`${upstream}.children[1].textContent`)).toBe("closed");
      expect(await page.evaluate<string>(`${upstream}.children[4].textContent`)).toBe("yes");
      expect(await page.evaluate<boolean>(`document.getElementById("indexer-card").hidden`)).toBe(false);
      expect(await page.evaluate<string>(`document.getElementById("indexer-state").textContent`)).toBe(
        "following the head",
      );
      expect(await page.evaluate<string>(`document.getElementById("indexer-lag").textContent`)).toBe("0");
      // A new block shows without a reload, in the head and in the index.
      await node.mine(1);
      await page.waitFor(`document.getElementById("head-number").textContent === ${shown(head + 1)}`, 5_000);
      await page.waitFor(`document.getElementById("indexer-last").textContent === ${shown(head + 1)}`, 5_000);
      expect(page.problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  test("every series the Grafana dashboard reads is exported, the index's included", async () => {
    const dashboard = readFileSync(join(ROOT, "monitoring", "grafana-dashboard.json"), "utf8");
    const asked = new Set([...dashboard.matchAll(/\bgateway_[a-z0-9_]+/g)].map((m) => m[0]));
    const text = await metricsText();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!));
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
    expect([...asked].filter((name) => name.startsWith("gateway_indexer_")).length).toBeGreaterThan(0);
    expect([...asked].filter((name) => !exported.has(name) && !exported.has(base(name)))).toEqual([]);
  });

  test("credentials appear nowhere an operator or a caller reads", async () => {
    const texts = await Promise.all(
      ["/health", "/status.json", "/metrics", "/swagger/json", "/status"].map(async (path) =>
        (await fetch(`${service.url}${path}`)).text(),
      ),
    );
    for (const text of texts) {
      expect(text).not.toContain(node.user);
      expect(text).not.toContain(node.password);
      expect(text).not.toContain(encodeURIComponent(node.password));
    }
  });
});

describe("the OpenAPI document shows what the instance serves", () => {
  test("the family's JSON-RPC methods and data operations, its Transfer and DayStats, the watch filters and the Esplora routes; no eth_* nor token route", async () => {
    const doc = await json("/swagger/json");
    const paths = Object.keys(doc.paths).sort();
    expect(paths.filter((p) => !p.startsWith("/esplora/"))).toEqual(
      [
        "/health",
        "/health/",
        "/node/jsonrpc",
        ...DATA_OPERATIONS.map((name) => `/node/rest/${name}`),
        ...WATCH_FILTER_PATHS,
        ...WEBHOOK_PATHS,
      ].sort(),
    );
    // The Esplora routes themselves are test/esplora.test.ts's: here, that each is under its tag.
    for (const path of paths.filter((p) => p.startsWith("/esplora/")))
      for (const op of Object.values(doc.paths[path]) as { tags: string[] }[])
        expect([path, op.tags]).toEqual([path, ["esplora"]]);
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual([
      "node",
      "health",
      "watch_filters",
      "webhooks",
      "esplora",
    ]);
    expect(doc.info.title).toBe("Blockchain data access service");
    for (const text of [doc.info.title, doc.info.description]) expect(text).not.toMatch(/ethereum|eth_|EVM/i);
    // Two groups of methods: the data operations (`Methods`) and the node's.
    const schemas = doc.components.schemas;
    expect(schemas.JsonRpcRequest.properties.method).toEqual({
      anyOf: [{ $ref: "#/components/schemas/Methods" }, { $ref: "#/components/schemas/NodeMethods" }],
    });
    const names = (group: string) => schemas[group].anyOf.map((m: { const: string }) => m.const);
    expect(names("Methods")).toEqual(DATA_OPERATIONS);
    expect(names("NodeMethods")).toEqual([...UTXO_METHODS]);
    for (const method of ALLOW_LIST) expect(names("NodeMethods")).toContain(method);
    const post = doc.paths["/node/jsonrpc"].post;
    for (const method of [...UTXO_METHODS, ...DATA_OPERATIONS])
      expect(post.description).toContain(`- \`${method}(`);
    expect(post.description).not.toMatch(/- `((eth|net|web3|debug|trace|txpool|ext)_|watch_getToken)/);
    expect(post.description).toContain("Not served on LTC");
    expect(post.description).toContain("`watch_getToken*`");
    expect(paths.filter((p) => /token/i.test(p))).toEqual([]);
    // This family's Transfer and DayStats schemas themselves: test/utxo-data.test.ts.
    for (const [name, schema] of [
      ["watch_getTransfers", { type: "array", items: { $ref: "#/components/schemas/Transfer" } }],
      ["watch_getTransfersByAddress", { type: "array", items: { $ref: "#/components/schemas/Transfer" } }],
      ["watch_getStatsByDay", { anyOf: [{ $ref: "#/components/schemas/DayStats" }, { type: "null" }] }],
    ] as const) {
      expect([
        name,
        doc.paths[`/node/rest/${name}`].post.responses["200"].content["application/json"].schema,
      ]).toEqual([name, schema]);
    }
    // The bodies and results offer what the chain has: trx only, no token contract.
    const body = (path: string) => {
      const schema = doc.paths[path].post.requestBody.content["application/json"].schema;
      return schema.$ref ? schemas[schema.$ref.split("/").pop()] : schema;
    };
    const noContracts = "null or [] (LTC has no token contracts)";
    for (const name of ["watch_getTransfers", "watch_getTransfersByAddress"]) {
      const { transferType, contractAddresses } = body(`/node/rest/${name}`).properties;
      expect([name, transferType, contractAddresses]).toEqual([
        name,
        {
          anyOf: [{ const: "trx", type: "string" }, { type: "null" }],
          description: `"trx" or null (LTC's transfers are trx only)`,
        },
        {
          anyOf: [
            { type: "null" },
            {
              type: "array",
              items: expect.objectContaining({ format: "address" }),
              maxItems: 0,
              description: noContracts,
            },
          ],
          description: noContracts,
        },
      ]);
    }
    expect(body("/watch_filters/add").properties.contract_address).toEqual({
      type: "null",
      description: "null: LTC has no token contracts, a filter follows the coin",
    });
    expect(schemas.FilterType).toEqual({ const: "trx", type: "string", title: "FilterType" });
    // The health schema has the indexer's section.
    const health = doc.paths["/health"].get.responses["200"].content["application/json"].schema;
    const report = health.$ref ? schemas[health.$ref.split("/").pop()] : health;
    expect(report.properties.indexer.required).toEqual([
      "lastBlockNumber",
      "headBlockNumber",
      "lag",
      "leading",
    ]);
    const ws = doc.paths["/node/jsonrpc"].get.description;
    expect(ws).toContain('`eth_subscribe ["newHeads"]`');
    expect(ws).toContain('`eth_subscribe ["watch_filters", {"version": "v1" | "v2"}]`');
    for (const kind of ["logs", "newPendingTransactions"]) expect(ws).not.toContain(`["${kind}"`);
  });

  test("each example of the document answers: the node's methods as the node does, the data operations as its chain implies", async () => {
    await indexed();
    const doc = await json("/swagger/json");
    const truth = await readChain();
    // No role the instance cannot fill (an account: this family names none) is left as its token.
    expect(JSON.stringify(doc)).not.toContain("@example:");
    const examples = Object.values(
      doc.paths["/node/jsonrpc"].post.requestBody.content["application/json"].examples,
    ) as { value: { jsonrpc: string; id: number; method: string; params: unknown[] } }[];
    const methods = examples.map(({ value }) => value.method);
    // An address's transfers take an address only the caller has.
    expect(methods.filter((m) => DATA_OPERATIONS.includes(m))).toEqual(
      DATA_OPERATIONS.filter((m) => m !== "watch_getTransfersByAddress"),
    );
    expect(methods.filter((m) => !DATA_OPERATIONS.includes(m))).toEqual(
      UTXO_METHODS.filter((m) => methods.includes(m)),
    );
    expect(methods.length).toBeGreaterThan(DATA_OPERATIONS.length);
    const dataAnswer = (method: string, params: any[]) => {
      switch (method) {
        case "watch_getTransfers":
          // §4.6: 50 rows unless a limit says otherwise.
          return truth.allTransfers().slice(0, 50).map(transferOf);
        case "watch_getBlockNumberByTimestamp":
          return blockAt(truth, params[0]);
        case "watch_getStatsByDay":
          return dayStatsOf(truth.day(truth.dayOf(params[0])));
        case "watch_getBlockNumbersByDay":
          return blockRangeOf(truth, params[0]);
      }
      throw new Error(`no answer written for ${method}`);
    };
    for (const { value } of examples) {
      const answer = await rpc(value);
      if (DATA_OPERATIONS.includes(value.method)) {
        const result = dataAnswer(value.method, value.params);
        expect([value.method, answer.status, answer.json]).toEqual([
          value.method,
          200,
          { jsonrpc: "2.0", id: value.id, result },
        ]);
        // Its REST route's example asks the same, and answers the same.
        const body =
          doc.paths[`/node/rest/${value.method}`].post.requestBody.content["application/json"].example;
        const byRest = await rest(value.method, body);
        expect([value.method, byRest.status, byRest.json]).toEqual([value.method, 200, result]);
        continue;
      }
      const own = JSON.parse((await node.post(JSON.stringify(value))).text);
      expect([value.method, answer.status, answer.json.error]).toEqual([
        value.method,
        200,
        own.error ?? undefined,
      ]);
      if (own.error) continue;
      // Nothing moves meanwhile (no block is mined, the mempool is empty): the same result.
      expect([value.method, answer.json.result]).toEqual([value.method, own.result]);
    }
  });

  test("the docs page names no other chain", async () => {
    const page = await (await fetch(`${service.url}/swagger`)).text();
    expect(page).toContain("<title>Blockchain data access service - API</title>");
    expect(page).not.toMatch(/ethereum/i);
  });
});

describe("the README's section on this family", () => {
  const section = readmeSection("## In front of a Bitcoin-family node");
  const blocks = (language: string) => codeBlocks(section, language);

  test("its examples answer what the node's answers say, and its refusals as it shows them", async () => {
    const [, examples] = blocks("sh");
    const commands = curlCommands(examples!);
    expect(commands).toHaveLength(6);
    const run = (command: string) => runCurl(command, service.url, KEY);
    const height = await indexed();
    const truth = await readChain();
    const answers: any[] = [];
    for (const command of commands) answers.push(await run(command));
    const [heads, block, refusals, rest, transfers, health] = answers;
    expect(heads).toEqual([
      { jsonrpc: "2.0", id: 1, result: height },
      { jsonrpc: "2.0", id: 2, result: await node.rpc("getbestblockhash") },
      { jsonrpc: "2.0", id: 3, result: GENESIS },
    ]);
    expect(block).toEqual({ jsonrpc: "2.0", id: 1, result: await node.rpc("getblock", [GENESIS, 2]) });
    expect(block.result.confirmations).toBe(height + 1);
    // The answers the README shows, exactly.
    const [shownBatch, shownRest] = blocks("json")[0]!.split("\n{");
    expect(refusals).toEqual(JSON.parse(shownBatch!));
    expect(rest).toEqual(JSON.parse(`{${shownRest}`));
    // Block 1's coinbase pays the node's wallet: its one row.
    const rows = truth.allTransfers({ fromBlock: 1, toBlock: 1 });
    expect(rows.map((t) => [t.from, t.to, t.transactionIndex])).toEqual([["coinbase", node.address, 0]]);
    expect(transfers).toEqual(rows.map(transferOf));
    expect(health).toMatchObject({ status: "ok", chain: "LTC", head: { number: height } });
    expect(health.indexer).toEqual({
      lastBlockNumber: height,
      headBlockNumber: height,
      lag: 0,
      leading: true,
    });
  });
});
