/** Prometheus metrics (prom-client), served at GET /metrics. Label values are bounded sets, never keys. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  BadRequestError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  NodeError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  UnauthorizedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from "./errors";

/** What the cache gauges read when scraped. */
export interface CacheFigures {
  memory: { bytes: number; entries: number; budgetBytes: number };
  disk?: { usedBytes: number; entries: number; budgetBytes: number };
}

/** What the head gauges read when scraped. */
export interface HeadFigures {
  number?: number;
  /** The head block's own timestamp, in seconds since the epoch. */
  timestamp?: number;
  finalized?: number;
  /** The last block in the index (this instance's, or the leader's it follows). */
  indexed?: number;
  /** Whether this instance writes the index (one instance of those on a database does). */
  leading?: boolean;
}

/** Where the gauges read at scrape time get their figures. */
export interface Sources {
  cache(): CacheFigures;
  head(): HeadFigures;
}

/** Every series the service exports, made once per process by createMetrics. */
export interface Metrics {
  /** What GET /metrics prints (each series' help says what it counts). */
  registry: Registry;
  // Requests, by operation and by route
  requests: FastCounter<"operation" | "transport" | "outcome">;
  httpRequests: FastCounter<"route" | "status">;
  // Upstreams
  upstreamCalls: Counter<"upstream" | "method" | "outcome">;
  upstreamHttpRequests: Counter<"upstream" | "outcome">;
  batchSize: Histogram<"upstream">;
  upstreamLatency: Histogram<"upstream">;
  coalesced: FastCounter<"method">;
  upstreamUp: Gauge<"upstream">;
  upstreamHead: Gauge<"upstream">;
  upstreamHedged: Counter<"upstream">;
  upstreamPushing: Gauge<"upstream">;
  upstreamBatchLimit: Gauge<"upstream">;
  // The cache tiers and the fleet's Redis
  cacheLookups: FastCounter<"tier" | "result">;
  cacheStored: FastCounter<"tier">;
  cacheEvictions: Counter<"tier">;
  cacheBadRecords: Counter;
  sharedBadValues: Counter;
  sharedBadHeads: Counter;
  redisUp: Gauge;
  redisErrors: Counter<"use">;
  cacheBytes: Gauge<"tier">;
  cacheBudget: Gauge<"tier">;
  cacheEntries: Gauge<"tier">;
  // The head, read when scraped
  headBlock: Gauge;
  headAge: Gauge;
  finalizedBlock: Gauge;
  /** Names where the gauges read at scrape time get their figures. */
  observe(from: Sources): void;
  // Client WebSockets
  wsConnections: Gauge;
  wsSubscriptions: Gauge<"kind">;
  wsNotifications: Counter<"kind">;
  wsSlowReadersClosed: Counter;
  // Refusals
  refusedBodies: Counter<"reason">;
  rateLimited: Counter<"scope">;
  // The filters the service keeps
  rpcFilterBlockLogs: Counter<"source">;
  // The database and the indexer
  dbStatementTimeouts: Counter;
  dbRetries: Counter;
  indexedBlocks: Counter;
  indexedTransfers: Counter;
  indexWriteSeconds: Counter;
  indexMaintenance: Counter;
  indexedHead: Gauge;
  indexerLag: Gauge;
  indexerLeading: Gauge;
  dbQuerySeconds: Histogram;
  indexerReorgs: Counter;
  // Webhooks (the gauges read from the database by the sender loop, not per scrape)
  webhookDeliveries: Counter<"outcome">;
  webhookAttempts: Counter<"result">;
  webhookPending: Gauge;
  webhookOldestPending: Gauge;
  webhookEndpointsFailing: Gauge;
}

/** What every group of series is made with: the registry, and the gauges read when scraped. */
interface Scope {
  registry: Registry;
  registers: Registry[];
  tierGauge(
    name: string,
    help: string,
    read: (f: CacheFigures) => { memory: number; disk?: number },
  ): Gauge<"tier">;
  headGauge(name: string, help: string, read: (h: HeadFigures) => number | undefined): Gauge;
}

