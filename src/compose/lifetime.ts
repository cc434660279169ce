/** What a start-up made and must undo: each part says how it stops, and stop() undoes them in reverse order. */
import type { Logger } from "../log";

export interface Lifetime {
  /** Runs `cleanup` at stop(), before the cleanups deferred earlier. */
  defer(cleanup: () => Promise<void> | void): void;
  /** Every cleanup once, newest first; one that fails is logged and the others still run. */
  stop(): Promise<void>;
}

export function createLifetime(log: Logger): Lifetime {
  const cleanups: (() => Promise<void> | void)[] = [];
  return {
    defer: (cleanup) => void cleanups.push(cleanup),
    async stop() {
      for (const cleanup of cleanups.splice(0).reverse()) {
        try {
          await cleanup();
        } catch (error) {
          log.warn("error during shutdown", { error });
        }
      }
    },
  };
}
