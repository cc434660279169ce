/**
 * The chain: named by the upstreams (every one checked to serve it), followed from its head, and its first
 * block read, whose hash names what belongs to this chain (its database schema, disk tier and Redis keys),
 * so another chain on the same database, DATA_DIR or Redis (a fresh dev chain, say) never reads this one's.
 */

import type { AddressCodec } from "../addresses";
import type { ChainInfo } from "../blockchain";
import type { BlockHeader } from "../blockHeader";
import { ConfigError } from "../config";
import { type ChainFollower, createChainFollower } from "../engine/chainFollower";
import type { ChainFamily } from "../families/family";
import type { Logger } from "../log";
import type { UpstreamPool } from "../upstream/pool";
import type { StartContext } from "./startContext";

/** How long start-up waits for an upstream to say which chain it serves, and between two asks. */
const IDENTITY_WAIT_MS = 30_000;
const IDENTITY_RETRY_MS = 1_000;
/** How long start-up waits for the upstream WebSockets to subscribe to new heads. */
const SOCKETS_READY_MS = 3_000;

export interface Chain {
  chain: ChainInfo;
  head: ChainFollower;
  genesis: BlockHeader;
}

/** The addresses of the chain served: its own codec where its family has one per chain, else the family's. */
export function chainAddresses(family: ChainFamily, chain: ChainInfo): AddressCodec {
  return family.addressesFor?.(chain) ?? family.addresses;
}

/** The chain's identity, as the first upstream able to say names it, and which upstream that was. */
async function readIdentity(
  pool: UpstreamPool,
  log: Logger,
): Promise<{ identity: string; upstream: string }> {
  const deadline = Date.now() + IDENTITY_WAIT_MS;
  for (;;) {
    try {
      const { identity, upstream } = await pool.readIdentity();
      return { identity, upstream: upstream.name };
    } catch (error) {
      if (Date.now() >= deadline) {
        throw new Error(
          `no upstream said which chain it serves within ${IDENTITY_WAIT_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      log.warn("waiting for an upstream to say which chain it serves", { error: (error as Error).message });
      await Bun.sleep(IDENTITY_RETRY_MS);
    }
  }
}

/**
 * The chain the identity names, as the family describes it; a node of a chain other than CHAIN's stops the
 * start, its message saying which upstream serves what (the family's says what CHAIN would take).
 */
function describe(ctx: StartContext, identity: string, upstream: string): ChainInfo {
  const { config, family } = ctx;
  try {
    return family.describe(identity, { blockchain: config.chain, confirmations: config.confirmations });
  } catch (error) {
    const message = `${upstream} serves chain ${identity}: ${(error as Error).message}`;
    throw error instanceof ConfigError ? new ConfigError(message) : new Error(message, { cause: error });
  }
}

export async function identifyChain(
  ctx: StartContext,
  pool: UpstreamPool,
  headPollMs: number,
): Promise<Chain> {
  const { log, family, lifetime } = ctx;
  const { identity, upstream } = await readIdentity(pool, log);
  const chain = describe(ctx, identity, upstream);
  // Every upstream is checked to serve this chain before it is used (and again after each failure).
  await pool.expectChain(identity);
  const head = createChainFollower({
    pool,
    node: family.node,
    refs: family.blockRefs,
    finalityTags: family.finalityTags,
    confirmations: chain.confirmations,
    pollMs: headPollMs,
    log,
  });
  lifetime.defer(() => head.stop());
  // Heads are pushed from the first block on: the port opens once the subscriptions are made (or failed).
  await pool.socketsReady(SOCKETS_READY_MS);
  await head.refresh();
  log.info("chain identified", {
    identity,
    chainId: chain.chainId.toString(),
    blockchain: chain.blockchain,
    confirmations: chain.confirmations,
  });
  const genesis = await family.node.readHeader(
    family.blockRefs.encode(0n),
    async (method, params) => (await pool.call(method, params)).raw,
  );
  if (!genesis) throw new Error("no upstream has the chain's first block");
  return { chain, head, genesis };
}
