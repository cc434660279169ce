/**
 * Subscriptions (docs/interface.md §14): what a client subscribes to over a WebSocket, computed once for
 * every subscriber and pushed to each, whatever the transport that carries it. The hub holds them: their
 * limit per subscriber, their removal and its shutdown. What each kind pushes is the kind's
 * (realtime/subscriptionKind.ts): `newHeads` (realtime/newHeadsSubscription.ts) and `watch_filters`
 * (realtime/watchFiltersSubscription.ts) for any chain, and those of the chain's family (the EVM's `logs`
 * and `newPendingTransactions`, in families/evm/).
 */

import type { ChainFollower } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import { InvalidParamsError, RateLimitedError, type ServiceError, UpstreamUnavailableError } from "../errors";
import { toJson } from "../json";
import type { Logger } from "../log";
import { newHeadsSubscription } from "./newHeadsSubscription";
import type {
  Subscriber,
  Subscription,
  SubscriptionFeed,
  SubscriptionKind,
  UpstreamSubscribe,
} from "./subscriptionKind";
import { createWatchFiltersSubscription, type WatchResults } from "./watchFiltersSubscription";

export type { Subscriber } from "./subscriptionKind";

export interface SubscriptionEvents {
  notified?(kind: string, count: number): void;
  changed?(kind: string, delta: number): void;
}

export interface Subscriptions {
  /** The kinds served (eth_subscribe's first param), in the order a refusal lists them. */
  readonly kinds: readonly string[];
  /**
   * Starts a subscription; its id, or a ServiceError: -32602 for bad params, -32601 for a kind no upstream
   * offers or one this instance refuses naming its chain (`refused`), -32005 when the subscriber already
   * holds `max`.
   */
  subscribe(subscriber: Subscriber, params: unknown[], max: number): Promise<string>;
  unsubscribe(subscriber: Subscriber, id: string): boolean;
  /** Ends every subscription of a subscriber (its connection closed). */
  drop(subscriber: Subscriber): void;
  /** How many subscriptions a subscriber holds. */
  count(subscriber: Subscriber): number;
  /** Processed blocks may have moved (the indexer wrote some). */
  processed(): void;
  stop(): void;
}

/** A kind started in this hub, with the subscriptions it holds. */
interface OpenKind {
  kind: SubscriptionKind;
  feed: SubscriptionFeed;
  members: Set<Held>;
}

/** A subscription as the hub holds it. */
interface Held extends Subscription {
  readonly open: OpenKind;
  /** Ended (unsubscribed, or its subscriber dropped), possibly while it was still being set up. */
  removed?: boolean;
}

const HEX_ID_BYTES = 16;

function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(HEX_ID_BYTES));
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

const notification = (id: string, result: string) =>
  `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${result}}}`;

/** eth_subscribe's second param as the kind keeps it. */
function optionsOf(kind: SubscriptionKind, value: unknown, head: ChainFollower): unknown {
  if (kind.parse) return kind.parse(value, head);
  if (value !== undefined) throw new InvalidParamsError(`invalid params: ${kind.name} takes no options`);
  return undefined;
}

