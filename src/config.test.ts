import { expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { ConfigError, loadConfig } from "./config";

test("defaults let a first run work on one machine", () => {
  expect(loadConfig({})).toEqual({
    host: "127.0.0.1",
    port: 8000,
    upstreamUrls: [],
    upstreamSocketUrls: [],
    databaseUrl: undefined,
    databaseReadUrl: undefined,
    dbSchema: undefined,
    redisUrl: undefined,
    redisSecret: undefined,
    redisCacheMb: 1024,
    dataDir: "./data",
    apiKeys: [],
    keysRefreshMs: 30_000,
    chain: undefined,
    confirmations: undefined,
    indexFromBlock: undefined,
    indexBulkDistance: undefined,
    indexer: true,
    indexPartitionBlocks: 100_000,
    defaultTokens: undefined,
    dbStatementTimeoutMs: 10_000,
    maxFiltersPerKey: 100_000,
    utxoMax: 500,
    mempoolMaxMb: 256,
    maxWebhooksPerKey: 20,
    webhookAllowPrivate: false,
    webhookSecretsKey: undefined,
    webhookTimeoutMs: 10_000,
    webhookMaxBacklog: 100_000,
    webhookSenders: 16,
    rpcFilterTimeoutMs: 300_000,
    rpcFiltersPerKey: 1_000,
    cacheMemoryMb: 256,
    cacheDiskMb: 4096,
    upstreamTimeoutMs: 10_000,
    upstreamDeadlineMs: 20_000,
    batchWindowMs: 2,
    batchMaxSize: undefined,
    upstreamMaxInFlight: undefined,
    headPollMs: undefined,
    upstreamCooldownMs: 1_000,
    hedgeAfterMs: undefined,
    upstreamMaxResponseMb: 256,
    rateLimit: undefined,
    rateLimits: [],
    maxBodyBytes: 5 * 1024 * 1024,
    maxBatchLength: 1_000,
    streamMaxBlocks: 10_000,
    streamPrefetch: 16,
    wsMaxSubscriptions: 100,
    wsMaxConnections: 1_000,
    wsMaxBufferBytes: 16 * 1024 * 1024,
    workers: 1,
    logLevel: "info",
  });
});

test("WORKERS: a count or auto, and several only with a PostgreSQL server to share", () => {
  const db = "postgres://u@db:5432/gw";
  expect(loadConfig({ WORKERS: "3", DATABASE_URL: db }).workers).toBe(3);
  expect(loadConfig({ WORKERS: "auto", DATABASE_URL: db }).workers).toBe(availableParallelism());
  expect(loadConfig({ WORKERS: "1" }).workers).toBe(1);
  expect(() => loadConfig({ WORKERS: "2" })).toThrow(
    "WORKERS: 2 workers need DATABASE_URL: the embedded PostgreSQL is one session inside one process, so several processes share a PostgreSQL server",
  );
  expect(() => loadConfig({ WORKERS: "0", DATABASE_URL: db })).toThrow(
    'WORKERS: expected "auto" (one a core) or an integer from 1 to 256, got "0"',
  );
});

test("UPSTREAM_WS_URLS: one entry per upstream, empty to derive, off to turn off", () => {
  const config = loadConfig({
    UPSTREAM_URLS: "http://a:8545,https://b.example/key,http://c:8545",
    UPSTREAM_WS_URLS: "wss://a.example/ws, ,off",
  });
  expect(config.upstreamSocketUrls).toEqual(["wss://a.example/ws", "", "off"]);
  expect(() => loadConfig({ UPSTREAM_URLS: "http://a:8545", UPSTREAM_WS_URLS: "ws://a,ws://b" })).toThrow(
    "UPSTREAM_WS_URLS: expected at most one entry per upstream of UPSTREAM_URLS, got 2",
  );
  expect(() => loadConfig({ UPSTREAM_WS_URLS: "http://a:8546" })).toThrow(
    'UPSTREAM_WS_URLS: expected comma-separated ws(s):// URLs in the order of UPSTREAM_URLS ("" derives one, "off" turns it off), got "http://a:8546"',
  );
});

test("values are read and typed", () => {
  const config = loadConfig({
    PORT: "9000",
    UPSTREAM_URLS: "http://a:8545, https://b.example/key ",
    DATABASE_URL: "postgres://u@h/db",
    API_KEYS: "k1,k2",
    CHAIN: "bsc",
    CONFIRMATIONS: "20",
    INDEX_FROM_BLOCK: "100",
    INDEXER: "off",
    DEFAULT_TOKENS: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48, 0xdac17f958d2ee523a2206206994597c13d831ec7",
    CACHE_MEMORY_MB: "64",
    CACHE_DISK_MB: "0",
    LOG_LEVEL: "DEBUG",
    RATE_LIMIT: "10.5/20",
    RATE_LIMITS: "k1=1/2, k=2=3/4",
  });
  expect(config.rateLimit).toEqual({ perSecond: 10.5, burst: 20 });
  expect(config.rateLimits).toEqual([
    { key: "k1", rate: { perSecond: 1, burst: 2 } },
    { key: "k=2", rate: { perSecond: 3, burst: 4 } },
  ]);
  expect(config.port).toBe(9000);
  expect(config.upstreamUrls).toEqual(["http://a:8545", "https://b.example/key"]);
  expect(config.apiKeys).toEqual(["k1", "k2"]);
  expect(config.chain).toBe("BSC");
  expect(config.confirmations).toBe(20);
  expect(config.indexFromBlock).toBe(100);
  expect(config.indexer).toBe(false);
  // Their form is the chain family's, checked at start (families/evm/evmOperations.test.ts).
  expect(config.defaultTokens).toEqual([
    "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    "0xdac17f958d2ee523a2206206994597c13d831ec7",
  ]);
  expect(config.cacheDiskMb).toBe(0);
  expect(config.logLevel).toBe("debug");
});

test("REDIS_URL: a Redis URL, never echoed when wrong (it may hold a password)", () => {
  expect(loadConfig({ REDIS_URL: "redis://:secret@cache:6379/0", REDIS_CACHE_MB: "256" })).toMatchObject({
    redisUrl: "redis://:secret@cache:6379/0",
    redisCacheMb: 256,
  });
  expect(loadConfig({ REDIS_URL: "rediss://cache:6380" }).redisUrl).toBe("rediss://cache:6380");
  expect(() => loadConfig({ REDIS_URL: "http://:secret@cache" })).toThrow(
    /^REDIS_URL: expected a redis:\/\/, rediss:\/\/ or valkey:\/\/ URL$/,
  );
  expect(() => loadConfig({ REDIS_CACHE_MB: "8" })).toThrow(
    'REDIS_CACHE_MB: expected an integer number of MiB from 16 to 1048576, got "8"',
  );
});

test("REDIS_SECRET: at least 32 characters, with REDIS_URL, never echoed", () => {
  const secret = "s".repeat(32);
  expect(loadConfig({ REDIS_URL: "redis://cache", REDIS_SECRET: secret }).redisSecret).toBe(secret);
  expect(() => loadConfig({ REDIS_URL: "redis://cache", REDIS_SECRET: "s".repeat(31) })).toThrow(
    /^REDIS_SECRET: expected a secret of at least 32 characters, the same on every instance of the fleet$/,
  );
  expect(() => loadConfig({ REDIS_SECRET: secret })).toThrow(
    "REDIS_SECRET: the fleet's secret needs the fleet's Redis in REDIS_URL",
  );
});

test("a bad value names the variable and what it expected", () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: "eighty" }, 'PORT: expected an integer from 0 to 65535, got "eighty"'],
    [{ PORT: "70000" }, 'PORT: expected an integer from 0 to 65535, got "70000"'],
    [{ INDEXER: "yes" }, 'INDEXER: expected "on" or "off", got "yes"'],
    [
      { UPSTREAM_URLS: "ftp://x" },
      'UPSTREAM_URLS: expected comma-separated http(s) URLs of JSON-RPC nodes, got "ftp://x"',
    ],
    [
      // credentials and a provider's key (a TRON upstream's #key=) are never echoed
      { UPSTREAM_URLS: "http://u:p@a:8090#key=K1&solidity=8091,https://b#key=K2,ftp://x" },
      'UPSTREAM_URLS: expected comma-separated http(s) URLs of JSON-RPC nodes, got "http://…@a:8090#…,https://b#…,ftp://x"',
    ],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL: expected a postgres:// or postgresql:// URL"],
    [
      { CHAIN: "DOGECOIN" },
      'CHAIN: expected one of ETH, ROPSTEN, BSC, BTC, BTC_TESTNET, TRON, NILE, GOERLI, SEPOLIA, POLYGON, CATAMITE, SATURN, BAHAMUT, TON, DOGE, LTC, SOLANA, got "DOGECOIN"',
    ],
    [{ CONFIRMATIONS: "-1" }, 'CONFIRMATIONS: expected an integer from 0 to 100000, got "-1"'],
    [
      { CACHE_MEMORY_MB: "-1" },
      'CACHE_MEMORY_MB: expected an integer number of MiB (0 turns caching off), got "-1"',
    ],
    [
      { CACHE_DISK_MB: "16" },
      'CACHE_DISK_MB: expected an integer number of MiB, at least 32 (0 turns the disk tier off), got "16"',
    ],
    [{ API_KEYS: "has space" }, "API_KEYS: expected comma-separated keys of printable ASCII without spaces"],
    [{ LOG_LEVEL: "loud" }, 'LOG_LEVEL: expected one of debug, info, warn, error, silent, got "loud"'],
    [
      { RATE_LIMIT: "100" },
      'RATE_LIMIT: expected a rate "<calls per second>/<burst>", e.g. "100/200", got "100"',
    ],
    [
      { RATE_LIMIT: "0/5" },
      'RATE_LIMIT: expected a rate "<calls per second>/<burst>", e.g. "100/200", got "0/5"',
    ],
    [
      { RATE_LIMITS: "k1=fast" },
      'RATE_LIMITS: expected comma-separated "<key>=<calls per second>/<burst>" entries',
    ],
  ];
  for (const [env, message] of cases) {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message));
  }
});
