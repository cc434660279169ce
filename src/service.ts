/**
 * Composition root, built from the bottom of the data path up (docs/architecture.md): config -> dev chain
 * (when no upstream is configured) -> upstream pool -> chain identity and head -> database -> auth ->
 * cache -> engine -> operations, indexer, watch filters -> HTTP. `stop()` undoes it in reverse order.
 */
import { join } from "node:path";
import { createCache } from "./cache/cache";
import { createDiskTier, type DiskTier } from "./cache/disk";
import { createMemoryTier } from "./cache/memory";
import { joinPool } from "./cluster/worker";
import type { Config } from "./config";
import { createApiKeyStore } from "./db/apiKeys";
import { createBlockQueries } from "./db/blockQueries";
import { createDatabase } from "./db/database";
import { createFilterStore } from "./db/filterStore";
import { guardDatabase } from "./db/guard";
import { migrate, migrationSettings, readMigrations } from "./db/migrate";
import { createTransferQueries } from "./db/transferQueries";
import { createEngine } from "./engine/engine";
import { createChainHead } from "./engine/head";
import type { DevNode } from "./families/family";
import { familyOf } from "./families/familyOf";
import { createFleet, type Fleet } from "./fleet/redis";
import { createSharedCache } from "./fleet/sharedCache";
import { shareHeads } from "./fleet/sharedHeads";
import { createSharedLimiter } from "./fleet/sharedLimiter";
import { createApp, listen } from "./http/app";
import { createAuth } from "./http/auth";
import { createGuard } from "./http/guard";
import { createHealth } from "./http/health";
import { createRateLimiter } from "./http/rateLimit";
import { createStatus } from "./http/status";
import { watchFilterRouteSpecs } from "./http/watchFilters";
import { startIndexer } from "./indexer/indexer";
import type { Logger } from "./log";
import { createMetrics, type Sources, zeroKnownSeries } from "./metrics";
import { createStatsOperations } from "./operations/stats";
import { createOperationTable } from "./operations/table";
import { createTransferOperations } from "./operations/transfers";
import { createSubscriptions } from "./realtime/subscriptions";
import { createUpstreamPool, type UpstreamPool } from "./upstream/pool";
import type { NodeProtocol } from "./upstream/protocol";
import { socketUrlOf } from "./upstream/socket";
import { useAddressCodec } from "./validation";
import { createWatchFilters } from "./watch/watchFilters";

/** How long start-up waits for an upstream to say which chain it serves. */
const CHAIN_ID_WAIT_MS = 30_000;
const CHAIN_ID_RETRY_MS = 1_000;
/** How long start-up waits for the upstream WebSockets to subscribe to new heads. */
const SOCKETS_READY_MS = 3_000;
/** Head polling where HEAD_POLL_MS is unset (a dev node says its own). */
const HEAD_POLL_MS = 1_000;
const NO_FLEET_SECRET =
  "REDIS_SECRET is unset: only rate limits are shared through Redis, not answers nor heads (anyone who can reach Redis could forge them); set REDIS_SECRET, at least 32 characters and the same on every instance, to share them";

export interface Service {
  /** The base URL the service listens on. */
  url: string;
  stop(): Promise<void>;
}

