/**
 * The Bitcoin family's mempool follower for the `watch_filters` subscription's `"pending": true`
 * (realtime/watchFiltersSubscription.ts starts one per service instance with the first pending subscription
 * and stops it with the last). These nodes push nothing without ZMQ (Debian's litecoind has none), so it
 * polls:
 *  - every MEMPOOL_POLL_MS, `getrawmempool` through the engine (its `brief` rule keeps an answer a second,
 *    so every subscriber and caller of the instance shares one read). Its first read is the baseline: what
 *    is in the mempool then is never matched, only what enters after;
 *  - each transaction that entered: `getrawtransaction <txid> true` through the engine, what each input spends
 *    from the index (`outputs`), else from a mempool parent read before, else from the node
 *    (`getrawtransaction` of the parent: a node with -txindex, or a parent still in its mempool); then its
 *    results by the net rule for the filters (no contract) of the subscribed keys on its addresses, sent at
 *    once, `block` null and `"pending": true`;
 *  - a transaction with results that leaves the mempool is mined when a block the chain follower adds holds
 *    it (its result comes with that block, as every block's); otherwise, once a grace has passed without
 *    such a block (MIN_REMOVAL_GRACE_MS, or twice HEAD_POLL_MS: the longest the follower may take to see a
 *    block the node has), it left unmined (replaced, conflicted out, expired, evicted): its results are
 *    sent again with `"removed": true`. The node removes a transaction from its mempool and connects the
 *    block that holds it at once, but the follower hears of the block on its own path (the long-poll, the
 *    head polls): the grace is what keeps a mined transaction from being called removed. One that comes
 *    back (a reorg returns it) before that is still pending; after, it is new again.
 * A key that subscribes while the follower runs is matched from its next read on. Bounded:
 * MAX_NEW_PER_PASS transactions read a pass (the rest the next), MAX_READS_IN_FLIGHT node reads at once,
 * the txids of the blocks seen kept MINED_KEPT_MS; what it holds is the mempool's txids, the outputs of the
 * transactions it read, and the results sent of those still in the mempool.
 */
import type { ChainChange } from "../../engine/chainFollower";
import { callText } from "../../engine/engineApi";
import { arrayElements } from "../../json";
import type {
  PendingFeed,
  PendingMatch,
  PendingWatch,
  PendingWatchOptions,
} from "../../realtime/watchFiltersSubscription";
import { outpointKey } from "./indexedOutputs";
import { membersOf } from "./members";
import {
  type MempoolTransaction,
  netResults,
  type Outpoint,
  type Paid,
  readMempoolTransaction,
} from "./mempoolTransaction";
import { filterResult } from "./watchMatcher";
import { createUtxoWatchQueries } from "./watchMatchQueries";

/** How often the mempool is read. */
const MEMPOOL_POLL_MS = 1_000;
/** The least time a transaction gone from the mempool waits for the block that may hold it. */
const MIN_REMOVAL_GRACE_MS = 3_000;
/** Transactions read (and matched) in one pass; the rest wait for the next. */
const MAX_NEW_PER_PASS = 1_000;
/** Node reads at once. */
const MAX_READS_IN_FLIGHT = 16;
/** How long the txids of a block seen are kept, to tell a mined transaction from a removed one. */
const MINED_KEPT_MS = 600_000;

/** A transaction of the mempool as the feed knows it. */
interface Known {
  /** What it pays (read once it entered after the baseline; its children's inputs read it). */
  outputs?: Paid[];
  /** The results sent of it. */
  sent: PendingMatch[];
}

/** Runs `work` on each item, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The txids of a block (`getblock <hash> true`: with ids; every client of the family takes the boolean). */
async function blockTxids(options: PendingWatchOptions, hash: string): Promise<string[]> {
  const text = await callText(options.engine, "getblock", [hash, true]);
  const tx = membersOf(text, ["tx"]).get("tx");
  if (tx === undefined) return [];
  return arrayElements(text, tx.start).map((s) => JSON.parse(text.slice(s.start, s.end)) as string);
}

export function createUtxoPendingWatch(options: PendingWatchOptions): PendingWatch {
  return (notify) => startFeed(options, notify);
}

