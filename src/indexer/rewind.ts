/**
 * Undoing a reorg: the index walks back from the block that did not fit to the newest block it holds with
 * the chain's hash, and deletes everything above it (one delete: the derived rows cascade).
 */
import type { LeadContext } from "./leadContext";

/** Deepest reorg followed back; deeper means something is badly wrong, and the indexer stops to say so. */
const MAX_REORG_DEPTH = 1_024n;

/** The chain's hash of block n: the follower's where it holds it, else the node's. */
async function canonicalHash(ctx: LeadContext, n: bigint): Promise<string | undefined> {
  const known = ctx.head.canonicalHash(n);
  if (known) return known;
  return ctx.index.readHash(ctx.refs.encode(n));
}

/** Walks back from `from - 1` to the newest block stored with its canonical hash; removes what is above. */
export async function rewind(ctx: LeadContext, from: bigint): Promise<void> {
  const { cursor, index } = ctx;
  ctx.ahead = undefined;
  let k = from - 1n;
  while (k >= cursor.firstBlock) {
    if (from - k > MAX_REORG_DEPTH) {
      throw new Error(
        `reorg deeper than ${MAX_REORG_DEPTH} blocks below ${from}; refusing to rewind further`,
      );
    }
    const stored = await index.writer.hashOf(k);
    if (stored !== undefined && stored === (await canonicalHash(ctx, k))) break;
    k--;
  }
  // The follower's alarm was about blocks the index no longer holds, or holds as they are now.
  if (k === cursor.lastBlock) return;
  await index.writer.rewind(k + 1n, cursor.lastBlock);
  ctx.log.warn("reorganized blocks removed from the index", {
    from: (k + 1n).toString(),
    was: cursor.lastBlock.toString(),
  });
  ctx.events?.reorg?.(k + 1n);
  cursor.lastBlock = k;
  cursor.lastHash = k >= cursor.firstBlock ? await index.writer.hashOf(k) : undefined;
}
