/**
 * The fleet's Redis (REDIS_URL): rate-limit buckets shared always; final answers and heads only with the
 * fleet's secret to sign them (REDIS_SECRET), since an instance serves and follows what it reads there.
 */

import type { ChainInfo } from "../blockchain";
import type { BlockHeader } from "../blockHeader";
import type { ChainFollower } from "../engine/chainFollower";
import { createFleet } from "../fleet/redis";
import { createSharedCache, type SharedCache } from "../fleet/sharedCache";
import { shareHeads } from "../fleet/sharedHeads";
import { createSharedLimiter } from "../fleet/sharedLimiter";
import { createRateLimiter, type RateLimiter } from "../http/rateLimit";
import { fleetEvents } from "./metricEvents";
import type { StartContext } from "./startContext";

const NO_FLEET_SECRET =
  "REDIS_SECRET is unset: only rate limits are shared through Redis, not answers nor heads (anyone who can reach Redis could forge them); set REDIS_SECRET, at least 32 characters and the same on every instance, to share them";

export interface FleetParts {
  limiter: RateLimiter;
  /** The fleet's tier of final answers, with REDIS_URL and REDIS_SECRET. */
  shared?: SharedCache;
}

export function joinFleet(
  ctx: StartContext,
  chain: ChainInfo,
  genesis: BlockHeader,
  head: ChainFollower,
): FleetParts {
  const { config, log, family, metrics, lifetime } = ctx;
  const local = createRateLimiter();
  if (!config.redisUrl) {
    lifetime.defer(() => local.stop());
    return { limiter: local };
  }
  const secret = config.redisSecret;
  metrics.redisUp.set(0);
  const fleet = createFleet({
    url: config.redisUrl,
    maxMemoryMb: config.redisCacheMb,
    chainId: chain.chainId,
    genesisHash: genesis.hash,
    sharing: secret ? "final answers, rate limits and heads" : "rate limits",
    log,
    events: fleetEvents(metrics),
  });
  lifetime.defer(() => fleet.stop());
  const limiter = createSharedLimiter({ fleet, local });
  lifetime.defer(() => limiter.stop());
  if (!secret) {
    log.warn(NO_FLEET_SECRET);
    return { limiter };
  }
  shareHeads({
    fleet,
    head,
    secret,
    parseHeader: family.node.parseHeader,
    events: { bad: () => metrics.sharedBadHeads.inc() },
  });
  const shared = createSharedCache(fleet, secret, {
    stored: () => metrics.cacheStored.labels("shared").inc(),
    bad: () => metrics.sharedBadValues.inc(),
  });
  return { limiter, shared };
}
