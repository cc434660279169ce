/**
 * Undoing a reorg: the index walks back from the block that did not fit to the newest block it holds with
 * the chain's hash, and deletes everything above it (one delete: the derived rows cascade). The chain's
 * hashes are the chain follower's (read from the node) or read from the node now, never from a cache: a
 * cached answer by height may be of the branch the reorg dropped (it was final when kept), and comparing the
 * index with it would find nothing to undo, for ever.
 */
import type { LeadContext } from "./leadContext";

/** Deepest reorg followed back; deeper means something is badly wrong, and the indexer stops to say so. */
const MAX_REORG_DEPTH = 1_024n;

/** The chain's hash of block n: the follower's where it holds it, else the node's, read now. */
async function canonicalHash(ctx: LeadContext, n: bigint): Promise<string | undefined> {
  return ctx.head.canonicalHash(n) ?? (await ctx.head.readHash(n));
}

/**
 * Walks back from `from - 1` to the newest block stored with its canonical hash; removes what is above.
 * Returns whether the index changed (false: every block it holds below `from` is the chain's).
 */
export async function rewind(ctx: LeadContext, from: bigint): Promise<boolean> {
  const { cursor, index } = ctx;
  ctx.ahead = undefined;
  let k = from - 1n;
  /** The stored hash of block k + 1 once the walk has passed it: the lowest block the reorg dropped. */
  let dropped: string | undefined;
  while (k >= cursor.firstBlock) {
    if (from - k > MAX_REORG_DEPTH) {
      throw new Error(
        `reorg deeper than ${MAX_REORG_DEPTH} blocks below ${from}; refusing to rewind further`,
      );
    }
    const stored = await index.writer.hashOf(k);
    if (stored !== undefined && stored === (await canonicalHash(ctx, k))) break;
    dropped = stored;
    k--;
  }
  // The follower's alarm was about blocks the index no longer holds, or holds as they are now.
  if (k === cursor.lastBlock) return false;
  const fork = k + 1n;
  const was = cursor.lastBlock;
  await index.writer.rewind(fork, was);
  ctx.log.warn("reorganized blocks removed from the index", { from: fork.toString(), was: was.toString() });
  ctx.events?.reorg?.(fork);
  cursor.lastBlock = k;
  cursor.lastHash = k >= cursor.firstBlock ? await index.writer.hashOf(k) : undefined;
  // A block taken as final left the chain, and the follower did not see it go (it was not running then):
  // what was kept of the blocks from the fork up is dropped from every cache tier now.
  const final = ctx.head.finalized();
  if (final !== undefined && fork <= final && dropped !== undefined) {
    if (ctx.head.droppedBranch(fork, dropped) === undefined) {
      ctx.log.error(
        `the index held blocks from ${fork} up that the node's chain no longer has, below the finality depth (a reorg while the service was not following): answers about them are dropped from every cache tier`,
        { from: fork.toString(), depth: (was - k).toString(), finalized: final.toString() },
      );
      ctx.head.staleFrom(fork);
    }
  }
  return true;
}
