/**
 * The planner's statistics of `transactions` as the Bitcoin family's index grows
 * (src/families/utxo/plannerStatistics.ts), on a real PostgreSQL with the family's schema: the writers
 * ANALYZE the table each time the rows written since the last ANALYZE reach what it held then, and an
 * outpoint's lookup (indexedOutputs.ts: through the transaction's txid, sql/utxo/017) expects one
 * transaction a txid once they did, where with no statistics it expects one in 200 of the table's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../src/db/database";
import { migrate, readMigrations } from "../src/db/migrate";
import { indexedOutputs } from "../src/families/utxo/indexedOutputs";
import { ANALYZE_MIN_ROWS, createPlannerStatistics } from "../src/families/utxo/plannerStatistics";
import { createLogger } from "../src/log";
import { postgresServer } from "./support/shared";

let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(await (await postgresServer()).createDatabase(), { max: 1, onnotice: () => {} });
  await migrate(sql as unknown as Sql, createLogger({ level: "silent" }), {}, readMigrations("utxo"));
});

afterAll(async () => {
  await sql?.end();
});

/** Transactions `from` to `to` (a block of 100 each), each with 11 outputs, written as a writer would. */
async function write(from: number, to: number) {
  await sql`insert into transactions (block_number, position, txid, fee, size, vsize, weight, coinbase,
      input_count, output_count, from_addresses)
    select n / 100, n % 100, sha256(int8send(n)), 0, 200, 200, 800, false, 1, 11, '{}'
    from generate_series(${from}::bigint, ${to}::bigint) n`;
  await sql`insert into outputs (txid, vout, block_number, position, address, script, value, pays)
    select sha256(int8send(n)), v, n / 100, n % 100, 'ltc1q' || (n % 997), '\\x0014'::bytea, 1000, true
    from generate_series(${from}::bigint, ${to}::bigint) n, generate_series(0, 10) v`;
}

const analyzed = async () => {
  const [row] = await sql`select reltuples::float8 as n from pg_class where oid = 'transactions'::regclass`;
  return Number(row!.n);
};

/** The transactions the planner expects a txid to name, in a plan of the lookup. */
const txidRows = (plan: string) => Number(/on transactions t {2}\(cost=[\d.]+ rows=(\d+)/.exec(plan)?.[1]);

/** The plan of the lookup of 500 outpoints, as indexedOutputs asks it. */
async function lookupPlan(): Promise<string> {
  const txids = Array.from({ length: 500 }, (_, i) => i * 37);
  const rows = await sql`explain select o.vout
    from unnest(array(select encode(sha256(int8send(n)), 'hex') from unnest(${txids}::bigint[]) n),
      array_fill(3, array[500])) as p(txid, vout)
    cross join lateral (select o.* from transactions t
      join outputs o on o.block_number = t.block_number and o.position = t.position and o.vout = p.vout
      where t.txid = decode(p.txid, 'hex') offset 0) o`;
  return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
}

test("the writers ANALYZE transactions each time its rows doubled, from ANALYZE_MIN_ROWS; the lookup by outpoint then expects one transaction a txid", async () => {
  const statistics = createPlannerStatistics(sql as unknown as Sql);
  expect(await analyzed()).toBe(-1);
  await write(0, ANALYZE_MIN_ROWS - 2);
  await statistics.written(ANALYZE_MIN_ROWS - 1);
  expect(await analyzed()).toBe(-1);
  // With no statistics the planner takes a txid for one of 200 values: tens of the 9,999 transactions each.
  expect(txidRows(await lookupPlan())).toBeGreaterThan(10);

  await write(ANALYZE_MIN_ROWS - 1, ANALYZE_MIN_ROWS - 1);
  await statistics.written(1);
  expect(await analyzed()).toBe(ANALYZE_MIN_ROWS);
  await write(ANALYZE_MIN_ROWS, 2 * ANALYZE_MIN_ROWS - 2);
  await statistics.written(ANALYZE_MIN_ROWS - 1);
  expect(await analyzed()).toBe(ANALYZE_MIN_ROWS);
  await write(2 * ANALYZE_MIN_ROWS - 1, 2 * ANALYZE_MIN_ROWS - 1);
  await statistics.written(1);
  expect(await analyzed()).toBe(2 * ANALYZE_MIN_ROWS);
  // Then it knows a txid for one transaction: each outpoint's output is probed by its place.
  const plan = await lookupPlan();
  expect(txidRows(plan)).toBe(1);
  expect(plan).toContain("Index Scan using transactions_txid on transactions t");
  expect(plan).toMatch(
    /Scan using outputs_pkey on outputs o .*\n\s+Index Cond: \(\(block_number = t.block_number\) AND \("position" = t."position"\) AND \(vout = p.vout\)\)/,
  );

  // The answer is the outputs the outpoints name.
  const [named] = await sql`select encode(sha256(int8send(12345::bigint)), 'hex') as txid`;
  const found = await indexedOutputs(sql as unknown as Sql, [
    { txid: named!.txid as string, vout: 10 },
    { txid: "00".repeat(32), vout: 0 },
  ]);
  expect([...found.values()].map((o) => [o.address, o.value])).toEqual([[`ltc1q${12345 % 997}`, 1000n]]);
}, 60_000);

test("a writer started on an index analyzed before counts from what that ANALYZE saw", async () => {
  const statistics = createPlannerStatistics(sql as unknown as Sql);
  expect(await analyzed()).toBe(2 * ANALYZE_MIN_ROWS);
  await write(2 * ANALYZE_MIN_ROWS, 3 * ANALYZE_MIN_ROWS - 1);
  await statistics.written(ANALYZE_MIN_ROWS);
  expect(await analyzed()).toBe(2 * ANALYZE_MIN_ROWS);
  await write(3 * ANALYZE_MIN_ROWS, 4 * ANALYZE_MIN_ROWS - 1);
  await statistics.written(ANALYZE_MIN_ROWS);
  expect(await analyzed()).toBe(4 * ANALYZE_MIN_ROWS);
}, 60_000);
