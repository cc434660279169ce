/**
 * The HTTP side: what the gauges, /health and /status read, the app and its routes, the series made at 0
 * before the first request (metrics.ts zeroKnownSeries), and the server on its port.
 */
import type { WorkerLink } from "../cluster/worker";
import { FAMILIES } from "../families/familyOf";
import { type App, createApp, listen } from "../http/app";
import type { Guard } from "../http/guard";
import { createHealth, type Health } from "../http/health";
import { createStatus, type Status } from "../http/status";
import { watchFilterRouteSpecs } from "../http/watchFilterRoutes";
import { webhookRouteSpecs } from "../http/webhookRoutes";
import { type Sources, zeroKnownSeries } from "../metrics";
import type { NodePaths } from "../operations/nodePaths";
import type { WebhookEndpoints } from "../webhooks/endpoints";
import type { CacheTiers } from "./cacheTiers";
import { type Chain, chainAddresses } from "./chain";
import type { DataPath } from "./dataPath";
import { dropIndexerSeries } from "./metricEvents";
import type { StartContext } from "./startContext";
import type { Storage } from "./storage";
import { createUnserved } from "./unserved";
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
  /** The webhook endpoints' API (compose/webhooks.ts), where watch filters are served. */
  webhooks: WebhookEndpoints | undefined;
}

/** What the scrape-time gauges read: the cache tiers, and the head and the index (where there is one). */
function figuresOf(parts: ServeParts): Sources {
  const { head } = parts.chain;
  const { indexer } = parts.data;
  return {
    cache: parts.tiers.figures,
    head: () => {
      const top = head.headBlock();
      const finalized = head.finalized();
      const indexed = indexer?.lastBlock ?? null;
      return {
        number: top && Number(top.number),
        timestamp: top?.timestamp,
        finalized: finalized === undefined ? undefined : Number(finalized),
        indexed: indexed === null ? undefined : Number(indexed),
        leading: indexer?.leading,
      };
    },
  };
}

/** The app: the table's routes, the watch filters' where there are some, and what is refused by name. */
function buildApp(
  ctx: StartContext,
  parts: ServeParts,
  health: Health,
  status: Status,
  nodePaths: NodePaths | undefined,
): App {
  const { config, log, family, metrics } = ctx;
  const { chain, head } = parts.chain;
  const { table, watch, subscriptions, esplora, tronGrid } = parts.data;
  const { link, webhooks } = parts;
  return createApp({
    table,
    nodePaths,
    esplora: esplora && {
      source: esplora,
      addresses: chainAddresses(family, chain),
      utxoMax: config.utxoMax,
    },
    tronGrid: tronGrid && { source: tronGrid, addresses: chainAddresses(family, chain) },
    guard: parts.guard,
    health,
    status,
    watchFilterRoutes: watch ? watchFilterRouteSpecs(watch) : [],
    webhookRoutes: webhooks ? webhookRouteSpecs(webhooks) : [],
    unserved: createUnserved({
      family,
      families: FAMILIES,
      chain: chain.blockchain,
      dataOperations: family.index !== undefined,
      watchFilters: watch !== undefined,
      servesPrefix: (prefix) =>
        table.list.some((op) => op.method.startsWith(prefix) || op.rest?.name.startsWith(prefix) === true),
    }),
    metrics,
    metricsText: link ? () => link.metricsText() : () => metrics.registry.metrics(),
    head,
    examples: family.examples,
    summary: family.summary,
    log,
    maxBatchLength: config.maxBatchLength,
    maxBodyBytes: config.maxBodyBytes,
    stream: {
      streams: family.streams ?? [],
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
}

export function serve(ctx: StartContext, parts: ServeParts): Served {
  const { config, log, metrics, lifetime } = ctx;
  const { pool } = parts.upstreams;
  const { chain, head } = parts.chain;
  const { table, subscriptions, indexer } = parts.data;
  const { link } = parts;
  const figures = figuresOf(parts);
  metrics.observe(figures);
  // No index, no indexer series: a lag of 0 would read as an index kept up to date.
  if (!indexer) dropIndexerSeries(metrics);
  const { memory, disk } = parts.tiers;
  const database = parts.storage.database;
  const health = createHealth({
    chain,
    finalityTag: ctx.family.finalityTags?.finalized,
    pool,
    head,
    memory,
    disk,
    database,
    indexer,
    workers: link,
    log,
  });
  const status = createStatus({
    metrics,
    figures,
    health,
    indexer,
    indexerEnabled: indexer !== undefined && config.indexer,
  });
  lifetime.defer(() => status.stop());
  const nodePaths = ctx.family.nodePaths?.({ engine: parts.data.engine });
  const app = buildApp(ctx, parts, health, status, nodePaths);
  zeroKnownSeries(metrics, {
    upstreams: pool.upstreams.map((u) => u.name),
    operations: [
      ...table.list.map((op) => ({
        name: op.method,
        transports: op.rest ? ["rest", "jsonrpc", "ws"] : ["jsonrpc", "ws"],
      })),
      ...(nodePaths?.paths ?? []).map((path) => ({ name: path.path, transports: ["node_path"] })),
    ],
    // A route served twice, with the key in its path (the Esplora and TronGrid APIs'), counts under its own name.
    routes: Object.keys(app.routes).filter((route) => !route.includes("/key/:key/")),
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
