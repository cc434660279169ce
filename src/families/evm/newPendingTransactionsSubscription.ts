/**
 * `newPendingTransactions` (docs/interface.md §14): passed through from an upstream WebSocket that offers
 * it, one node subscription for every client asking the same form (hashes, or with `true` full
 * transactions), ended when its last subscriber leaves.
 */
import { InvalidParamsError } from "../../errors";
import { createSharedUpstream } from "../../realtime/sharedUpstream";
import type {
  Subscription,
  SubscriptionContext,
  SubscriptionFeed,
  SubscriptionKind,
} from "../../realtime/subscriptionKind";

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

function openPendingTransactions(context: SubscriptionContext<Full>): SubscriptionFeed<Full> {
  const { subscriptions, notify, upstreamSubscribe } = context;
  /** By form: the hashes' upstream subscription and the full transactions', each shared by its subscribers. */
  const forms = new Map(
    ([false, true] as const).map((full) => [
      full,
      createSharedUpstream({
        upstreamSubscribe,
        params: full ? [NAME, true] : [NAME],
        onItem: (item) => {
          for (const s of subscriptions) if (s.options === full) notify(s, item);
        },
        what: full ? `${NAME} with full transactions` : NAME,
      }),
    ]),
  );

  /** Starts the form's upstream subscription, or joins the one starting; -32601 when none is had. */
  const join = (own: Subscription<Full>) => forms.get(own.options)!.join();
  const end = (full: Full) => forms.get(full)!.leave();

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
