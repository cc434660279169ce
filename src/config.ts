/**
 * Configuration comes from the environment only (the README's configuration table). Every variable is
 * checked at start; a bad value stops the service with a message naming the variable and what it expected.
 */

import { availableParallelism } from "node:os";
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { BLOCKCHAINS, type Blockchain } from "./blockchain";
import { LOG_LEVELS, type LogLevel } from "./log";

export class ConfigError extends Error {}

/** The settings in MiB (`*_MB`), in bytes. */
export const MIB = 1024 * 1024;

/** More HTTP workers than this gains nothing on any host this runs on, and each holds its own pools. */
const MAX_WORKERS = 256;

interface VarSpec<S extends TSchema> {
  schema: S;
  /** Turns the raw string into the value checked against `schema`; returns undefined if it cannot. */
  parse: (raw: string) => unknown;
  expected: string;
  fallback: Static<S> | undefined;
}

const integer = (raw: string) => (/^\d+$/.test(raw) ? Number(raw) : undefined);
const list = (raw: string) =>
  raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
/** A URL check: it parses, with one of the protocols given. */
const urlWith =
  (...protocols: string[]) =>
  (s: string) => {
    try {
      return protocols.includes(new URL(s).protocol);
    } catch {
      return false;
    }
  };
const httpUrl = urlWith("http:", "https:");
const wsUrl = urlWith("ws:", "wss:");
const postgresUrl = urlWith("postgres:", "postgresql:");
const redisUrl = urlWith("redis:", "rediss:", "valkey:", "valkeys:");

const RateSchema = T.Object({
  perSecond: T.Number({ exclusiveMinimum: 0, maximum: 1e9 }),
  burst: T.Integer({ minimum: 1, maximum: 1e9 }),
});
function parseRate(raw: string) {
  const match = /^(\d+(?:\.\d+)?)\/(\d+)$/.exec(raw.trim());
  return match ? { perSecond: Number(match[1]), burst: Number(match[2]) } : undefined;
}

function v<S extends TSchema>(spec: VarSpec<S>): VarSpec<S> {
  return spec;
}

