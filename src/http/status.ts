/**
 * GET /status and GET /status.json (README.md, "Operating it"): what an operator watches, as one page that reads
 * the JSON every second. Like /health it needs no key, so it names no key and no upstream URL (upstreams
 * by their names only).
 *
 * Rates need history, and a page just opened has none: a sampler reads the counters once a second (a
 * few map reads, no I/O) into a ring of STATUS_POINTS snapshots, and the JSON's rates and charts are
 * differences between them. Totals are read live, so they equal /metrics at the same moment.
 */
import { Elysia } from "elysia";
import { BACKFILL_BLOCKS } from "../indexer/indexer";
import type { CacheFigures, Metrics, Sources } from "../metrics";
import type { Health, HealthBody } from "./health";
import { STATUS_PAGE } from "./statusPage";

/** The sampler's period, and how many periods the charts and "last minute" figures cover. */
export const STATUS_SAMPLE_MS = 1_000;
export const STATUS_POINTS = 60;
/** The short window of "now" figures (req/s, blocks/s): a few samples, so one slow tick does not show. */
const RECENT_POINTS = 5;
/** A health report (with its database ping) is shared by the status reads within this long. */
const HEALTH_REUSE_MS = 900;

/** Outcomes of gateway_requests_total, grouped as the page charts them. */
const OUTCOME_GROUP: Record<string, "ok" | "refused" | "node" | "failed"> = {
  ok: "ok",
  node_error: "node",
  invalid: "refused",
  unauthorized: "refused",
  rate_limited: "refused",
  not_found: "refused",
  too_large: "refused",
  timeout: "failed",
  unavailable: "failed",
  internal: "failed",
};
const GROUPS = ["ok", "refused", "node", "failed"] as const;

interface Histogram {
  /** Upper bounds, ascending, the last Infinity. */
  bounds: number[];
  /** Cumulative counts per bound. */
  counts: number[];
}

interface Snapshot {
  at: number;
  /** Answers by `operation \t outcome`, over every transport. */
  requests: Map<string, number>;
  memoryHits: number;
  diskHits: number;
  /** Lookups no tier answered. */
  misses: number;
  upstreams: Map<string, { requests: number; errors: number; latency: Histogram }>;
  db: Histogram;
  indexed: number | null;
  webhooks: WebhookCounts;
}

/** Webhook counters of this instance (gateway_webhook_*_total). */
interface WebhookCounts {
  delivered: number;
  dropped: number;
  /** Attempts that did not end in a 2xx. */
  failedAttempts: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** prom-client histogram values (cumulative buckets) grouped by one label ("" for none). */
function histograms(values: MetricValue[], by?: string): Map<string, Histogram> {
  const out = new Map<string, Histogram>();
  for (const v of values) {
    if (!v.metricName?.endsWith("_bucket")) continue;
    const key = by ? String(v.labels[by]) : "";
    let h = out.get(key);
    if (!h) {
      h = { bounds: [], counts: [] };
      out.set(key, h);
    }
    h.bounds.push(v.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(v.labels.le));
    h.counts.push(v.value);
  }
  return out;
}

const EMPTY: Histogram = { bounds: [], counts: [] };

/**
 * The q-quantile of what was observed between two readings of a histogram, interpolated inside its bucket
 * as Prometheus's histogram_quantile does; null without observations.
 */
export function quantile(q: number, newer: Histogram, older: Histogram = EMPTY): number | null {
  const counts = newer.counts.map((c, i) => c - (older.counts[i] ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i]! < rank) continue;
    const upper = newer.bounds[i]!;
    const lower = i === 0 ? 0 : newer.bounds[i - 1]!;
    if (upper === Number.POSITIVE_INFINITY) return lower;
    const below = i === 0 ? 0 : counts[i - 1]!;
    const inBucket = counts[i]! - below;
    return inBucket === 0 ? upper : lower + ((upper - lower) * (rank - below)) / inBucket;
  }
  return null;
}

