/**
 * Makes the deliveries (docs/interface.md §18.4): for each block processed after the last one made, the
 * results of each (key, version) of the endpoints (computed once, shared by that key's endpoints), one
 * delivery per endpoint with results (in parts past RESULTS_PER_DELIVERY), written with the progress that
 * records the block as made in one transaction (outbox.ts). A reorg that drops made blocks makes their
 * `block.removed` deliveries, lowest block first, before the new branch's blocks. Pending results (a
 * family matching its nodes' mempool) go to the endpoints that ask for them, one delivery per notification.
 *
 * One producer per database: the instance that writes the index (its leadership, indexer/leaderLock.ts)
 * produces, and runs the pending feed; the transaction's `for update` of webhook_progress, with the check
 * that it is where it was read, keeps two producers of a handover from making a block twice.
 */
import { hashDigits } from "../blockHeader";
import type { ChainFollower } from "../engine/chainFollower";
import { type Logger, warnEveryMinute } from "../log";
import type { PendingFeed, PendingMatch, PendingWatch } from "../realtime/watchFiltersSubscription";
import type { WatchVersion } from "../watch/watchMatcher";
import { deliveryBodies, resultsBlockHash } from "./bodies";
import type { EndpointTarget, NewDelivery, Outbox } from "./outbox";

/** How often the producer looks for processed blocks (besides the indexer's word that it wrote some). */
const PRODUCE_POLL_MS = 1_000;
/** The most blocks one pass makes, so that a long backlog is made in steps. */
const BLOCKS_PER_PASS = 100;
/**
 * With no endpoint at all, how often the progress is moved to the last processed block (at once, not block by
 * block): a new endpoint is sent the blocks processed after that, so at most those of this long before it was
 * made; meanwhile a pass reads the endpoints only (a bulk load's index would otherwise be asked every second).
 */
const IDLE_PROGRESS_MS = 10_000;
/** How often the backlog's bound is applied and old finished deliveries are let go. */
const UPKEEP_MS = 10_000;
/** How long delivered and dropped deliveries are kept (their list, redelivery). */
export const FINISHED_KEPT_MS = 7 * 24 * 3_600_000;

/** What the producer reads of the watch filters (watch/watchFilters.ts). */
export interface ProducerWatch {
  /** The last processed block, -1 before any. */
  processedUpTo(): Promise<bigint>;
  /**
   * A processed block's results for each of the keys (absent: none), read at once, and its hash as the
   * index holds it (hex digits).
   */
  resultsOfKeys(
    keyHashes: readonly (string | null)[],
    number: number,
    version: WatchVersion,
  ): Promise<{ hash: string; results: Map<string | null, unknown[]> }>;
}

export interface ProducerEvents {
  /** Deliveries dropped for the backlog's bound. */
  dropped(count: number): void;
}

export interface ProducerOptions {
  outbox: Outbox;
  watch: ProducerWatch;
  /** The index's hash of a block (hex digits), for a block no endpoint's results are read of. */
  indexedHash(number: bigint): Promise<string | undefined>;
  head: ChainFollower;
  /** The chain's name, as bodies carry it. */
  chain: string;
  /** Whether this instance produces now (it writes the index). */
  leading(): boolean;
  /** The family's mempool matching, where it has one. */
  pending?: PendingWatch;
  /** WEBHOOK_MAX_BACKLOG. */
  maxBacklog: number;
  /** Told when deliveries were made: the senders of this instance look at once. */
  wake(): void;
  log: Logger;
  events?: ProducerEvents;
}

export interface Producer {
  /** The index wrote blocks: look now. */
  processed(): void;
  stop(): Promise<void>;
}

