/**
 * The migrations of an EVM chain's database, as its service applies them (src/service.ts: sql/common/ and
 * the family's folder), for tests that migrate a database by hand.
 */
import type { Sql } from "../../src/db/database";
import {
  type Migration,
  type MigrationSettings,
  migrate as migrateDatabase,
  readMigrations as readFamilyMigrations,
} from "../../src/db/migrate";
import { evm } from "../../src/families/evm/evm";
import type { Logger } from "../../src/log";

export function readMigrations(): Migration[] {
  return readFamilyMigrations(evm.index.migrations);
}

export function migrate(
  sql: Sql,
  log: Logger,
  settings: MigrationSettings = {},
  migrations: readonly Migration[] = readMigrations(),
): Promise<number[]> {
  return migrateDatabase(sql, log, settings, migrations);
}
