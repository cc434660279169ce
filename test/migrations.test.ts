/**
 * The migrations in folders (sql/common/, every family's own: src/db/migrate.ts) against databases made
 * when they were one folder (sql/*.sql, versions 1 to 5, as main laid them out until the families): such a
 * database migrates in place with nothing applied again and every row kept, and a fresh database gets the
 * same schema whichever way it is made, the keys CLI's (sql/common/ alone, its chain's files later)
 * included. Real PostgreSQL.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import type { Sql } from "../src/db/database";
import { COMMON_MIGRATIONS, migrate, readMigrationFolder, readMigrations } from "../src/db/migrate";
import { decodeBlock } from "../src/families/evm/decode";
import { evm } from "../src/families/evm/evm";
import { blockHolding, readRecordedChain } from "../src/families/evm/fixtures/anvilChain";
import { createIndexWriter } from "../src/families/evm/indexWriter";
import { FAMILIES } from "../src/families/familyOf";
import { createLogger } from "../src/log";
import { postgresServer } from "./support/shared";

const log = createLogger({ level: "silent" });
const SQL_DIR = join(import.meta.dir, "..", "sql");
const SETTINGS = { index_partition_blocks: 10 };
const FAMILY = evm.index.migrations;

/** sql/ as one folder, made from today's files: the layout a database made by main before the families saw. */
const flat = mkdtempSync(join(tmpdir(), "flat-sql-"));
for (const folder of [COMMON_MIGRATIONS, FAMILY]) {
  for (const file of readdirSync(join(SQL_DIR, folder)))
    copyFileSync(join(SQL_DIR, folder, file), join(flat, file));
}
afterAll(() => rmSync(flat, { recursive: true, force: true }));

const connections: Sql[] = [];
afterAll(() => Promise.all(connections.map((sql) => sql.end())));
async function freshDatabase(): Promise<Sql> {
  const sql = postgres(await (await postgresServer()).createDatabase(), {
    max: 1,
    onnotice: () => {},
  }) as Sql;
  connections.push(sql);
  return sql;
}

/** Every row of every table of the schema, each table's rows in a stable order. */
async function everyRow(sql: Sql): Promise<Record<string, string[]>> {
  const tables = await sql`select table_name as name from information_schema.tables
    where table_schema = current_schema() order by 1`;
  const out: Record<string, string[]> = {};
  for (const { name } of tables) {
    const rows = await sql`select * from ${sql(name as string)}`;
    out[name as string] = rows
      .map((row) => JSON.stringify(row, (_, v) => (typeof v === "bigint" ? `${v}` : v)))
      .sort();
  }
  return out;
}

/** The schema's tables, columns, indexes, constraints, functions, partitions and migrations applied. */
async function schemaOf(sql: Sql) {
  return {
    columns:
      await sql`select table_name, column_name, ordinal_position, data_type, is_nullable, column_default
      from information_schema.columns where table_schema = current_schema() order by 1, 3`,
    indexes: await sql`select tablename, indexname, indexdef from pg_indexes
      where schemaname = current_schema() order by 2`,
    constraints:
      await sql`select conrelid::regclass::text as relation, conname, pg_get_constraintdef(oid) as def
      from pg_constraint where connamespace = current_schema()::regnamespace order by 1, 2`,
    functions: await sql`select proname, pg_get_functiondef(oid) as def from pg_proc
      where pronamespace = current_schema()::regnamespace order by 1`,
    partitions:
      await sql`select i.inhparent::regclass::text as parent, i.inhrelid::regclass::text as partition
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where c.relnamespace = current_schema()::regnamespace order by 1, 2`,
    migrations: await sql`select version, name from schema_migrations order by 1`,
  };
}

test("the files: every one in a folder, versions unique across the folders, read as main read them", () => {
  const folders = readdirSync(SQL_DIR).filter((entry) => statSync(join(SQL_DIR, entry)).isDirectory());
  // sql/common/ and one folder of each family's own (sql/evm/, sql/utxo/).
  expect(folders.sort()).toEqual(
    [COMMON_MIGRATIONS, ...FAMILIES.flatMap((f) => (f.index ? [f.index.migrations] : []))].sort(),
  );
  expect(readdirSync(SQL_DIR).filter((entry) => entry.endsWith(".sql"))).toEqual([]);
  const versions = folders.flatMap((folder) =>
    readMigrationFolder(join(SQL_DIR, folder)).map((m) => m.version),
  );
  expect(new Set(versions).size).toBe(versions.length);
  expect(readMigrations().map((m) => m.name)).toEqual([
    "001_api_keys.sql",
    "002_api_key_rates.sql",
    "004_watch_filters.sql",
    "006_rpc_filters.sql",
    "014_webhooks.sql",
    "016_watch_filters_address.sql",
  ]);
  expect(readMigrations(FAMILY)).toEqual(readMigrationFolder(flat));
  expect(readMigrations(FAMILY).map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 14, 16]);
});

test("a database made with one folder migrates in place: nothing applied again, every row kept", async () => {
  const sql = await freshDatabase();
  expect(await migrate(sql, log, SETTINGS, readMigrationFolder(flat))).toEqual([1, 2, 3, 4, 5, 6, 14, 16]);
  await sql`insert into api_keys (key_hash, label, rate_per_second, burst)
    values (sha256('a key'::bytea), 'market maker', 50, 100)`;
  await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
    values (sha256('a key'::bytea), '\\x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      '\\x5fbdb2315678afecb367f032d93f642f64180aa3', true)`;
  // An indexed block with a transfer: a recorded block of the fixture chain, written by the index writer.
  const chain = readRecordedChain();
  const { block, receipts } = blockHolding(chain, chain.transactions.erc20Transfer);
  const decoded = decodeBlock(block, receipts);
  const writer = createIndexWriter(sql);
  await writer.start(decoded.number);
  await writer.write([decoded], decoded.number - 1n);
  await sql`insert into token_metadata (address, is_token, name, symbol, decimals)
    values ('\\x5fbdb2315678afecb367f032d93f642f64180aa3', true, 'Test Token', 'TST', 18)`;
  const before = await everyRow(sql);
  expect(before.transfers).toHaveLength(1);
  expect(before.transfer_addresses).toHaveLength(2);
  expect(
    [before.api_keys, before.watch_filters, before.blocks, before.token_metadata].map((t) => t?.length),
  ).toEqual([1, 1, 1, 1]);

  // The service's migrations, then the keys CLI's.
  expect(await migrate(sql, log, SETTINGS, readMigrations(FAMILY))).toEqual([]);
  expect(await migrate(sql, log, SETTINGS, readMigrations())).toEqual([]);
  expect(await everyRow(sql)).toEqual(before);
});

test("a fresh database gets the same schema with one folder, with the folders, and keys CLI first", async () => {
  const [old, now, keysFirst] = [await freshDatabase(), await freshDatabase(), await freshDatabase()];
  await migrate(old, log, SETTINGS, readMigrationFolder(flat));
  expect(await migrate(now, log, SETTINGS, readMigrations(FAMILY))).toEqual([1, 2, 3, 4, 5, 6, 14, 16]);
  expect(await migrate(keysFirst, log, SETTINGS, readMigrations())).toEqual([1, 2, 4, 6, 14, 16]);
  expect(await migrate(keysFirst, log, SETTINGS, readMigrations(FAMILY))).toEqual([3, 5]);
  const expected = await schemaOf(old);
  expect(expected.partitions.length).toBeGreaterThan(0);
  expect(await schemaOf(now)).toEqual(expected);
  expect(await schemaOf(keysFirst)).toEqual(expected);
});
