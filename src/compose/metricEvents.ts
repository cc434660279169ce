/**
 * Where each part's events become series of /metrics: the parts know nothing of Prometheus, they take
 * plain event handlers, made here from the service's metrics.
 */
import type { CacheEvents } from "../cache/cache";
import type { DatabaseEvents } from "../db/guardDatabase";
import type { FleetEvents } from "../fleet/redis";
import type { IndexerEvents } from "../indexer/indexer";
import type { Metrics } from "../metrics";
import type { RpcFilterEvents } from "../operations/familyOperations";
import type { SubscriptionEvents } from "../realtime/subscriptions";
import type { PoolOptions, UpstreamPool } from "../upstream/pool";

export function upstreamEvents(metrics: Metrics): NonNullable<PoolOptions["events"]> {
  return {
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
  };
}

/** Every upstream starts in rotation, with its configured batch limit. */
export function markUpstreams(metrics: Metrics, pool: UpstreamPool): void {
  for (const u of pool.upstreams) {
    metrics.upstreamUp.set({ upstream: u.name }, 1);
    metrics.upstreamBatchLimit.set({ upstream: u.name }, u.batchLimit);
  }
}

export function fleetEvents(metrics: Metrics): FleetEvents {
  return {
    connected: (up) => metrics.redisUp.set(up ? 1 : 0),
    error: (use) => metrics.redisErrors.inc({ use }),
  };
}

export function cacheEvents(metrics: Metrics): CacheEvents {
  return {
    lookup: (tier, hit) => metrics.cacheLookups.labels(tier, hit ? "hit" : "miss").inc(),
    stored: (tier) => metrics.cacheStored.labels(tier).inc(),
  };
}

export function databaseEvents(metrics: Metrics): DatabaseEvents {
  return {
    timeout: () => metrics.dbStatementTimeouts.inc(),
    retry: () => metrics.dbRetries.inc(),
    done: (seconds) => metrics.dbQuerySeconds.observe(seconds),
  };
}

/** `processed`: what else learns of an index write (the watch_filters subscriptions). */
export function indexerEvents(metrics: Metrics, processed: () => void): IndexerEvents {
  return {
    written: (count, transfers, last, seconds) => {
      metrics.indexedBlocks.inc(count);
      metrics.indexWriteSeconds.inc(seconds);
      metrics.indexedTransfers.inc(transfers);
      metrics.indexedHead.set(Number(last));
      processed();
    },
    reorg: () => metrics.indexerReorgs.inc(),
    maintained: () => metrics.indexMaintenance.inc(),
  };
}

export function rpcFilterEvents(metrics: Metrics): RpcFilterEvents {
  return { blockLogs: (source) => metrics.rpcFilterBlockLogs.inc({ source }) };
}

export function subscriptionEvents(metrics: Metrics): SubscriptionEvents {
  return {
    notified: (kind, count) => metrics.wsNotifications.inc({ kind }, count),
    changed: (kind, delta) => metrics.wsSubscriptions.inc({ kind }, delta),
  };
}

/** The series of the index (gateway_indexer_*), all of them made when the metrics are. */
const INDEXER_SERIES = "gateway_indexer_";

/**
 * Takes the index's series out of /metrics, for an instance whose family keeps no index: a gauge made at
 * 0 would say the index is at block 0, or 0 blocks behind, and an alert on its lag would watch nothing.
 */
export function dropIndexerSeries(metrics: Metrics): void {
  for (const metric of metrics.registry.getMetricsAsArray()) {
    if (metric.name.startsWith(INDEXER_SERIES)) metrics.registry.removeSingleMetric(metric.name);
  }
}