const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1e5) / 100);
const round1 = (n: number) => Math.round(n * 10) / 10;

export interface StatusDeps {
  metrics: Metrics;
  /** What the scrape-time gauges read (the head's timestamp, the cache's budgets). */
  figures: Sources;
  health: Health;
  /** Undefined where the chain's family keeps no index. */
  indexer?: { readonly lastBlock: bigint | null; readonly leading: boolean };
  /** INDEXER=on: this instance may lead (it does once it holds the lock). */
  indexerEnabled: boolean;
}

type Group = (typeof GROUPS)[number];

/** A table row of the page: one operation's rate now and its answers of the last minute, by outcome. */
export interface OperationRow {
  operation: string;
  perSecond: number;
  lastMinute: Record<string, number>;
}

/** What /status.json answers (the page's only source). */
export interface StatusReport {
  at: number;
  status: HealthBody["status"];
  chain: HealthBody["chain"];
  chainId: HealthBody["chainId"];
  uptimeSeconds: number;
  rssBytes: number;
  head: {
    number: number | null;
    ageSeconds: number | null;
    finalized: number | null;
    /** The nodes' own final block and its tag (TRON: solidified), where they name one. */
    nodeFinal: { tag: string; number: number | null } | null;
  };
  upstreams: {
    name: string;
    state: string;
    headBlockNumber: number | null;
    behind: number | null;
    pushing: boolean;
    batchLimit: number;
    lastMinute: { requests: number; errors: number; p50Ms: number | null; p99Ms: number | null };
  }[];
  database: {
    status: HealthBody["database"]["status"];
    embedded: boolean;
    pingMs: number | null;
    lastMinute: { p50Ms: number | null; p99Ms: number | null };
  };
  cache: {
    memory: CacheFigures["memory"];
    disk: NonNullable<CacheFigures["disk"]> | null;
    lastMinute: { lookups: number; memory: number | null; disk: number | null; miss: number | null };
  };
  requests: { perSecond: number; operations: OperationRow[] };
  /** Null where the chain's family keeps no index: the page shows no indexer card. */
  indexer: {
    enabled: boolean;
    leading: boolean;
    lastBlockNumber: number | null;
    lag: number | null;
    blocksPerSecond: number;
    backfilling: boolean;
    etaSeconds: number | null;
  } | null;
  websocket: { connections: number; subscriptions: Record<string, number> };
  /**
   * Webhooks: the outbox's figures (every instance's, as the sender loop last read them: every few
   * seconds), and this instance's deliveries and failed attempts.
   */
  webhooks: {
    pending: number;
    oldestPendingSeconds: number;
    failingEndpoints: number;
    lastMinute: WebhookCounts;
    totals: WebhookCounts;
  };
  /** The counters as /metrics has them now (requests summed over transports). */
  totals: {
    requests: { operation: string; outcome: string; count: number }[];
    cache: { memoryHits: number; diskHits: number; misses: number };
  };
  /** One point per sampled second, oldest first. */
  series: {
    at: number[];
    requests: Record<Group, number[]>;
    cache: { memory: number[]; disk: number[]; miss: number[] };
  };
}

export interface Status {
  report(): Promise<StatusReport>;
  stop(): void;
}

/** Per-second rates between two snapshots. */
const perSecond = (n: number, older: Snapshot, newer: Snapshot) =>
  newer.at > older.at ? (n * 1000) / (newer.at - older.at) : 0;

