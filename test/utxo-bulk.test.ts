/**
 * The Bitcoin family's bulk load (issue 34 item 2; src/indexer/bulk.ts, src/families/utxo/bulkLoad.ts) on a
 * real regtest Litecoin Core and a real PostgreSQL: the shared test chain (test/support/utxoChain.ts: every
 * script type, three days, a block back in time) with 150 blocks more, indexed once by the normal path
 * (INDEX_BULK_DISTANCE_BLOCKS=0, in-process) and once by a service process bulk loading all but the last
 * DISTANCE blocks, stopped (SIGTERM) and killed (SIGKILL) in the middle of its bulk load and started again.
 * The node is behind a proxy that delays each request, so that the bulk load lasts seconds and is caught
 * in the middle. Stopped there, an instance that does not index reads it: the reads that depend on what the
 * end makes (an address's Esplora figures, history and unspent outputs, transfers, the days' figures) are
 * 503 naming the bulk load, the others (transactions, block pages, the mempool's) the normal path's answers.
 * Afterwards every row of every table is the normal path's (the address totals and the days' figures
 * included), the read side's indexes are there as the migrations made them, the same reads answer as the
 * normal path's, and a reorg near the head is followed by both alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import postgres from "postgres";
import { BULK_NOTICE_MS } from "../src/families/utxo/bulkReads";
import { startProxy } from "./support/proxy";
import {
  post,
  type ServiceProcess,
  startServiceProcess,
  startTestService,
  type TestService,
} from "./support/service";
import { onTeardown, postgresServer } from "./support/shared";
import { until } from "./support/until";
import { startUtxoChain, type UtxoChain } from "./support/utxoChain";

const ENV = { CHAIN: "LTC", INDEXER: "on", HEAD_POLL_MS: "50", CONFIRMATIONS: "6" };
/** Blocks within the head's reach: written by the normal path after the bulk load. */
const DISTANCE = 4;
/** Blocks mined on the shared chain: a few hundred in all. */
const MORE_BLOCKS = 150;
/** What the proxy waits before each node request: a window of the bulk load takes about a second. */
const NODE_DELAY_MS = 150;
const CATCH_UP_MS = 90_000;
/** How long the indexer waits before it leads again after a failure (src/indexer/indexer.ts LOCK_RETRY_MS). */
const LEAD_RETRY_MS = 2_000;
/** The index's tables, compared row by row. */
const TABLES = [
  "blocks",
  "transactions",
  "outputs",
  "address_transactions",
  "address_totals",
  "address_scripts",
  "daily_stats",
  "day_addresses",
];

let chain: UtxoChain;
let normal: TestService;
let normalDb: postgres.Sql;
let bulkUrl: string;
let bulkDb: postgres.Sql;
let proxy: ReturnType<typeof startProxy>;
let head: number;
/** Where the first bulk-loading service was stopped, in the middle of its bulk load. */
let stopped: { last: number | null; bulking: boolean; keyed: boolean };

const open = (url: string) => {
  const db = postgres(url, { max: 1, onnotice: () => {} });
  onTeardown(() => db.end({ timeout: 1 }));
  return db;
};

/** The chain's schema of a database (db/chainSchema.ts): the one with the index's tables. */
async function useChainSchema(db: postgres.Sql): Promise<string> {
  const [row] =
    await db`select table_schema from information_schema.tables where table_name = 'indexer_state'`;
  const schema = row!.table_schema as string;
  await db.unsafe(`set search_path to "${schema}"`);
  return schema;
}

async function lastBlock(db: postgres.Sql): Promise<number | undefined> {
  const [row] = await db`select last_block::int as last from indexer_state`.catch(() => [undefined]);
  return row?.last as number | undefined;
}

function indexAt(db: postgres.Sql, height: number): Promise<true> {
  return until(
    `the index to reach block ${height}`,
    async () => ((await lastBlock(db)) === height ? true : undefined),
    CATCH_UP_MS,
  );
}

/** Every row of every index table, each as its JSON text, sorted; and where the index ends. */
async function contents(db: postgres.Sql) {
  const tables: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rows = await db`select to_jsonb(t)::text as row from ${db(table)} t order by 1`;
    tables[table] = rows.map((r) => r.row as string);
  }
  const [state] = await db`select first_block::int as first, last_block::int as last from indexer_state`;
  return { tables, state: { ...state } };
}

