/** The backfill's progress lines, and the moment it catches up with the head. */
import type { Logger } from "../log";

/** Backfill progress is logged this often, while the index is at least BACKFILL_BLOCKS behind. */
const PROGRESS_INTERVAL_MS = 10_000;
export const BACKFILL_BLOCKS = 32n;

export interface Progress {
  /** Counts a group written. */
  written(blocks: number, transfers: number): void;
  /** After a window: logs the progress when it is time, and says when a backfill has caught up. */
  reached(last: bigint, top: bigint): void;
}

export function createProgress(options: { log: Logger; caughtUp: () => void }): Progress {
  const { log } = options;
  let reportAt = Date.now() + PROGRESS_INTERVAL_MS;
  let reportBlocks = 0;
  let reportTransfers = 0;
  let backfilling = false;
  return {
    written(blocks, transfers) {
      reportBlocks += blocks;
      reportTransfers += transfers;
    },
    reached(last, top) {
      const behind = top - last;
      if (behind >= BACKFILL_BLOCKS) {
        backfilling = true;
      } else if (backfilling && behind === 0n) {
        backfilling = false;
        log.info("backfill done: following the head", { last: last.toString() });
        options.caughtUp();
      }
      if (Date.now() < reportAt) return;
      const seconds = (Date.now() - reportAt + PROGRESS_INTERVAL_MS) / 1000;
      const blocksPerSecond = reportBlocks / seconds;
      if (backfilling) {
        log.info("indexer progress", {
          last: last.toString(),
          head: top.toString(),
          behind: behind.toString(),
          blocksPerSecond: Math.round(blocksPerSecond * 10) / 10,
          transfersPerSecond: Math.round(reportTransfers / seconds),
          etaSeconds: blocksPerSecond > 0 ? Math.round(Number(behind) / blocksPerSecond) : null,
        });
      }
      reportAt = Date.now() + PROGRESS_INTERVAL_MS;
      reportBlocks = 0;
      reportTransfers = 0;
    },
  };
}
