/**
 * The reads of an address with a long history (the Bitcoin family's index, sql/utxo/, on a real PostgreSQL):
 * one address with 100,000 transactions, written straight into the tables, and the plans PostgreSQL runs
 * for each read of it (EXPLAIN ANALYZE with its buffers). Each read must cost what its answer holds, never
 * what the history holds: its figures are one row of its totals (no sum over its rows), where a txid is in
 * its history is the transaction's own index then the address's row by its key (no scan of its rows), and a
 * page below a place in it is as long as the page.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../src/db/database";
import { migrate, readMigrations } from "../src/db/migrate";
import { addressStatements } from "../src/families/utxo/esplora/esploraQueries";
import { createUtxoTransferQueries } from "../src/families/utxo/transferQueries";
import { utxo } from "../src/families/utxo/utxo";
import { createLogger } from "../src/log";
import type { TransferQuery } from "../src/operations/transferQueries";
import { onTeardown, postgresServer } from "./support/shared";

/** The history: this many blocks of this many transactions, each paying the address. */
const BLOCKS = 1_000;
const PER_BLOCK = 100;
const HISTORY = BLOCKS * PER_BLOCK;
const ADDRESS = "rltc1qlonghistory0000000000000000000000000000";
/** The txid of the address's transaction at (block b, position p), in SQL: 32 bytes, unique. */
const TXID = "sha256(int8send(b * 1000 + p))";

let db: Sql;