/** The schema's indexes and their definitions, the schema's name taken out. */
async function indexes(db: postgres.Sql, schema: string) {
  const rows =
    await db`select indexname, indexdef from pg_indexes where schemaname = ${schema} order by indexname`;
  return rows.map((r) => [r.indexname, (r.indexdef as string).replaceAll(schema, "S")]);
}

/** Whether a bulk load is under way, and the index's end, read together. */
async function bulkState(db: postgres.Sql) {
  const [row] = await db`select (select last_block::int from indexer_state) as last,
      exists (select 1 from bulk_load) as bulking,
      exists (select 1 from pg_indexes where indexname = 'address_transactions_pkey') as keyed`.catch(() => [
    undefined,
  ]);
  return row as { last: number | null; bulking: boolean; keyed: boolean } | undefined;
}

/** An instance reading the bulk-loaded index without writing it (where a bulk load stopped, it stays). */
const startReader = (): Promise<TestService> =>
  startTestService({ upstreamUrls: [chain.node.url], databaseUrl: bulkUrl, env: { ...ENV, INDEXER: "off" } });

/** A GET's status, Retry-After and text. */
async function ask(base: string, path: string) {
  const response = await fetch(`${base}${path}`);
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    text: await response.text(),
  };
}

/** Esplora's scripthash of an address: the SHA-256 of its output script, reversed. */
async function scripthashOf(address: string): Promise<string> {
  const { scriptPubKey } = await chain.node.rpc<{ scriptPubKey: string }>("validateaddress", [address]);
  return createHash("sha256").update(Buffer.from(scriptPubKey, "hex")).digest().reverse().toString("hex");
}

/**
 * The reads asked during the bulk load and after it: those its figures or its dropped indexes decide (each
 * with the words of its refusal), and those answered during it as the normal path answers them
 * (transactions and block pages, found by their outputs' keys, on both sides of its last block `last`).
 */
async function questions(last: number) {
  const { addresses, txs, blocks } = chain;
  const esploraRefused: [path: string, what: string][] = [];
  const esploraAnswered: string[] = [];
  for (const address of [addresses.legacy, addresses.p2sh, addresses.bech32, addresses.miner]) {
    for (const base of [
      `/esplora/address/${address}`,
      `/esplora/scripthash/${await scripthashOf(address)}`,
    ]) {
      esploraRefused.push(
        [base, "an address's figures"],
        [`${base}/txs`, "an address's confirmed transactions"],
        [`${base}/txs/chain`, "an address's confirmed transactions"],
        [`${base}/txs/chain/${txs.fund}`, "an address's confirmed transactions"],
        [`${base}/utxo`, "an address's unspent outputs"],
      );
      esploraAnswered.push(`${base}/txs/mempool`);
    }
  }
  const coinbaseOf = async (height: number) =>
    (await chain.node.rpc<{ tx: string[] }>("getblock", [await chain.node.rpc("getblockhash", [height])]))
      .tx[0]!;
  const txids = [
    txs.fund,
    txs.fundLegacy,
    txs.change,
    txs.multiFrom,
    txs.sendmany,
    await coinbaseOf(1),
    await coinbaseOf(last),
    await coinbaseOf(last + 1),
  ];
  for (const txid of txids) {
    esploraAnswered.push(
      `/esplora/tx/${txid}`,
      `/esplora/tx/${txid}/status`,
      `/esplora/tx/${txid}/hex`,
      `/esplora/tx/${txid}/merkle-proof`,
    );
  }
  for (const height of [blocks.fund, blocks.fund + 1, last, last + 1]) {
    esploraAnswered.push(`/esplora/block/${await chain.node.rpc<string>("getblockhash", [height])}/txs`);
  }
  // Each with its REST body and its JSON-RPC params.
  const operation = (name: string, body: Record<string, unknown>, params: unknown[], what: string) => ({
    name,
    body,
    params,
    what,
  });
  const transfers = { limit: 500 };
  const byAddress = { addresses: addresses.legacy, limit: 50 };
  const operationsRefused = [
    operation("watch_getTransfers", transfers, [transfers], "transfers"),
    operation("watch_getTransfersByAddress", byAddress, [byAddress], "transfers"),
    ...chain.days.map((day) => {
      const timestamp = Date.parse(`${day}T12:00:00Z`) / 1000;
      return operation("watch_getStatsByDay", { timestamp }, [timestamp], `the figures of ${day}`);
    }),
  ];
  return { esploraRefused, esploraAnswered, operationsRefused };
}

