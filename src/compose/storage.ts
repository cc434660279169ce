/**
 * The chain's database (migrated to sql/common/ and the family's tables, where it keeps an index) and the API
 * keys it holds.
 */

import type { ChainInfo } from "../blockchain";
import type { BlockHeader } from "../blockHeader";
import { createApiKeyStore } from "../db/apiKeys";
import { createDatabase, type Database } from "../db/database";
import { migrate, migrationSettings, readMigrations } from "../db/migrate";
import { type Auth, createAuth } from "../http/auth";
import type { StartContext } from "./startContext";

export interface Storage {
  database: Database;
  auth: Auth;
}

export async function openStorage(
  ctx: StartContext,
  chain: ChainInfo,
  genesis: BlockHeader,
): Promise<Storage> {
  const { config, log, family, lifetime } = ctx;
  const database = await createDatabase({
    config,
    log,
    chain: { chainId: chain.chainId, genesisHash: genesis.hash },
  });
  log.info("database schema", { schema: database.schema });
  lifetime.defer(() => database.close());
  // A family without an index has no tables of its own: sql/common/ only.
  await migrate(database.sql, log, migrationSettings(config), readMigrations(family.index?.migrations));
  const auth = await createAuth({
    apiKeys: config.apiKeys,
    keyRates: config.rateLimits,
    defaultRate: config.rateLimit,
    keySource: createApiKeyStore(database.sql),
    refreshMs: config.keysRefreshMs,
    log,
  });
  lifetime.defer(() => auth.stop());
  if (auth.open) log.warn("no API key is configured: the service is open to anyone who can reach it");
  return { database, auth };
}
