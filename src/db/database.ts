/**
 * The PostgreSQL connection: DATABASE_URL when set, else an embedded PostgreSQL (PGlite behind its socket
 * server, in a thread of its own: db/embedded.ts) under DATA_DIR, so the same postgres.js code runs against
 * both.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import type { Config } from "../config";
import type { Logger } from "../log";
import { type ChainIdentity, claimSchema } from "./chainSchema";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./embedded";

/**
 * Connections to an external server. PGlite is one session behind its socket server: two connections
 * would interleave their extended-protocol messages (one's Bind between the other's Parse and Execute:
 * `portal "" does not exist`), so the embedded database gets one connection, on which postgres.js pipelines.
 */
const POOL_SIZE = 10;
const EMBEDDED_POOL_SIZE = 1;
/**
 * The embedded server's buffer pool. PostgreSQL's default (128 MB) is the largest part of an idle service's
 * memory (measured at rest: 330 MB resident with it, about 210 MB with this); the embedded database is for
 * development and small deployments, whose tables the OS page cache holds as well.
 */
const EMBEDDED_SHARED_BUFFERS_MB = 16;
const IDLE_TIMEOUT_S = 60;
/**
 * How long closing waits for queries still running: by then the server and the indexer have stopped, so
 * what is left is a connection lost with its server (a restart), which would otherwise hold the stop.
 */
const CLOSE_TIMEOUT_S = 1;
/**
 * Waits between attempts to reconnect to a server that went away, in seconds: doubled from the first up
 * to the last. postgres.js's own grows to 20 s, so a service whose database restarted in 3 s could wait
 * that long after it was back, its requests queued.
 */
const RECONNECT_FIRST_S = 0.05;
const RECONNECT_MAX_S = 1;
const reconnectBackoff = (retries: number) =>
  Math.min(RECONNECT_FIRST_S * 2 ** retries, RECONNECT_MAX_S) * (0.5 + Math.random() / 2);

export type Sql = postgres.Sql<Record<string, never>>;

export interface Database {
  sql: Sql;
  /** Read-only queries: DATABASE_READ_URL (a replica) when set, else `sql`. */
  read: Sql;
  embedded: boolean;
  /** The schema this chain's tables are in (db/chainSchema.ts). */
  schema: string;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Every statement has DB_STATEMENT_TIMEOUT_MS (set for the session, so it covers lock waits too), and a
 * connection that cannot be made fails within the same time: no request waits on the database longer.
 */
function connect(url: string, max: number, statementTimeoutMs: number, schema?: string): Sql {
  return postgres(url, {
    max,
    connect_timeout: Math.max(1, Math.ceil(statementTimeoutMs / 1000)),
    backoff: reconnectBackoff,
    idle_timeout: IDLE_TIMEOUT_S,
    onnotice: () => {},
    connection: {
      application_name: "chain-gateway",
      statement_timeout: statementTimeoutMs,
      ...(schema === undefined ? {} : { search_path: schema }),
    },
  }) as Sql;
}

/**
 * The pool on this chain's schema. With the chain known, the schema is chosen and claimed first on a
 * connection of its own (closed before the pool opens one: the embedded server takes one at a time);
 * without (the keys CLI), it is DB_SCHEMA or `public`.
 */
async function connectToSchema(
  url: string,
  max: number,
  config: Config,
  chain: ChainIdentity | undefined,
): Promise<{ sql: Sql; schema: string }> {
  let schema = config.dbSchema ?? "public";
  if (chain) {
    const probe = connect(url, 1, config.dbStatementTimeoutMs);
    try {
      schema = await claimSchema(probe, chain, config.dbSchema);
    } finally {
      await probe.end({ timeout: CLOSE_TIMEOUT_S });
    }
  }
  return { sql: connect(url, max, config.dbStatementTimeoutMs, schema), schema };
}

/** One process owns an embedded database directory; a second one would corrupt it. */
function lockDirectory(dir: string): () => void {
  const lockFile = join(dir, "owner.pid");
  try {
    const pid = Number(readFileSync(lockFile, "utf8"));
    if (pid && pid !== process.pid) {
      try {
        process.kill(pid, 0);
        throw new Error(
          `the embedded database in ${dir} is in use by process ${pid}; stop it, or set DATABASE_URL so that several processes share one PostgreSQL`,
        );
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  writeFileSync(lockFile, String(process.pid));
  return () => rmSync(lockFile, { force: true });
}

export async function createDatabase(options: {
  config: Config;
  log: Logger;
  /** The chain served: its schema is chosen and claimed (db/chainSchema.ts). */
  chain?: ChainIdentity;
}): Promise<Database> {
  const { config, log } = options;
  const ping = async (sql: Sql) => {
    await sql`select 1`;
  };

  if (config.databaseUrl) {
    const { sql, schema } = await connectToSchema(config.databaseUrl, POOL_SIZE, config, options.chain);
    // A replica holds the primary's schemas as they are: the same schema is read there.
    const read = config.databaseReadUrl
      ? connect(config.databaseReadUrl, POOL_SIZE, config.dbStatementTimeoutMs, schema)
      : sql;
    const pools = read === sql ? [sql] : [sql, read];
    return {
      sql,
      read,
      schema,
      embedded: false,
      ping: async () => {
        await Promise.all(pools.map(ping));
      },
      async close() {
        await Promise.all(pools.map((pool) => pool.end({ timeout: CLOSE_TIMEOUT_S })));
      },
    };
  }

  const dir = join(config.dataDir, "pg");
  mkdirSync(dir, { recursive: true });
  const unlock = lockDirectory(config.dataDir);
  const started = performance.now();
  let embedded: EmbeddedPostgres | undefined;
  let connected: { sql: Sql; schema: string };
  try {
    embedded = await startEmbeddedPostgres({
      dir,
      sharedBuffersMb: EMBEDDED_SHARED_BUFFERS_MB,
      maxConnections: EMBEDDED_POOL_SIZE,
      log,
    });
    log.info("embedded PostgreSQL started", {
      dir,
      address: embedded.address,
      ms: Math.round(performance.now() - started),
    });
    connected = await connectToSchema(
      `postgres://postgres@${embedded.address}/postgres`,
      EMBEDDED_POOL_SIZE,
      config,
      options.chain,
    );
  } catch (error) {
    await embedded?.stop();
    unlock();
    throw error;
  }
  const server = embedded;
  const { sql, schema } = connected;
  return {
    sql,
    read: sql,
    schema,
    embedded: true,
    ping: () => ping(sql),
    async close() {
      await sql.end({ timeout: CLOSE_TIMEOUT_S });
      await server.stop();
      unlock();
    },
  };
}
