/** The leader's loop: resume where the index ends, then undo reorgs and index windows until told to stop. */
import { bulkWindow, endBulk } from "./bulk";
import type { LeadContext } from "./leadContext";
import { createProgress } from "./progress";
import { rewind } from "./rewind";
import { indexWindow } from "./window";

const DAY_MS = 86_400_000;

/** A day of the chain's blocks. */
export const dayOfBlocks = (chain: LeadContext["chain"]) => BigInt(Math.ceil(DAY_MS / chain.blockTimeMs));

/** INDEX_FROM_BLOCK; else 0 on a dev chain; else the followed head minus a day of blocks. */
async function firstBlockToIndex(ctx: LeadContext): Promise<bigint> {
  if (ctx.fromBlock !== undefined) return BigInt(ctx.fromBlock);
  if (ctx.chain.devChain) return 0n;
  let top = ctx.head.latest();
  while (top === undefined && !ctx.stopped()) {
    await ctx.wakeups.sleep(ctx.pollMs);
    top = ctx.head.latest();
  }
  const day = dayOfBlocks(ctx.chain);
  return top !== undefined && top > day ? top - day : 0n;
}

/** A reorg the follower saw, or a stored tip it no longer holds canonical. */
function reorgSeen(ctx: LeadContext): boolean {
  const { cursor } = ctx;
  const reorgFrom = ctx.wakeups.takeReorg();
  const tipCanonical =
    cursor.lastBlock >= cursor.firstBlock ? ctx.head.canonicalHash(cursor.lastBlock) : undefined;
  return (
    (reorgFrom !== undefined && reorgFrom <= cursor.lastBlock) ||
    (tipCanonical !== undefined && cursor.lastHash !== undefined && tipCanonical !== cursor.lastHash)
  );
}

/** Indexes while this instance holds the lead. */
export async function lead(ctx: LeadContext, stillLeading: () => boolean): Promise<void> {
  const { cursor, index } = ctx;
  index.writer.forget?.();
  const state = (await index.writer.state()) ?? (await index.writer.start(await firstBlockToIndex(ctx)));
  cursor.firstBlock = state.firstBlock;
  cursor.lastBlock = state.lastBlock;
  cursor.lastHash =
    cursor.lastBlock >= cursor.firstBlock ? await index.writer.hashOf(cursor.lastBlock) : undefined;
  // Blocks read ahead in an earlier term of the lead are of a chain this term has not checked.
  ctx.ahead = undefined;
  // A bulk load a crash or a stop cut short: resumed while the index is still far behind, else finished.
  ctx.bulking = (await index.writer.bulk?.resume()) ?? false;
  ctx.log.info("indexing", { from: (cursor.lastBlock + 1n).toString(), first: cursor.firstBlock.toString() });
  const progress = createProgress({ log: ctx.log, caughtUp: () => ctx.maintenance.run() });

  while (!ctx.stopped() && stillLeading()) {
    if (reorgSeen(ctx)) {
      await endBulk(ctx);
      await rewind(ctx, cursor.lastBlock + 1n);
      continue;
    }
    // The followed head never goes down: a lagging upstream is never a reason to undo what is indexed.
    const top = ctx.head.latest();
    if (top === undefined || cursor.lastBlock >= top) {
      await ctx.wakeups.sleep(ctx.pollMs);
      continue;
    }
    // Past the head's reach, bulk loaded up to the distance; within it, written as always.
    const bulkTo = top - ctx.bulkDistance;
    const bulk = index.writer.bulk !== undefined && ctx.bulkDistance > 0n && cursor.lastBlock < bulkTo;
    if (!bulk) await endBulk(ctx);
    if (await (bulk ? bulkWindow(ctx, bulkTo, progress) : indexWindow(ctx, top, progress)))
      progress.reached(cursor.lastBlock, top);
  }
}

/** Reads the progress of the instance that writes the index. */
export async function follow(ctx: LeadContext): Promise<void> {
  const state = await ctx.index.writer.state();
  if (state) {
    ctx.cursor.firstBlock = state.firstBlock;
    ctx.cursor.lastBlock = state.lastBlock;
  }
}
