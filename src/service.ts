/**
 * Composition root: config -> dev chain (when no upstream is configured) -> upstream -> chain identity ->
 * database -> auth -> operation table -> HTTP. `stop()` undoes it in reverse order.
 */
import { join } from "node:path";
import { describeChain } from "./chain/chains";
import type { Config } from "./config";
import { createApiKeyStore } from "./db/apiKeys";
import { createDatabase } from "./db/database";
import { migrate } from "./db/migrate";
import { createApp } from "./http/app";
import { createAuth } from "./http/auth";
import { createHealth } from "./http/health";
import { watchFilterRouteSpecs } from "./http/watchFilters";
import type { Logger } from "./log";
import { createNodeOperations, type NodeClient } from "./operations/node";
import { createStatsOperations } from "./operations/stats";
import { createOperationTable } from "./operations/table";
import { createTokenOperations } from "./operations/tokens";
import { createTransferOperations } from "./operations/transfers";
import { type DevChain, startAnvil } from "./upstream/devChain";
import { createUpstreamPool, type UpstreamPool } from "./upstream/pool";

/** How long start-up waits for an upstream to say which chain it serves. */
const CHAIN_ID_WAIT_MS = 30_000;
const CHAIN_ID_RETRY_MS = 1_000;

export interface Service {
  /** The base URL the service listens on. */
  url: string;
  stop(): Promise<void>;
}

async function readChainId(upstream: UpstreamPool, log: Logger): Promise<bigint> {
  const deadline = Date.now() + CHAIN_ID_WAIT_MS;
  for (;;) {
    try {
      return BigInt(JSON.parse(await upstream.call("eth_chainId", [])) as string);
    } catch (error) {
      if (Date.now() >= deadline) {
        throw new Error(
          `no upstream answered eth_chainId within ${CHAIN_ID_WAIT_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      log.warn("waiting for an upstream to answer eth_chainId", { error: (error as Error).message });
      await Bun.sleep(CHAIN_ID_RETRY_MS);
    }
  }
}

export async function startService(config: Config, log: Logger): Promise<Service> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log.warn("error during shutdown", { error });
      }
    }
    cleanups.length = 0;
  };

  try {
    let upstreamUrls = config.upstreamUrls;
    if (upstreamUrls.length === 0) {
      const devChain: DevChain = await startAnvil({
        stateFile: join(config.dataDir, "devchain", "state.json"),
        log,
      });
      cleanups.push(() => devChain.stop());
      upstreamUrls = [devChain.url];
      log.info("UPSTREAM_URLS is unset: serving a local dev chain", { url: devChain.url });
    }
    const upstream = createUpstreamPool({ urls: upstreamUrls, timeoutMs: config.upstreamTimeoutMs, log });
    const chain = describeChain(await readChainId(upstream, log), {
      blockchain: config.chain,
      confirmations: config.confirmations,
    });
    log.info("chain identified", {
      chainId: chain.chainId.toString(),
      blockchain: chain.blockchain,
      confirmations: chain.confirmations,
    });

    const database = await createDatabase({ config, log });
    cleanups.push(() => database.close());
    await migrate(database.sql, log);

    const auth = await createAuth({
      apiKeys: config.apiKeys,
      keySource: createApiKeyStore(database.sql),
      log,
    });
    cleanups.push(() => auth.stop());
    if (auth.open) log.warn("no API key is configured: the service is open to anyone who can reach it");

    const node: NodeClient = {
      call: async (method, params) => ({ raw: await upstream.call(method, params), source: "miss" }),
    };
    const table = createOperationTable([
      ...createNodeOperations({ node, log }),
      ...createTransferOperations(),
      ...createStatsOperations(),
      ...createTokenOperations(),
    ]);
    const health = createHealth({ chain, upstream, database });
    const app = createApp({ table, auth, health, watchFilterRoutes: watchFilterRouteSpecs(), log });
    app.listen({ hostname: config.host, port: config.port });
    cleanups.push(async () => {
      await app.stop(true);
    });
    const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${app.server!.port}`;
    log.info("listening", { url });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
