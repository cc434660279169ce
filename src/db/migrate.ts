/**
 * Applies the numbered files of sql/ in order, each once, each in its own transaction. An advisory lock
 * keeps two starting instances from applying the same file twice.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { Sql } from "./database";

const SQL_DIR = join(import.meta.dir, "..", "..", "sql");
const MIGRATION_FILE = /^(\d{3,})_[a-z0-9_]+\.sql$/;
// Any constant will do, as long as it is this project's own.
const MIGRATION_LOCK = 0x6761_7465;

export interface Migration {
  version: number;
  name: string;
  text: string;
}

export function readMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => MIGRATION_FILE.test(file))
    .map((file) => ({
      version: Number(MIGRATION_FILE.exec(file)![1]),
      name: file,
      text: readFileSync(join(dir, file), "utf8"),
    }))
    .sort((a, b) => a.version - b.version);
}

/** What a migration may read with current_setting('gateway.<name>', true): choices made once, when it runs. */
export interface MigrationSettings {
  /** Blocks per partition of the tables that grow with the chain (005_index_partitions.sql). */
  index_partition_blocks?: number;
}

/** The settings the configuration gives the migrations. */
export function migrationSettings(config: Pick<Config, "indexPartitionBlocks">): MigrationSettings {
  return { index_partition_blocks: config.indexPartitionBlocks };
}

export async function migrate(
  sql: Sql,
  log: Logger,
  settings: MigrationSettings = {},
  migrations = readMigrations(),
): Promise<number[]> {
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    // The lock comes first: two instances starting on a fresh database would race to create the table.
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    for (const [name, value] of Object.entries(settings)) {
      if (value !== undefined) await tx`select set_config(${`gateway.${name}`}, ${String(value)}, true)`;
    }
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`;
    const done = new Set((await tx`select version from schema_migrations`).map((r) => r.version as number));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.text);
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
      applied.push(migration.version);
      log.info("migration applied", { migration: migration.name });
    }
  });
  return applied;
}