function createScope(registry: Registry, sources: () => Sources | undefined): Scope {
  const registers = [registry];
  return {
    registry,
    registers,
    /** A gauge by tier, read from the cache's figures when scraped (disk only where there is a disk tier). */
    tierGauge: (name, help, read) =>
      new Gauge({
        name,
        help,
        labelNames: ["tier"] as const,
        registers,
        collect() {
          const figures = sources()?.cache();
          if (!figures) return;
          const { memory, disk } = read(figures);
          this.set({ tier: "memory" }, memory);
          if (disk !== undefined) this.set({ tier: "disk" }, disk);
        },
      }),
    /** A gauge read from the head's figures when scraped; left unset while they lack it. */
    headGauge: (name, help, read) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const figures = sources();
          const value = figures && read(figures.head());
          if (value !== undefined) this.set(value);
        },
      }),
  };
}

/** Requests: by operation and transport, by route, coalesced. */
function requestSeries(scope: Scope): Pick<Metrics, "requests" | "httpRequests" | "coalesced"> {
  const { registry } = scope;
  return {
    requests: new FastCounter(
      "gateway_requests_total",
      "Operations answered, by operation, transport (rest, jsonrpc) and outcome",
      ["operation", "transport", "outcome"] as const,
      registry,
    ),
    httpRequests: new FastCounter(
      "gateway_http_requests_total",
      "HTTP requests answered, by route and status",
      ["route", "status"] as const,
      registry,
    ),
    coalesced: new FastCounter(
      "gateway_coalesced_calls_total",
      "Calls answered by joining an identical call in flight, by method",
      ["method"] as const,
      registry,
    ),
  };
}

/** The upstreams. */
function upstreamSeries(
  scope: Scope,
): Pick<
  Metrics,
  | "upstreamCalls"
  | "upstreamHttpRequests"
  | "batchSize"
  | "upstreamLatency"
  | "upstreamUp"
  | "upstreamHead"
  | "upstreamHedged"
  | "upstreamPushing"
  | "upstreamBatchLimit"
