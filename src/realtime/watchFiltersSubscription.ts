/**
 * `watch_filters`: for each block as it becomes processed, one notification per filter result of the
 * caller's filters, exactly what `/watch_filters/check` (v1) or `check_v2` (v2) gives for it. With
 * `"pending": true`, where the chain's family matches its nodes' mempool (the Bitcoin family), also each
 * result of a transaction as it enters the mempool (`block` null, `"pending": true`), and that result again
 * with `"removed": true` if the transaction leaves the mempool unmined; a mined one's result comes as every
 * block's does. One mempool follower (the family's PendingFeed) runs while a pending subscription does.
 * A reorg that drops blocks whose results were sent (where blocks are published before they are final:
 * TRON's, watch/watchMatcher.ts `followsHead`; elsewhere a reorg deeper than CONFIRMATIONS) sends those
 * results again with `"removed": true` (lowest block first, as `logs` does), then the new branch's.
 */
import type { ChainInfo } from "../blockchain";
import { hashDigits } from "../blockHeader";
import type { Caller } from "../caller";
import type { Sql } from "../db/database";
import type { ChainChange } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import { InvalidParamsError } from "../errors";
import { toJson } from "../json";
import type { Logger } from "../log";
import type {
  Subscription,
  SubscriptionContext,
  SubscriptionFeed,
  SubscriptionKind,
} from "./subscriptionKind";

/** How often processed blocks are looked for while someone subscribes to watch filters. */
const WATCH_POLL_MS = 1_000;
/** The most processed blocks one pass sends, so a long backlog does not hold the others. */
const WATCH_BLOCKS_PER_PASS = 100;
/**
 * Blocks whose sent results a group keeps for a reorg's `removed`, above the final block: more than any
 * chain's finality depth (TRON's 19 blocks, Ethereum's 64-96).
 */
const SENT_BLOCKS_KEPT = 256;

export type WatchVersion = "v1" | "v2";

/** What a watch_filters subscription asked for. */
export interface WatchOptions {
  version: WatchVersion;
  /** Results of mempool transactions too (`"pending": true`). */
  pending: boolean;
}

/** A result of a mempool transaction for one key's filter, as its notification's `result`. */
export interface PendingMatch {
  /** The key whose filter matched (its SHA-256 as stored; null in open mode). */
  keyHash: string | null;
  /** The family's result: a FilterResult with `block` null and `"pending": true` (and `"removed": true`). */
  result: unknown;
}

/** A family's follower of its nodes' mempool, matching what enters it with the watched keys' filters. */
export interface PendingFeed {
  /**
   * The keys whose filters are matched from now on. Resolves once the mempool as it is now is known: a
   * transaction that enters it after is matched (one there before is not).
   */
  watch(keys: ReadonlySet<string | null>): Promise<void>;
  /** The chain follower's change: transactions of the blocks added left the mempool mined, not removed. */
  changed(change: ChainChange): void;
  stop(): void;
}

/** Starts a family's mempool follower; `notify` receives its results in order (entered, then removed). */
export type PendingWatch = (notify: (matches: PendingMatch[]) => void) => PendingFeed;

/** What a family's mempool matching is made with (ChainFamily.followMempool's createPendingWatch). */
export interface PendingWatchOptions {
  /** The database of the filters and the index (the primary's). */
  sql: Sql;
  /** The service's statement deadline and retries, put on the family's queries. */
  guard<T extends object>(queries: T): T;
  /** The nodes, through the engine (cached and coalesced). */
  engine: Engine;
  chain: ChainInfo;
  /** How often heads are polled (HEAD_POLL_MS): the longest a block the node has may go unseen. */
  headPollMs: number;
  log: Logger;
}

/** A processed block's results for one caller, and the block's hash as the index holds it (hex digits). */
export interface ProcessedResults {
  hash: string;
  results: unknown[];
}

export interface WatchResults {
  /** The last processed block (watch filters' lastBlockNumber). */
  lastBlockNumber(): Promise<bigint>;
  /** Every result of a processed block for the caller's filters, in check's order. */
  results(caller: Caller, block: number, version: WatchVersion): Promise<ProcessedResults>;
  /** The chain's mempool matching, where its family has it; unset: `"pending": true` is refused. */
  pending?: PendingWatch;
  /** The chain's name (CHAIN), for that refusal. */
  chain?: string;
}