/** The chain's identity, as the first upstream to answer the family's identity call names it. */
async function readIdentity(upstream: UpstreamPool, protocol: NodeProtocol, log: Logger): Promise<bigint> {
  const { method, params } = protocol.identity;
  const deadline = Date.now() + CHAIN_ID_WAIT_MS;
  for (;;) {
    try {
      const identity = protocol.identityOf((await upstream.call(method, params)).raw);
      if (identity === undefined) throw new Error(`${method} named no chain`);
      return identity;
    } catch (error) {
      if (Date.now() >= deadline) {
        throw new Error(
          `no upstream answered ${method} within ${CHAIN_ID_WAIT_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      log.warn(`waiting for an upstream to answer ${method}`, { error: (error as Error).message });
      await Bun.sleep(CHAIN_ID_RETRY_MS);
    }
  }
}

/**
 * The service in this process. `worker`: it is one of a pool's HTTP workers (cluster/primary.ts), sharing
 * the port with the others; `onPrimaryLost` is how it is stopped when its primary is gone.
 */
export async function startService(
  config: Config,
  log: Logger,
  worker?: { index: number; onPrimaryLost: () => void },
): Promise<Service> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log.warn("error during shutdown", { error });
      }
    }
    cleanups.length = 0;
  };

  try {
    const family = familyOf(config.chain);
    // Before any route is compiled or any request is checked: addresses are the family's.
    useAddressCodec(family.addresses);
    let upstreamUrls = config.upstreamUrls;
    let devNode: DevNode | undefined;
    if (upstreamUrls.length === 0) {
      const started = await family.startDevNode({ dataDir: config.dataDir, log });
      devNode = started;
      cleanups.push(() => started.stop());
      upstreamUrls = [started.url];
    }
    const metrics = createMetrics();
    const link =
      worker &&
      joinPool({ index: worker.index, registry: metrics.registry, log, onPrimaryLost: worker.onPrimaryLost });
    if (link) cleanups.push(() => link.stop());
    const headPollMs = config.headPollMs ?? devNode?.headPollMs ?? HEAD_POLL_MS;
    const pool = createUpstreamPool({
      urls: upstreamUrls,
      protocol: family.node,
      socketUrls: upstreamUrls.map((url, i) => socketUrlOf(url, config.upstreamSocketUrls[i])),
      timeoutMs: config.upstreamTimeoutMs,
      deadlineMs: config.upstreamDeadlineMs,
      batchWindowMs: config.batchWindowMs,
      batchMaxSize: config.batchMaxSize,
      maxInFlight: config.upstreamMaxInFlight,
      headPollMs,
      cooldownMs: config.upstreamCooldownMs,
      hedgeAfterMs: config.hedgeAfterMs,
      maxResponseBytes: config.upstreamMaxResponseMb * 1024 * 1024,
      log,
      events: {
        httpRequest(upstream, size, outcome, seconds) {
          metrics.upstreamHttpRequests.inc({ upstream, outcome });
          metrics.batchSize.observe({ upstream }, size);
          metrics.upstreamLatency.observe({ upstream }, seconds);
        },
        attempt: (upstream, method, outcome) => metrics.upstreamCalls.inc({ upstream, method, outcome }),
        hedged: (upstream) => metrics.upstreamHedged.inc({ upstream }),
        stateChange: (upstream, state) => metrics.upstreamUp.set({ upstream }, state === "closed" ? 1 : 0),
        head: (upstream, head) => metrics.upstreamHead.set({ upstream }, Number(head)),
        batchLimit: (upstream, limit) => metrics.upstreamBatchLimit.set({ upstream }, limit),
        pushing: (upstream, live) => metrics.upstreamPushing.set({ upstream }, live ? 1 : 0),
      },
    });
    cleanups.push(() => pool.stop());
    for (const u of pool.upstreams) {
      metrics.upstreamUp.set({ upstream: u.name }, 1);
      metrics.upstreamBatchLimit.set({ upstream: u.name }, u.batchLimit);
    }
    const identity = await readIdentity(pool, family.node, log);
    // Every upstream is checked to serve this chain before it is used (and again after each failure).
    await pool.expectChain(identity);
    const chain = family.describe(identity, {
      blockchain: config.chain,
      confirmations: config.confirmations,
    });
    const head = createChainHead({
      pool,
      node: family.node,
      refs: family.blockRefs,
      finalityTags: family.finalityTags,
      confirmations: chain.confirmations,
      pollMs: headPollMs,
      log,
    });
    cleanups.push(() => head.stop());
    // Heads are pushed from the first block on: the port opens once the subscriptions are made (or failed).
    await pool.socketsReady(SOCKETS_READY_MS);
    await head.refresh();
    log.info("chain identified", {
      chainId: chain.chainId.toString(),
      blockchain: chain.blockchain,
      confirmations: chain.confirmations,
    });

    // The database schema, the disk tier and the fleet's keys belong to one chain: its id and genesis hash
    // name them, so another chain on the same database, DATA_DIR or Redis (a fresh dev chain, say) never
    // reads this one's data.
    const genesis = await family.node.readHeader(
      family.blockRefs.encode(0n),
      async (method, params) => (await pool.call(method, params)).raw,
    );
    if (!genesis) throw new Error("no upstream has the chain's first block");
    const database = await createDatabase({
      config,
      log,
      chain: { chainId: chain.chainId, genesisHash: genesis.hash },
    });
    log.info("database schema", { schema: database.schema });
    cleanups.push(() => database.close());
    await migrate(database.sql, log, migrationSettings(config), readMigrations(family.index.migrations));

    const auth = await createAuth({
      apiKeys: config.apiKeys,
      keyRates: config.rateLimits,
      defaultRate: config.rateLimit,
      keySource: createApiKeyStore(database.sql),
      refreshMs: config.keysRefreshMs,
      log,
    });
    cleanups.push(() => auth.stop());
    if (auth.open) log.warn("no API key is configured: the service is open to anyone who can reach it");
    let fleet: Fleet | undefined;
    // Answers and heads read from Redis are trusted: without the fleet's secret to sign them, only rate
    // limits are shared (a forged bucket changes no answer).
    const secret = config.redisSecret;
    if (config.redisUrl) {
      metrics.redisUp.set(0);
      const started = createFleet({
        url: config.redisUrl,
        maxMemoryMb: config.redisCacheMb,
        chainId: chain.chainId,
        genesisHash: genesis.hash,
        sharing: secret ? "final answers, rate limits and heads" : "rate limits",
        log,
        events: {
          connected: (up) => metrics.redisUp.set(up ? 1 : 0),
          error: (use) => metrics.redisErrors.inc({ use }),
        },
      });
      fleet = started;
      cleanups.push(() => started.stop());
      if (secret) {
        shareHeads({
          fleet,
          head,
          secret,
          parseHeader: family.node.parseHeader,
          events: { bad: () => metrics.sharedBadHeads.inc() },
        });
      } else log.warn(NO_FLEET_SECRET);
    }
    const localLimiter = createRateLimiter();
    const limiter = fleet ? createSharedLimiter({ fleet, local: localLimiter }) : localLimiter;
    cleanups.push(() => limiter.stop());
    const guard = createGuard({ auth, limiter, metrics, log, maxBodyBytes: config.maxBodyBytes });
    const memoryBudget = Math.max(config.cacheMemoryMb, 1) * 1024 * 1024;
    const memory = createMemoryTier({
      maxBytes: memoryBudget,
      onEvict: () => metrics.cacheEvictions.inc({ tier: "memory" }),
    });
    let disk: DiskTier | undefined;
    if (config.cacheDiskMb > 0 && config.cacheMemoryMb > 0) {
      disk = createDiskTier({
        dir: join(config.dataDir, "cache", `${chain.chainId}-${genesis.hash.slice(2, 18)}`),
        maxBytes: config.cacheDiskMb * 1024 * 1024,
        log,
        onEvict: (count) => metrics.cacheEvictions.inc({ tier: "disk" }, count),
        onBadRecord: () => metrics.cacheBadRecords.inc(),
      });
      const openDisk = disk;
      cleanups.push(() => openDisk.close());
    }
    const shared =
      fleet && secret
        ? createSharedCache(fleet, secret, {
            stored: () => metrics.cacheStored.labels("shared").inc(),
            bad: () => metrics.sharedBadValues.inc(),
          })
        : undefined;
    const cache = createCache({
      chain: head,
      refs: family.blockRefs,
      memory,
      disk,
      shared,
      headTtlMs: headPollMs,
      unfinalizedTtlMs: Math.max(chain.blockTimeMs, headPollMs),
      events: {
        lookup: (tier, hit) => metrics.cacheLookups.labels(tier, hit ? "hit" : "miss").inc(),
        stored: (tier) => metrics.cacheStored.labels(tier).inc(),
      },
    });
    const node = createEngine({
      pool,
      head,
      // CACHE_MEMORY_MB=0 turns caching off (the disk tier only ever fills from the memory path).
      cache: config.cacheMemoryMb > 0 ? cache : undefined,
      refs: family.blockRefs,
      headNumber: family.headNumber,
      methods: family.methods,
      events: { coalesced: (method) => metrics.coalesced.labels(method).inc() },
    });
    // What requests read and write goes through the guard: database failures become 503/504, never 500,
    // and calls safe to repeat are tried again once when their connection was lost.
    const guarded = <T extends object>(api: T, retry: readonly (keyof T)[] | "all") =>
      guardDatabase(api, {
        timeoutMs: config.dbStatementTimeoutMs,
        retry,
        events: {
          timeout: () => metrics.dbStatementTimeouts.inc(),
          retry: () => metrics.dbRetries.inc(),
          done: (seconds) => metrics.dbQuerySeconds.observe(seconds),
        },
      });
    const blocks = guarded(createBlockQueries(database.sql), "all");
    // The callers' reads of the index go to DATABASE_READ_URL when set (a replica); the watch filters read
    // what the indexer just wrote, so they stay on the primary.
    const readBlocks =
      database.read === database.sql ? blocks : guarded(createBlockQueries(database.read), "all");
    const familyOperations = family.operations({
      node,
      head,
      chain,
      sql: database.sql,
      guarded,
      defaultTokens: config.defaultTokens,
    });
    const table = createOperationTable([
      ...familyOperations.node,
      ...createTransferOperations({
        transfers: guarded(createTransferQueries(database.read), "all"),
        blocks: readBlocks,
        head,
        chain,
        addresses: family.addresses,
      }),
      ...createStatsOperations({
        blocks: readBlocks,
        node,
        head,
        blockRefs: family.blockRefs,
        headers: family.node,
      }),
      ...familyOperations.data,
    ]);
    const watch = createWatchFilters({
      // add is idempotent (one filter per key, address, contract, approvals); remove is not.
      filters: guarded(createFilterStore(database.sql), ["add", "list", "page"]),
      matcher: family.createWatchMatcher({
        sql: database.sql,
        guard: (queries) => guarded(queries, "all"),
        node,
        chain,
      }),
      addresses: family.addresses,
      maxFilters: config.maxFiltersPerKey,
      blocks,
      head,
      chain,
      log,
    });
    const subscriptions = createSubscriptions({
      head,
      node,
      upstreamSubscribe: (params, onItem) => pool.subscribe(params, onItem),
      watch: { lastBlockNumber: () => watch.processedUpTo(), results: watch.results },
      kinds: family.subscriptions,
      log,
      events: {
        notified: (kind, count) => metrics.wsNotifications.inc({ kind }, count),
        changed: (kind, delta) => metrics.wsSubscriptions.inc({ kind }, delta),
      },
    });
    cleanups.push(() => subscriptions.stop());
    const indexer = startIndexer({
      sql: database.sql,
      exclusive: database.embedded,
      enabled: config.indexer,
      family: family.index,
      refs: family.blockRefs,
      node,
      head,
      chain,
      fromBlock: config.indexFromBlock,
      pollMs: headPollMs,
      log,
      events: {
        written: (count, transfers, last, seconds) => {
          metrics.indexedBlocks.inc(count);
          metrics.indexWriteSeconds.inc(seconds);
          metrics.indexedTransfers.inc(transfers);
          metrics.indexedHead.set(Number(last));
          subscriptions.processed();
        },
        reorg: () => metrics.indexerReorgs.inc(),
        maintained: () => metrics.indexMaintenance.inc(),
      },
    });
    cleanups.push(() => indexer.stop());
    const figures: Sources = {
      cache: () => ({
        memory: { bytes: memory.bytes, entries: memory.entries, budgetBytes: memoryBudget },
        disk: disk && { ...disk.usage(), budgetBytes: config.cacheDiskMb * 1024 * 1024 },
      }),
      head: () => {
        const top = head.headBlock();
        const finalized = head.finalized();
        const indexed = indexer.lastBlock;
        return {
          number: top && Number(top.number),
          timestamp: top?.timestamp,
          finalized: finalized === undefined ? undefined : Number(finalized),
          indexed: indexed === null ? undefined : Number(indexed),
          leading: indexer.leading,
        };
      },
    };
    metrics.observe(figures);
    const health = createHealth({ chain, pool, head, memory, disk, database, indexer, workers: link, log });
    const status = createStatus({ metrics, figures, health, indexer, indexerEnabled: config.indexer });
    cleanups.push(() => status.stop());
    const app = createApp({
      table,
      guard,
      health,
      status,
      watchFilterRoutes: watchFilterRouteSpecs(watch),
      metrics,
      metricsText: link ? () => link.metricsText() : () => metrics.registry.metrics(),
      head,
      log,
      maxBatchLength: config.maxBatchLength,
      maxBodyBytes: config.maxBodyBytes,
      stream: {
        streams: family.streams,
        blockRefs: family.blockRefs,
        maxBlocks: config.streamMaxBlocks,
        prefetch: config.streamPrefetch,
      },
      subscriptions,
      ws: {
        maxSubscriptions: config.wsMaxSubscriptions,
        maxConnections: config.wsMaxConnections,
        maxBufferBytes: config.wsMaxBufferBytes,
      },
    });
    zeroKnownSeries(metrics, {
      upstreams: pool.upstreams.map((u) => u.name),
      operations: table.list.map((op) => ({
        name: op.method,
        transports: op.rest ? ["rest", "jsonrpc", "ws"] : ["jsonrpc", "ws"],
      })),
      routes: Object.keys(app.routes),
      // With CACHE_MEMORY_MB=0 the engine has no cache: nothing is looked up.
      cacheTiers:
        config.cacheMemoryMb === 0
          ? []
          : ["memory", ...(disk ? ["disk"] : []), ...(shared ? ["shared"] : [])],
      subscriptionKinds: subscriptions.kinds,
    });
    const server = listen({
      app,
      host: config.host,
      port: config.port,
      maxBodyBytes: config.maxBodyBytes,
      upstreamWaitMs: Math.max(config.upstreamDeadlineMs, config.upstreamTimeoutMs),
      sharePort: link !== undefined,
      log,
    });
    cleanups.push(() => server.stop());
    if (link) {
      link.ready();
      return { url: `http://${config.host}:${server.port}`, stop };
    }
    const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
    log.info("listening", { url, status: `${url}/status` });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
