/**
 * The one follower of the node's mempool of an instance (the Bitcoin family), read by the Esplora API
 * (esplora/mempoolView.ts) and by the `watch_filters` subscription's pending matches (mempoolFeed.ts): each
 * transaction read from the node once and worked out once (mempoolStore.ts). These nodes push nothing
 * without ZMQ (Debian's litecoind has none), so it polls, through the engine:
 *  - the node's listing (`getrawmempool`: txids only, never every entry) at most once per MEMPOOL_POLL_MS;
 *  - each transaction of the listing it has not read: `getmempoolentry` (when it entered; its fee, where what
 *    an input spends is unknown) and `getrawtransaction <txid> true`, MAX_READS_PER_PASS a pass and
 *    MAX_READS_IN_FLIGHT at once; then what its inputs spend: a transaction of the view or of the same pass,
 *    the index, else the node (the parent's `getrawtransaction`, as many at once);
 *  - a read that fails is tried again after RETRY_MIN_MS, doubling to RETRY_MAX_MS: only the node's word
 *    that it is not in its mempool (-5) drops a transaction (the next listing says whether it left); nothing
 *    is read again but what failed;
 *  - a pass's changes (what it read, what left) are applied at once at its end, so a reader never sees half
 *    a pass. The view is caught up when its last pass left nothing of its listing unread and that listing is
 *    at most LISTING_MAX_AGE_MS old; until then the Esplora API's mempool reads answer 503.
 * A pass that leaves transactions to read (more than a pass reads, or retries due) is followed at once by
 * the next, which lists again only once the listing is MEMPOOL_POLL_MS old. It runs while something holds it
 * (the Esplora API for the instance's life, a pending subscription while one lives), forgets what it knows
 * when the last lets go, and stop() ends it at shutdown. Failing reads are logged at most once a minute each
 * kind.
 */
import type { Sql } from "../../db/database";
import { callText, type Engine } from "../../engine/engineApi";
import { NodeError, UpstreamUnavailableError } from "../../errors";
import { type Logger, warnEveryMinute } from "../../log";
import {
  type NodeTransaction,
  nodeOutputPrevout,
  type Prevout,
  parseNode,
  spentOutpoints,
} from "./esplora/esploraJson";
import { indexedOutputs, outpointKey } from "./indexedOutputs";
import {
  createMempoolStore,
  type MempoolEntry,
  type MempoolReads,
  mempoolEntry,
  type NodeMempoolEntry,
} from "./mempoolStore";
import type { Outpoint } from "./mempoolTransaction";

/** How old the node's listing may be before it is read again. */
const MEMPOOL_POLL_MS = 1_000;
/** Past this age of its last listing (the node not answering), the view is not caught up. */
const LISTING_MAX_AGE_MS = 10_000;
/** Transactions read in one pass; the rest wait for the next. */
const MAX_READS_PER_PASS = 4_000;
/**
 * Transactions (or parents) read from the node at once: two calls each, which the upstream's batcher sends
 * as a few batches (BATCH_MAX_SIZE calls each), so the node's RPC queue holds a handful of requests. Measured
 * by the utxoscale bench: 16 caught up a restart at ~365 transactions a second, 64 at ~2,700.
 */
const MAX_READS_IN_FLIGHT = 64;
/** The wait before a failed read is tried again, doubled on each failure up to the most. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** The longest a start waits for the first pass (ready()). */
const FIRST_PASS_WAIT_MS = 5_000;
/** Bitcoin Core's RPC_INVALID_ADDRESS_OR_KEY: no such transaction (in its mempool, or at all). */
const NOT_FOUND = -5;

/** A transaction of the listing not read yet. */
interface Unread {
  /** The number of the listing that first held it. */
  listed: number;
  /** Failed reads so far, and when it may be read again. */
  failures: number;
  readyAt: number;
}

/** Where the view stands against the node's latest listing. */
export interface MempoolProgress {
  caughtUp: boolean;
  /** Transactions of the latest listing, and how many of them are not read yet; undefined: none yet. */
  listed: number | undefined;
  unread: number;
  /** Milliseconds since the latest listing, and whether that is past LISTING_MAX_AGE_MS. */
  age: number;
  stale: boolean;
}

/** What a subscriber hears after each pass: the transactions it read (kept or left out), those that left. */
export type MempoolPass = (read: readonly MempoolEntry[], left: readonly string[]) => void;

export interface MempoolFollower {
  /** Starts it where it does not run; the function given back lets go (the last one stops it). */
  hold(): () => void;
  readonly view: MempoolReads;
  /**
   * Resolves once its first pass has ended (a listing and at most a pass's reads: a small mempool is then
   * caught up), or after FIRST_PASS_WAIT_MS: what the start waits for before it serves.
   */
  ready(): Promise<void>;
  progress(): MempoolProgress;
  /** The number of the latest listing: at once where there is one, else the next (rejected if it fails). */
  listing(): Promise<number>;
  /** Hears every pass's changes from now on; the function given back stops that. */
  subscribe(pass: MempoolPass): () => void;
  /** Ends it: the pass under way reads nothing more, and is waited for. */
  stop(): Promise<void>;
}