export function startProducer(options: ProducerOptions): Producer {
  const { outbox, watch, head, log } = options;
  const warn = warnEveryMinute(log, "webhook deliveries could not be made; retrying");
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let lastUpkeep = 0;
  let lastIdle = 0;
  const pending = openPending(options);
  head.onChange((change) => pending.changed(change));

  /**
   * The deliveries of block `n` for the endpoints, and its hash; undefined while the index does not hold the
   * chain's block there (a reorg the indexer has not undone yet: it is made once it has).
   */
  async function blockDeliveries(n: bigint, endpoints: readonly EndpointTarget[]) {
    const hash = await options.indexedHash(n);
    const canonical = head.canonicalHash(n);
    if (hash === undefined || (canonical !== undefined && hashDigits(canonical) !== hash)) return undefined;
    // The endpoints of each version by key: a key's results are read once, shared by its endpoints.
    const groups = new Map<WatchVersion, Map<string | null, EndpointTarget[]>>();
    for (const e of endpoints) {
      let byKey = groups.get(e.version);
      if (!byKey) {
        byKey = new Map();
        groups.set(e.version, byKey);
      }
      const group = byKey.get(e.keyHash);
      if (group) group.push(e);
      else byKey.set(e.keyHash, [e]);
    }
    const deliveries: NewDelivery[] = [];
    for (const [version, byKey] of groups) {
      const read = await watch.resultsOfKeys([...byKey.keys()], Number(n), version);
      // Rewound and written again between the two reads: made on the next pass.
      if (read.hash !== hash) return undefined;
      for (const [keyHash, group] of byKey) {
        const results = read.results.get(keyHash);
        if (!results || results.length === 0) continue;
        const block = { number: Number(n), hash: resultsBlockHash(results) ?? canonical ?? hash };
        const bodies = deliveryBodies("block", options.chain, block, results);
        for (const e of group)
          for (const body of bodies)
            deliveries.push({
              endpointId: e.endpointId,
              kind: "block",
              blockNumber: n,
              blockHash: hash,
              body,
            });
      }
    }
    return { hash, deliveries };
  }

  /** One pass: the start, a reorg's removals, or the next processed blocks; true when there is more. */
  async function pass(): Promise<boolean> {
    if (!options.leading()) {
      pending.stop();
      return false;
    }
    const endpoints = await outbox.endpoints();
    pending.keys(endpoints);
    if (endpoints.length === 0) return idle();
    // One after the other: a background loop takes one of the pool's connections at a time.
    const made = await outbox.lastMade();
    const processed = await watch.processedUpTo();
    if (made === undefined) {
      // The first start: only blocks processed from now on are sent (none yet: the index is empty, or the
      // head not known since this instance started; starting then would send every block there is).
      if (processed < 0n) return false;
      await outbox.start(processed);
      return true;
    }
    const fork = await outbox.forkedAt();
    if (fork !== undefined) {
      const removals = await outbox.unmake(fork, made);
      if (removals !== undefined) {
        log.info("webhook deliveries of blocks a reorg dropped sent as removed", { fork, removals });
        delivered(removals);
      }
      return true;
    }
    const end = processed - made > BLOCKS_PER_PASS ? made + BigInt(BLOCKS_PER_PASS) : processed;
    for (let n = made + 1n; n <= end && !stopped; n++) {
      const block = await blockDeliveries(n, endpoints);
      if (!block || !(await outbox.make(n, block.hash, block.deliveries))) return false;
      delivered(block.deliveries.length);
    }
    await upkeep();
    return end < processed;
  }

  /** No endpoint: the progress follows the processed blocks every IDLE_PROGRESS_MS, with nothing made. */
  async function idle(): Promise<boolean> {
    if (Date.now() - lastIdle >= IDLE_PROGRESS_MS) {
      lastIdle = Date.now();
      const processed = await watch.processedUpTo();
      if (processed >= 0n) await outbox.skipTo(processed);
    }
    await upkeep();
    return false;
  }

  function delivered(count: number) {
    if (count > 0) options.wake();
  }

  async function upkeep() {
    if (Date.now() - lastUpkeep < UPKEEP_MS) return;
    lastUpkeep = Date.now();
    const dropped = await outbox.dropOverBacklog(options.maxBacklog);
    if (dropped > 0) {
      log.warn("webhook deliveries dropped: endpoints held more pending than WEBHOOK_MAX_BACKLOG", {
        dropped,
      });
      options.events?.dropped(dropped);
    }
    await outbox.sweep(FINISHED_KEPT_MS);
  }

  function produce() {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          if (await pass()) again = true;
        } catch (error) {
          warn({ error: (error as Error).message });
        }
      } while (again && !stopped);
      running = undefined;
    })();
  }

  const timer = setInterval(produce, PRODUCE_POLL_MS);
  produce();
  return {
    processed: () => {
      if (!stopped) produce();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      pending.stop();
      await running;
    },
  };
}

/**
 * The pending feed of the producing instance: started for the keys of the endpoints that ask for pending
 * results, told of their changes, stopped with the last of them (or the lead). Each notification gives one
 * delivery per such endpoint of its key, made in the order notified.
 */
function openPending(options: ProducerOptions) {
  const { outbox, log } = options;
  const warn = warnEveryMinute(log, "pending results could not be made into webhook deliveries");
  let feed: PendingFeed | undefined;
  /** The endpoints of each key that take pending results. */
  let byKey = new Map<string | null, string[]>();
  let keyList = "";
  /** Deliveries made in the order notified. */
  let writes: Promise<void> = Promise.resolve();

  function notify(matches: PendingMatch[]) {
    const resultsOf = new Map<string | null, unknown[]>();
    for (const m of matches) {
      const results = resultsOf.get(m.keyHash);
      if (results) results.push(m.result);
      else resultsOf.set(m.keyHash, [m.result]);
    }
    const deliveries: NewDelivery[] = [];
    for (const [key, results] of resultsOf) {
      const bodies = deliveryBodies("pending", options.chain, null, results);
      for (const endpointId of byKey.get(key) ?? [])
        for (const body of bodies)
          deliveries.push({ endpointId, kind: "pending", blockNumber: null, blockHash: null, body });
    }
    if (deliveries.length === 0) return;
    writes = writes
      .then(() => outbox.add(deliveries))
      .then(
        () => options.wake(),
        (error) => warn({ error: (error as Error).message, deliveries: deliveries.length }),
      );
  }

  function stop() {
    feed?.stop();
    feed = undefined;
    keyList = "";
  }

  return {
    keys(endpoints: readonly EndpointTarget[]) {
      if (!options.pending) return;
      const next = new Map<string | null, string[]>();
      for (const e of endpoints) {
        if (!e.pending) continue;
        const ids = next.get(e.keyHash);
        if (ids) ids.push(e.endpointId);
        else next.set(e.keyHash, [e.endpointId]);
      }
      byKey = next;
      const list = [...next.keys()].join();
      if (next.size === 0) return stop();
      if (feed && list === keyList) return;
      keyList = list;
      feed ??= options.pending(notify);
      feed.watch(new Set(next.keys())).catch((error) => {
        keyList = "";
        warn({ error: (error as Error).message });
      });
    },
    changed: (change: Parameters<PendingFeed["changed"]>[0]) => feed?.changed(change),
    stop,
  };
}
