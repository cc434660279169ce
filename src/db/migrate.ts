/**
 * Applies numbered migration files in order of version, each once, all in one transaction. An advisory
 * lock keeps two starting instances from applying the same file twice.
 *
 * The files are in two folders of sql/: `common/`, what every database has whatever its chain's family
 * (API keys, watch filters), and the family's own (`evm/`: its index), which the family names
 * (indexer/indexFamily.ts `migrations`). A version number is unique across every folder, so one table
 * (schema_migrations, by version and file name) records both, and a database made when the files were one
 * folder (sql/*.sql) finds them all applied. A database whose common files were applied alone (the keys
 * CLI, which has no chain) gets its family's files when its service first starts, in order of version
 * among them: a family's file relies on its own folder and on sql/common/, never on another family's.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { Sql } from "./database";

const SQL_DIR = join(import.meta.dir, "..", "..", "sql");
/** The folder of sql/ every database gets. */
export const COMMON_MIGRATIONS = "common";
const MIGRATION_FILE = /^(\d{3,})_[a-z0-9_]+\.sql$/;
// Any constant will do, as long as it is this project's own.
const MIGRATION_LOCK = 0x6761_7465;

export interface Migration {
  version: number;
  /** The file's name, without its folder: what schema_migrations records. */
  name: string;
  text: string;
}

const byVersion = (a: Migration, b: Migration) => a.version - b.version;

/** The migration files of one folder, by version. */
export function readMigrationFolder(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => MIGRATION_FILE.test(file))
    .map((file) => ({
      version: Number(MIGRATION_FILE.exec(file)![1]),
      name: file,
      text: readFileSync(join(dir, file), "utf8"),
    }))
    .sort(byVersion);
}

/**
 * The migrations of sql/common/ and, when a family's folder is named, of that folder, by version. Throws
 * when two files share a version.
 */
export function readMigrations(family?: string, root = SQL_DIR): Migration[] {
  const folders = family === undefined ? [COMMON_MIGRATIONS] : [COMMON_MIGRATIONS, family];
  const migrations = folders.flatMap((folder) => readMigrationFolder(join(root, folder))).sort(byVersion);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new Error(
        `migrations ${migrations[i - 1]!.name} and ${migrations[i]!.name} share version ${migrations[i]!.version}`,
      );
    }
  }
  return migrations;
}

/** What a migration may read with current_setting('gateway.<name>', true): choices made once, when it runs. */
export interface MigrationSettings {
  /** Blocks per partition of the tables that grow with the chain (sql/evm/005_index_partitions.sql). */
  index_partition_blocks?: number;
}

/** The settings the configuration gives the migrations. */
export function migrationSettings(config: Pick<Config, "indexPartitionBlocks">): MigrationSettings {
  return { index_partition_blocks: config.indexPartitionBlocks };
}

/** Applies those of `migrations` not applied yet, by version; returns their versions. */
export async function migrate(
  sql: Sql,
  log: Logger,
  settings: MigrationSettings,
  migrations: readonly Migration[],
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
    for (const migration of [...migrations].sort(byVersion)) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.text);
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
      applied.push(migration.version);
      log.info("migration applied", { migration: migration.name });
    }
  });
  return applied;
}
