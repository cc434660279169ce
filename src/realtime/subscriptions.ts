/**
 * Subscriptions (docs/interface.md §14): what a client subscribes to over a WebSocket, computed once for
 * every subscriber and pushed to each, whatever the transport that carries it.
 *
 * - `newHeads`: every new canonical head from the chain follower, in order and with no gap; after a reorg,
 *   the new branch's heads from the fork point.
 * - `logs`: the logs of each new canonical block, read from its receipts (through the engine, so cached
 *   and shared with the indexer), filtered per subscription by address and topics; on a reorg, the logs
 *   sent for the dropped blocks are sent again with `removed: true`, then the new branch's.
 * - `newPendingTransactions`: passed through from an upstream WebSocket that offers it, one node
 *   subscription for every client.
 * - `watch_filters`: for each block as it becomes processed, one notification per filter result of the
 *   caller's filters, exactly what `/watch_filters/check` (v1) or `check_v2` (v2) gives for it.
 */

import type { BlockHeader } from "../blockHeader";
import type { Caller } from "../caller";
import { callText, type NodeClient } from "../engine/client";
import type { ChainChange, ChainHead } from "../engine/head";
import {
  InvalidParamsError,
  MethodNotFoundError,
  RateLimitedError,
  type ServiceError,
  UpstreamUnavailableError,
} from "../errors";
import { quantity } from "../families/evm/blockRef";
import { toJson } from "../json";
import type { Logger } from "../log";
import type { SocketSubscription } from "../upstream/socket";

/** Blocks whose logs are kept, to be sent again as removed should a reorg drop them. */
const LOG_BLOCKS_KEPT = 256;
/** How often processed blocks are looked for while someone subscribes to watch filters. */
const WATCH_POLL_MS = 1_000;
/** The most processed blocks one pass sends, so a long backlog does not hold the others. */
const WATCH_BLOCKS_PER_PASS = 100;

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions" | "watch_filters";
export const SUBSCRIPTION_KINDS: readonly SubscriptionKind[] = [
  "newHeads",
  "logs",
  "newPendingTransactions",
  "watch_filters",
];

/** A client connection that holds subscriptions. */
export interface Subscriber {
  caller: Caller;
  /** Sends one notification; the transport bounds what may wait to be sent. */
  send(text: string): void;
}

export interface SubscriptionEvents {
  notified?(kind: SubscriptionKind, count: number): void;
  changed?(kind: SubscriptionKind, delta: number): void;
}

export interface WatchResults {
  /** The last processed block (watch filters' lastBlockNumber). */
  lastBlockNumber(): Promise<bigint>;
  /** Every result of a processed block for the caller's filters, in check's order. */
  results(caller: Caller, block: number, version: "v1" | "v2"): Promise<unknown[]>;
}

export interface Subscriptions {
  /**
   * Starts a subscription; its id, or a ServiceError: -32602 for bad params, -32601 for a kind no upstream
   * offers, -32005 when the subscriber already holds `max`.
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

interface LogFilter {
  addresses?: Set<string>;
  /** Per position: null matches anything, else one of the set. */
  topics: (Set<string> | null)[];
}

interface Subscription {
  id: string;
  kind: SubscriptionKind;
  subscriber: Subscriber;
  filter?: LogFilter;
  /** watch_filters: the group it belongs to. */
  group?: WatchGroup;
  /** Ended (unsubscribed, or its subscriber dropped), possibly while it was still being set up. */
  removed?: boolean;
}

interface StoredLog {
  address: string;
  topics: string[];
  object: Record<string, unknown>;
  text: string;
}

interface WatchGroup {
  key: string;
  caller: Caller;
  version: "v1" | "v2";
  members: Set<Subscription>;
  /** The last block whose results were sent; undefined until `ready` has read where to start. */
  lastSent: bigint | undefined;
  ready: Promise<void>;
}

const HEX_ID_BYTES = 16;

function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(HEX_ID_BYTES));
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

const notification = (id: string, result: string) =>
  `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${result}}}`;

const HEX_20 = /^0x[0-9a-fA-F]{40}$/;
const HEX_32 = /^0x[0-9a-fA-F]{64}$/;