const VARS = {
  HOST: v({
    schema: T.String({ minLength: 1 }),
    parse: (s) => s,
    expected: "a host name or IP",
    fallback: "127.0.0.1",
  }),
  PORT: v({
    schema: T.Integer({ minimum: 0, maximum: 65535 }),
    parse: integer,
    expected: "an integer from 0 to 65535",
    fallback: 8000,
  }),
  UPSTREAM_URLS: v({
    schema: T.Array(T.String(), { minItems: 1 }),
    parse: (s) => {
      const urls = list(s);
      return urls.every(httpUrl) ? urls : undefined;
    },
    expected: "comma-separated http(s) URLs of JSON-RPC nodes",
    fallback: undefined,
  }),
  UPSTREAM_WS_URLS: v({
    schema: T.Array(T.String()),
    parse: (s) => {
      // Empty entries stay: they mean "derive this one from its HTTP URL".
      const entries = s.split(",").map((e) => e.trim());
      return entries.every((e) => e === "" || e === "off" || wsUrl(e)) ? entries : undefined;
    },
    expected:
      'comma-separated ws(s):// URLs in the order of UPSTREAM_URLS ("" derives one, "off" turns it off)',
    fallback: [],
  }),
  DATABASE_URL: v({
    schema: T.String(),
    parse: (s) => (postgresUrl(s) ? s : undefined),
    expected: "a postgres:// or postgresql:// URL",
    fallback: undefined,
  }),
  DATABASE_READ_URL: v({
    schema: T.String(),
    parse: (s) => (postgresUrl(s) ? s : undefined),
    expected: "a postgres:// or postgresql:// URL",
    fallback: undefined,
  }),
  DB_SCHEMA: v({
    schema: T.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" }),
    parse: (s) => s,
    expected: "a PostgreSQL schema name (lower-case letters, digits and _, not starting with a digit)",
    fallback: undefined,
  }),
  REDIS_URL: v({
    schema: T.String(),
    parse: (s) => (redisUrl(s) ? s : undefined),
    expected: "a redis://, rediss:// or valkey:// URL",
    fallback: undefined,
  }),
  REDIS_SECRET: v({
    schema: T.String({ minLength: 32 }),
    parse: (s) => s,
    expected: "a secret of at least 32 characters, the same on every instance of the fleet",
    fallback: undefined,
  }),
  REDIS_CACHE_MB: v({
    schema: T.Integer({ minimum: 16, maximum: 1_048_576 }),
    parse: integer,
    expected: "an integer number of MiB from 16 to 1048576",
    fallback: 1024,
  }),
  DATA_DIR: v({
    schema: T.String({ minLength: 1 }),
    parse: (s) => s,
    expected: "a directory path",
    fallback: "./data",
  }),
  API_KEYS: v({
    schema: T.Array(T.String({ pattern: "^[\\x21-\\x7e]+$" })),
    parse: list,
    expected: "comma-separated keys of printable ASCII without spaces",
    fallback: [],
  }),
  KEYS_REFRESH_MS: v({
    schema: T.Integer({ minimum: 100, maximum: 3_600_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 100 to 3600000",
    fallback: 30_000,
  }),
  CHAIN: v({
    schema: T.Union(BLOCKCHAINS.map((b) => T.Literal(b))),
    parse: (s) => s.toUpperCase(),
    expected: `one of ${BLOCKCHAINS.join(", ")}`,
    fallback: undefined,
  }),
  CONFIRMATIONS: v({
    schema: T.Integer({ minimum: 0, maximum: 100_000 }),
    parse: integer,
    expected: "an integer from 0 to 100000",
    fallback: undefined,
  }),
  INDEX_FROM_BLOCK: v({
    schema: T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    parse: integer,
    expected: "a block number (a non-negative integer)",
    fallback: undefined,
  }),
  INDEXER: v({
    schema: T.Boolean(),
    parse: (s) => (s === "on" ? true : s === "off" ? false : undefined),
    expected: '"on" or "off"',
    fallback: true,
  }),
  INDEX_BULK_DISTANCE_BLOCKS: v({
    schema: T.Integer({ minimum: 0, maximum: 100_000_000 }),
    parse: integer,
    expected: "a number of blocks from 0 (no bulk load) to 100000000",
    fallback: undefined,
  }),
  INDEX_PARTITION_BLOCKS: v({
    schema: T.Integer({ minimum: 10, maximum: 100_000_000 }),
    parse: integer,
    expected: "an integer number of blocks from 10 to 100000000",
    fallback: 100_000,
  }),
  // The contracts' form is the chain family's (families/evm/evmOperations.ts checks it when the service starts).
  DEFAULT_TOKENS: v({
    schema: T.Array(T.String({ minLength: 1 }), { minItems: 1, maxItems: 1_000 }),
    parse: list,
    expected: "comma-separated token contract addresses, at most 1000",
    fallback: undefined,
  }),
  DB_STATEMENT_TIMEOUT_MS: v({
    schema: T.Integer({ minimum: 10, maximum: 600_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 10 to 600000",
    fallback: 10_000,
  }),
  MAX_FILTERS_PER_KEY: v({
    schema: T.Integer({ minimum: 1, maximum: 100_000_000 }),
    parse: integer,
    expected: "an integer from 1 to 100000000",
    fallback: 100_000,
  }),
  UTXO_MAX: v({
    schema: T.Integer({ minimum: 1, maximum: 1_000_000 }),
    parse: integer,
    expected: "an integer from 1 to 1000000",
    // Esplora's own default (electrs --utxos-limit).
    fallback: 500,
  }),
  MAX_WEBHOOKS_PER_KEY: v({
    schema: T.Integer({ minimum: 1, maximum: 10_000 }),
    parse: integer,
    expected: "an integer from 1 to 10000",
    fallback: 20,
  }),
  WEBHOOK_ALLOW_PRIVATE: v({
    schema: T.Boolean(),
    parse: (s) => (s === "1" || s === "true" ? true : s === "0" || s === "false" ? false : undefined),
    expected: '"1" (endpoints may be http:// and private or loopback addresses) or "0"',
    fallback: false,
  }),
  WEBHOOK_SECRETS_KEY: v({
    schema: T.String({ pattern: "^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$" }),
    parse: (s) => s,
    expected: "32 bytes as 64 hex digits or base64, the same on every instance sharing the database",
    fallback: undefined,
  }),
  WEBHOOK_TIMEOUT_MS: v({
    schema: T.Integer({ minimum: 100, maximum: 60_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 100 to 60000",
    fallback: 10_000,
  }),
  WEBHOOK_MAX_BACKLOG: v({
    schema: T.Integer({ minimum: 10, maximum: 10_000_000 }),
    parse: integer,
    expected: "an integer number of deliveries from 10 to 10000000",
    fallback: 100_000,
  }),
  WEBHOOK_SENDERS: v({
    schema: T.Integer({ minimum: 0, maximum: 1_000 }),
    parse: integer,
    expected: "an integer from 0 (this instance sends none) to 1000",
    fallback: 16,
  }),
  MEMPOOL_MAX_MB: v({
    schema: T.Integer({ minimum: 1, maximum: 1_048_576 }),
    parse: integer,
    expected: "an integer number of MiB, at least 1",
    fallback: 256,
  }),
  RPC_FILTER_TIMEOUT_MS: v({
    schema: T.Integer({ minimum: 100, maximum: 86_400_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 100 to 86400000",
    fallback: 300_000,
  }),
  RPC_FILTERS_PER_KEY: v({
    schema: T.Integer({ minimum: 1, maximum: 1_000_000 }),
    parse: integer,
    expected: "an integer from 1 to 1000000",
    fallback: 1_000,
  }),
  CACHE_MEMORY_MB: v({
    schema: T.Integer({ minimum: 0, maximum: 1_048_576 }),
    parse: integer,
    expected: "an integer number of MiB (0 turns caching off)",
    fallback: 256,
  }),
  CACHE_DISK_MB: v({
    schema: T.Union([T.Literal(0), T.Integer({ minimum: 32, maximum: 1_073_741_824 })]),
    parse: integer,
    expected: "an integer number of MiB, at least 32 (0 turns the disk tier off)",
    fallback: 4096,
  }),
  UPSTREAM_TIMEOUT_MS: v({
    // At most 240 s: the server's idle timeout sits above it, and Bun's is at most 255 s.
    schema: T.Integer({ minimum: 50, maximum: 240_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 50 to 240000",
    fallback: 10_000,
  }),
  UPSTREAM_DEADLINE_MS: v({
    schema: T.Integer({ minimum: 50, maximum: 240_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 50 to 240000",
    fallback: 20_000,
  }),
  BATCH_WINDOW_MS: v({
    schema: T.Integer({ minimum: 0, maximum: 1_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 0 to 1000",
    fallback: 2,
  }),
  BATCH_MAX_SIZE: v({
    schema: T.Integer({ minimum: 1, maximum: 10_000 }),
    parse: integer,
    expected: "an integer from 1 to 10000",
    // Unset: the family's nodes' own (NodeProtocol.batchMaxSize), else BATCH_MAX_SIZE_DEFAULT.
    fallback: undefined,
  }),
  UPSTREAM_MAX_IN_FLIGHT: v({
    schema: T.Integer({ minimum: 1, maximum: 4_096 }),
    parse: integer,
    expected: "an integer from 1 to 4096",
    // Unset: the family's nodes' own (NodeProtocol.maxInFlight), else UPSTREAM_MAX_IN_FLIGHT_DEFAULT.
    fallback: undefined,
  }),
  HEAD_POLL_MS: v({
    schema: T.Integer({ minimum: 10, maximum: 60_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 10 to 60000",
    fallback: undefined,
  }),
  UPSTREAM_COOLDOWN_MS: v({
    schema: T.Integer({ minimum: 10, maximum: 600_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 10 to 600000",
    fallback: 1_000,
  }),
  UPSTREAM_MAX_RESPONSE_MB: v({
    schema: T.Integer({ minimum: 1, maximum: 4_096 }),
    parse: integer,
    expected: "an integer number of MiB from 1 to 4096",
    fallback: 256,
  }),
  HEDGE_AFTER_MS: v({
    schema: T.Integer({ minimum: 1, maximum: 240_000 }),
    parse: integer,
    expected: "an integer number of milliseconds from 1 to 240000",
    fallback: undefined,
  }),
  RATE_LIMIT: v({
    schema: RateSchema,
    parse: (s) => parseRate(s),
    expected: 'a rate "<calls per second>/<burst>", e.g. "100/200"',
    fallback: undefined,
  }),
  RATE_LIMITS: v({
    schema: T.Array(T.Object({ key: T.String({ minLength: 1 }), rate: RateSchema })),
    parse: (s) => {
      const entries = list(s).map((entry) => {
        const eq = entry.lastIndexOf("=");
        const rate = eq > 0 ? parseRate(entry.slice(eq + 1)) : undefined;
        return rate ? { key: entry.slice(0, eq), rate } : undefined;
      });
      return entries.every((e) => e !== undefined) ? entries : undefined;
    },
    expected: 'comma-separated "<key>=<calls per second>/<burst>" entries',
    fallback: [],
  }),
  MAX_BODY_BYTES: v({
    schema: T.Integer({ minimum: 1_024, maximum: 1_073_741_824 }),
    parse: integer,
    expected: "an integer number of bytes from 1024 to 1073741824",
    fallback: 5 * 1024 * 1024,
  }),
  MAX_BATCH_LENGTH: v({
    schema: T.Integer({ minimum: 1, maximum: 100_000 }),
    parse: integer,
    expected: "an integer from 1 to 100000",
    fallback: 1_000,
  }),
  STREAM_MAX_BLOCKS: v({
    schema: T.Integer({ minimum: 1, maximum: 10_000_000 }),
    parse: integer,
    expected: "an integer from 1 to 10000000",
    fallback: 10_000,
  }),
  STREAM_PREFETCH: v({
    schema: T.Integer({ minimum: 1, maximum: 1_000 }),
    parse: integer,
    expected: "an integer from 1 to 1000",
    fallback: 16,
  }),
  WS_MAX_SUBSCRIPTIONS: v({
    schema: T.Integer({ minimum: 1, maximum: 100_000 }),
    parse: integer,
    expected: "an integer from 1 to 100000",
    fallback: 100,
  }),
  WS_MAX_CONNECTIONS: v({
    schema: T.Integer({ minimum: 1, maximum: 1_000_000 }),
    parse: integer,
    expected: "an integer from 1 to 1000000",
    fallback: 1_000,
  }),
  WS_MAX_BUFFER_BYTES: v({
    schema: T.Integer({ minimum: 65_536, maximum: 1_073_741_824 }),
    parse: integer,
    expected: "an integer number of bytes from 65536 to 1073741824",
    fallback: 16 * 1024 * 1024,
  }),
  WORKERS: v({
    schema: T.Integer({ minimum: 1, maximum: MAX_WORKERS }),
    parse: (s) => (s.toLowerCase() === "auto" ? availableParallelism() : integer(s)),
    expected: `"auto" (one a core) or an integer from 1 to ${MAX_WORKERS}`,
    fallback: 1,
  }),
  LOG_LEVEL: v({
    schema: T.Union(LOG_LEVELS.map((l) => T.Literal(l))),
    parse: (s) => s.toLowerCase(),
    expected: `one of ${LOG_LEVELS.join(", ")}`,
    fallback: "info",
  }),
};

export type ConfigVariable = keyof typeof VARS;

export interface Config {
  host: string;
  port: number;
  /** Empty: start a local dev chain and use it. */
  upstreamUrls: string[];
  /** Per upstream, in order: a ws(s):// URL, "" (derive it from the HTTP URL) or "off"; missing: derive. */
  upstreamSocketUrls: string[];
  /** Undefined: run the embedded PostgreSQL (PGlite) under dataDir. */
  databaseUrl: string | undefined;
  /** Where callers' reads of the index go (a replica); undefined: DATABASE_URL. */
  databaseReadUrl: string | undefined;
  /** The schema of this chain's tables; undefined: chosen per chain (db/chainSchema.ts). */
  dbSchema: string | undefined;
  /** The fleet's Redis (shared final answers and rate limits); undefined: each instance alone. */
  redisUrl: string | undefined;
  /**
   * The fleet's secret: answers and heads read from Redis are taken only when signed with it; undefined:
   * only rate limits are shared.
   */
  redisSecret: string | undefined;
  /** Redis's memory budget, set on the server when it allows (least recently used evicted). */
  redisCacheMb: number;
  dataDir: string;
  apiKeys: string[];
  /** How often the database's keys are read again: how soon a revocation or a new rate takes effect. */
  keysRefreshMs: number;
  chain: Blockchain | undefined;
  confirmations: number | undefined;
  indexFromBlock: number | undefined;
  /** Bulk load while the index is further behind the head than this (0: never); undefined: a day of blocks. */
  indexBulkDistance: number | undefined;
  /** Blocks per partition of the index's growing tables; read once, when the index's tables are made. */
  indexPartitionBlocks: number;
  /** Off: this instance writes no index (it still serves the index another instance writes). */
  indexer: boolean;
  /** What DEFAULT_TOKENS means; undefined: the most transferred tokens of the last day. */
  defaultTokens: string[] | undefined;
  /** The longest any SQL statement may run (and a connection take to open). */
  dbStatementTimeoutMs: number;
  /** Watch filters one key may hold. */
  maxFiltersPerKey: number;
  /** The most unspent outputs the Esplora API lists for one address (400 beyond, as Esplora answers). */
  utxoMax: number;
  /**
   * The memory, in MiB, the Bitcoin family's view of the node's mempool may hold (families/utxo/
   * mempoolStore.ts): past it, the transactions of the lowest fee rates are left out.
   */
  mempoolMaxMb: number;
  /** Webhook endpoints one key may hold. */
  maxWebhooksPerKey: number;
  /** Endpoints may be http:// and private, loopback or link-local addresses (tests, private networks). */
  webhookAllowPrivate: boolean;
  /** The key sealing endpoints' secrets in the database; undefined: a key file under dataDir. */
  webhookSecretsKey: string | undefined;
  /** How long a receiver has to answer a delivery (2xx within it: delivered). */
  webhookTimeoutMs: number;
  /** Undelivered deliveries kept per endpoint; past it the oldest are dropped. */
  webhookMaxBacklog: number;
  /** Deliveries this process sends at once (to as many endpoints); 0: it sends none. */
  webhookSenders: number;
  /** A filter kept by the service (eth_newFilter & co.) not polled this long is gone (geth: 5 minutes). */
  rpcFilterTimeoutMs: number;
  /** Live filters kept by the service one key (the empty key in open mode) may hold. */
  rpcFiltersPerKey: number;
  cacheMemoryMb: number;
  cacheDiskMb: number;
  upstreamTimeoutMs: number;
  upstreamDeadlineMs: number;
  batchWindowMs: number;
  batchMaxSize: number | undefined;
  upstreamMaxInFlight: number | undefined;
  /** Undefined: 250 ms on a dev chain, 1000 ms elsewhere. */
  headPollMs: number | undefined;
  upstreamCooldownMs: number;
  /** The largest answer read from an upstream, in MiB; a larger one is refused (502). */
  upstreamMaxResponseMb: number;
  /** How long a call waits before it is also sent to the next upstream; undefined: that upstream's p95. */
  hedgeAfterMs: number | undefined;
  /** The default rate of every caller; undefined: unlimited. */
  rateLimit: Rate | undefined;
  /** Rates of particular API_KEYS keys. */
  rateLimits: { key: string; rate: Rate }[];
  maxBodyBytes: number;
  maxBatchLength: number;
  /** The most blocks one stream request may name. */
  streamMaxBlocks: number;
  /** Blocks a stream fetches ahead of its reader. */
  streamPrefetch: number;
  /** Subscriptions one client WebSocket may hold. */
  wsMaxSubscriptions: number;
  /** Client WebSockets one key (one IP in open mode) may hold open. */
  wsMaxConnections: number;
  /** Bytes a client WebSocket may have waiting to be sent before it is closed as a slow reader. */
  wsMaxBufferBytes: number;
  /** HTTP worker processes sharing the port (cluster/primary.ts); 1: this process serves alone. */
  workers: number;
  logLevel: LogLevel;
}

export interface Rate {
  /** Calls allowed per second, on average. */
  perSecond: number;
  /** The most calls allowed at once (the token bucket's size). */
  burst: number;
}

/** The `user:pass@` of URLs in a list. */
const URL_USERINFO = /\/\/[^/@,\s]*@/g;
/** The `#...` of URLs in a list: a TRON upstream's provider key rides there (families/tron/endpoints.ts). */
const URL_FRAGMENT = /#[^,\s]*/g;

function read<K extends ConfigVariable>(env: Record<string, string | undefined>, name: K) {
  const spec = VARS[name] as VarSpec<TSchema>;
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return spec.fallback as Static<(typeof VARS)[K]["schema"]> | undefined;
  const value = spec.parse(raw);
  if (value === undefined || !Value.Check(spec.schema, value)) {
    // Keys are secrets: name the variable, never echo its value.
    const secret =
      name === "API_KEYS" ||
      name === "DATABASE_URL" ||
      name === "DATABASE_READ_URL" ||
      name === "REDIS_URL" ||
      name === "REDIS_SECRET" ||
      name === "RATE_LIMITS";
    // Node URLs may carry credentials (http://user:pass@host, a provider's #key=): shown without them.
    const shown = secret
      ? ""
      : `, got ${JSON.stringify(raw.replace(URL_USERINFO, "//…@").replace(URL_FRAGMENT, "#…"))}`;
    throw new ConfigError(`${name}: expected ${spec.expected}${shown}`);
  }
  return value as Static<(typeof VARS)[K]["schema"]>;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const upstreamUrls = read(env, "UPSTREAM_URLS") ?? [];
  const upstreamSocketUrls = read(env, "UPSTREAM_WS_URLS") ?? [];
  if (upstreamSocketUrls.length > Math.max(upstreamUrls.length, 1)) {
    throw new ConfigError(
      `UPSTREAM_WS_URLS: expected at most one entry per upstream of UPSTREAM_URLS, got ${upstreamSocketUrls.length}`,
    );
  }
  const workers = read(env, "WORKERS")!;
  const databaseUrl = read(env, "DATABASE_URL");
  const databaseReadUrl = read(env, "DATABASE_READ_URL");
  if (databaseReadUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError("DATABASE_READ_URL: a replica needs its primary in DATABASE_URL");
  }
  const redisUrl = read(env, "REDIS_URL");
  const redisSecret = read(env, "REDIS_SECRET");
  if (redisSecret !== undefined && redisUrl === undefined) {
    throw new ConfigError("REDIS_SECRET: the fleet's secret needs the fleet's Redis in REDIS_URL");
  }
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError(
      `WORKERS: ${workers} workers need DATABASE_URL: the embedded PostgreSQL is one session inside one process, so several processes share a PostgreSQL server`,
    );
  }
  return {
    host: read(env, "HOST")!,
    port: read(env, "PORT")!,
    upstreamUrls,
    upstreamSocketUrls,
    databaseUrl,
    databaseReadUrl,
    dbSchema: read(env, "DB_SCHEMA"),
    redisUrl,
    redisSecret,
    redisCacheMb: read(env, "REDIS_CACHE_MB")!,
    dataDir: read(env, "DATA_DIR")!,
    apiKeys: read(env, "API_KEYS") ?? [],
    keysRefreshMs: read(env, "KEYS_REFRESH_MS")!,
    chain: read(env, "CHAIN") as Blockchain | undefined,
    confirmations: read(env, "CONFIRMATIONS"),
    indexFromBlock: read(env, "INDEX_FROM_BLOCK"),
    indexBulkDistance: read(env, "INDEX_BULK_DISTANCE_BLOCKS"),
    indexer: read(env, "INDEXER")!,
    indexPartitionBlocks: read(env, "INDEX_PARTITION_BLOCKS")!,
    defaultTokens: read(env, "DEFAULT_TOKENS"),
    dbStatementTimeoutMs: read(env, "DB_STATEMENT_TIMEOUT_MS")!,
    maxFiltersPerKey: read(env, "MAX_FILTERS_PER_KEY")!,
    utxoMax: read(env, "UTXO_MAX")!,
    mempoolMaxMb: read(env, "MEMPOOL_MAX_MB")!,
    maxWebhooksPerKey: read(env, "MAX_WEBHOOKS_PER_KEY")!,
    webhookAllowPrivate: read(env, "WEBHOOK_ALLOW_PRIVATE")!,
    webhookSecretsKey: read(env, "WEBHOOK_SECRETS_KEY"),
    webhookTimeoutMs: read(env, "WEBHOOK_TIMEOUT_MS")!,
    webhookMaxBacklog: read(env, "WEBHOOK_MAX_BACKLOG")!,
    webhookSenders: read(env, "WEBHOOK_SENDERS")!,
    rpcFilterTimeoutMs: read(env, "RPC_FILTER_TIMEOUT_MS")!,
    rpcFiltersPerKey: read(env, "RPC_FILTERS_PER_KEY")!,
    cacheMemoryMb: read(env, "CACHE_MEMORY_MB")!,
    cacheDiskMb: read(env, "CACHE_DISK_MB")!,
    upstreamTimeoutMs: read(env, "UPSTREAM_TIMEOUT_MS")!,
    upstreamDeadlineMs: read(env, "UPSTREAM_DEADLINE_MS")!,
    batchWindowMs: read(env, "BATCH_WINDOW_MS")!,
    batchMaxSize: read(env, "BATCH_MAX_SIZE"),
    upstreamMaxInFlight: read(env, "UPSTREAM_MAX_IN_FLIGHT"),
    headPollMs: read(env, "HEAD_POLL_MS"),
    upstreamCooldownMs: read(env, "UPSTREAM_COOLDOWN_MS")!,
    hedgeAfterMs: read(env, "HEDGE_AFTER_MS"),
    upstreamMaxResponseMb: read(env, "UPSTREAM_MAX_RESPONSE_MB")!,
    rateLimit: read(env, "RATE_LIMIT"),
    rateLimits: read(env, "RATE_LIMITS") ?? [],
    maxBodyBytes: read(env, "MAX_BODY_BYTES")!,
    maxBatchLength: read(env, "MAX_BATCH_LENGTH")!,
    streamMaxBlocks: read(env, "STREAM_MAX_BLOCKS")!,
    streamPrefetch: read(env, "STREAM_PREFETCH")!,
    wsMaxSubscriptions: read(env, "WS_MAX_SUBSCRIPTIONS")!,
    wsMaxConnections: read(env, "WS_MAX_CONNECTIONS")!,
    wsMaxBufferBytes: read(env, "WS_MAX_BUFFER_BYTES")!,
    workers,
    logLevel: read(env, "LOG_LEVEL") as LogLevel,
  };
}