interface WatchGroup {
  key: string;
  caller: Caller;
  options: WatchOptions;
  members: Set<Subscription<WatchOptions>>;
  /** The last block whose results were sent; undefined until `ready` has read where to start. */
  lastSent: bigint | undefined;
  /** The results sent of blocks not yet final, by block (oldest first): what a reorg sends as removed. */
  sent: Map<bigint, unknown[]>;
  ready: Promise<void>;
}

const OPTIONS_TAKEN = 'watch_filters takes {"version": "v1" | "v2", "pending": true | false}';

function watchOptions(watch: WatchResults, params: unknown): WatchOptions {
  if (params === undefined || params === null) return { version: "v1", pending: false };
  if (typeof params !== "object" || Array.isArray(params)) {
    throw new InvalidParamsError(`invalid params: ${OPTIONS_TAKEN}`);
  }
  const { version = "v1", pending = false } = params as { version?: unknown; pending?: unknown };
  if ((version !== "v1" && version !== "v2") || typeof pending !== "boolean") {
    throw new InvalidParamsError(`invalid params: ${OPTIONS_TAKEN}`);
  }
  if (pending && !watch.pending) {
    throw new InvalidParamsError(
      `invalid params: "pending" is not served on ${watch.chain ?? "this chain"}: its watch filters match blocks only, not the nodes' mempool`,
    );
  }
  return { version, pending };
}

export function createWatchFiltersSubscription(options: {
  watch: WatchResults;
}): SubscriptionKind<WatchOptions> {
  const { watch } = options;
  return {
    name: "watch_filters",
    parse: (params) => watchOptions(watch, params),
    open: (context) => openWatch(watch, context),
  };
}

/**
 * The processed blocks of each (key, version, pending) group, sent to its members; mempool results too. A
 * reorg that drops blocks already sent (only one deeper than the finality depth reaches processed blocks)
 * moves each group back to its fork, and a block is sent only once the index holds the chain's block at its
 * height (the indexer undoes the reorg on its own path, after the follower has told of it).
 */
