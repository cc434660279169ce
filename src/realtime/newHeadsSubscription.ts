/**
 * `newHeads`: every new canonical head from the chain follower, in order and with no gap; after a reorg, the
 * new branch's heads from the fork point. The follower's headers are any family's.
 */
import type { SubscriptionKind } from "./subscriptionKind";

export const newHeadsSubscription: SubscriptionKind = {
  name: "newHeads",
  open: ({ subscriptions, notify }) => ({
    changed(change) {
      for (const block of change.added) {
        for (const subscription of subscriptions) notify(subscription, block.raw);
      }
    },
  }),
};
