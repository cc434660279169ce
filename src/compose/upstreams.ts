/** The upstreams: the family's dev node when none is configured, then the pool. */
import { createUpstreamPool, type UpstreamPool } from "../upstream/pool";
import { socketUrlOf } from "../upstream/socket";
import { markUpstreams, upstreamEvents } from "./metricEvents";
import type { StartContext } from "./startContext";

/** Head polling where HEAD_POLL_MS is unset (a dev node says its own). */
const HEAD_POLL_MS = 1_000;
/** Calls an upstream batch carries where neither BATCH_MAX_SIZE nor the family's nodes say. */
const BATCH_MAX_SIZE_DEFAULT = 100;
/** HTTP requests in flight to one upstream where neither UPSTREAM_MAX_IN_FLIGHT nor the family's nodes say. */
const UPSTREAM_MAX_IN_FLIGHT_DEFAULT = 64;

export interface Upstreams {
  pool: UpstreamPool;
  /** HEAD_POLL_MS, else the dev node's, else HEAD_POLL_MS's default. */
  headPollMs: number;
}

export async function startUpstreams(ctx: StartContext): Promise<Upstreams> {
  const { config, log, family, metrics, lifetime } = ctx;
  let urls = config.upstreamUrls;
  let devPollMs: number | undefined;
  if (urls.length === 0) {
    const dev = await family.startDevNode({ dataDir: config.dataDir, log, chain: config.chain });
    lifetime.defer(() => dev.stop());
    urls = [dev.url];
    devPollMs = dev.headPollMs;
  }
  const headPollMs = config.headPollMs ?? devPollMs ?? HEAD_POLL_MS;
  const pool = createUpstreamPool({
    urls,
    protocol: family.node,
    socketUrls: urls.map((url, i) => socketUrlOf(url, config.upstreamSocketUrls[i])),
    timeoutMs: config.upstreamTimeoutMs,
    deadlineMs: config.upstreamDeadlineMs,
    batchWindowMs: config.batchWindowMs,
    batchMaxSize: config.batchMaxSize ?? family.node.batchMaxSize ?? BATCH_MAX_SIZE_DEFAULT,
    maxInFlight: config.upstreamMaxInFlight ?? family.node.maxInFlight ?? UPSTREAM_MAX_IN_FLIGHT_DEFAULT,
    headPollMs,
    cooldownMs: config.upstreamCooldownMs,
    hedgeAfterMs: config.hedgeAfterMs,
    maxResponseBytes: config.upstreamMaxResponseMb * 1024 * 1024,
    log,
    events: upstreamEvents(metrics),
  });
  lifetime.defer(() => pool.stop());
  markUpstreams(metrics, pool);
  return { pool, headPollMs };
}
