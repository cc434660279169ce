/**
 * The chain follower: the head, the recent blocks and finality, shared by the engine, the cache, the
 * indexer and subscriptions.
 *
 * Heads come from every path: each upstream's WebSocket pushes its new heads; each upstream is polled (its
 * latest block's header) every HEAD_POLL_MS, as the fallback and as a check; a block number past the head
 * seen in an answer makes the upstreams be polled at once. A head that extends the one followed (the next
 * height, whose parent is the head) is taken at once, with no request; anything else is caught up in
 * order: the heights in between are read (the batcher sends them as one request) and linked by parent
 * hash to the blocks known.
 *
 * The rules (docs/interface.md §8):
 * - the head never goes down: a lower head from one upstream is lag, never a reorg;
 * - a reorg is a different hash at a height already seen: the follower walks back to the common ancestor
 *   and tells its listeners the blocks dropped and the ones that replace them, from the fork up. Parents
 *   are read from the node (never a cache), down to MAX_WINDOW blocks below the head, final or not: a reorg
 *   deeper than the finality depth (CONFIRMATIONS too low for the chain, `invalidateblock` on a dev node, a
 *   deep fork) is followed like any other, and logged as an error naming its depth, since answers about its
 *   blocks were kept as final (the cache drops them on the reorg's listeners, in every tier);
 * - finality is the node's final block where it names one (its family's FinalityTags), and never closer
 *   to the head than CONFIRMATIONS; the tags are read again whenever the head moves. An upstream without
 *   the tags (an old client) is remembered by the pool as lacking them; when none has them, or the family's
 *   nodes have no such tags, finality is counted in blocks.
 *
 * Blocks are read through the family's node protocol (upstream/protocol.ts `readHeader`), named by its
 * BlockRefs.
 */

import type { BlockHeader } from "../blockHeader";
import type { BlockRefs } from "../blockRef";
import { NodeError } from "../errors";
import type { Logger } from "../log";
import type { UpstreamPool } from "../upstream/pool";
import type { NodeProtocol } from "../upstream/protocol";

/** Without a live WebSocket, a head not confirmed for this many polls (plus a second) is not used. */
const FRESH_POLLS = 3;
/** Finality is also read on this many polls' period, should the head stand still. */
const FINALITY_EVERY_POLLS = 4;
/**
 * The most blocks followed below the head, final or not (and the most unfinalized ones fetched in one
 * catch-up): a reorg up to this deep is walked back to its fork.
 */
const MAX_WINDOW = 1_024;
/** Headers recently announced, by hash: a pushed reorg branch links without asking the node. */
const RECENT_HEADERS = 256;
/** Headers of blocks reorgs dropped, by hash: a block delivered before a reorg finds its branch's fork. */
const DROPPED_HEADERS = 1_024;

export interface BlockRef {
  number: bigint;
  hash: string;
  /** The block's timestamp, seconds since the epoch, when the node gave it. */
  timestamp?: number;
}

/** How the canonical chain changed: the blocks a reorg dropped, and the new ones, both lowest first. */
export interface ChainChange {
  /** Blocks of the old branch, from the fork up (empty when the chain only grew). */
  removed: BlockHeader[];
  /**
   * Every new canonical block, in order, with no gap: from the fork (or the old head + 1) to the head (but
   * for a head that jumped more than the window, MAX_WINDOW blocks, ahead: the blocks below it are not read).
   */
  added: BlockHeader[];
}

