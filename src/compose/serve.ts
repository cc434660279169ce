/**
 * The HTTP side: what the gauges, /health and /status read, the app and its routes, the series made at 0
 * before the first request (metrics.ts zeroKnownSeries), and the server on its port.
 */
import type { WorkerLink } from "../cluster/worker";
import { guardDatabase } from "../db/guardDatabase";
import { createWebhookStore } from "../db/webhookStore";
import { FAMILIES } from "../families/familyOf";
import { type App, createApp, listen } from "../http/app";
import type { Guard } from "../http/guard";
import { createHealth, type Health } from "../http/health";
import { createStatus, type Status } from "../http/status";
import { watchFilterRouteSpecs } from "../http/watchFilterRoutes";
import { webhookRouteSpecs } from "../http/webhookRoutes";
import { type Sources, zeroKnownSeries } from "../metrics";
import type { NodePaths } from "../operations/nodePaths";
import { createDeliveryClient } from "../webhooks/deliveryClient";
import { createWebhookEndpoints, type WebhookEndpoints } from "../webhooks/endpoints";
import { createSecretBox, loadSecretsKey, type SecretBox } from "../webhooks/secrets";
import type { CacheTiers } from "./cacheTiers";
import { type Chain, chainAddresses } from "./chain";
import type { DataPath } from "./dataPath";
import { databaseEvents, dropIndexerSeries } from "./metricEvents";
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

/**
 * The webhook endpoints' API (docs/interface.md §18.1), where watch filters are served: their deliveries are
 * watch-filter results. Its statements carry the service's deadline; reads are tried again once after a lost
 * connection, and so is a redelivery (setting a delivery pending twice is setting it once). The secrets'
 * key is read (or its file made) when a secret is first sealed.
 */
function webhookEndpoints(ctx: StartContext, parts: ServeParts): WebhookEndpoints | undefined {
  const { config, family, metrics, lifetime } = ctx;
  if (!parts.data.watch) return undefined;
  const store = guardDatabase(createWebhookStore(parts.storage.database.sql), {
    timeoutMs: config.dbStatementTimeoutMs,
    retry: ["list", "get", "deliveries", "redeliver"],
    events: databaseEvents(metrics),
  });
  const client = createDeliveryClient({
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
  });
  lifetime.defer(() => client.close());
  let box: SecretBox | undefined;
  const chain = parts.chain.chain.blockchain;
  return createWebhookEndpoints({
    store,
    seal(secret) {
      box ??= createSecretBox(
        loadSecretsKey({ configured: config.webhookSecretsKey, dataDir: config.dataDir }),
      );
      return box.seal(secret);
    },
    urlProblem: (url) => client.urlProblem(url),
    chain,
    pendingRefused: family.followMempool
      ? undefined
      : `pending results are not served on ${chain}: its watch filters match blocks only, not the nodes' mempool`,
    maxPerKey: config.maxWebhooksPerKey,
  });
}

/** The app: the table's routes, the watch filters' where there are some, and what is refused by name. */
function buildApp(
  ctx: StartContext,
  parts: ServeParts,
  health: Health,
  status: Status,
  nodePaths: NodePaths | undefined,
  webhooks: WebhookEndpoints | undefined,
): App {
  const { config, log, family, metrics } = ctx;
  const { chain, head } = parts.chain;
  const { table, watch, subscriptions, esplora, tronGrid } = parts.data;
  const { link } = parts;
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
  const app = buildApp(ctx, parts, health, status, nodePaths, webhookEndpoints(ctx, parts));
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
