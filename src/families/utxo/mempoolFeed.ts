/**
 * The Bitcoin family's pending matches for the `watch_filters` subscription's `"pending": true`
 * (realtime/watchFiltersSubscription.ts starts one feed per service instance with the first pending
 * subscription and stops it with the last), on the instance's one follower of the node's mempool
 * (mempoolFollower.ts), which it holds while it runs: what the follower reads is read once, for the Esplora
 * API and this feed alike.
 *  - Its start is the baseline: what the follower's latest listing holds then is never matched, only what a
 *    later listing brings;
 *  - each transaction the follower reads after that, with what its inputs spend (the index, a mempool
 *    parent, or the node), gives its results by the net rule for the filters (no contract) of the
 *    subscribed keys on its addresses, sent at once, `block` null and `"pending": true`; one whose inputs
 *    are not all known (a node without -txindex) is not matched;
 *  - a transaction with results that leaves the mempool is mined when a block the chain follower adds holds
 *    it (its result comes with that block, as every block's); otherwise, once a grace has passed without
 *    such a block (MIN_REMOVAL_GRACE_MS, or twice HEAD_POLL_MS: the longest the follower may take to see a
 *    block the node has), it left unmined (replaced, conflicted out, expired, evicted): its results are
 *    sent again with `"removed": true`. The node removes a transaction from its mempool and connects the
 *    block that holds it at once, but the chain follower hears of the block on its own path (the long-poll,
 *    the head polls): the grace is what keeps a mined transaction from being called removed. One that comes
 *    back (a reorg returns it) before that is still pending; after, it is new again.
 * A key that subscribes while the feed runs is matched from the follower's next pass on. Bounded: the txids
 * of the blocks seen kept MINED_KEPT_MS; what it holds besides is the results sent of transactions still in
 * the mempool. The follower's passes are handled one after another, in order.
 */
import type { ChainChange } from "../../engine/chainFollower";
import { callText } from "../../engine/engineApi";
import { arrayElements } from "../../json";
import { warnEveryMinute } from "../../log";
import type {
  PendingFeed,
  PendingMatch,
  PendingWatch,
  PendingWatchOptions,
} from "../../realtime/watchFiltersSubscription";
import { membersOf } from "./members";
import type { MempoolFollower } from "./mempoolFollower";
import type { MempoolEntry } from "./mempoolStore";
import { netResults, type Paid } from "./mempoolTransaction";
import { filterResult } from "./watchMatcher";
import { createUtxoWatchQueries } from "./watchMatchQueries";

/** The least time a transaction gone from the mempool waits for the block that may hold it. */
const MIN_REMOVAL_GRACE_MS = 3_000;
/** How long the txids of a block seen are kept, to tell a mined transaction from a removed one. */
const MINED_KEPT_MS = 600_000;

/** The txids of a block (`getblock <hash> true`: with ids; every client of the family takes the boolean). */
async function blockTxids(options: PendingWatchOptions, hash: string): Promise<string[]> {
  const text = await callText(options.engine, "getblock", [hash, true]);
  const tx = membersOf(text, ["tx"]).get("tx");
  if (tx === undefined) return [];
  return arrayElements(text, tx.start).map((s) => JSON.parse(text.slice(s.start, s.end)) as string);
}

/** The pending matches of the mempool the follower reads (ChainFamily's followMempool hands it over). */
export function createUtxoPendingWatch(
  options: PendingWatchOptions,
  follower: MempoolFollower,
): PendingWatch {
  return (notify) => startFeed(options, follower, notify);
}