/** The counters of this moment, as the sampler keeps them. */
async function snapshot(metrics: Metrics, indexed: bigint | null): Promise<Snapshot> {
  const requests = new Map<string, number>();
  for (const { labels, value } of metrics.requests.entries()) {
    const key = `${labels.operation}\t${labels.outcome}`;
    requests.set(key, (requests.get(key) ?? 0) + value);
  }
  const lookups = { memoryHit: 0, memoryMiss: 0, diskHit: 0 };
  for (const { labels, value } of metrics.cacheLookups.entries()) {
    if (labels.tier === "memory") lookups[labels.result === "hit" ? "memoryHit" : "memoryMiss"] += value;
    else if (labels.result === "hit") lookups.diskHit += value;
  }
  const [http, latency, db, deliveries, attempts] = await Promise.all([
    metrics.upstreamHttpRequests.get(),
    metrics.upstreamLatency.get(),
    metrics.dbQuerySeconds.get(),
    metrics.webhookDeliveries.get(),
    metrics.webhookAttempts.get(),
  ]);
  const deliveriesBy = (outcome: string) =>
    deliveries.values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
  const latencies = histograms(latency.values as MetricValue[], "upstream");
  const upstreams = new Map<string, { requests: number; errors: number; latency: Histogram }>();
  for (const v of http.values as MetricValue[]) {
    const name = String(v.labels.upstream);
    let u = upstreams.get(name);
    if (!u) {
      u = { requests: 0, errors: 0, latency: latencies.get(name) ?? EMPTY };
      upstreams.set(name, u);
    }
    u.requests += v.value;
    if (v.labels.outcome !== "ok") u.errors += v.value;
  }
  return {
    at: Date.now(),
    requests,
    memoryHits: lookups.memoryHit,
    diskHits: lookups.diskHit,
    // A memory miss goes on to the disk tier when there is one: what it does not answer reaches the node.
    misses: lookups.memoryMiss - lookups.diskHit,
    upstreams,
    db: histograms(db.values as MetricValue[]).get("") ?? EMPTY,
    indexed: indexed === null ? null : Number(indexed),
    webhooks: {
      delivered: deliveriesBy("delivered"),
      dropped: deliveriesBy("dropped"),
      failedAttempts: attempts.values
        .filter((v) => v.labels.result !== "success")
        .reduce((sum, v) => sum + v.value, 0),
    },
  };
}

/** The outbox's figures, this instance's webhook counters, and their last minute. */
async function webhookSection(metrics: Metrics, now: Snapshot, oldest: Snapshot) {
  const [pending, age, failing] = await Promise.all([
    metrics.webhookPending.get(),
    metrics.webhookOldestPending.get(),
    metrics.webhookEndpointsFailing.get(),
  ]);
  const value = (m: { values: { value: number }[] }) => m.values[0]?.value ?? 0;
  const since = (key: keyof WebhookCounts) => now.webhooks[key] - oldest.webhooks[key];
  return {
    pending: value(pending),
    oldestPendingSeconds: Math.round(value(age)),
    failingEndpoints: value(failing),
    lastMinute: {
      delivered: since("delivered"),
      dropped: since("dropped"),
      failedAttempts: since("failedAttempts"),
    },
    totals: now.webhooks,
  };
}

/** The charts: per-second rates between each two samples of the ring. */
function chartSeries(ring: readonly Snapshot[]): StatusReport["series"] {
  const series: StatusReport["series"] = {
    at: [],
    requests: { ok: [], refused: [], node: [], failed: [] },
    cache: { memory: [], disk: [], miss: [] },
  };
  for (let i = 1; i < ring.length; i++) {
    const a = ring[i - 1]!;
    const b = ring[i]!;
    series.at.push(b.at);
    const groups = { ok: 0, refused: 0, node: 0, failed: 0 };
    for (const [key, value] of b.requests) {
      const group = OUTCOME_GROUP[key.slice(key.indexOf("\t") + 1)] ?? "failed";
      groups[group] += value - (a.requests.get(key) ?? 0);
    }
    for (const g of GROUPS) series.requests[g].push(round1(perSecond(groups[g], a, b)));
    series.cache.memory.push(round1(perSecond(b.memoryHits - a.memoryHits, a, b)));
    series.cache.disk.push(round1(perSecond(b.diskHits - a.diskHits, a, b)));
    series.cache.miss.push(round1(perSecond(b.misses - a.misses, a, b)));
  }
  return series;
}

