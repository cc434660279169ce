/**
 * The embedded PostgreSQL (PGlite behind its socket server) in a thread of its own (db/embeddedThread.ts):
 * the service reaches it over loopback with postgres.js, as it would an external server, and none of its
 * work runs on the thread that answers requests.
 */
import type { Logger } from "../log";
import { withTimeout } from "../timeout";

/** How long a stop waits for PGlite to close (a checkpoint) before the thread is ended anyway. */
const STOP_TIMEOUT_MS = 10_000;

export type EmbeddedRequest =
  | { type: "start"; dir: string; sharedBuffersMb: number; maxConnections: number }
  | { type: "stop" };
export type EmbeddedReply =
  | { type: "started"; address: string }
  | { type: "failed"; message: string }
  | { type: "stopped" };

export interface EmbeddedPostgres {
  /** host:port of its socket server on 127.0.0.1. */
  address: string;
  stop(): Promise<void>;
}

export function startEmbeddedPostgres(options: {
  dir: string;
  sharedBuffersMb: number;
  maxConnections: number;
  log: Logger;
}): Promise<EmbeddedPostgres> {
  const { log } = options;
  const thread = new Worker(new URL("./embeddedThread.ts", import.meta.url).href);
  let stopping = false;
  let stopped: (() => void) | undefined;
  return new Promise<EmbeddedPostgres>((resolve, reject) => {
    thread.addEventListener("error", (event) => {
      const message = (event as ErrorEvent).message;
      if (stopping) return;
      // After the start, the database connections fail and /health says so; the cause is logged here.
      log.error("the embedded PostgreSQL thread failed", { error: message });
      reject(new Error(`the embedded PostgreSQL thread failed: ${message}`));
    });
    thread.addEventListener("message", (event: MessageEvent<EmbeddedReply>) => {
      const reply = event.data;
      if (reply.type === "failed") {
        thread.terminate();
        reject(new Error(`the embedded PostgreSQL did not start: ${reply.message}`));
      } else if (reply.type === "stopped") {
        stopped?.();
      } else {
        resolve({
          address: reply.address,
          async stop() {
            stopping = true;
            const done = new Promise<void>((r) => {
              stopped = r;
            });
            thread.postMessage({ type: "stop" } satisfies EmbeddedRequest);
            await withTimeout(done, STOP_TIMEOUT_MS, () => new Error("embedded PostgreSQL stop timed out"))
              .catch((error) => log.warn("the embedded PostgreSQL did not close in time", { error }))
              .finally(() => thread.terminate());
          },
        });
      }
    });
    const { dir, sharedBuffersMb, maxConnections } = options;
    thread.postMessage({ type: "start", dir, sharedBuffersMb, maxConnections } satisfies EmbeddedRequest);
  });
}