function startFeed(
  options: PendingWatchOptions,
  follower: MempoolFollower,
  notify: (matches: PendingMatch[]) => void,
): PendingFeed {
  const { chain, log } = options;
  const queries = options.guard(createUtxoWatchQueries(options.sql));
  const grace = Math.max(MIN_REMOVAL_GRACE_MS, 2 * options.headPollMs);
  const warn = {
    inputs: warnEveryMinute(log, "a mempool transaction's inputs are not all known: not matched"),
    match: warnEveryMinute(log, "mempool transactions could not be matched with the watch filters; retrying"),
    block: warnEveryMinute(log, "a chain change's transactions were not read"),
  };
  /** The results sent of transactions in the mempool. */
  const sent = new Map<string, PendingMatch[]>();
  const vanished = new Map<string, { since: number; sent: PendingMatch[] }>();
  const mined = new Map<string, number>();
  /** Transactions entered to match; kept past a pass whose matching failed (the database) for the next. */
  const unmatched = new Map<string, MempoolEntry>();
  /** The chain changes told, read in order (a reorg's blocks dropped, then the blocks added). */
  let blocksSeen: Promise<void> = Promise.resolve();
  /** The follower's passes, handled in order. */
  let passes: Promise<void> = Promise.resolve();
  let keys: ReadonlySet<string | null> = new Set();
  /** The listing the feed started at: what it held is never matched. */
  let baseline: Promise<number> | undefined;
  let stopped = false;
  const release = follower.hold();

  /** Sends the results of the transactions read for the watched keys. */
  async function match(entries: readonly MempoolEntry[]): Promise<void> {
    const addresses = new Set(entries.flatMap((e) => e.addresses));
    const filters = await queries.filtersOf([...keys], [...addresses]);
    for (const e of entries) {
      if (e.prevouts.some((p) => p === undefined)) {
        warn.inputs({ txid: e.txid });
        continue;
      }
      const mine = new Set(e.addresses);
      const watched = filters.filter((f) => mine.has(f.address));
      if (watched.length === 0) continue;
      const byFilter = new Map(watched.map((f) => [f.filterId, f.keyHash]));
      const results = netResults(e, e.prevouts as readonly Paid[], watched).map((r) => ({
        keyHash: byFilter.get(r.filterId)!,
        result: { ...filterResult(chain, r, null), pending: true },
      }));
      if (results.length === 0) continue;
      sent.set(e.txid, results);
      notify(results);
    }
  }

  /** One pass of the follower: what entered after the baseline matched, what left set aside for the grace. */
  async function seePass(read: readonly MempoolEntry[], left: readonly string[]): Promise<void> {
    // No baseline (its listing failed, the subscribe with it): nothing is matched until a watch sets one.
    const start = await baseline?.catch(() => undefined);
    if (stopped) return;
    for (const txid of left) {
      unmatched.delete(txid);
      const results = sent.get(txid);
      if (!results) continue;
      sent.delete(txid);
      vanished.set(txid, { since: Date.now(), sent: results });
    }
    for (const e of read) {
      const back = vanished.get(e.txid);
      if (back) {
        // Back before it was judged (a reorg returned it): still pending, as was said.
        vanished.delete(e.txid);
        sent.set(e.txid, back.sent);
      } else if (start !== undefined && e.listed > start) unmatched.set(e.txid, e);
    }
    if (keys.size === 0) unmatched.clear();
    else if (unmatched.size > 0) {
      try {
        await match([...unmatched.values()]);
        unmatched.clear();
      } catch (error) {
        // Kept for the next pass (those that leave meanwhile are dropped above).
        warn.match({ error: (error as Error).message });
      }
    }
    await settleVanished();
  }

  /**
   * What the chain follower saw: the txids of the blocks added are mined; those of blocks a reorg dropped
   * are not any more (the node returns them to its mempool, or they conflict out).
   */
  async function seeChange(change: ChainChange): Promise<void> {
    try {
      for (const block of change.removed) {
        for (const txid of await blockTxids(options, block.hash)) mined.delete(txid);
      }
      for (const block of change.added) {
        const at = Date.now();
        for (const txid of await blockTxids(options, block.hash)) mined.set(txid, at);
      }
    } catch (error) {
      warn.block({ error: (error as Error).message });
    }
  }

  /** Transactions gone from the mempool: mined (a block seen holds them), or after the grace, removed. */
  async function settleVanished(): Promise<void> {
    await blocksSeen;
    const now = Date.now();
    for (const [txid, at] of mined) if (now - at > MINED_KEPT_MS) mined.delete(txid);
    for (const [txid, gone] of vanished) {
      if (mined.has(txid)) vanished.delete(txid);
      else if (now - gone.since >= grace) {
        vanished.delete(txid);
        notify(
          gone.sent.map((m) => ({ keyHash: m.keyHash, result: { ...(m.result as object), removed: true } })),
        );
      }
    }
  }

  const unsubscribe = follower.subscribe((read, left) => {
    passes = passes
      .then(() => seePass(read, left))
      .catch((error) => {
        log.error("a mempool pass could not be handled", { error });
      });
  });

  return {
    watch(next) {
      keys = next;
      baseline ??= follower.listing().catch((error) => {
        baseline = undefined;
        throw error;
      });
      return baseline.then(() => undefined);
    },
    changed(change: ChainChange) {
      blocksSeen = blocksSeen.then(() => seeChange(change));
    },
    stop() {
      stopped = true;
      unsubscribe();
      release();
    },
  };
}
