/**
 * The Bitcoin family's bulk load (issue 34 item 2; src/indexer/bulk.ts, src/families/utxo/bulkLoad.ts) on a
 * real regtest Litecoin Core and a real PostgreSQL: the shared test chain (test/support/utxoChain.ts: every
 * script type, three days, a block back in time) with 150 blocks more, indexed once by the normal path
 * (INDEX_BULK_DISTANCE_BLOCKS=0, in-process) and once by a service process bulk loading all but the last
 * DISTANCE blocks, stopped (SIGTERM) and killed (SIGKILL) in the middle of its bulk load and started again.
 * The node is behind a proxy that delays each request, so that the bulk load lasts seconds and is caught
 * in the middle. Afterwards every row of every table is the normal path's (the address totals and the days'
 * figures included), the read side's indexes are there as the migrations made them, and a reorg near the
 * head is followed by both alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { startProxy } from "./support/proxy";
import {
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
let proxyUrl: string;
let head: number;

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

/** Starts the bulk-loading service on its database, through the slow proxy. */
const startBulk = (): Promise<ServiceProcess> =>
  startServiceProcess({
    upstreamUrls: [proxyUrl],
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
  const proxy = startProxy(chain.node.url);
  proxy.delayMs = NODE_DELAY_MS;
  proxyUrl = proxy.url;
}, 180_000);

afterAll(async () => {
  await normal?.stop();
});

test("a bulk load stopped (SIGTERM), then killed (SIGKILL), in its middle resumes each time with no gap and nothing above the index's end; its indexes built once it ends", async () => {
  const first = await startBulk();
  const bulkSchema = await until(
    "the bulk index's tables",
    () => useChainSchema(bulkDb).catch(() => undefined),
    CATCH_UP_MS,
  );
  const stoppedAt = await midBulk(40);
  await first.stop();
  const after = (await bulkState(bulkDb))!;
  // Stopped mid-bulk: the marker and the dropped indexes stay, the index ends at a group it committed.
  expect(after.bulking).toBe(true);
  expect(after.keyed).toBe(false);
  expect(after.last).toBeGreaterThanOrEqual(stoppedAt);
  expect(after.last).toBeLessThan(head - DISTANCE);
  expect(bulkSchema.length).toBeGreaterThan(0);

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

  const third = await startBulk();
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
      "outputs_block",
      "outputs_unspent",
      "address_transactions_pkey",
      "address_transactions_sending",
      "address_transactions_block",
    ]),
  );
  const [pk] = await bulkDb`select pg_get_constraintdef(oid) as def from pg_constraint
    where conname = 'address_transactions_pkey' and contype = 'p'`;
  expect(pk!.def).toBe('PRIMARY KEY (address, block_number, "position") INCLUDE (inputs)');
  expect(await bulkDb`select * from bulk_load`).toHaveLength(0);
}, 60_000);

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
