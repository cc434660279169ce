/**
 * The bulk load past the head's reach (issue 34): while the index is more than INDEX_BULK_DISTANCE_BLOCKS
 * behind the head, a window's blocks are prepared at once (the family's `beforeWrite` over the whole window)
 * and written as BULK_GROUPS_IN_FLIGHT groups at once, each by COPY in a transaction of its own on a
 * connection of its own (the family's `BulkLoad`). The progress row is what orders them: each group writes
 * its rows at once with the others, then moves the index's end on from the end of the group below it, once
 * that one committed, and commits; a group that fails leaves those above it nothing to extend.
 * The index is never ahead of a committed group, and a crash or a restart resumes at the last one, with no
 * gap and nothing written twice (no stage tables: every row is written once, where it stays).
 *
 * The window's blocks are the next window's inputs: `beforeWrite` of a window runs once every group below it
 * committed. Within the distance (and before a rewind) the bulk load is finished first (`finish`: what it
 * left is made from the rows, the read side's indexes built), and the index is written as always (window.ts).
 */
import type { IndexedBlock } from "./indexFamily";
import type { LeadContext } from "./leadContext";
import type { Progress } from "./progress";
import { ReorgError, readWindow, windowFailed } from "./window";

/** Write groups in flight at once, each on a connection of its own. */
export const BULK_GROUPS_IN_FLIGHT = 4;

/** Blocks cut into at most `count` runs of about equal transfers (each at least one block), in order. */
export function splitGroups<B extends IndexedBlock>(blocks: readonly B[], count: number): B[][] {
  const total = blocks.reduce((sum, b) => sum + b.transfers.length, 0);
  const target = Math.max(1, Math.ceil(total / count));
  const groups: B[][] = [];
  let group: B[] = [];
  let transfers = 0;
  for (const block of blocks) {
    group.push(block);
    transfers += block.transfers.length;
    if (transfers >= target && groups.length < count - 1) {
      groups.push(group);
      group = [];
      transfers = 0;
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** Ends the bulk load under way, if any: then the index is as the normal path makes it. */
export async function endBulk(ctx: LeadContext): Promise<void> {
  const bulk = ctx.index.writer.bulk;
  if (!ctx.bulking || !bulk) return;
  const started = performance.now();
  await bulk.finish();
  ctx.bulking = false;
  ctx.log.info("bulk load finished: the read side's indexes built", {
    last: ctx.cursor.lastBlock.toString(),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  });
  // Its statistics were made as it ended; the vacuum of all it wrote (a pass over every page) runs once the
  // backfill catches up (progress.ts) or the writes that follow have added enough (maintenance.ts), rather
  // than beside the last blocks' writes.
}

/** Begins a bulk load after the index's end (the family's `begin`, the read side's notice included). */
async function beginBulk(ctx: LeadContext): Promise<void> {
  await ctx.index.writer.bulk!.begin();
  ctx.bulking = true;
  ctx.log.info("bulk load begun: the read side's indexes dropped until it ends", {
    from: (ctx.cursor.lastBlock + 1n).toString(),
  });
}

/**
 * Bulk loads the blocks after the index's last, up to `to` and at most a window of them. False as
 * indexWindow (window.ts): a reorg (the bulk load finished, then the reorg undone) or a torn read.
 */
export async function bulkWindow(ctx: LeadContext, to: bigint, progress: Progress): Promise<boolean> {
  const { cursor, index } = ctx;
  const bulk = index.writer.bulk!;
  // Begun while its first window is read and prepared, which write nothing (the family's notice to the
  // readers, if any, passes while the first groups are written: they commit after it).
  const begun = ctx.bulking ? undefined : beginBulk(ctx);
  begun?.catch(() => {});
  try {
    const fetched = await readWindow(ctx, to);
    const blocks: IndexedBlock[] = [];
    let parent = cursor.lastHash;
    for (const item of fetched) {
      if (item === undefined) break;
      const block = index.decodeBlock(item);
      if (parent !== undefined && block.parentHash !== parent) throw new ReorgError(block.number);
      parent = block.hash;
      blocks.push(block);
    }
    if (blocks.length > 0) await index.beforeWrite(blocks);
    await begun;
    if (blocks.length === 0) return true;
    const groups = splitGroups(blocks, BULK_GROUPS_IN_FLIGHT);
    const started = performance.now();
    await bulk.write(groups, cursor.lastBlock, (i) => {
      const group = groups[i]!;
      const tail = group[group.length - 1]!;
      const transfers = group.reduce((sum, b) => sum + b.transfers.length, 0);
      cursor.lastBlock = tail.number;
      cursor.lastHash = tail.hash;
      progress.written(group.length, transfers);
      ctx.events?.written?.(group.length, transfers, tail.number, (performance.now() - started) / 1000);
      ctx.stalls = 0;
    });
    return true;
  } catch (error) {
    // A bulk load begun meanwhile is ended before a reorg is undone (its begin settled first).
    await begun?.catch(() => {});
    return windowFailed(ctx, error, () => endBulk(ctx));
  }
}
