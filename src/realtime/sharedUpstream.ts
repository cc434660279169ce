/**
 * One upstream subscription its subscribers share (a kind's form, a pending-filter feed): started by the
 * first to join, joined by the others while it starts or runs, ended by `leave`. Where no upstream WebSocket
 * is live, or the node refuses it, a join fails with -32601 naming `what` and why, and the next join starts
 * it again.
 */
import { MethodNotFoundError, type ServiceError } from "../errors";
import type { SocketSubscription } from "../upstream/socket";
import type { UpstreamSubscribe } from "./subscriptionKind";

export interface SharedUpstream {
  /** Whether it is started (or starting). */
  readonly joined: boolean;
  join(): Promise<void>;
  leave(): void;
}

export function createSharedUpstream(options: {
  upstreamSubscribe: UpstreamSubscribe;
  params: unknown[];
  onItem: (result: string) => void;
  /** What a refusal names: "<what> (the upstream refused it: ...)". */
  what: string;
}): SharedUpstream {
  const { upstreamSubscribe, params, onItem, what } = options;
  let current: { subscription: SocketSubscription; ready: Promise<void> } | undefined;
  return {
    get joined() {
      return current !== undefined;
    },
    join() {
      if (current) return current.ready;
      const subscription = upstreamSubscribe(params, onItem);
      if (!subscription) {
        return Promise.reject(new MethodNotFoundError(`${what} (no upstream WebSocket is live)`));
      }
      const started = {
        subscription,
        ready: subscription.ready.catch((error: unknown) => {
          // Its subscribers may all have gone (and ended it) meanwhile, and another started since.
          if (current === started) current = undefined;
          subscription.unsubscribe();
          const reason = (error as ServiceError).message;
          throw new MethodNotFoundError(`${what} (the upstream refused it: ${reason})`);
        }),
      };
      current = started;
      return started.ready;
    },
    leave() {
      current?.subscription.unsubscribe();
      current = undefined;
    },
  };
}
