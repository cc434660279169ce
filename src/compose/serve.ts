/**
 * The HTTP side: what the gauges, /health and /status read, the app and its routes, the series made at 0
 * before the first request (metrics.ts zeroKnownSeries), and the server on its port.
 */
import type { WorkerLink } from "../cluster/worker";
import { createApp, listen } from "../http/app";
import type { Guard } from "../http/guard";
import { createHealth } from "../http/health";
import { createStatus } from "../http/status";
import { watchFilterRouteSpecs } from "../http/watchFilterRoutes";
import { type Sources, zeroKnownSeries } from "../metrics";
import type { CacheTiers } from "./cacheTiers";
import type { Chain } from "./chain";
import type { DataPath } from "./dataPath";
import type { StartContext } from "./startContext";
import type { Storage } from "./storage";
import type { Upstreams } from "./upstreams";

export interface Served {
  url: string;
}

export interface ServeParts {
  upstreams: Upstreams;
  chain: Chain;
  storage: Storage;
  tiers: CacheTiers;
  data: DataPath;
  guard: Guard;
  /** Set in a pool of workers: its metrics are the pool's, and the port is shared. */
  link: WorkerLink | undefined;
}

/** What the scrape-time gauges read: the cache tiers, and the head and the index. */
function figuresOf(parts: ServeParts): Sources {
  const { head } = parts.chain;
  const { indexer } = parts.data;
  return {
    cache: parts.tiers.figures,
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
}

export function serve(ctx: StartContext, parts: ServeParts): Served {
  const { config, log, family, metrics, lifetime } = ctx;
  const { pool } = parts.upstreams;
  const { chain, head } = parts.chain;
  const { table, watch, subscriptions, indexer } = parts.data;
  const { link } = parts;
  const figures = figuresOf(parts);
  metrics.observe(figures);
  const { memory, disk } = parts.tiers;
  const database = parts.storage.database;
  const health = createHealth({ chain, pool, head, memory, disk, database, indexer, workers: link, log });
  const status = createStatus({ metrics, figures, health, indexer, indexerEnabled: config.indexer });
  lifetime.defer(() => status.stop());
  const app = createApp({
    table,
    guard: parts.guard,
    health,
    status,
    watchFilterRoutes: watchFilterRouteSpecs(watch),
    metrics,
    metricsText: link ? () => link.metricsText() : () => metrics.registry.metrics(),
    head,
    examples: family.examples,
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
    cacheTiers: parts.tiers.tiers,
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
  lifetime.defer(() => server.stop());
  const host = config.host.includes(":") && !link ? `[${config.host}]` : config.host;
  return { url: `http://${host}:${server.port}` };
}
