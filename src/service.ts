/**
 * Composition root, built from the bottom of the data path up (docs/architecture.md): the chain's family
 * (from CHAIN) -> upstreams (its dev node when none is configured) -> the chain, its follower and first
 * block -> database and keys -> the fleet's Redis -> cache -> engine, operations, watch filters,
 * subscriptions, indexer -> webhooks (their producer and senders) -> HTTP. The parts are made by the
 * builders of compose/; `stop()` undoes them in reverse order.
 */
import { joinPool } from "./cluster/worker";
import { buildCache } from "./compose/cacheTiers";
import { chainAddresses, identifyChain } from "./compose/chain";
import { buildDataPath } from "./compose/dataPath";
import { joinFleet } from "./compose/fleet";
import { createLifetime } from "./compose/lifetime";
import { serve } from "./compose/serve";
import type { StartContext } from "./compose/startContext";
import { openStorage } from "./compose/storage";
import { startUpstreams } from "./compose/upstreams";
import { startWebhooks } from "./compose/webhooks";
import type { Config } from "./config";
import { familyOf } from "./families/familyOf";
import { createGuard } from "./http/guard";
import type { Logger } from "./log";
import { createMetrics } from "./metrics";
import { useAddressCodec } from "./validation";

export interface Service {
  /** The base URL the service listens on. */
  url: string;
  stop(): Promise<void>;
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
  const lifetime = createLifetime(log);
  try {
    const family = familyOf(config.chain);
    // Before any route is compiled or any request is checked: addresses are the family's.
    useAddressCodec(family.addresses);
    const metrics = createMetrics();
    const ctx: StartContext = { config, log, family, metrics, lifetime };
    const link =
      worker &&
      joinPool({ index: worker.index, registry: metrics.registry, log, onPrimaryLost: worker.onPrimaryLost });
    if (link) lifetime.defer(() => link.stop());
    const upstreams = await startUpstreams(ctx);
    const chain = await identifyChain(ctx, upstreams.pool, upstreams.headPollMs);
    // Where the family's chains write addresses differently, the chain's own are checked from here on.
    useAddressCodec(chainAddresses(family, chain.chain));
    const storage = await openStorage(ctx, chain.chain, chain.genesis);
    const fleet = joinFleet(ctx, chain.chain, chain.genesis, chain.head);
    const guard = createGuard({
      auth: storage.auth,
      limiter: fleet.limiter,
      metrics,
      log,
      maxBodyBytes: config.maxBodyBytes,
    });
    const tiers = buildCache(ctx, chain, fleet.shared, upstreams.headPollMs);
    const data = buildDataPath(ctx, {
      pool: upstreams.pool,
      head: chain.head,
      chain: chain.chain,
      cache: tiers.cache,
      database: storage.database,
      headPollMs: upstreams.headPollMs,
    });
    await data.ready;
    const webhooks = startWebhooks(ctx, {
      database: storage.database,
      data,
      head: chain.head,
      chain: chain.chain,
    });
    const { url } = serve(ctx, { upstreams, chain, storage, tiers, data, guard, link, webhooks });
    if (link) link.ready();
    else log.info("listening", { url, status: `${url}/status` });
    return { url, stop: () => lifetime.stop() };
  } catch (error) {
    await lifetime.stop();
    throw error;
  }
}
