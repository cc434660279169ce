/**
 * A kind of subscription (eth_subscribe's first param) as the hub (realtime/subscriptions.ts) runs it: the
 * hub's own (newHeads, watch_filters) or a chain family's (the EVM's logs and newPendingTransactions,
 * families/evm/). The hub holds the subscriptions, their limits, their removal and its shutdown; a kind says
 * how its options are read and what it pushes, and when.
 */
import type { Caller } from "../caller";
import type { ChainChange, ChainFollower } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";
import type { SocketSubscription } from "../upstream/socket";

/** A client connection that holds subscriptions. */
export interface Subscriber {
  caller: Caller;
  /** Sends one notification; the transport bounds what may wait to be sent. */
  send(text: string): void;
}

/** One subscription, as its kind sees it. */
export interface Subscription<Options = unknown> {
  readonly id: string;
  readonly subscriber: Subscriber;
  /** What its kind read of eth_subscribe's second param (`parse`). */
  readonly options: Options;
}

/** A pass-through subscription on an upstream's WebSocket; undefined when none is live. */
export type UpstreamSubscribe = (
  params: unknown[],
  onItem: (result: string) => void,
) => SocketSubscription | undefined;

/** What the hub gives a kind it runs. */
export interface SubscriptionContext<Options = unknown> {
  /** The kind's subscriptions: every one held, including those still being set up (`join`). */
  readonly subscriptions: ReadonlySet<Subscription<Options>>;
  /** Sends one result (JSON text) to one subscription; counted, and a send that fails is logged. */
  notify(subscription: Subscription<Options>, result: string): void;
  /** The chain as the service follows it. */
  readonly head: ChainFollower;
  /** The node, through the engine (cached, coalesced). */
  readonly engine: Engine;
  readonly upstreamSubscribe: UpstreamSubscribe;
  readonly log: Logger;
}

/** A kind's running part in one hub: each hook is optional. */
export interface SubscriptionFeed<Options = unknown> {
  /**
   * What a new subscription waits for before it is live (an upstream's yes, where its notifications start);
   * a rejection is the subscribe call's error. The hub holds the subscription before calling this.
   */
  join?(subscription: Subscription<Options>): Promise<void> | undefined;
  /** A subscription ended: unsubscribed, its subscriber dropped, its `join` failed, or the hub stopped. */
  leave?(subscription: Subscription<Options>): void;
  /** The chain follower's change (blocks dropped, then added, lowest first), in the order they come. */
  changed?(change: ChainChange): void;
  /** The index's processed blocks may have moved (the indexer wrote some). */
  processed?(): void;
  /** The hub stops; its subscriptions have left already. */
  stop?(): void;
}

export interface SubscriptionKind<Options = unknown> {
  /** eth_subscribe's first param. */
  readonly name: string;
  /**
   * eth_subscribe's second param as one subscription keeps it, judged against the followed head (bounds that
   * name past blocks); throws an InvalidParamsError. Absent: the kind takes no options.
   */
  parse?(value: unknown, head: ChainFollower): Options;
  /** Starts the kind in a hub, once. */
  open(context: SubscriptionContext<Options>): SubscriptionFeed<Options>;
}