/** Runs `work` on each item, at most `limit` at once, while `going` says so. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  going: () => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && going()) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const isGone = (error: unknown) => error instanceof NodeError && error.code === NOT_FOUND;

export function createMempoolFollower(deps: {
  engine: Engine;
  /** The index's database (the primary: what the indexer just wrote), the database guard's retries. */
  sql: Sql;
  guard<T extends object>(queries: T): T;
  log: Logger;
  /** MEMPOOL_MAX_MB, in bytes. */
  maxBytes: number;
}): MempoolFollower {
  const { engine, log } = deps;
  const index = deps.guard({ outputs: (o: readonly Outpoint[]) => indexedOutputs(deps.sql, o) });
  const store = createMempoolStore(deps.maxBytes);
  const warn = {
    list: warnEveryMinute(log, "the node's mempool could not be listed; listing it again shortly"),
    read: warnEveryMinute(log, "a mempool transaction could not be read; it is read again later"),
    index: warnEveryMinute(log, "the index's outputs of mempool transactions could not be read; retrying"),
  };
  const unread = new Map<string, Unread>();
  const subscribers = new Set<MempoolPass>();
  const waiting: { resolve(seq: number): void; reject(error: unknown): void }[] = [];
  /** The latest listing: its number, its size, when it was read; the txids it no longer holds. */
  let seq = 0;
  let listedCount: number | undefined;
  let listedAt = Number.NEGATIVE_INFINITY;
  let left = new Set<string>();
  /** Whether the last pass left nothing of its listing unread. */
  let complete = false;
  let holds = 0;
  /** Bumped when the follower forgets: a pass begun before applies nothing. */
  let generation = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The pass under way. */
  let running: Promise<void> | undefined;
  let stopped = false;
  /** Whether the pass of generation `gen` goes on (it stops reading once the follower forgot or stopped). */
  const going = (gen: number) => () => gen === generation && !stopped;
  const firstPass = Promise.withResolvers<void>();

  /** Reads the node's listing: what left the view, what is new to read. One that fails is logged. */
  async function list(gen: number): Promise<void> {
    let ids: string[];
    try {
      ids = JSON.parse(await callText(engine, "getrawmempool", [])) as string[];
    } catch (error) {
      warn.list({ error: (error as Error).message });
      for (const w of waiting.splice(0)) w.reject(error);
      return;
    }
    if (gen !== generation) return;
    seq++;
    listedCount = ids.length;
    listedAt = performance.now();
    const present = new Set(ids);
    for (const txid of store.txids()) if (!present.has(txid)) left.add(txid);
    for (const txid of unread.keys()) if (!present.has(txid)) unread.delete(txid);
    for (const txid of ids) {
      if (!store.has(txid) && !unread.has(txid)) unread.set(txid, { listed: seq, failures: 0, readyAt: 0 });
    }
    for (const w of waiting.splice(0)) w.resolve(seq);
  }

  function failed(txid: string, error: unknown) {
    const u = unread.get(txid);
    if (!u) return;
    u.failures++;
    u.readyAt = performance.now() + Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (u.failures - 1));
    warn.read({ txid, failures: u.failures, error: (error as Error).message });
  }

  /** A transaction and its mempool entry (the node's -5 where it is not in its mempool). */
  async function readOne(txid: string) {
    const [entry, tx] = await Promise.all([
      callText(engine, "getmempoolentry", [txid]),
      callText(engine, "getrawtransaction", [txid, true]),
    ]);
    return { node: parseNode<NodeMempoolEntry>(entry), tx: parseNode<NodeTransaction>(tx) };
  }

  /**
   * What the inputs of `txs` spend: outputs of the view or of `txs`, the index's, else the node's (a
   * parent's read: one the node does not have leaves its outputs unknown). Parents that could not be read
   * are returned: what spends them is read again later.
   */
  async function prevoutsOf(txs: readonly NodeTransaction[], gen: number) {
    const found = new Map<string, Prevout>();
    const fresh = new Map(txs.map((tx) => [tx.txid, tx]));
    const wanted: Outpoint[] = [];
    for (const tx of txs) {
      for (const o of spentOutpoints(tx)) {
        const out = store.get(o.txid)?.outputs[o.vout] ?? nodeOutput(fresh.get(o.txid), o.vout);
        if (out) found.set(outpointKey(o.txid, o.vout), out);
        else wanted.push(o);
      }
    }
    for (const [key, out] of await index.outputs(wanted)) found.set(key, out);
    const parents = [
      ...new Set(wanted.filter((o) => !found.has(outpointKey(o.txid, o.vout))).map((o) => o.txid)),
    ];
    const unreadable = new Set<string>();
    await eachLimited(parents, MAX_READS_IN_FLIGHT, going(gen), async (txid) => {
      try {
        const parent = parseNode<NodeTransaction>(await callText(engine, "getrawtransaction", [txid, true]));
        for (const out of parent.vout) found.set(outpointKey(txid, out.n), nodeOutputPrevout(out));
      } catch (error) {
        if (!isGone(error)) unreadable.add(txid);
      }
    });
    return { found, unreadable };
  }

  /** Reads `txids` (MAX_READS_IN_FLIGHT at once): the entries made of those read. */
  async function read(txids: readonly string[], gen: number): Promise<MempoolEntry[]> {
    const got: { node: NodeMempoolEntry; tx: NodeTransaction }[] = [];
    await eachLimited(txids, MAX_READS_IN_FLIGHT, going(gen), async (txid) => {
      try {
        got.push(await readOne(txid));
      } catch (error) {
        // The node's word that it is not in its mempool: left since the listing (the next one says so).
        if (isGone(error)) unread.delete(txid);
        else failed(txid, error);
      }
    });
    let prevouts: Awaited<ReturnType<typeof prevoutsOf>>;
    try {
      prevouts = await prevoutsOf(
        got.map((g) => g.tx),
        gen,
      );
    } catch (error) {
      warn.index({ error: (error as Error).message });
      for (const { tx } of got) failed(tx.txid, error);
      return [];
    }
    const entries: MempoolEntry[] = [];
    for (const { node, tx } of got) {
      const spent = spentOutpoints(tx);
      const parent = spent.find((o) => prevouts.unreadable.has(o.txid));
      if (parent) {
        failed(tx.txid, new Error(`its input's transaction ${parent.txid} could not be read`));
        continue;
      }
      const listed = unread.get(tx.txid)?.listed ?? seq;
      const inputs = spent.map((o) => prevouts.found.get(outpointKey(o.txid, o.vout)));
      entries.push(mempoolEntry(tx, node, inputs, listed));
      unread.delete(tx.txid);
    }
    return entries;
  }

  /** The unread transactions due for a read, at most a pass's. */
  function due(now: number): string[] {
    const out: string[] = [];
    for (const [txid, u] of unread) {
      if (out.length >= MAX_READS_PER_PASS) break;
      if (u.readyAt <= now) out.push(txid);
    }
    return out;
  }

  /** One pass (the retries due, where the listing fails); the delay before the next. */
  async function pass(gen: number): Promise<number> {
    if (performance.now() - listedAt >= MEMPOOL_POLL_MS) await list(gen);
    const entries = await read(due(performance.now()), gen);
    if (gen !== generation) return 0;
    const gone = [...left];
    left = new Set();
    store.remove(gone);
    store.add(entries);
    complete = unread.size === 0;
    for (const subscriber of subscribers) {
      try {
        subscriber(entries, gone);
      } catch (error) {
        log.error("a mempool subscriber failed", { error });
      }
    }
    return due(performance.now()).length > 0 ? 0 : MEMPOOL_POLL_MS;
  }

  function schedule(delay: number) {
    if (stopped || holds === 0 || timer !== undefined || running) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = (async () => {
        let next = MEMPOOL_POLL_MS;
        try {
          next = await pass(generation);
        } catch (error) {
          // The node's and the database's failures are handled in the pass: this is a fault of ours.
          log.error("a pass of the mempool follower failed", { error });
        }
        running = undefined;
        firstPass.resolve();
        schedule(next);
      })();
    }, delay);
  }

  /** Forgets what it knows: nothing holds it any more. */
  function forget() {
    generation++;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    store.clear();
    unread.clear();
    left = new Set();
    listedCount = undefined;
    listedAt = Number.NEGATIVE_INFINITY;
    complete = false;
  }

  return {
    hold() {
      holds++;
      schedule(0);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        if (--holds === 0) forget();
      };
    },
    view: store,
    async ready() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FIRST_PASS_WAIT_MS);
      });
      await Promise.race([firstPass.promise, waited]);
      clearTimeout(timer);
    },
    progress() {
      const age = performance.now() - listedAt;
      const stale = age > LISTING_MAX_AGE_MS;
      return { caughtUp: complete && !stale, listed: listedCount, unread: unread.size, age, stale };
    },
    listing() {
      if (listedCount !== undefined) return Promise.resolve(seq);
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
      });
    },
    subscribe(listener) {
      subscribers.add(listener);
      return () => subscribers.delete(listener);
    },
    async stop() {
      stopped = true;
      firstPass.resolve();
      forget();
      const error = new UpstreamUnavailableError("the service is stopping", "stopped");
      for (const w of waiting.splice(0)) w.reject(error);
      await running;
    },
  };
}

/** Output `vout` of a transaction read in the same pass. */
function nodeOutput(tx: NodeTransaction | undefined, vout: number): Prevout | undefined {
  const out = tx?.vout[vout];
  return out && nodeOutputPrevout(out);
}