/** One row per operation ever answered: its rate over the recent samples, its last minute by outcome. */
function operationRows(now: Snapshot, recent: Snapshot, oldest: Snapshot): OperationRow[] {
  const rows = new Map<string, OperationRow>();
  for (const [key, value] of now.requests) {
    // Series made at 0 at start (metrics.ts, zeroKnownSeries): an operation never answered is no row.
    if (value === 0) continue;
    const [operation, outcome] = key.split("\t") as [string, string];
    let row = rows.get(operation);
    if (!row) {
      row = { operation, perSecond: 0, lastMinute: {} };
      rows.set(operation, row);
    }
    row.perSecond += perSecond(value - (recent.requests.get(key) ?? 0), recent, now);
    const minute = value - (oldest.requests.get(key) ?? 0);
    if (minute > 0) row.lastMinute[outcome] = minute;
  }
  return [...rows.values()];
}

/** Each upstream as /health has it, with its last minute of requests, errors and latency. */
function upstreamRows(health: HealthBody, now: Snapshot, oldest: Snapshot): StatusReport["upstreams"] {
  const headNumber = health.head.number;
  return health.upstream.upstreams.map((u) => {
    const n = now.upstreams.get(u.name);
    const o = oldest.upstreams.get(u.name);
    return {
      name: u.name,
      state: u.state,
      headBlockNumber: u.headBlockNumber,
      behind: u.headBlockNumber !== null && headNumber !== null ? headNumber - u.headBlockNumber : null,
      pushing: u.pushing,
      batchLimit: u.batchLimit,
      lastMinute: {
        requests: n ? n.requests - (o?.requests ?? 0) : 0,
        errors: n ? n.errors - (o?.errors ?? 0) : 0,
        p50Ms: n ? ms(quantile(0.5, n.latency, o?.latency)) : null,
        p99Ms: n ? ms(quantile(0.99, n.latency, o?.latency)) : null,
      },
    };
  });
}

/** The cache's shares of the last minute's lookups: memory, disk, and what reached the node. */
function cacheShares(now: Snapshot, oldest: Snapshot): StatusReport["cache"]["lastMinute"] {
  const memory = now.memoryHits - oldest.memoryHits;
  const disk = now.diskHits - oldest.diskHits;
  const miss = now.misses - oldest.misses;
  const lookups = memory + disk + miss;
  return {
    lookups,
    memory: lookups ? memory / lookups : null,
    disk: lookups ? disk / lookups : null,
    miss: lookups ? miss / lookups : null,
  };
}

function indexerSection(
  health: HealthBody,
  now: Snapshot,
  recent: Snapshot,
  enabled: boolean,
): StatusReport["indexer"] {
  if (!health.indexer) return null;
  const lag = health.indexer.lag;
  const blocksPerSecond =
    now.indexed !== null && recent.indexed !== null
      ? perSecond(now.indexed - recent.indexed, recent, now)
      : 0;
  return {
    enabled,
    leading: health.indexer.leading,
    lastBlockNumber: health.indexer.lastBlockNumber,
    lag,
    blocksPerSecond: round1(blocksPerSecond),
    backfilling: lag !== null && lag >= Number(BACKFILL_BLOCKS),
    etaSeconds: lag !== null && lag > 0 && blocksPerSecond > 0 ? Math.round(lag / blocksPerSecond) : null,
  };
}