export interface ChainFollower {
  /** The head block number, while fresh (pushed, or confirmed by a recent poll). */
  latest(): bigint | undefined;
  /** The head block, as last seen. */
  headBlock(): BlockRef | undefined;
  /** The last final block: nothing at or below it can be reorganized away. */
  finalized(): bigint | undefined;
  /**
   * The block the nodes last named final by their finality tag (EVM `finalized`, TRON's solidified block),
   * as read; undefined where they name none, or it could not be read. `finalized` is never above it.
   */
  nodeFinalized(): bigint | undefined;
  safe(): bigint | undefined;
  /** The canonical hash at a height of the followed window (up to MAX_WINDOW below the head), when known. */
  canonicalHash(n: bigint): string | undefined;
  /** The height of a canonical block of the followed window, by hash. */
  numberOf(hash: string): bigint | undefined;
  /**
   * The blocks of a branch a reorg dropped, up to block `number` `hash`, lowest first: from its fork with the
   * canonical chain, or from the lowest of them this follower saw dropped (a reorg reaching below the blocks
   * it had followed since it started); undefined when it did not see that block dropped.
   */
  droppedBranch(number: bigint, hash: string): BlockRef[] | undefined;
  /** The hash of the node's block `n`, read from a node now (never from a cache); undefined: none yet. */
  readHash(n: bigint): Promise<string | undefined>;
  /**
   * The node's chain no longer holds the blocks from `from` up as they were read, though the follower saw
   * no reorg there (the index found it against the node's own hashes, say after a restart; the caller says
   * so in the log): the reorg listeners drop what was kept of them.
   */
  staleFrom(from: bigint): void;
  /** Called with the first height whose block changed, when a reorg is seen (before onChange). */
  onReorg(listener: (from: bigint) => void): void;
  /** Called with every change of the canonical chain, in order. */
  onChange(listener: (change: ChainChange) => void): void;
  /** Called with the last final block whenever it moves up. */
  onFinalized(listener: (final: bigint) => void): void;
  /** A block number seen in an answer: past the head, the upstreams are polled at once. */
  sawBlock(n: bigint): void;
  /**
   * A head seen elsewhere (another instance of the fleet, fleet/sharedHeads.ts), taken as a pushed one: it
   * extends the followed chain at once when it links, or sets a catch-up through the node going.
   */
  offer(header: BlockHeader): void;
  /** Reads the finality tags, polls every upstream, and waits until what they said is followed. */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * The tags a family's nodes name their last final block and their safe block by, in node form (EVM:
 * `finalized`, `safe`); a tag left out is one they lack.
 */
export interface FinalityTags {
  readonly finalized?: string;
  readonly safe?: string;
}

/** The block a moving tag names now, when it is known. */
export function blockAtTag(head: ChainFollower, tag: "latest" | "safe" | "finalized"): bigint | undefined {
  return tag === "latest" ? head.latest() : tag === "safe" ? head.safe() : head.finalized();
}

/** What the follower uses of the upstream pool: its calls, the heads its upstreams report, their polls. */
export type FollowedPool = Pick<UpstreamPool, "call" | "onHead" | "pushing" | "pollNow">;

