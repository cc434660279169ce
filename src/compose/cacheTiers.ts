/** The cache: the memory tier, the disk tier (CACHE_DISK_MB; the chain's own folder), the fleet's tier. */
import { join } from "node:path";
import type { ChainInfo } from "../blockchain";
import { type BlockHeader, hashDigits } from "../blockHeader";
import { type Cache, createCache } from "../cache/cache";
import { createDiskTier, type DiskTier } from "../cache/disk";
import { createMemoryTier, type MemoryTier } from "../cache/memory";
import { MIB } from "../config";
import type { ChainFollower } from "../engine/chainFollower";
import type { SharedCache } from "../fleet/sharedCache";
import type { CacheFigures } from "../metrics";
import { cacheEvents } from "./metricEvents";
import type { StartContext } from "./startContext";

export interface CacheTiers {
  /** Undefined with CACHE_MEMORY_MB=0: nothing is cached (the disk tier only fills from memory). */
  cache?: Cache;
  memory: MemoryTier;
  disk?: DiskTier;
  /** The tiers answers are looked up in, for the series made at start. */
  tiers: string[];
  /** The tiers' bytes against their budgets, for the gauges and the status page. */
  figures(): CacheFigures;
}

export function buildCache(
  ctx: StartContext,
  chain: { chain: ChainInfo; genesis: BlockHeader; head: ChainFollower },
  shared: SharedCache | undefined,
  headPollMs: number,
): CacheTiers {
  const { config, log, family, metrics, lifetime } = ctx;
  const caching = config.cacheMemoryMb > 0;
  const memoryBudget = Math.max(config.cacheMemoryMb, 1) * MIB;
  const memory = createMemoryTier({
    maxBytes: memoryBudget,
    onEvict: () => metrics.cacheEvictions.inc({ tier: "memory" }),
  });
  let disk: DiskTier | undefined;
  if (config.cacheDiskMb > 0 && caching) {
    const tier = createDiskTier({
      dir: join(
        config.dataDir,
        "cache",
        `${chain.chain.chainId}-${hashDigits(chain.genesis.hash).slice(0, 16)}`,
      ),
      maxBytes: config.cacheDiskMb * MIB,
      log,
      onEvict: (count) => metrics.cacheEvictions.inc({ tier: "disk" }, count),
      onBadRecord: () => metrics.cacheBadRecords.inc(),
    });
    lifetime.defer(() => tier.close());
    disk = tier;
  }
  const cache = createCache({
    chain: chain.head,
    refs: family.blockRefs,
    memory,
    disk,
    shared,
    headTtlMs: headPollMs,
    unfinalizedTtlMs: Math.max(chain.chain.blockTimeMs, headPollMs),
    events: cacheEvents(metrics),
  });
  return {
    cache: caching ? cache : undefined,
    memory,
    disk,
    tiers: caching ? ["memory", ...(disk ? ["disk"] : []), ...(shared ? ["shared"] : [])] : [],
    figures: () => ({
      memory: { bytes: memory.bytes, entries: memory.entries, budgetBytes: memoryBudget },
      disk: disk && { ...disk.usage(), budgetBytes: config.cacheDiskMb * MIB },
    }),
  };
}