/** The `logs` filter: `{address?, topics?}` as eth_subscribe takes it. */
function logFilterOf(value: unknown): LogFilter {
  if (value === undefined || value === null) return { topics: [] };
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidParamsError("invalid params: the logs filter must be an object {address?, topics?}");
  }
  const { address, topics, ...rest } = value as { address?: unknown; topics?: unknown };
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw new InvalidParamsError(
      `invalid params: the logs filter takes address and topics, not ${extra.join(", ")}`,
    );
  }
  const filter: LogFilter = { topics: [] };
  if (address !== undefined && address !== null) {
    const list = Array.isArray(address) ? address : [address];
    if (list.some((a) => typeof a !== "string" || !HEX_20.test(a))) {
      throw new InvalidParamsError("invalid params: address should be a 20-byte address or a list of them");
    }
    filter.addresses = new Set(list.map((a) => (a as string).toLowerCase()));
  }
  if (topics !== undefined && topics !== null) {
    if (!Array.isArray(topics) || topics.length > 4) {
      throw new InvalidParamsError("invalid params: topics should be a list of at most 4 positions");
    }
    filter.topics = topics.map((t) => {
      if (t === null) return null;
      const alternatives = Array.isArray(t) ? t : [t];
      if (alternatives.some((x) => typeof x !== "string" || !HEX_32.test(x))) {
        throw new InvalidParamsError(
          "invalid params: a topic should be a 32-byte hash, null, or a list of them",
        );
      }
      return new Set(alternatives.map((x) => (x as string).toLowerCase()));
    });
  }
  return filter;
}

function matches(filter: LogFilter, log: StoredLog): boolean {
  if (filter.addresses && !filter.addresses.has(log.address)) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const wanted = filter.topics[i];
    if (wanted === null || wanted === undefined) continue;
    const topic = log.topics[i];
    if (topic === undefined || !wanted.has(topic)) return false;
  }
  return true;
}