function startFeed(options: PendingWatchOptions, notify: (matches: PendingMatch[]) => void): PendingFeed {
  const { engine, chain, log } = options;
  const queries = options.guard(createUtxoWatchQueries(options.sql));
  const grace = Math.max(MIN_REMOVAL_GRACE_MS, 2 * options.headPollMs);
  const known = new Map<string, Known>();
  const vanished = new Map<string, { since: number; sent: PendingMatch[] }>();
  const mined = new Map<string, number>();
  /** The chain changes told, read in order (a reorg's blocks dropped, then the blocks added). */
  let blocksSeen: Promise<void> = Promise.resolve();
  let keys: ReadonlySet<string | null> = new Set();
  let baseline: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const readMempool = async () => JSON.parse(await callText(engine, "getrawmempool", [])) as string[];

  /** What each input spends: the index's outputs, a mempool parent read before, else the node's answer. */
  async function spentBy(txs: MempoolTransaction[]): Promise<Map<string, Paid>> {
    const key = (o: Outpoint) => outpointKey(o.txid, o.vout);
    const found = new Map<string, Paid>();
    const wanted = txs.flatMap((tx) => tx.inputs);
    for (const [k, o] of await queries.outputs(wanted)) found.set(k, { address: o.address, value: o.value });
    const parents = new Set<string>();
    for (const o of wanted) {
      if (found.has(key(o))) continue;
      const paid = known.get(o.txid)?.outputs?.[o.vout];
      if (paid) found.set(key(o), paid);
      else parents.add(o.txid);
    }
    await eachLimited([...parents], MAX_READS_IN_FLIGHT, async (txid) => {
      try {
        const parent = readMempoolTransaction(await callText(engine, "getrawtransaction", [txid, true]));
        parent.outputs.forEach((paid, vout) => {
          found.set(outpointKey(txid, vout), paid);
        });
      } catch (error) {
        log.debug("an input's transaction is not readable", { txid, error: (error as Error).message });
      }
    });
    return found;
  }

  /** Reads the transactions that entered, and sends their results for the watched keys. */
  async function matchEntered(txids: string[]): Promise<void> {
    const txs: MempoolTransaction[] = [];
    await eachLimited(txids, MAX_READS_IN_FLIGHT, async (txid) => {
      try {
        txs.push(readMempoolTransaction(await callText(engine, "getrawtransaction", [txid, true])));
      } catch (error) {
        // Gone again already (mined or replaced between the two reads): nothing to say of it.
        log.debug("a mempool transaction is not readable", { txid, error: (error as Error).message });
      }
    });
    const spent = await spentBy(txs);
    const addresses = new Set<string>();
    const inputsOf = new Map<string, (Paid | undefined)[]>();
    for (const tx of txs) {
      const inputs = tx.inputs.map((o) => spent.get(`${o.txid}:${o.vout}`));
      inputsOf.set(tx.txid, inputs);
      for (const p of [...inputs, ...tx.outputs]) if (p?.address) addresses.add(p.address);
    }
    const filters = await queries.filtersOf([...keys], [...addresses]);
    for (const tx of txs) {
      const inputs = inputsOf.get(tx.txid)!;
      const entry: Known = { outputs: tx.outputs, sent: [] };
      known.set(tx.txid, entry);
      if (inputs.some((p) => p === undefined)) {
        log.warn("a mempool transaction's inputs are not all known: not matched", { txid: tx.txid });
        continue;
      }
      const mine = new Set([...inputs, ...tx.outputs].map((p) => p!.address));
      const watched = filters.filter((f) => mine.has(f.address));
      if (watched.length === 0) continue;
      const byFilter = new Map(watched.map((f) => [f.filterId, f.keyHash]));
      entry.sent = netResults(tx, inputs as Paid[], watched).map((r) => ({
        keyHash: byFilter.get(r.filterId)!,
        result: { ...filterResult(chain, r, null), pending: true },
      }));
      if (entry.sent.length > 0) notify(entry.sent);
    }
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
      log.warn("a chain change's transactions were not read", { error: (error as Error).message });
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

  async function pass(): Promise<void> {
    const ids = await readMempool();
    const present = new Set(ids);
    for (const [txid, entry] of known) {
      if (present.has(txid)) continue;
      known.delete(txid);
      if (entry.sent.length > 0) vanished.set(txid, { since: Date.now(), sent: entry.sent });
    }
    const entered: string[] = [];
    for (const txid of ids) {
      if (known.has(txid)) continue;
      const back = vanished.get(txid);
      if (back) {
        // Back before it was judged (a reorg returned it): still pending, as was said.
        vanished.delete(txid);
        known.set(txid, { sent: back.sent });
      } else if (entered.length < MAX_NEW_PER_PASS) entered.push(txid);
    }
    if (entered.length > 0 && keys.size > 0) await matchEntered(entered);
    else for (const txid of entered) known.set(txid, { sent: [] });
    await settleVanished();
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(async () => {
      try {
        await pass();
      } catch (error) {
        log.warn("the mempool follower's pass failed; retrying", { error: (error as Error).message });
      }
      schedule();
    }, MEMPOOL_POLL_MS);
  }

  /** The first read: the mempool as it is, never matched; then the passes. */
  function start(): Promise<void> {
    baseline ??= readMempool().then(
      (ids) => {
        for (const txid of ids) known.set(txid, { sent: [] });
        schedule();
      },
      (error) => {
        baseline = undefined;
        throw error;
      },
    );
    return baseline;
  }

  return {
    watch(next) {
      keys = next;
      return start();
    },
    changed(change: ChainChange) {
      blocksSeen = blocksSeen.then(() => seeChange(change));
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