/** How often the bulk load's beginning is polled. */
const BEGIN_POLL_MS = 5;
/** How much earlier than asked a timer may fire. */
const TIMER_SLACK_MS = 2;

/**
 * The most time there can have been between a bulk load's marker and its first rows, from polls every
 * BEGIN_POLL_MS on a connection of its own from before the service starts: from the start of the last poll
 * that saw neither to the end of the first that saw rows. A bound from above, so a loaded machine that is
 * slow to poll widens it and never makes it shorter than the time the service waited.
 */
async function bulkBeginning(): Promise<number> {
  const db = open(bulkUrl);
  const deadline = performance.now() + CATCH_UP_MS;
  let unmarked: number | undefined;
  while (performance.now() < deadline) {
    const start = performance.now();
    const state = (await useChainSchema(db).catch(() => undefined)) ? await bulkState(db) : undefined;
    if (state?.last !== undefined && state.last !== null && state.last >= 0) {
      if (unmarked === undefined) throw new Error("the bulk load's rows were there at the first poll");
      return performance.now() - unmarked;
    }
    if (!state?.bulking) unmarked = start;
    await Bun.sleep(BEGIN_POLL_MS);
  }
  throw new Error("the bulk load wrote no rows in time");
}

/** Starts the bulk-loading service on its database, through the slow proxy. */
const startBulk = (): Promise<ServiceProcess> =>
  startServiceProcess({
    upstreamUrls: [proxy.url],
    databaseUrl: bulkUrl,
    env: { ...ENV, INDEX_BULK_DISTANCE_BLOCKS: String(DISTANCE) },
  });

/** Waits until the bulk load is under way and its index past `past`, short of the bulk load's end. */
async function midBulk(past: number): Promise<number> {
  return until(
    `the bulk load to pass block ${past}`,
    async () => {
      const state = await bulkState(bulkDb);
      if (!state?.bulking || state.keyed || state.last === null) return undefined;
      if (state.last <= past) return undefined;
      if (state.last >= head - DISTANCE)
        throw new Error(`the bulk load ended (${state.last}) before it was caught`);
      return state.last;
    },
    CATCH_UP_MS,
  );
}

beforeAll(async () => {
  chain = await startUtxoChain();
  await chain.mine(MORE_BLOCKS);
  head = await chain.node.rpc<number>("getblockcount");
  const pg = await postgresServer();
  const normalUrl = await pg.createDatabase();
  bulkUrl = await pg.createDatabase();
  normal = await startTestService({
    upstreamUrls: [chain.node.url],
    databaseUrl: normalUrl,
    env: { ...ENV, INDEX_BULK_DISTANCE_BLOCKS: "0" },
  });
  normalDb = open(normalUrl);
  bulkDb = open(bulkUrl);
  proxy = startProxy(chain.node.url);
  proxy.delayMs = NODE_DELAY_MS;
}, 180_000);

afterAll(async () => {
  await normal?.stop();
});

test("a bulk load commits no row until BULK_NOTICE_MS after its marker (the readers' notice); stopped (SIGTERM) in its middle it keeps its marker and its dropped indexes, the index ending at a group it committed", async () => {
  // The node at full speed while it begins: its first window is read in well under BULK_NOTICE_MS.
  proxy.delayMs = 0;
  const beginning = bulkBeginning();
  const first = await startBulk();
  const gap = await beginning;
  proxy.delayMs = NODE_DELAY_MS;
  expect(gap).toBeGreaterThanOrEqual(BULK_NOTICE_MS - TIMER_SLACK_MS);
  const bulkSchema = await until(
    "the bulk index's tables",
    () => useChainSchema(bulkDb).catch(() => undefined),
    CATCH_UP_MS,
  );
  // Past the blocks of every script type, so that reads of them during the bulk load read its rows.
  const stoppedAt = await midBulk(chain.blocks.fund + 1);
  await first.stop();
  stopped = (await bulkState(bulkDb))!;
  expect(stopped.bulking).toBe(true);
  expect(stopped.keyed).toBe(false);
  expect(stopped.last).toBeGreaterThanOrEqual(stoppedAt);
  expect(stopped.last).toBeLessThan(head - DISTANCE);
  expect(bulkSchema.length).toBeGreaterThan(0);
}, 120_000);