interface PlanNode {
  "Node Type": string;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

/** What running a statement took: its plan's node types, and the pages it touched. */
async function plan(statement: postgres.PendingQuery<postgres.Row[]>) {
  const [row] = await db`explain (analyze, buffers, format json) ${statement}`;
  const top = (row!["QUERY PLAN"] as { Plan: PlanNode }[])[0]!.Plan;
  const nodes: string[] = [];
  const walk = (node: PlanNode) => {
    nodes.push(node["Node Type"]);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(top);
  return { nodes, pages: top["Shared Hit Blocks"] + top["Shared Read Blocks"] };
}

beforeAll(async () => {
  db = postgres(await (await postgresServer()).createDatabase(), { max: 1, onnotice: () => {} }) as Sql;
  onTeardown(() => db.end({ timeout: 1 }));
  await migrate(db, createLogger({ level: "silent" }), {}, readMigrations(utxo.index!.migrations));
  await db.unsafe(`
    insert into blocks select b, sha256(int8send(b)), sha256(int8send(b - 1)), 1584000000 + b * 60,
      1584000000 + b * 60, 1584000000 + b * 60, '2020-03-12', 1000, 4000, ${PER_BLOCK}, ${PER_BLOCK},
      ${PER_BLOCK}, 0, 0, 0, 0
    from generate_series(0, ${BLOCKS - 1}) b;
    insert into transactions select b, p, ${TXID}, 0, 200, 200, 800, p = 0, 1, 1, '{}'
    from generate_series(0, ${BLOCKS - 1}) b, generate_series(0, ${PER_BLOCK - 1}) p;
    insert into outputs (txid, vout, block_number, position, address, script, value, pays)
    select ${TXID}, 0, b, p, '${ADDRESS}', '\\x0014'::bytea, 1000, true
    from generate_series(0, ${BLOCKS - 1}) b, generate_series(0, ${PER_BLOCK - 1}) p;
    insert into address_transactions select '${ADDRESS}', b, p, ${TXID}, 1000, 0, 1, 0
    from generate_series(0, ${BLOCKS - 1}) b, generate_series(0, ${PER_BLOCK - 1}) p;
    insert into address_totals values ('${ADDRESS}', ${HISTORY}, ${HISTORY * 1000}, 0, 0, ${HISTORY});
    insert into address_totals select 'rltc1qother' || i, 1, 1000, 0, 0, 1 from generate_series(1, ${HISTORY}) i;
  `);
  await db`vacuum analyze`;
  // A read of the history would touch as many pages as its rows fill.
  const [row] = await db`select relpages from pg_class where relname = 'address_transactions'`;
  expect(row!.relpages).toBeGreaterThan(1_000);
}, 120_000);

describe("Esplora's reads of an address with 100,000 transactions", () => {
  const statements = () => addressStatements(db);

  test("its figures: one row of its totals, no sum over its history", async () => {
    const [row] = await statements().stats(ADDRESS);
    expect({ ...row }).toEqual({
      funded_count: String(HISTORY),
      funded_sum: String(HISTORY * 1000),
      spent_count: "0",
      spent_sum: "0",
      tx_count: String(HISTORY),
    });
    const { nodes, pages } = await plan(statements().stats(ADDRESS));
    expect(nodes).toEqual(["Index Scan"]);
    expect(pages).toBeLessThanOrEqual(4);
  });

  test("where its oldest txid is: the transaction's index, then the address's row by its key", async () => {
    const [oldest] = await db`select encode(txid, 'hex') as txid from transactions
      where block_number = 0 and position = 0`;
    const [row] = await statements().historyCursor(ADDRESS, oldest!.txid);
    expect({ ...row }).toEqual({ block: "0", position: 0 });
    const { nodes, pages } = await plan(statements().historyCursor(ADDRESS, oldest!.txid));
    expect(nodes).not.toContain("Seq Scan");
    expect(nodes.filter((n) => n.startsWith("Index"))).toHaveLength(2);
    expect(pages).toBeLessThanOrEqual(12);
  });

  test("a page below a place deep in it: as long as the page", async () => {
    // Below the 27th oldest: the 26th to the 2nd.
    const after = { block: 0n, position: 26 };
    const expected = await db`select encode(txid, 'hex') as txid from transactions
      where block_number = 0 and position between 1 and 25 order by position desc`;
    const rows = await statements().history(ADDRESS, after, 25);
    expect(rows.map((r) => r.txid)).toEqual(expected.map((r) => r.txid));
    const { nodes, pages } = await plan(statements().history(ADDRESS, after, 25));
    expect(nodes).not.toContain("Seq Scan");
    expect(nodes).not.toContain("Sort");
    // A few pages a row (the address's index, its block's, its transaction's), whatever the history's.
    expect(pages).toBeLessThanOrEqual(25 * 10);
  });
});

describe("its transfers, page by page", () => {
  /** The pages a transfer query's page touched (its key query's EXPLAIN ANALYZE), and its plan. */
  async function transfersPlan(q: Partial<TransferQuery>) {
    const query = { fromBlock: 0n, toBlock: 2n ** 63n - 1n, offset: 0, limit: 50, ...q };
    const plan = await createUtxoTransferQueries(db).explain(query);
    const [, hit, read] = /Buffers: shared hit=(\d+)(?: read=(\d+))?/.exec(plan)!;
    return { plan, pages: Number(hit) + Number(read ?? 0) };
  }
  /** The last row of block 500: half-way through the history. */
  const half = { blockNumber: BigInt(BLOCKS / 2), transactionIndex: PER_BLOCK - 1, logIndex: 0 };

  test("a page `after` a row half-way through reads as much as its first; one 10,000 rows in by offset reads them all", async () => {
    for (const addresses of [[ADDRESS], undefined]) {
      const first = await transfersPlan({ addresses });
      const deep = await transfersPlan({ addresses, fromBlock: half.blockNumber, after: half });
      const offset = await transfersPlan({ addresses, offset: 10_000 });
      expect(deep.plan).not.toContain("Seq Scan");
      expect(deep.pages).toBeLessThanOrEqual(first.pages + 10);
      expect(offset.pages).toBeGreaterThan(10 * deep.pages);
    }
    const rows = await createUtxoTransferQueries(db).transfers({
      addresses: [ADDRESS],
      fromBlock: half.blockNumber,
      toBlock: 2n ** 63n - 1n,
      after: half,
      offset: 0,
      limit: 50,
    });
    expect(rows.map((r) => `${r.blockNumber}:${r.transactionIndex}`)).toEqual(
      Array.from({ length: 50 }, (_, p) => `${BLOCKS / 2 + 1}:${p}`),
    );
  });
});