> {
  const { registers } = scope;
  return {
    upstreamCalls: new Counter({
      name: "gateway_upstream_calls_total",
      help: "Calls sent to upstreams, by upstream, method and outcome (ok, node_error, retry, error)",
      labelNames: ["upstream", "method", "outcome"] as const,
      registers,
    }),
    upstreamHttpRequests: new Counter({
      name: "gateway_upstream_http_requests_total",
      help: "HTTP requests sent to upstreams (a batch is one), by upstream and outcome",
      labelNames: ["upstream", "outcome"] as const,
      registers,
    }),
    batchSize: new Histogram({
      name: "gateway_upstream_batch_size",
      help: "Calls per HTTP request sent to an upstream",
      labelNames: ["upstream"] as const,
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers,
    }),
    upstreamLatency: new Histogram({
      name: "gateway_upstream_latency_seconds",
      help: "Round-trip time of HTTP requests to upstreams",
      labelNames: ["upstream"] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    upstreamUp: new Gauge({
      name: "gateway_upstream_up",
      help: "1 while an upstream's circuit is closed (in rotation), 0 while open",
      labelNames: ["upstream"] as const,
      registers,
    }),
    upstreamHead: new Gauge({
      name: "gateway_upstream_head_block",
      help: "The last head block seen at each upstream",
      labelNames: ["upstream"] as const,
      registers,
    }),
    upstreamHedged: new Counter({
      name: "gateway_upstream_hedged_calls_total",
      help: "Calls also sent to the next upstream after waiting too long for this one (first answer wins)",
      labelNames: ["upstream"] as const,
      registers,
    }),
    upstreamPushing: new Gauge({
      name: "gateway_upstream_pushing",
      help: "1 while an upstream pushes new heads (a live WebSocket subscription, or a long-poll held open), 0 otherwise",
      labelNames: ["upstream"] as const,
      registers,
    }),
    upstreamBatchLimit: new Gauge({
      name: "gateway_upstream_batch_limit",
      help: "The largest batch each upstream is sent (lowered when it refuses or caps batches)",
      labelNames: ["upstream"] as const,
      registers,
    }),
  };
}

/** The cache tiers and the fleet's Redis. */
function cacheSeries(
  scope: Scope,
): Pick<
  Metrics,
  | "cacheLookups"
  | "cacheStored"
  | "cacheEvictions"
  | "cacheBadRecords"
  | "sharedBadValues"
  | "sharedBadHeads"
  | "redisUp"
  | "redisErrors"
  | "cacheBytes"
  | "cacheBudget"
  | "cacheEntries"
> {
  const { registry, registers, tierGauge } = scope;
  return {
    cacheLookups: new FastCounter(
      "gateway_cache_lookups_total",
      "Cache lookups, by tier (memory, disk, shared: the fleet's Redis) and result (hit, miss)",
      ["tier", "result"] as const,
      registry,
    ),
    cacheStored: new FastCounter(
      "gateway_cache_stored_total",
      "Answers stored, by tier",
      ["tier"] as const,
      registry,
    ),
    cacheEvictions: new Counter({
      name: "gateway_cache_evictions_total",
      help: "Entries evicted to stay within budget, by tier",
      labelNames: ["tier"] as const,
      registers,
    }),
    cacheBadRecords: new Counter({
      name: "gateway_cache_bad_records_total",
      help: "Disk records that failed verification (dropped and treated as misses)",
      registers,
    }),
    sharedBadValues: new Counter({
      name: "gateway_shared_cache_bad_values_total",
      help: "Values of the fleet's shared tier that failed verification (REDIS_SECRET's MAC, or the checks of a node's answer): treated as misses",
      registers,
    }),
    sharedBadHeads: new Counter({
      name: "gateway_shared_heads_bad_messages_total",
      help: "Messages on the fleet's heads channel that failed verification (REDIS_SECRET's MAC): ignored",
      registers,
    }),
    redisUp: new Gauge({
      name: "gateway_redis_up",
      help: "1 while the fleet's Redis (REDIS_URL) is connected, else 0; absent without REDIS_URL",
      registers,
    }),
    redisErrors: new Counter({
      name: "gateway_redis_errors_total",
      help: "Uses of Redis that failed or missed their deadline (the instance went on alone), by use",
      labelNames: ["use"] as const,
      registers,
    }),
    cacheBytes: tierGauge("gateway_cache_bytes", "Bytes held, by tier (disk: pages in use)", (f) => ({
      memory: f.memory.bytes,
      disk: f.disk?.usedBytes,
    })),
    cacheBudget: tierGauge(
      "gateway_cache_budget_bytes",
      "Bytes each tier may hold (CACHE_MEMORY_MB, CACHE_DISK_MB)",
      (f) => ({ memory: f.memory.budgetBytes, disk: f.disk?.budgetBytes }),
    ),
    cacheEntries: tierGauge("gateway_cache_entries", "Entries held, by tier", (f) => ({
      memory: f.memory.entries,
      disk: f.disk?.entries,
    })),
  };
}

/** The head and the index, read from the service's figures when scraped. */
function headSeries(
  scope: Scope,
): Pick<Metrics, "headBlock" | "headAge" | "finalizedBlock" | "indexerLag" | "indexerLeading"> {
  const { headGauge } = scope;
  return {
    headBlock: headGauge(
      "gateway_head_block",
      "The head block the service serves as latest",
      (h) => h.number,
    ),
    headAge: headGauge(
      "gateway_head_age_seconds",
      "Seconds since the head block's own timestamp (grows while the chain or its upstreams stall)",
      (h) => (h.timestamp === undefined ? undefined : Math.max(0, Date.now() / 1000 - h.timestamp)),
    ),
    finalizedBlock: headGauge(
      "gateway_finalized_block",
      "The last final block: nothing at or below it can be reorganized away",
      (h) => h.finalized,
    ),
    indexerLag: headGauge(
      "gateway_indexer_lag_blocks",
      "Blocks between the head and the last block in the index",
      (h) =>
        h.number === undefined || h.indexed === undefined ? undefined : Math.max(0, h.number - h.indexed),
    ),
    indexerLeading: headGauge(
      "gateway_indexer_leading",
      "1 where this instance writes the index (one of the instances on a database leads), else 0",
      (h) => (h.leading === undefined ? undefined : h.leading ? 1 : 0),
    ),
  };
}

/** Client WebSockets, and what was refused. */
function clientSeries(
  scope: Scope,
): Pick<
  Metrics,
  | "wsConnections"
  | "wsSubscriptions"
  | "wsNotifications"
  | "wsSlowReadersClosed"
  | "refusedBodies"
  | "rateLimited"
  | "rpcFilterBlockLogs"
> {
  const { registers } = scope;
  return {
    wsConnections: new Gauge({
      name: "gateway_ws_connections",
      help: "Client WebSockets open",
      registers,
    }),
    wsSubscriptions: new Gauge({
      name: "gateway_ws_subscriptions",
      help: "Client subscriptions held, by kind",
      labelNames: ["kind"] as const,
      registers,
    }),
    wsNotifications: new Counter({
      name: "gateway_ws_notifications_total",
      help: "Subscription notifications sent, by kind",
      labelNames: ["kind"] as const,
      registers,
    }),
    wsSlowReadersClosed: new Counter({
      name: "gateway_ws_slow_readers_closed_total",
      help: "Client WebSockets closed (1008) for more unsent data than WS_MAX_BUFFER_BYTES",
      registers,
    }),
    refusedBodies: new Counter({
      name: "gateway_refused_bodies_total",
      help: "Request bodies refused before they were run, by reason (too_large, malformed, too_deep, invalid)",
      labelNames: ["reason"] as const,
      registers,
    }),
    rateLimited: new Counter({
      name: "gateway_rate_limited_total",
      help: "Calls refused for exceeding a rate limit, by scope (key or ip)",
      labelNames: ["scope"] as const,
      registers,
    }),
    rpcFilterBlockLogs: new Counter({
      name: "gateway_rpc_filter_block_logs_total",
      help: "Blocks whose logs a kept log filter's poll had, by source: read (its receipts read and parsed for it) or shared (another poll's)",
      labelNames: ["source"] as const,
      registers,
    }),
  };
}

/** The database and the indexer's writes. */
function storageSeries(
  scope: Scope,
): Pick<
  Metrics,
  | "dbStatementTimeouts"
  | "dbRetries"
  | "indexedBlocks"
  | "indexedTransfers"
  | "indexWriteSeconds"
  | "indexMaintenance"
  | "indexedHead"
  | "dbQuerySeconds"
  | "indexerReorgs"
> {
  const { registers } = scope;
  return {
    dbStatementTimeouts: new Counter({
      name: "gateway_db_statement_timeouts_total",
      help: "Database statements cancelled past DB_STATEMENT_TIMEOUT_MS (answered 504)",
      registers,
    }),
    dbRetries: new Counter({
      name: "gateway_db_retries_total",
      help: "Database calls tried again after their connection was lost",
      registers,
    }),
    indexedBlocks: new Counter({
      name: "gateway_indexer_blocks_total",
      help: "Blocks written to the index",
      registers,
    }),
    indexedTransfers: new Counter({
      name: "gateway_indexer_transfers_total",
      help: "Transfers written to the index (the Bitcoin family: outputs, each a transfer row when it pays)",
      registers,
    }),
    indexWriteSeconds: new Counter({
      name: "gateway_indexer_write_seconds_total",
      help: "Time spent in the index's write transactions",
      registers,
    }),
    indexMaintenance: new Counter({
      name: "gateway_indexer_maintenance_total",
      help: "VACUUM (ANALYZE) runs over the index's tables, after a backfill and every 250,000 transfers",
      registers,
    }),
    indexedHead: new Gauge({
      name: "gateway_indexer_last_block",
      help: "The last block written to the index by this instance",
      registers,
    }),
    dbQuerySeconds: new Histogram({
      name: "gateway_db_query_seconds",
      help: "Duration of the database calls requests make (a retried call counts once, retry included)",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    indexerReorgs: new Counter({
      name: "gateway_indexer_reorgs_total",
      help: "Reorganizations undone in the index",
      registers,
    }),
  };
}

/** How a webhook attempt ended (gateway_webhook_attempts_total's `result`; webhooks/sender.ts). */
const WEBHOOK_ATTEMPT_RESULTS = ["success", "http_error", "timeout", "refused", "network"] as const;
/** What became of a delivery (gateway_webhook_deliveries_total's `outcome`). */
const WEBHOOK_OUTCOMES = ["delivered", "dropped"] as const;

/** Webhooks: deliveries, attempts, and the outbox's figures (set every few seconds by the sender loop). */
function webhookSeries(
  scope: Scope,
): Pick<
  Metrics,
  | "webhookDeliveries"
  | "webhookAttempts"
  | "webhookPending"
  | "webhookOldestPending"
  | "webhookEndpointsFailing"
> {
  const { registers } = scope;
  return {
    webhookDeliveries: new Counter({
      name: "gateway_webhook_deliveries_total",
      help: "Webhook deliveries finished, by outcome: delivered (a 2xx), dropped (past WEBHOOK_MAX_BACKLOG pending)",
      labelNames: ["outcome"] as const,
      registers,
    }),
    webhookAttempts: new Counter({
      name: "gateway_webhook_attempts_total",
      help: "Webhook attempts made by this instance, by result (success, http_error, timeout, refused, network)",
      labelNames: ["result"] as const,
      registers,
    }),
    webhookPending: new Gauge({
      name: "gateway_webhook_pending_deliveries",
      help: "Webhook deliveries not yet delivered nor dropped, in the database (every instance's)",
      registers,
    }),
    webhookOldestPending: new Gauge({
      name: "gateway_webhook_oldest_pending_seconds",
      help: "Age of the oldest webhook delivery still pending, in seconds (0 with none)",
      registers,
    }),
    webhookEndpointsFailing: new Gauge({
      name: "gateway_webhook_endpoints_failing",
      help: "Webhook endpoints marked failing: their oldest pending delivery has failed for a day",
      registers,
    }),
  };
}

/**
 * Default series whose collection walks the whole heap under Bun (v8.getHeapSpaceStatistics: 0.11-0.16 s at
 * three million objects, measured): every scrape would stall the requests in flight that long. The heap's
 * size and use stay (gateway_nodejs_heap_size_*: process.memoryUsage, a few microseconds).
 */
const HEAP_WALKING_SERIES = ["total", "used", "available"].map(
  (what) => `gateway_nodejs_heap_space_size_${what}_bytes`,
);

export function createMetrics(): Metrics {
  let sources: Sources | undefined;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "gateway_" });
  for (const name of HEAP_WALKING_SERIES) registry.removeSingleMetric(name);
  const scope = createScope(registry, () => sources);
  return {
    registry,
    observe(from: Sources) {
      sources = from;
    },
    ...requestSeries(scope),
    ...upstreamSeries(scope),
    ...cacheSeries(scope),
    ...headSeries(scope),
    ...clientSeries(scope),
    ...storageSeries(scope),
    ...webhookSeries(scope),
  };
}

/** Why a body is refused before it runs (gateway_refused_bodies_total's `reason`; http/guard.ts). */
const REFUSAL_REASONS = ["too_large", "malformed", "too_deep", "invalid"] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];
/** Whose bucket refused a call: a key's, or an address's in open mode. */
const RATE_LIMIT_SCOPES = ["key", "ip"] as const;

/** Label values a service knows when it starts. */
export interface KnownSeries {
  upstreams: readonly string[];
  /** Each operation of the table, and the transports that answer it (rest, jsonrpc, ws). */
  operations: readonly { name: string; transports: readonly string[] }[];
  /** The guarded HTTP routes (gateway_http_requests_total's `route`). */
  routes: readonly string[];
  /** The cache tiers this instance looks answers up in: memory, and disk or shared where it has them. */
  cacheTiers: readonly string[];
  /** The kinds of subscription a client may hold. */
  subscriptionKinds: readonly string[];
}

/**
 * Every series whose label values are known at start, made at 0: a counter's series that appears with its
 * first event loses that event to rate() and increase(), and a panel reads "no data" rather than 0
 * (Prometheus' "avoid missing metrics"). Kept bounded: an operation's and a route's series are made for
 * their success (outcome ok, status 200); other outcomes and statuses, and an upstream call's method,
 * appear with their first event.
 */
export function zeroKnownSeries(metrics: Metrics, known: KnownSeries): void {
  // Adding 0 makes a series that is missing and leaves one already counted as it is (prom-client's zero()
  // would reset it). Each upstream's histograms need nothing: it is asked its chain id before the port opens.
  for (const upstream of known.upstreams) {
    metrics.upstreamHttpRequests.inc({ upstream, outcome: "ok" }, 0);
    metrics.upstreamHedged.inc({ upstream }, 0);
  }
  for (const { name, transports } of known.operations)
    for (const transport of transports) metrics.requests.labels(name, transport, "ok");
  for (const route of known.routes) metrics.httpRequests.labels(route, "200");
  for (const tier of known.cacheTiers) {
    metrics.cacheLookups.labels(tier, "hit");
    metrics.cacheLookups.labels(tier, "miss");
    metrics.cacheStored.labels(tier);
    // Redis evicts the shared tier's values itself: the service counts none.
    if (tier !== "shared") metrics.cacheEvictions.inc({ tier }, 0);
  }
  for (const reason of REFUSAL_REASONS) metrics.refusedBodies.inc({ reason }, 0);
  for (const scope of RATE_LIMIT_SCOPES) metrics.rateLimited.inc({ scope }, 0);
  for (const result of WEBHOOK_ATTEMPT_RESULTS) metrics.webhookAttempts.inc({ result }, 0);
  for (const outcome of WEBHOOK_OUTCOMES) metrics.webhookDeliveries.inc({ outcome }, 0);
  for (const kind of known.subscriptionKinds) {
    metrics.wsNotifications.inc({ kind }, 0);
    metrics.wsSubscriptions.inc({ kind }, 0);
  }
}

/** The `outcome` label of an operation's answer. */
export function outcomeLabel(error?: ServiceError): string {
  if (!error) return "ok";
  if (error instanceof NodeError) return "node_error";
  if (error instanceof RequestValidationError || error instanceof InvalidParamsError) return "invalid";
  if (error instanceof InvalidRequestError || error instanceof MethodNotFoundError) return "invalid";
  // A 400 (a node path's body refused before any node call, an Esplora param): the caller's, not ours.
  if (error instanceof BadRequestError) return "invalid";
  if (error instanceof UnauthorizedError) return "unauthorized";
  if (error instanceof RateLimitedError) return "rate_limited";
  if (error instanceof UpstreamTimeoutError) return "timeout";
  if (error instanceof UpstreamUnavailableError) return "unavailable";
  if (error instanceof NotFoundError) return "not_found";
  if (error instanceof PayloadTooLargeError) return "too_large";
  return "internal";
}

/**
 * A counter for the request path: each label combination is a plain object whose `inc` adds to a number,
 * read by the registry only when /metrics is scraped. prom-client's own counters hash their label object on
 * every increment, which showed as ~8% of the CPU of a cache hit.
 */
interface Child<L extends string> {
  labels: Record<L, string>;
  value: number;
  inc(n?: number): void;
}

export class FastCounter<L extends string> {
  readonly type = "counter";
  private readonly tree = new Map<string, unknown>();
  private readonly children: Child<L>[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The counter for these label values (in labelNames order), created on first use. */
  labels(...values: string[]): { inc(n?: number): void } {
    // Nested maps, one level a label: finding a child allocates nothing.
    let level: Map<string, unknown> = this.tree;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(values[i]!, next);
      }
      level = next;
    }
    const last = values[values.length - 1]!;
    let child = level.get(last) as Child<L> | undefined;
    if (!child) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]])) as Record<
        L,
        string
      >;
      const created: Child<L> = {
        labels,
        value: 0,
        inc(n = 1) {
          created.value += n;
        },
      };
      child = created;
      level.set(last, child);
      this.children.push(child);
    }
    return child;
  }

  /** Every label combination counted so far, and its count. */
  entries(): readonly { labels: Record<L, string>; value: number }[] {
    return this.children;
  }

  /** prom-client's Metric interface: what the registry prints. */
  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: "sum",
      values: this.children.map((c) => ({ labels: c.labels, value: c.value })),
    };
  }

  reset() {
    this.tree.clear();
    this.children.length = 0;
  }
}
