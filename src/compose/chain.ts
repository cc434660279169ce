/**
 * The chain: named by the upstreams (every one checked to serve it), followed from its head, and its first
 * block read, whose hash names what belongs to this chain (its database schema, disk tier and Redis keys),
 * so another chain on the same database, DATA_DIR or Redis (a fresh dev chain, say) never reads this one's.
 */

import type { ChainInfo } from "../blockchain";
import type { BlockHeader } from "../blockHeader";
import { type ChainFollower, createChainFollower } from "../engine/chainFollower";
import type { Logger } from "../log";
import type { UpstreamPool } from "../upstream/pool";
import type { NodeProtocol } from "../upstream/protocol";
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

/** The chain's identity, as the first upstream to answer the family's identity call names it. */
async function readIdentity(pool: UpstreamPool, protocol: NodeProtocol, log: Logger): Promise<bigint> {
  const { method, params } = protocol.identity;
  const deadline = Date.now() + IDENTITY_WAIT_MS;
  for (;;) {
    try {
      const identity = protocol.identityOf((await pool.call(method, params)).raw);
      if (identity === undefined) throw new Error(`${method} named no chain`);
      return identity;
    } catch (error) {
      if (Date.now() >= deadline) {
        throw new Error(
          `no upstream answered ${method} within ${IDENTITY_WAIT_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      log.warn(`waiting for an upstream to answer ${method}`, { error: (error as Error).message });
      await Bun.sleep(IDENTITY_RETRY_MS);
    }
  }
}

export async function identifyChain(
  ctx: StartContext,
  pool: UpstreamPool,
  headPollMs: number,
): Promise<Chain> {
  const { config, log, family, lifetime } = ctx;
  const identity = await readIdentity(pool, family.node, log);
  // Every upstream is checked to serve this chain before it is used (and again after each failure).
  await pool.expectChain(identity);
  const chain = family.describe(identity, { blockchain: config.chain, confirmations: config.confirmations });
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