export function createStatus(deps: StatusDeps): Status {
  const { metrics, health, indexer } = deps;
  const ring: Snapshot[] = [];
  let sampling = false;
  const take = () => snapshot(metrics, indexer?.lastBlock ?? null);

  async function sample() {
    if (sampling) return;
    sampling = true;
    try {
      ring.push(await take());
      if (ring.length > STATUS_POINTS + 1) ring.shift();
    } finally {
      sampling = false;
    }
  }
  void sample();
  const timer = setInterval(() => void sample(), STATUS_SAMPLE_MS);

  let shared: { at: number; report: Promise<HealthBody> } | undefined;
  function healthReport() {
    if (!shared || Date.now() - shared.at > HEALTH_REUSE_MS)
      shared = { at: Date.now(), report: health.report() };
    return shared.report;
  }

  async function report(): Promise<StatusReport> {
    const [h, now, ws, subscriptions] = await Promise.all([
      healthReport(),
      take(),
      metrics.wsConnections.get(),
      metrics.wsSubscriptions.get(),
    ]);
    const oldest = ring[0] ?? now;
    const webhooks = await webhookSection(metrics, now, oldest);
    const recent = ring[Math.max(0, ring.length - RECENT_POINTS)] ?? now;
    const headTimestamp = deps.figures.head().timestamp;
    const cacheFigures = deps.figures.cache();
    const operations = operationRows(now, recent, oldest);
    return {
      at: now.at,
      status: h.status,
      chain: h.chain,
      chainId: h.chainId,
      uptimeSeconds: Math.round(process.uptime()),
      rssBytes: process.memoryUsage.rss(),
      head: {
        number: h.head.number,
        ageSeconds:
          headTimestamp === undefined ? null : Math.max(0, Math.round(now.at / 1000 - headTimestamp)),
        finalized: h.head.finalized,
        nodeFinal: h.head.nodeFinal,
      },
      upstreams: upstreamRows(h, now, oldest),
      database: {
        status: h.database.status,
        embedded: h.database.embedded,
        pingMs: h.database.latencyMs,
        lastMinute: {
          p50Ms: ms(quantile(0.5, now.db, oldest.db)),
          p99Ms: ms(quantile(0.99, now.db, oldest.db)),
        },
      },
      cache: {
        memory: cacheFigures.memory,
        disk: cacheFigures.disk ?? null,
        lastMinute: cacheShares(now, oldest),
      },
      requests: {
        perSecond: round1(operations.reduce((sum, row) => sum + row.perSecond, 0)),
        operations: operations
          .map((row) => ({ ...row, perSecond: round1(row.perSecond) }))
          .sort((a, b) => b.perSecond - a.perSecond || a.operation.localeCompare(b.operation)),
      },
      indexer: indexerSection(h, now, recent, deps.indexerEnabled),
      websocket: {
        connections: (ws.values[0]?.value as number | undefined) ?? 0,
        subscriptions: Object.fromEntries(
          (subscriptions.values as MetricValue[]).map((v) => [String(v.labels.kind), v.value]),
        ),
      },
      webhooks,
      totals: {
        requests: [...now.requests].map(([key, count]) => {
          const [operation, outcome] = key.split("\t") as [string, string];
          return { operation, outcome, count };
        }),
        cache: { memoryHits: now.memoryHits, diskHits: now.diskHits, misses: now.misses },
      },
      series: chartSeries(ring),
    };
  }

  return {
    report,
    stop() {
      clearInterval(timer);
    },
  };
}

export function statusRoutes(status: Status) {
  const page = new TextEncoder().encode(STATUS_PAGE.html);
  const pageHeaders = {
    "content-type": "text/html; charset=utf-8",
    // The page's only script is inline and named by its hash; it reads nothing but its own JSON.
    "content-security-policy": `default-src 'none'; script-src '${STATUS_PAGE.scriptHash}'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "cache-control": "no-store",
  };
  return new Elysia({ name: "status" })
    .get("/status", () => new Response(page, { headers: pageHeaders }))
    .get(
      "/status.json",
      async () =>
        new Response(JSON.stringify(await status.report()), {
          headers: { "content-type": "application/json", "cache-control": "no-store" },
        }),
    );
}
