/** The indexer's pauses, cut short by what gives it work at once: a new head, a reorg, a lost lock, stop(). */
import type { ChainFollower } from "../engine/chainFollower";

export interface Wakeups {
  /** Waits `ms`, or until woken. */
  sleep(ms: number): Promise<void>;
  /** Ends the pause under way, if any. */
  wake(): void;
  /** The lowest height a reorg the follower saw since the last call starts at (then forgotten). */
  takeReorg(): bigint | undefined;
}

export function createWakeups(head: ChainFollower): Wakeups {
  let wake: (() => void) | undefined;
  let reorgFrom: bigint | undefined;
  head.onReorg((from) => {
    reorgFrom = reorgFrom === undefined || from < reorgFrom ? from : reorgFrom;
    wake?.();
  });
  // A new head is work at once, not at the next poll.
  head.onChange(() => wake?.());
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => {
        wake = undefined;
      }),
    wake: () => wake?.(),
    takeReorg() {
      const from = reorgFrom;
      reorgFrom = undefined;
      return from;
    },
  };
}