export function createSubscriptions(options: {
  head: ChainFollower;
  engine: Engine;
  upstreamSubscribe: UpstreamSubscribe;
  /** The watch filters' results; undefined where the family keeps no index: no `watch_filters` kind. */
  watch?: WatchResults;
  /** The chain family's kinds, served between newHeads and watch_filters. */
  kinds: readonly SubscriptionKind[];
  /**
   * A kind not served here that the instance can say why of (compose/unserved.ts: TRON's pending
   * transactions, watch_filters without an index): refused naming the chain, not as a name never heard of.
   */
  refused?: (kind: string) => ServiceError | undefined;
  log: Logger;
  events?: SubscriptionEvents;
}): Subscriptions {
  const { head, engine, upstreamSubscribe, log, events } = options;
  const byId = new Map<string, Held>();
  const bySubscriber = new Map<Subscriber, Set<Held>>();
  let stopped = false;

  function deliver(kind: string, subscription: Subscription, result: string) {
    try {
      subscription.subscriber.send(notification(subscription.id, result));
      events?.notified?.(kind, 1);
    } catch (error) {
      log.debug("notification not sent", { kind, error: (error as Error).message });
    }
  }

  /** By name: a Map, so no name a caller sends reaches what a plain object inherits. */
  const kinds = new Map<string, OpenKind>();
  const served: SubscriptionKind[] = [
    newHeadsSubscription,
    ...options.kinds,
    ...(options.watch ? [createWatchFiltersSubscription({ watch: options.watch })] : []),
  ];
  for (const kind of served) {
    const members = new Set<Held>();
    const notify = (subscription: Subscription, result: string) => deliver(kind.name, subscription, result);
    const feed = kind.open({ subscriptions: members, notify, head, engine, upstreamSubscribe, log });
    kinds.set(kind.name, { kind, feed, members });
  }
  const names = [...kinds.keys()];

  head.onChange((change) => {
    for (const { feed } of kinds.values()) feed.changed?.(change);
  });

  function add(subscription: Held) {
    byId.set(subscription.id, subscription);
    let own = bySubscriber.get(subscription.subscriber);
    if (!own) {
      own = new Set();
      bySubscriber.set(subscription.subscriber, own);
    }
    own.add(subscription);
    subscription.open.members.add(subscription);
    events?.changed?.(subscription.open.kind.name, 1);
  }

  function remove(subscription: Held) {
    if (subscription.removed) return;
    subscription.removed = true;
    byId.delete(subscription.id);
    bySubscriber.get(subscription.subscriber)?.delete(subscription);
    const { kind, feed, members } = subscription.open;
    members.delete(subscription);
    events?.changed?.(kind.name, -1);
    feed.leave?.(subscription);
  }

  return {
    kinds: names,
    async subscribe(subscriber, params, max) {
      const [name, value] = params;
      const open = typeof name === "string" ? kinds.get(name) : undefined;
      if (!open) {
        const refused = typeof name === "string" ? options.refused?.(name) : undefined;
        if (refused) throw refused;
        throw new InvalidParamsError(
          `invalid params: the subscription should be one of ${names.join(", ")}; got ${toJson(name)}`,
        );
      }
      if (params.length > 2)
        throw new InvalidParamsError("invalid params: eth_subscribe takes at most 2 params");
      const subscription: Held = {
        id: newId(),
        subscriber,
        options: optionsOf(open.kind, value, head),
        open,
      };
      if (stopped) throw new UpstreamUnavailableError("the service is shutting down");
      if ((bySubscriber.get(subscriber)?.size ?? 0) >= max) {
        throw new RateLimitedError(
          `this socket holds ${max} subscriptions, the most it may (WS_MAX_SUBSCRIPTIONS)`,
          1,
        );
      }
      // Held from here, before anything is awaited: the subscriber's other calls (a batch's run at once)
      // count it, and a drop while it is being set up ends it.
      add(subscription);
      try {
        await open.feed.join?.(subscription);
      } catch (error) {
        remove(subscription);
        throw error;
      }
      if (subscription.removed) throw new UpstreamUnavailableError("the connection closed");
      return subscription.id;
    },
    unsubscribe(subscriber, id) {
      const subscription = byId.get(id);
      if (!subscription || subscription.subscriber !== subscriber) return false;
      remove(subscription);
      return true;
    },
    drop(subscriber) {
      for (const subscription of [...(bySubscriber.get(subscriber) ?? [])]) remove(subscription);
      bySubscriber.delete(subscriber);
    },
    count: (subscriber) => bySubscriber.get(subscriber)?.size ?? 0,
    processed() {
      for (const { feed } of kinds.values()) feed.processed?.();
    },
    stop() {
      stopped = true;
      for (const subscription of [...byId.values()]) remove(subscription);
      for (const { feed } of kinds.values()) feed.stop?.();
    },
  };
}
