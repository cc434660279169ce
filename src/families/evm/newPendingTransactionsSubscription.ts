/**
 * `newPendingTransactions` (docs/interface.md §14): passed through from an upstream WebSocket that offers
 * it, one node subscription for every client asking the same form (hashes, or with `true` full
 * transactions), ended when its last subscriber leaves.
 */
import { InvalidParamsError, MethodNotFoundError, type ServiceError } from "../../errors";
import type {
  Subscription,
  SubscriptionContext,
  SubscriptionFeed,
  SubscriptionKind,
} from "../../realtime/subscriptionKind";
import type { SocketSubscription } from "../../upstream/socket";

const NAME = "newPendingTransactions";

/** true: full transactions; false: their hashes (geth's and anvil's second param). */
type Full = boolean;

function fullOf(value: unknown): Full {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") {
    throw new InvalidParamsError(
      `invalid params: ${NAME} takes true (full transactions) or false (hashes) as its option`,
    );
  }
  return value;
}

export const newPendingTransactionsSubscription: SubscriptionKind<Full> = {
  name: NAME,
  parse: fullOf,
  open: openPendingTransactions,
};

/** One upstream subscription, and its confirmation every subscriber waits for. */
interface Shared {
  subscription: SocketSubscription;
  ready: Promise<void>;
}

function openPendingTransactions(context: SubscriptionContext<Full>): SubscriptionFeed<Full> {
  const { subscriptions, notify, upstreamSubscribe } = context;
  /** By form: the hashes' subscription and the full transactions'. */
  const shared = new Map<Full, Shared>();
  const what = (full: Full) => (full ? `${NAME} with full transactions` : NAME);

  /** Starts the form's upstream subscription, or joins the one starting; -32601 when none is had. */
  function join(own: Subscription<Full>): Promise<void> {
    const full = own.options;
    const running = shared.get(full);
    if (running) return running.ready;
    const subscription = upstreamSubscribe(full ? [NAME, true] : [NAME], (item) => {
      for (const s of subscriptions) if (s.options === full) notify(s, item);
    });
    if (!subscription)
      return Promise.reject(new MethodNotFoundError(`${what(full)} (no upstream WebSocket is live)`));
    const started: Shared = {
      subscription,
      ready: subscription.ready.catch((error: unknown) => {
        // Its subscribers may all have gone (and stopped it) meanwhile, and another started since.
        if (shared.get(full) === started) shared.delete(full);
        subscription.unsubscribe();
        const reason = (error as ServiceError).message;
        throw new MethodNotFoundError(`${what(full)} (the upstream refused it: ${reason})`);
      }),
    };
    shared.set(full, started);
    return started.ready;
  }

  function end(full: Full) {
    shared.get(full)?.subscription.unsubscribe();
    shared.delete(full);
  }

  return {
    join,
    leave(gone) {
      for (const s of subscriptions) if (s.options === gone.options) return;
      end(gone.options);
    },
    stop() {
      end(false);
      end(true);
    },
  };
}