function openWatch(
  watch: WatchResults,
  context: SubscriptionContext<WatchOptions>,
): SubscriptionFeed<WatchOptions> {
  const { notify, log } = context;
  const watchGroups = new Map<string, WatchGroup>();
  const groupOf = new Map<Subscription<WatchOptions>, WatchGroup>();
  let watchTimer: ReturnType<typeof setInterval> | undefined;
  let watching: Promise<void> | undefined;
  let watchAgain = false;
  let stopped = false;
  const mempool = openPending(watch, watchGroups, notify, log);
  /**
   * Groups that sent blocks a reorg dropped go back to the fork, and send what they sent of those blocks
   * again with `"removed": true` in the order they were sent (lowest block first, as the `logs` kind does).
   */
  function rewindTo(change: ChainChange) {
    const fork = change.removed[0]?.number;
    if (fork === undefined) return;
    for (const group of watchGroups.values()) {
      const dropped = [...group.sent.keys()].filter((n) => n >= fork);
      for (const block of dropped) {
        for (const result of group.sent.get(block)!) {
          const text = toJson({ ...(result as object), removed: true });
          for (const member of group.members) notify(member, text);
        }
        group.sent.delete(block);
      }
      if (group.lastSent !== undefined && group.lastSent >= fork) group.lastSent = fork - 1n;
    }
  }

  /** Keeps a sent block's results while a reorg may drop it (final blocks' are let go). */
  function remember(group: WatchGroup, block: bigint, results: unknown[]) {
    const final = context.head.finalized() ?? -1n;
    for (const n of group.sent.keys()) {
      if (n <= final || group.sent.size >= SENT_BLOCKS_KEPT) group.sent.delete(n);
    }
    if (block > final && results.length > 0) group.sent.set(block, results);
  }

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
      const { hash, results } = await watch.results(group.caller, Number(block), group.options.version);
      // The index still holds a block a reorg dropped: it is sent once the indexer has undone it.
      const expected = context.head.canonicalHash(block);
      if (expected !== undefined && hashDigits(expected) !== hash) return;
      for (const result of results) {
        const text = toJson(result);
        for (const member of group.members) notify(member, text);
      }
      remember(group, block, results);
      group.lastSent = block;
    }
    if (end < last) watchAgain = true;
  }

  /**
   * The subscription joins its (key, version, pending) group, made here, at once, when it is the first:
   * concurrent first subscriptions of one key share one group, which its last member's leaving ends. A
   * pending one also waits for the mempool follower to know the mempool as it is now.
   */
  function join(subscription: Subscription<WatchOptions>): Promise<void> {
    const { caller } = subscription.subscriber;
    const { version, pending } = subscription.options;
    const key = `${caller.keyHash ?? ""}\u0000${version}\u0000${pending ? "pending" : ""}`;
    let group = watchGroups.get(key);
    if (!group) {
      const made: WatchGroup = {
        key,
        caller,
        options: subscription.options,
        members: new Set(),
        lastSent: undefined,
        sent: new Map(),
        // Notifications start with the block after the last one processed now.
        ready: watch.lastBlockNumber().then((last) => {
          made.lastSent = last;
        }),
      };
      group = made;
      watchGroups.set(key, group);
    }
    group.members.add(subscription);
    groupOf.set(subscription, group);
    watchTimer ??= setInterval(pumpWatch, WATCH_POLL_MS);
    if (!pending) return group.ready;
    return Promise.all([group.ready, mempool.follow()]).then(() => undefined);
  }

  function leave(subscription: Subscription<WatchOptions>) {
    const group = groupOf.get(subscription);
    if (!group) return;
    groupOf.delete(subscription);
    group.members.delete(subscription);
    if (group.members.size === 0 && watchGroups.get(group.key) === group) watchGroups.delete(group.key);
    if (group.options.pending) mempool.keysChanged();
    if (watchGroups.size === 0 && watchTimer !== undefined) {
      clearInterval(watchTimer);
      watchTimer = undefined;
    }
  }

  const pumpIfWatched = () => {
    if (watchGroups.size > 0) pumpWatch();
  };
  return {
    join,
    leave,
    changed(change) {
      rewindTo(change);
      mempool.changed(change);
      pumpIfWatched();
    },
    processed: pumpIfWatched,
    stop() {
      stopped = true;
      mempool.stop();
      if (watchTimer !== undefined) clearInterval(watchTimer);
      watchTimer = undefined;
    },
  };
}

/**
 * The mempool follower of one hub: started by the first pending subscription, told the pending groups' keys
 * as they change, stopped with the last one. Its results go to the pending groups of their key (both
 * versions: a mempool transaction's result is the same for v1 and v2).
 */
function openPending(
  watch: WatchResults,
  groups: ReadonlyMap<string, WatchGroup>,
  notify: SubscriptionContext<WatchOptions>["notify"],
  log: SubscriptionContext<WatchOptions>["log"],
) {
  let feed: PendingFeed | undefined;
  const pendingGroups = () => [...groups.values()].filter((g) => g.options.pending && g.members.size > 0);
  const keys = () => new Set(pendingGroups().map((g) => g.caller.keyHash));

  function deliver(matches: PendingMatch[]) {
    for (const match of matches) {
      const text = toJson(match.result);
      for (const group of pendingGroups()) {
        if (group.caller.keyHash !== match.keyHash) continue;
        for (const member of group.members) notify(member, text);
      }
    }
  }

  return {
    /** Starts the follower if none runs, and waits until it knows the mempool with the current keys. */
    follow(): Promise<void> {
      feed ??= watch.pending!(deliver);
      return feed.watch(keys());
    },
    /** A pending group changed: the follower matches the keys left, or stops with the last. */
    keysChanged() {
      if (!feed) return;
      const now = keys();
      if (now.size === 0) {
        feed.stop();
        feed = undefined;
        return;
      }
      feed.watch(now).catch((error) => {
        log.warn("the mempool follower could not take the keys", { error: (error as Error).message });
      });
    },
    changed(change: ChainChange) {
      feed?.changed(change);
    },
    stop() {
      feed?.stop();
      feed = undefined;
    },
  };
}
