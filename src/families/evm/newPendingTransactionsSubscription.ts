/**
 * `newPendingTransactions` (docs/interface.md §14): passed through from an upstream WebSocket that offers
 * it, one node subscription for every client, ended when its last subscriber leaves.
 */
import { MethodNotFoundError, type ServiceError } from "../../errors";
import type {
  SubscriptionContext,
  SubscriptionFeed,
  SubscriptionKind,
} from "../../realtime/subscriptionKind";
import type { SocketSubscription } from "../../upstream/socket";

const NAME = "newPendingTransactions";

export const newPendingTransactionsSubscription: SubscriptionKind = {
  name: NAME,
  open: openPendingTransactions,
};

function openPendingTransactions(context: SubscriptionContext): SubscriptionFeed {
  const { subscriptions, notify, upstreamSubscribe } = context;
  /** The one upstream subscription, and its confirmation every subscriber waits for. */
  let pending: { subscription: SocketSubscription; ready: Promise<void> } | undefined;

  /** Starts the upstream subscription, or joins the one starting; rejects with -32601 when none is had. */
  function join(): Promise<void> {
    if (pending) return pending.ready;
    const subscription = upstreamSubscribe([NAME], (hash) => {
      for (const s of subscriptions) notify(s, hash);
    });
    if (!subscription)
      return Promise.reject(new MethodNotFoundError(`${NAME} (no upstream WebSocket is live)`));
    const started = {
      subscription,
      ready: subscription.ready.catch((error: unknown) => {
        // Its subscribers may all have gone (and stopped it) meanwhile, and another started since.
        if (pending === started) pending = undefined;
        subscription.unsubscribe();
        const reason = (error as ServiceError).message;
        throw new MethodNotFoundError(`${NAME} (the upstream refused it: ${reason})`);
      }),
    };
    pending = started;
    return started.ready;
  }

  function end() {
    pending?.subscription.unsubscribe();
    pending = undefined;
  }

  return {
    join,
    leave() {
      if (subscriptions.size === 0) end();
    },
    stop: end,
  };
}
