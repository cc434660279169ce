/**
 * The pending-transaction hashes behind the pending filters the service keeps, across instances: every
 * instance that knows a pending filter alive (it made one, or its sweep found one in the database) holds one
 * upstream `newPendingTransactions` subscription and appends the hashes it is sent to the database's shared
 * list (db/rpcFilterStore.ts), each hash once whichever instance saw it first; a pending filter's poll, on
 * any instance, reads the list after its cursor. Hashes are appended in small batches (PENDING_FLUSH_MS).
 */

import type { RpcFilterStore } from "../../db/rpcFilterStore";
import type { Logger } from "../../log";
import { createSharedUpstream } from "../../realtime/sharedUpstream";
import type { SocketSubscription } from "../../upstream/socket";

const NAME = "newPendingTransactions";
/** Hashes received within this long are appended as one statement. */
const PENDING_FLUSH_MS = 50;
/** Hashes waiting for the database at most (a database away for long): newer ones are dropped past it. */
const MAX_WAITING = 10_000;
const TX_HASH = /^0x[0-9a-f]{64}$/;

export interface PendingFeed {
  /** Subscribes upstream (once); resolves when the node took it, rejects with -32601 when none would. */
  join(): Promise<void>;
  /** Ends the upstream subscription: no pending filter lives. */
  leave(): void;
  readonly joined: boolean;
  stop(): void;
}

export function createPendingFeed(options: {
  upstreamSubscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription | undefined;
  store: Pick<RpcFilterStore, "appendPending">;
  log: Logger;
}): PendingFeed {
  const { upstreamSubscribe, store, log } = options;
  let waiting: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing = false;
  let dropped = false;
  let stopped = false;

  async function flush(): Promise<void> {
    timer = undefined;
    if (flushing || waiting.length === 0) return;
    flushing = true;
    const batch = waiting;
    waiting = [];
    try {
      await store.appendPending(batch);
    } catch (error) {
      if (!stopped)
        log.warn("pending transaction hashes could not be appended", { count: batch.length, error });
    } finally {
      flushing = false;
      if (waiting.length > 0 && !stopped) timer ??= setTimeout(flush, PENDING_FLUSH_MS);
    }
  }

  function received(result: string) {
    if (stopped) return;
    let hash: unknown;
    try {
      hash = JSON.parse(result);
    } catch {
      return;
    }
    // Full transactions (a node that sends them unasked) are read for their hash.
    if (typeof hash === "object" && hash !== null) hash = (hash as { hash?: unknown }).hash;
    if (typeof hash !== "string" || !TX_HASH.test(hash.toLowerCase())) return;
    if (waiting.length >= MAX_WAITING) {
      if (!dropped)
        log.warn("pending transaction hashes dropped: the database is behind", { waiting: MAX_WAITING });
      dropped = true;
      return;
    }
    dropped = false;
    waiting.push(hash.toLowerCase());
    timer ??= setTimeout(flush, PENDING_FLUSH_MS);
  }

  const upstream = createSharedUpstream({
    upstreamSubscribe,
    params: [NAME],
    onItem: received,
    what: `${NAME} for a pending filter`,
  });

  return {
    get joined() {
      return upstream.joined;
    },
    join: () => upstream.join(),
    leave: () => upstream.leave(),
    stop() {
      stopped = true;
      upstream.leave();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
