/**
 * `watch_filters`: for each block as it becomes processed, one notification per filter result of the
 * caller's filters, exactly what `/watch_filters/check` (v1) or `check_v2` (v2) gives for it.
 */
import type { Caller } from "../caller";
import { InvalidParamsError } from "../errors";
import { toJson } from "../json";
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

export type WatchVersion = "v1" | "v2";

export interface WatchResults {
  /** The last processed block (watch filters' lastBlockNumber). */
  lastBlockNumber(): Promise<bigint>;
  /** Every result of a processed block for the caller's filters, in check's order. */
  results(caller: Caller, block: number, version: WatchVersion): Promise<unknown[]>;
}

interface WatchGroup {
  key: string;
  caller: Caller;
  version: WatchVersion;
  members: Set<Subscription<WatchVersion>>;
  /** The last block whose results were sent; undefined until `ready` has read where to start. */
  lastSent: bigint | undefined;
  ready: Promise<void>;
}

function watchVersion(params: unknown): WatchVersion {
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

export function createWatchFiltersSubscription(options: {
  watch: WatchResults;
}): SubscriptionKind<WatchVersion> {
  return { name: "watch_filters", parse: watchVersion, open: (context) => openWatch(options.watch, context) };
}

/** The processed blocks of each (key, version) group, sent to its members. */
function openWatch(
  watch: WatchResults,
  context: SubscriptionContext<WatchVersion>,
): SubscriptionFeed<WatchVersion> {
  const { notify, log } = context;
  const watchGroups = new Map<string, WatchGroup>();
  const groupOf = new Map<Subscription<WatchVersion>, WatchGroup>();
  let watchTimer: ReturnType<typeof setInterval> | undefined;
  let watching: Promise<void> | undefined;
  let watchAgain = false;
  let stopped = false;

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
        for (const member of group.members) notify(member, text);
      }
      group.lastSent = block;
    }
    if (end < last) watchAgain = true;
  }

  /**
   * The subscription joins its (key, version) group, made here, at once, when it is the first: concurrent
   * first subscriptions of one key share one group, which its last member's leaving ends.
   */
  function join(subscription: Subscription<WatchVersion>): Promise<void> {
    const { caller } = subscription.subscriber;
    const version = subscription.options;
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
    groupOf.set(subscription, group);
    watchTimer ??= setInterval(pumpWatch, WATCH_POLL_MS);
    return group.ready;
  }

  function leave(subscription: Subscription<WatchVersion>) {
    const group = groupOf.get(subscription);
    if (!group) return;
    groupOf.delete(subscription);
    group.members.delete(subscription);
    if (group.members.size === 0 && watchGroups.get(group.key) === group) watchGroups.delete(group.key);
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
    changed: pumpIfWatched,
    processed: pumpIfWatched,
    stop() {
      stopped = true;
      if (watchTimer !== undefined) clearInterval(watchTimer);
      watchTimer = undefined;
    },
  };
}