export function createSubscriptions(options: {
  head: ChainHead;
  node: NodeClient;
  /** A pass-through subscription on an upstream's WebSocket; undefined when none is live. */
  upstreamSubscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription | undefined;
  watch: WatchResults;
  log: Logger;
  events?: SubscriptionEvents;
}): Subscriptions {
  const { head, node, watch, log, events } = options;
  const byId = new Map<string, Subscription>();
  const bySubscriber = new Map<Subscriber, Set<Subscription>>();
  const ofKind: Record<SubscriptionKind, Set<Subscription>> = {
    newHeads: new Set(),
    logs: new Set(),
    newPendingTransactions: new Set(),
    watch_filters: new Set(),
  };
  /** The logs of recent canonical blocks, by block hash, in the order they were processed. */
  const blockLogs = new Map<string, StoredLog[]>();
  let logWork: Promise<void> = Promise.resolve();
  /** The one upstream newPendingTransactions subscription, and its confirmation every subscriber waits for. */
  let pending: { subscription: SocketSubscription; ready: Promise<void> } | undefined;
  const watchGroups = new Map<string, WatchGroup>();
  let watchTimer: ReturnType<typeof setInterval> | undefined;
  let watching: Promise<void> | undefined;
  let watchAgain = false;
  let stopped = false;

  function deliver(kind: SubscriptionKind, subscription: Subscription, result: string) {
    try {
      subscription.subscriber.send(notification(subscription.id, result));
      events?.notified?.(kind, 1);
    } catch (error) {
      log.debug("notification not sent", { kind, error: (error as Error).message });
    }
  }

  // --- newHeads and logs: from the chain follower's changes, in order --------------------------------

  async function logsOf(block: BlockHeader): Promise<StoredLog[] | undefined> {
    const text = await callText(node, "eth_getBlockReceipts", [quantity(block.number)]);
    if (text === "null") return undefined;
    const receipts = JSON.parse(text) as { blockHash: string; logs: Record<string, unknown>[] }[];
    // Receipts of another block at that height: the chain moved on; the change that follows says how.
    if (receipts.some((r) => r.blockHash.toLowerCase() !== block.hash)) return undefined;
    return receipts.flatMap((r) =>
      r.logs.map((object) => ({
        address: String(object.address).toLowerCase(),
        topics: (object.topics as string[]).map((t) => t.toLowerCase()),
        object,
        text: JSON.stringify(object),
      })),
    );
  }

  function keep(hash: string, logs: StoredLog[]) {
    blockLogs.set(hash, logs);
    if (blockLogs.size > LOG_BLOCKS_KEPT) blockLogs.delete(blockLogs.keys().next().value!);
  }

  async function sendLogs(change: ChainChange): Promise<void> {
    if (ofKind.logs.size === 0) return;
    for (const block of change.removed) {
      const logs = blockLogs.get(block.hash);
      blockLogs.delete(block.hash);
      if (!logs) continue;
      for (const subscription of ofKind.logs) {
        for (const l of logs) {
          if (matches(subscription.filter!, l)) {
            deliver("logs", subscription, JSON.stringify({ ...l.object, removed: true }));
          }
        }
      }
    }
    // Every block's receipts asked at once (one batch upstream), sent in order.
    const reads = change.added.map((block) => logsOf(block).catch((error: unknown) => error as Error));
    for (let i = 0; i < reads.length; i++) {
      const logs = await reads[i];
      const block = change.added[i]!;
      if (logs instanceof Error || logs === undefined) {
        if (logs instanceof Error)
          log.warn("logs of a new block could not be read", {
            block: block.number.toString(),
            error: logs.message,
          });
        continue;
      }
      keep(block.hash, logs);
      for (const subscription of ofKind.logs) {
        for (const l of logs) if (matches(subscription.filter!, l)) deliver("logs", subscription, l.text);
      }
    }
  }

  head.onChange((change) => {
    for (const block of change.added) {
      for (const subscription of ofKind.newHeads) deliver("newHeads", subscription, block.raw);
    }
    logWork = logWork
      .then(() => sendLogs(change))
      .catch((error) => log.error("logs notification failed", { error }));
    if (watchGroups.size > 0) pumpWatch();
  });

  // --- newPendingTransactions: one upstream subscription for everyone --------------------------------

  /** Starts the upstream subscription, or joins the one starting; rejects with -32601 when none is had. */
  function startPending(): Promise<void> {
    if (pending) return pending.ready;
    const subscription = options.upstreamSubscribe(["newPendingTransactions"], (hash) => {
      for (const s of ofKind.newPendingTransactions) deliver("newPendingTransactions", s, hash);
    });
    if (!subscription)
      return Promise.reject(
        new MethodNotFoundError("newPendingTransactions (no upstream WebSocket is live)"),
      );
    const started = {
      subscription,
      ready: subscription.ready.catch((error: unknown) => {
        // Its subscribers may all have gone (and stopped it) meanwhile, and another started since.
        if (pending === started) pending = undefined;
        subscription.unsubscribe();
        const reason = (error as ServiceError).message;
        throw new MethodNotFoundError(`newPendingTransactions (the upstream refused it: ${reason})`);
      }),
    };
    pending = started;
    return started.ready;
  }

  // --- watch_filters: the processed blocks of each (key, version) group ------------------------------

  function pumpWatch() {
    if (watching) {
      watchAgain = true;
      return;
    }
    watching = (async () => {
      do {
        watchAgain = false;
        try {
          const last = await watch.lastBlockNumber();
          for (const group of watchGroups.values()) await sendProcessed(group, last);
        } catch (error) {
          log.warn("watch filter notifications failed; retrying", { error: (error as Error).message });
        }
      } while (watchAgain && !stopped);
      watching = undefined;
    })();
  }

  async function sendProcessed(group: WatchGroup, last: bigint): Promise<void> {
    // A group still reading where it starts is sent from there once it knows.
    const from = group.lastSent;
    if (from === undefined) return;
    const end = last - from > WATCH_BLOCKS_PER_PASS ? from + BigInt(WATCH_BLOCKS_PER_PASS) : last;
    for (let block = from + 1n; block <= end && group.members.size > 0; block++) {
      const results = await watch.results(group.caller, Number(block), group.version);
      for (const result of results) {
        const text = toJson(result);
        for (const member of group.members) deliver("watch_filters", member, text);
      }
      group.lastSent = block;
    }
    if (end < last) watchAgain = true;
  }

  function watchVersion(params: unknown): "v1" | "v2" {
    const version =
      params === undefined || params === null
        ? "v1"
        : typeof params === "object" && !Array.isArray(params)
          ? ((params as { version?: unknown }).version ?? "v1")
          : undefined;
    if (version !== "v1" && version !== "v2") {
      throw new InvalidParamsError('invalid params: watch_filters takes {"version": "v1" | "v2"}');
    }
    return version;
  }

  /**
   * The subscription joins its (key, version) group, made here, at once, when it is the first: concurrent
   * first subscriptions of one key share one group, which its last member's leaving ends.
   */
  function joinWatch(subscription: Subscription, version: "v1" | "v2"): Promise<void> {
    const { caller } = subscription.subscriber;
    const key = `${caller.keyHash ?? ""}\u0000${version}`;
    let group = watchGroups.get(key);
    if (!group) {
      const made: WatchGroup = {
        key,
        caller,
        version,
        members: new Set(),
        lastSent: undefined,
        // Notifications start with the block after the last one processed now.
        ready: watch.lastBlockNumber().then((last) => {
          made.lastSent = last;
        }),
      };
      group = made;
      watchGroups.set(key, group);
    }
    group.members.add(subscription);
    subscription.group = group;
    watchTimer ??= setInterval(pumpWatch, WATCH_POLL_MS);
    return group.ready;
  }

  // --- bookkeeping -----------------------------------------------------------------------------------

  function add(subscription: Subscription) {
    byId.set(subscription.id, subscription);
    let own = bySubscriber.get(subscription.subscriber);
    if (!own) {
      own = new Set();
      bySubscriber.set(subscription.subscriber, own);
    }
    own.add(subscription);
    ofKind[subscription.kind].add(subscription);
    events?.changed?.(subscription.kind, 1);
  }

  function remove(subscription: Subscription) {
    if (subscription.removed) return;
    subscription.removed = true;
    byId.delete(subscription.id);
    bySubscriber.get(subscription.subscriber)?.delete(subscription);
    ofKind[subscription.kind].delete(subscription);
    events?.changed?.(subscription.kind, -1);
    if (subscription.kind === "newPendingTransactions" && ofKind.newPendingTransactions.size === 0) {
      pending?.subscription.unsubscribe();
      pending = undefined;
    }
    const group = subscription.group;
    if (group) {
      group.members.delete(subscription);
      if (group.members.size === 0 && watchGroups.get(group.key) === group) watchGroups.delete(group.key);
      if (watchGroups.size === 0 && watchTimer !== undefined) {
        clearInterval(watchTimer);
        watchTimer = undefined;
      }
    }
  }

  /** What a subscription waits for before it is live: where its watch group starts, the upstream's yes. */
  function setUp(subscription: Subscription, options_: unknown): Promise<void> | undefined {
    if (subscription.kind === "watch_filters") return joinWatch(subscription, watchVersion(options_));
    if (subscription.kind === "newPendingTransactions") return startPending();
    return undefined;
  }

  return {
    async subscribe(subscriber, params, max) {
      const [kind, options_] = params;
      if (typeof kind !== "string" || !SUBSCRIPTION_KINDS.includes(kind as SubscriptionKind)) {
        throw new InvalidParamsError(
          `invalid params: the subscription should be one of ${SUBSCRIPTION_KINDS.join(", ")}; got ${toJson(kind)}`,
        );
      }
      if (params.length > 2)
        throw new InvalidParamsError("invalid params: eth_subscribe takes at most 2 params");
      const subscription: Subscription = { id: newId(), kind: kind as SubscriptionKind, subscriber };
      if (kind === "logs") subscription.filter = logFilterOf(options_);
      else if (kind === "watch_filters") watchVersion(options_);
      else if (options_ !== undefined)
        throw new InvalidParamsError(`invalid params: ${kind} takes no options`);
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
        await setUp(subscription, options_);
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
      if (watchGroups.size > 0) pumpWatch();
    },
    stop() {
      stopped = true;
      if (watchTimer !== undefined) clearInterval(watchTimer);
      watchTimer = undefined;
      for (const subscription of [...byId.values()]) remove(subscription);
      pending?.subscription.unsubscribe();
      pending = undefined;
    },
  };
}
