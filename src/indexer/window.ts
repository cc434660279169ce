/**
 * One window of the indexer: the blocks after the index's last, read from the node all at once, decoded in
 * order, each checked to extend the one below it, and written in groups (each group one transaction with
 * the progress row). The next window's reads start before this one's writes, so the node serves blocks
 * while the database writes them (a backfill's pace is the slower of the two, not their sum); what was read
 * ahead is used only by the window that starts where it does, and checked like any read.
 */
import { type IndexedBlock, TornReadError } from "./indexFamily";
import type { LeadContext, ReadAhead } from "./leadContext";
import type { Progress } from "./progress";
import { rewind } from "./rewind";

/** Blocks read at once (a window), and ahead of the ones being written. */
export const WINDOW_BLOCKS = 32n;
/** A write group closes at this many transfers (or at the end of the window). */
const GROUP_TRANSFERS = 5_000;
/** The longest wait after a window that could not progress (it doubles from the head's poll period). */
const MAX_STALL_MS = 30_000;

export class ReorgError extends Error {
  constructor(readonly at: bigint) {
    super(`block ${at} does not extend the index`);
  }
}

/** Blocks decoded and not yet written; `flush` writes them, and moves the index's end past them. */
function createGroup(ctx: LeadContext, progress: Progress) {
  let blocks: IndexedBlock[] = [];
  let transfers = 0;
  return {
    /** Adds a block; returns the transfers the group now holds. */
    add(block: IndexedBlock): number {
      blocks.push(block);
      transfers += block.transfers.length;
      return transfers;
    },
    async flush(): Promise<void> {
      if (blocks.length === 0) return;
      const { cursor, index } = ctx;
      await index.beforeWrite(blocks);
      const started = performance.now();
      await index.writer.write(blocks, cursor.lastBlock);
      const seconds = (performance.now() - started) / 1000;
      const tail = blocks[blocks.length - 1]!;
      cursor.lastBlock = tail.number;
      cursor.lastHash = tail.hash;
      progress.written(blocks.length, transfers);
      ctx.maintenance.added(transfers);
      ctx.events?.written?.(blocks.length, transfers, cursor.lastBlock, seconds);
      ctx.stalls = 0;
      blocks = [];
      transfers = 0;
    },
  };
}

/** Starts reading blocks from..to (at most a window); a failure is seen by the window that uses them. */
function readAhead(ctx: LeadContext, from: bigint, top: bigint): ReadAhead {
  const end = from + WINDOW_BLOCKS - 1n < top ? from + WINDOW_BLOCKS - 1n : top;
  const numbers: bigint[] = [];
  for (let n = from; n <= end; n++) numbers.push(n);
  const blocks = Promise.all(numbers.map((n) => ctx.index.fetchBlock(ctx.refs.encode(n))));
  blocks.catch(() => {});
  return { from, blocks };
}

/** The blocks after the index's last: those read ahead when they start there, else read now. */
function takeReads(ctx: LeadContext, top: bigint): Promise<unknown[]> {
  const next = ctx.cursor.lastBlock + 1n;
  const ahead = ctx.ahead;
  ctx.ahead = undefined;
  return (ahead?.from === next ? ahead : readAhead(ctx, next, top)).blocks;
}

/**
 * The window's blocks as read (up to `top`; undefined where the node has not got that far), the next
 * window's reads started.
 */
export async function readWindow(ctx: LeadContext, top: bigint): Promise<unknown[]> {
  const fetched = await takeReads(ctx, top);
  // Read while these are written; dropped unused when this window ends short of them.
  const after = ctx.cursor.lastBlock + BigInt(fetched.length) + 1n;
  if (fetched.length > 0 && fetched[fetched.length - 1] !== undefined && after <= top) {
    ctx.ahead = readAhead(ctx, after, top);
  }
  return fetched;
}

/**
 * After a window that failed: a reorg is undone (`beforeRewind` first), a torn read waited out (false);
 * anything else thrown on.
 */
export async function windowFailed(
  ctx: LeadContext,
  error: unknown,
  beforeRewind: () => Promise<void> = async () => {},
): Promise<false> {
  // What was read ahead may be of the branch that did not fit.
  ctx.ahead = undefined;
  if (error instanceof ReorgError) {
    await beforeRewind();
    if (!(await rewind(ctx, error.at))) await stalled(ctx, error.at);
    return false;
  }
  if (error instanceof TornReadError) {
    await ctx.wakeups.sleep(ctx.pollMs);
    return false;
  }
  throw error;
}

/**
 * Indexes the blocks after the index's last, up to `top` and at most a window of them. False when the
 * window was cut short by a reorg (then undone) or a torn read (then waited out).
 */
export async function indexWindow(ctx: LeadContext, top: bigint, progress: Progress): Promise<boolean> {
  const { cursor, index } = ctx;
  const group = createGroup(ctx, progress);
  try {
    const fetched = await readWindow(ctx, top);
    let parent = cursor.lastHash;
    for (const item of fetched) {
      // The node has not got that far (a lagging upstream): index what there is, come back later.
      if (item === undefined) break;
      const block = index.decodeBlock(item);
      if (parent !== undefined && block.parentHash !== parent) throw new ReorgError(block.number);
      parent = block.hash;
      if (group.add(block) >= GROUP_TRANSFERS) await group.flush();
    }
    await group.flush();
    return true;
  } catch (error) {
    ctx.ahead = undefined;
    await group.flush().catch(() => {});
    return windowFailed(ctx, error);
  }
}

/**
 * Block `at` did not extend the index, yet the node holds every block the index has below it: the block was
 * read from a branch the node has left (an answer by height kept before a reorg, or a read racing the
 * node's own switch). What was kept of the blocks from `at` up is dropped, so the next read asks the node;
 * the wait doubles while that does not help, and says why.
 */
async function stalled(ctx: LeadContext, at: bigint): Promise<void> {
  ctx.stalls++;
  const waitMs = Math.min(ctx.pollMs * 2 ** Math.min(ctx.stalls - 1, 16), MAX_STALL_MS);
  ctx.log.warn(
    `block ${at} as read does not extend the index, whose block ${at - 1n} the node still holds: it was read from another branch; reading it again from the node in ${waitMs} ms`,
    { block: at.toString(), attempt: ctx.stalls },
  );
  ctx.head.staleFrom(at);
  await ctx.wakeups.sleep(waitMs);
}