test("during a bulk load, the reads its figures or dropped indexes decide are refused (503, Retry-After, naming it and how far it is); the others answer as the normal path's index", async () => {
  // The bulk load stopped in its middle, read by an instance that does not index: it stays there.
  const reader = await startReader();
  const last = stopped.last!;
  const q = await questions(last);
  const refusal = (what: string) =>
    `${what} are not answered while the index is bulk loaded (from block 0, now at block ${last}): the address totals, scripthashes and daily figures of its blocks, and the lookups by address and by block, are made when it ends; retry later`;
  for (const [path, what] of q.esploraRefused) {
    const a = await ask(reader.url, path);
    expect({ path, ...a }).toEqual({ path, status: 503, retryAfter: "60", text: refusal(what) });
  }
  for (const path of q.esploraAnswered) {
    const a = await ask(reader.url, path);
    expect({ path, ...a }).toEqual({ path, ...(await ask(normal.url, path)) });
  }
  expect((await ask(reader.url, "/esplora/blocks/tip/height")).text).toBe(String(last));
  for (const { name, body, params, what } of q.operationsRefused) {
    const r = await post(`${reader.url}/node/rest/${name}`, body);
    expect({ name, status: r.status, retryAfter: r.headers.get("retry-after"), body: r.json }).toEqual({
      name,
      status: 503,
      retryAfter: "60",
      body: { detail: refusal(what) },
    });
    const j = await post(`${reader.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method: name, params });
    expect(j.json).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32603, message: refusal(what) } });
  }
  // No block's watch-filter results are published before the bulk load ends (it began at block 0).
  expect((await ask(reader.url, "/watch_filters/lastBlockNumber")).text).toBe('{"block_number":-1}');
  await reader.stop();
  // Nothing moved while it was read.
  expect(await bulkState(bulkDb)).toEqual(stopped);
}, 120_000);

test("a bulk load started again, then killed (SIGKILL), in its middle resumes each time with no gap and nothing above the index's end; its indexes built once it ends", async () => {
  const after = stopped;
  // Started again: the bulk load resumes (no gap: the blocks are consecutive from 0).
  const second = await startBulk();
  const resumedAt = await midBulk(after.last! + 1);
  expect(resumedAt).toBeGreaterThan(after.last!);
  const [blocks] =
    await bulkDb`select count(*)::int as n, min(number)::int as lo, max(number)::int as hi from blocks`;
  expect(blocks!.lo).toBe(0);
  expect(blocks!.n).toBe(blocks!.hi + 1);

  // Killed (SIGKILL) in the middle of the same bulk load: its groups in flight die with it.
  await second.kill("SIGKILL");
  const killed = (await bulkState(bulkDb))!;
  expect(killed.bulking).toBe(true);
  expect(killed.keyed).toBe(false);
  const [above] = await bulkDb`select
      (select count(*)::int from blocks where number > ${killed.last!}) as blocks,
      (select count(*)::int from outputs where block_number > ${killed.last!}) as outputs`;
  expect({ ...above }).toEqual({ blocks: 0, outputs: 0 });

  // Its end cut short: a table in the way of one index's build fails that step (and the instance's lead,
  // which tries again); the other steps are made, each recorded once, and the load stays until all are.
  await bulkDb`create table outputs_unspent (in_the_way integer)`;
  const third = await startBulk();
  const cutShort = await until(
    "the bulk load's end to have made every step but the one in the way",
    async () => {
      const [row] = await bulkDb`select finished from bulk_load`;
      return (row?.finished as string[] | undefined)?.length === 7 ? (row!.finished as string[]) : undefined;
    },
    CATCH_UP_MS,
  );
  expect([...cutShort].sort()).toEqual([
    "address_transactions_block",
    "address_transactions_pkey",
    "address_transactions_sending",
    "days",
    "scripts 1/2",
    "scripts 2/2",
    "totals",
  ]);
  // Tried again meanwhile (the lead retries after LOCK_RETRY_MS): nothing made twice (the tables below).
  await Bun.sleep(LEAD_RETRY_MS * 2);
  expect((await bulkState(bulkDb))?.bulking).toBe(true);
  await bulkDb`drop table outputs_unspent`;
  await indexAt(bulkDb, head);
  await indexAt(normalDb, head);
  await until(
    "the bulk load to end",
    async () => ((await bulkState(bulkDb))?.bulking === false ? true : undefined),
    CATCH_UP_MS,
  );
  await third.stop();
}, 240_000);

test("after the bulk load, every table is the normal path's, the daily figures and address totals too, and the indexes are built", async () => {
  const normalSchema = await useChainSchema(normalDb);
  const bulkSchema = await useChainSchema(bulkDb);
  const a = await contents(normalDb);
  const b = await contents(bulkDb);
  expect(b.state).toEqual({ first: 0, last: head });
  for (const table of TABLES) {
    expect(a.tables[table]!.length).toBeGreaterThan(0);
    expect({ table, rows: b.tables[table] }).toEqual({ table, rows: a.tables[table] });
  }
  // Figures the chain implies: three days, every block counted once.
  const days = await bulkDb`select day::text as day, block_count from daily_stats order by day`;
  expect(days.reduce((n, d) => n + (d.block_count as number), 0)).toBe(head + 1);
  const normalIndexes = await indexes(normalDb, normalSchema);
  expect(await indexes(bulkDb, bulkSchema)).toEqual(normalIndexes);
  expect(normalIndexes.map(([name]) => name)).toEqual(
    expect.arrayContaining([
      "transactions_txid",
      "outputs_pkey",
      "outputs_unspent",
      "address_transactions_pkey",
      "address_transactions_sending",
      "address_transactions_block",
    ]),
  );
  const [pk] = await bulkDb`select pg_get_constraintdef(oid) as def from pg_constraint
    where conname = 'address_transactions_pkey' and contype = 'p'`;
  expect(pk!.def).toBe('PRIMARY KEY (address, block_number, "position") INCLUDE (inputs)');
  const [outputsKey] = await bulkDb`select pg_get_constraintdef(oid) as def from pg_constraint
    where conname = 'outputs_pkey' and contype = 'p'`;
  expect(outputsKey!.def).toBe('PRIMARY KEY (block_number, "position", vout)');
  expect(await bulkDb`select * from bulk_load`).toHaveLength(0);
}, 60_000);

test("after the bulk load, the reads refused during it and the others answer exactly as the normal path's index", async () => {
  const reader = await startReader();
  const q = await questions(stopped.last!);
  const paths = [
    ...q.esploraRefused.map(([path]) => path),
    ...q.esploraAnswered,
    "/esplora/blocks/tip/height",
  ];
  for (const path of paths) {
    const a = await ask(reader.url, path);
    expect({ path, status: a.status }).toEqual({ path, status: 200 });
    expect({ path, ...a }).toEqual({ path, ...(await ask(normal.url, path)) });
  }
  for (const { name, body, params } of q.operationsRefused) {
    const r = await post(`${reader.url}/node/rest/${name}`, body);
    expect({ name, status: r.status }).toEqual({ name, status: 200 });
    expect({ name, text: r.text }).toEqual({
      name,
      text: (await post(`${normal.url}/node/rest/${name}`, body)).text,
    });
    const rpc = { jsonrpc: "2.0", id: 1, method: name, params };
    expect((await post(`${reader.url}/node/jsonrpc`, rpc)).text).toBe(
      (await post(`${normal.url}/node/jsonrpc`, rpc)).text,
    );
  }
  const published = await ask(reader.url, "/watch_filters/lastBlockNumber");
  expect(published.text).toBe(`{"block_number":${head - Number(ENV.CONFIRMATIONS)}}`);
  expect(published).toEqual(await ask(normal.url, "/watch_filters/lastBlockNumber"));
  await reader.stop();
}, 120_000);

test("a reorg near the head after the bulk load is undone and followed as by the normal path", async () => {
  const bulk = await startBulk();
  const { node } = chain;
  const forkHash = await node.rpc<string>("getblockhash", [head - 1]);
  const dropped = await node.rpc<string>("getblockhash", [head]);
  await node.rpc("invalidateblock", [forkHash]);
  const added = await chain.mine(3);
  const newHead = head - 2 + 3;
  expect(await node.rpc<number>("getblockcount")).toBe(newHead);
  await indexAt(bulkDb, newHead);
  await indexAt(normalDb, newHead);
  const hashOf = async (db: postgres.Sql, n: number) =>
    (await db`select encode(hash, 'hex') as h from blocks where number = ${n}`)[0]?.h;
  expect(await hashOf(bulkDb, newHead)).toBe(added[2]);
  expect(await hashOf(bulkDb, head)).not.toBe(dropped);
  const a = await contents(normalDb);
  const b = await contents(bulkDb);
  expect(b).toEqual(a);
  await bulk.stop();
}, 120_000);