export function createChainFollower(options: {
  pool: FollowedPool;
  /** How blocks are read from the family's nodes. */
  node: Pick<NodeProtocol, "readHeader">;
  /** How the family's nodes write block numbers. */
  refs: BlockRefs;
  /** Undefined: the family's nodes name no final block, finality is counted in blocks only. */
  finalityTags?: FinalityTags;
  confirmations: number;
  pollMs: number;
  log: Logger;
}): ChainFollower {
  const { pool, node, refs, pollMs, log } = options;
  const confirmations = BigInt(options.confirmations);
  const known = new Map<bigint, BlockHeader>();
  /** The height of each block of `known`, by hash. */
  const heightOf = new Map<string, bigint>();
  const recent = new Map<string, BlockHeader>();
  const dropped = new Map<string, BlockHeader>();
  const reorgListeners: ((from: bigint) => void)[] = [];
  const changeListeners: ((change: ChainChange) => void)[] = [];
  const finalListeners: ((final: bigint) => void)[] = [];
  /**
   * The highest block taken as final (the finality listeners were told, the cache kept answers about it for
   * ever). Never lowered: a node amid a reorg (anvil_reorg rolls back before it mines), or one behind
   * another, may name a lower `finalized` block for a moment, and `finalized()` follows it down.
   */
  let lastFinal: bigint | undefined;
  let head: BlockHeader | undefined;
  let confirmedAt = 0;
  let nodeFinalized: bigint | undefined;
  let nodeSafe: bigint | undefined;
  /** The highest head observed that the fast path could not take, waiting for the catch-up. */
  let target: BlockHeader | undefined;
  let working: Promise<void> | undefined;
  let finality: Promise<void> | undefined;
  let finalityAgain = false;
  let sawPolling = false;
  let stopped = false;

  function header(ref: string, minBlock?: bigint, feature?: string): Promise<BlockHeader | undefined> {
    return node.readHeader(ref, async (method, params) => {
      return (await pool.call(method, params, { minBlock, feature })).raw;
    });
  }

  /** The tag's block number; undefined when the nodes lack the tag (every upstream refuses the request). */
  async function readTag(tag: string | undefined): Promise<bigint | undefined> {
    if (tag === undefined) return undefined;
    try {
      return (await header(tag, undefined, `tag:${tag}`))?.number;
    } catch (error) {
      if (error instanceof NodeError && !error.retryable) return undefined;
      throw error;
    }
  }

  /** Reads the tags; while a read runs, one more is made after it (the head moved meanwhile). */
  function readFinality(): Promise<void> {
    if (finality) {
      finalityAgain = true;
      return finality;
    }
    finality = (async () => {
      do {
        finalityAgain = false;
        try {
          const tags = options.finalityTags;
          const [f, s] = await Promise.all([readTag(tags?.finalized), readTag(tags?.safe)]);
          nodeFinalized = f;
          nodeSafe = s;
          finalityMoved();
        } catch (error) {
          log.debug("finality read failed", { error: (error as Error).message });
        }
      } while (finalityAgain && !stopped);
      finality = undefined;
    })();
    return finality;
  }

  /** The last final block for a given head. */
  function finalAt(top: bigint): bigint | undefined {
    const depth = top >= confirmations ? top - confirmations : undefined;
    if (nodeFinalized === undefined || depth === undefined) return depth;
    return nodeFinalized < depth ? nodeFinalized : depth;
  }

  const finalized = () => (head ? finalAt(head.number) : undefined);

  /** Tells the listeners when the last final block moved up (the head moved, or the tags were read). */
  function finalityMoved() {
    const final = finalized();
    if (final === undefined || (lastFinal !== undefined && final <= lastFinal)) return;
    lastFinal = final;
    for (const listener of finalListeners) {
      try {
        listener(final);
      } catch (error) {
        log.error("finality listener failed", { error });
      }
    }
  }

  /** The lowest height followed: MAX_WINDOW below the head. */
  function bottom(top: bigint): bigint {
    return top > BigInt(MAX_WINDOW) ? top - BigInt(MAX_WINDOW) : 0n;
  }

  /** The lowest height the first head's catch-up reads: the last final block, or the bottom of the window. */
  function readFloor(top: bigint): bigint {
    const final = finalAt(top) ?? 0n;
    const lowest = bottom(top);
    return final > lowest ? final : lowest;
  }

  /** Keeps the most recent `limit` headers of `map` by hash, `h` the newest. */
  function keepRecent(map: Map<string, BlockHeader>, h: BlockHeader, limit: number) {
    map.delete(h.hash);
    map.set(h.hash, h);
    if (map.size > limit) map.delete(map.keys().next().value!);
  }

  function setKnown(h: BlockHeader) {
    const old = known.get(h.number);
    if (old) heightOf.delete(old.hash);
    known.set(h.number, h);
    heightOf.set(h.hash, h.number);
  }

  /** The reorg listeners, with the first height whose block changed. */
  function reorged(from: bigint) {
    for (const listener of reorgListeners) {
      try {
        listener(from);
      } catch (error) {
        log.error("reorg listener failed", { error });
      }
    }
  }

  /** Logs a reorg: an error when it dropped a block taken as final (answers about it were kept for ever). */
  function logReorg(removed: BlockHeader[], top: BlockHeader, takenFinal: bigint | undefined) {
    const from = removed[0]!.number;
    const fields = {
      from: from.toString(),
      depth: removed.length,
      head: top.number.toString(),
      finalized: takenFinal?.toString(),
    };
    if (takenFinal !== undefined && from <= takenFinal) {
      log.error(
        `chain reorganization ${removed.length} blocks deep, past the finality depth: blocks from ${from} up were taken as final; answers about them are dropped from every cache tier and the index is rewound`,
        fields,
      );
    } else log.warn("chain reorganization", fields);
  }

  /** Makes `top` the head, `incoming` canonical, and tells the listeners what changed. */
  function adopt(top: BlockHeader, incoming: Map<bigint, BlockHeader>, changedFrom: bigint | undefined) {
    const previous = head;
    const removed: BlockHeader[] = [];
    if (previous && changedFrom !== undefined) {
      for (let n = changedFrom; n <= previous.number; n++) {
        const old = known.get(n);
        if (old) removed.push(old);
      }
    }
    for (const old of removed) keepRecent(dropped, old, DROPPED_HEADERS);
    for (const h of incoming.values()) setKnown(h);
    const low = bottom(top.number);
    for (const [n, h] of known) {
      if (n >= low) continue;
      known.delete(n);
      heightOf.delete(h.hash);
    }
    head = top;
    confirmedAt = Date.now();
    if (!previous) {
      // The first head: nothing changed, but the last final block is known from now on.
      finalityMoved();
      return;
    }
    const added: BlockHeader[] = [];
    // From the fork or the old head up; a head that jumped past the whole window leaves out what was not read.
    for (let n = changedFrom ?? previous.number + 1n; n <= top.number; n++) {
      const block = known.get(n);
      if (block) added.push(block);
    }
    if (removed.length > 0) {
      logReorg(removed, top, lastFinal);
      reorged(removed[0]!.number);
    }
    const change = { removed, added };
    for (const listener of changeListeners) {
      try {
        listener(change);
      } catch (error) {
        log.error("chain change listener failed", { error });
      }
    }
    finalityMoved();
    void readFinality();
  }

  /** Catches up to `top`: reads the heights missing, links them, and finds where the chain changed. */
  async function follow(top: BlockHeader): Promise<void> {
    if (head && (top.number < head.number || known.get(top.number)?.hash === top.hash)) return;
    // Every block after the head is read (within the window), so listeners get each with no gap; the first
    // head reads from the last final block.
    const low = head ? bottom(top.number) : readFloor(top.number);
    const start = head && head.number + 1n > low ? head.number + 1n : low;
    const incoming = new Map<bigint, BlockHeader>([[top.number, top]]);
    // Headers pushed just before (a reorg's new branch) link without asking the node.
    let lowest = top;
    for (
      let parent = recent.get(lowest.parentHash);
      lowest.number > start && parent?.number === lowest.number - 1n;
    ) {
      incoming.set(parent.number, parent);
      lowest = parent;
      parent = recent.get(lowest.parentHash);
    }
    const heights: bigint[] = [];
    for (let n = start; n < lowest.number; n++) heights.push(n);
    for (const h of await Promise.all(heights.map((n) => header(refs.encode(n), n))))
      if (h) incoming.set(h.number, h);

    // Walk down from the head until the chain links to a block already known with the same hash: past the
    // last final block if need be (a reorg deeper than the finality depth), to the bottom of the window or
    // of what is known (below it there is nothing to compare with: the chain is taken as linked there).
    const floor = bottom(top.number);
    let lowestKnown = top.number;
    for (const n of known.keys()) if (n < lowestKnown) lowestKnown = n;
    let changedFrom: bigint | undefined;
    let current = top;
    while (current.number > floor) {
      const knownHere = known.get(current.number);
      if (knownHere?.hash === current.hash) break;
      if (knownHere) changedFrom = current.number;
      const parentNumber = current.number - 1n;
      let parent = incoming.get(parentNumber);
      if (parent?.hash !== current.parentHash) {
        const knownParent = known.get(parentNumber);
        if (
          knownParent?.hash === current.parentHash ||
          (!knownParent && (parentNumber < start || parentNumber < lowestKnown))
        ) {
          break;
        }
        // The known parent was reorganized away: find the one that replaced it.
        parent = recent.get(current.parentHash) ?? (await header(refs.encode(parentNumber), parentNumber));
        // The chain moved again while we walked: the next head starts over.
        if (parent?.hash !== current.parentHash) return;
        incoming.set(parentNumber, parent);
      }
      current = parent;
    }
    const knownAtFloor = known.get(current.number);
    if (current.number === floor && knownAtFloor && knownAtFloor.hash !== current.hash) {
      // Deeper than the window: its fork is out of sight, and everything followed is taken as dropped.
      log.error(`chain reorganization deeper than the ${MAX_WINDOW} blocks followed below the head`, {
        head: top.number.toString(),
      });
      changedFrom = floor;
    }
    adopt(top, incoming, changedFrom);
  }

  async function catchUp(): Promise<void> {
    while (target && !stopped) {
      const next = target;
      target = undefined;
      try {
        await follow(next);
      } catch (error) {
        log.debug("head catch-up failed", { error: (error as Error).message });
      }
    }
    working = undefined;
  }

  function observe(h: BlockHeader) {
    if (stopped) return;
    keepRecent(recent, h, RECENT_HEADERS);
    if (head) {
      if (known.get(h.number)?.hash === h.hash) {
        if (h.number === head.number) confirmedAt = Date.now();
        return;
      }
      // Lag, or a branch not (yet) longer than the one followed: never a reorg by itself.
      if (h.number < head.number) return;
      if (!working && h.number === head.number + 1n && h.parentHash === head.hash) {
        adopt(h, new Map([[h.number, h]]), undefined);
        return;
      }
    }
    if (!target || h.number >= target.number) target = h;
    working ??= catchUp();
  }

  pool.onHead(observe);
  const finalityTimer = setInterval(() => void readFinality(), FINALITY_EVERY_POLLS * pollMs);

  return {
    latest: () =>
      head && (pool.pushing() || Date.now() - confirmedAt <= FRESH_POLLS * pollMs + 1_000)
        ? head.number
        : undefined,
    headBlock: () => (head ? { number: head.number, hash: head.hash, timestamp: head.timestamp } : undefined),
    finalized,
    nodeFinalized: () => nodeFinalized,
    safe: () => {
      const f = finalized();
      if (nodeSafe === undefined || f === undefined) return f;
      const depth = head!.number >= confirmations ? head!.number - confirmations : 0n;
      return nodeSafe > depth ? depth : nodeSafe > f ? nodeSafe : f;
    },
    canonicalHash: (n) => known.get(n)?.hash,
    numberOf: (hash) => heightOf.get(hash),
    droppedBranch(number, hash) {
      const branch: BlockRef[] = [];
      for (let block = dropped.get(hash); block; block = dropped.get(block.parentHash)) {
        // A block dropped once may be canonical again (the chain went back to its branch).
        if (block.number !== number - BigInt(branch.length) || known.get(block.number)?.hash === block.hash)
          break;
        branch.push({ number: block.number, hash: block.hash });
      }
      return branch.length === 0 ? undefined : branch.reverse();
    },
    async readHash(n) {
      return (await header(refs.encode(n), n))?.hash;
    },
    staleFrom: reorged,
    onReorg: (listener) => void reorgListeners.push(listener),
    onChange: (listener) => void changeListeners.push(listener),
    onFinalized: (listener) => void finalListeners.push(listener),
    offer: observe,
    sawBlock(n) {
      if (!head || n <= head.number || sawPolling) return;
      sawPolling = true;
      void pool.pollNow().finally(() => {
        sawPolling = false;
      });
    },
    async refresh() {
      await readFinality();
      await pool.pollNow();
      while (working) await working;
    },
    stop() {
      stopped = true;
      clearInterval(finalityTimer);
    },
  };
}
