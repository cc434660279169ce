/** Vacuum and analyze of the index's tables, in the background, one at a time: indexing goes on meanwhile. */
import type { Logger } from "../log";
import type { IndexedBlock, IndexWriter } from "./indexFamily";

/** The tables are vacuumed and analyzed after this many transfers written, and when a backfill ends. */
const MAINTENANCE_TRANSFERS = 250_000;

export interface Maintenance {
  /** Counts transfers written; starts a maintenance once enough have been. */
  added(transfers: number): void;
  /** Starts one now, unless one is running. */
  run(): void;
  /** Settles once the running one (if any) is done. */
  done(): Promise<void>;
}

export function createMaintenance(options: {
  writer: IndexWriter<IndexedBlock>;
  log: Logger;
  maintained?: (seconds: number) => void;
}): Maintenance {
  const { writer, log } = options;
  let running: Promise<void> | undefined;
  let sinceLast = 0;
  function run() {
    if (running) return;
    sinceLast = 0;
    const started = performance.now();
    running = writer
      .maintain()
      .then(() => {
        const seconds = (performance.now() - started) / 1000;
        log.debug("index tables vacuumed and analyzed", { seconds });
        options.maintained?.(seconds);
      })
      .catch((error) => log.warn("index maintenance failed", { error: (error as Error).message }))
      .finally(() => {
        running = undefined;
      });
  }
  return {
    added(transfers) {
      sinceLast += transfers;
      if (sinceLast >= MAINTENANCE_TRANSFERS) run();
    },
    run,
    done: async () => {
      await running;
    },
  };
}
