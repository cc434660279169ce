/**
 * The chain's head, its recent blocks and finality, shared by the engine, the cache and the indexer.
 *
 * Each poll reads the head block (number, hash, parent) and links it to the blocks already known, so the
 * follower holds the canonical hash of every block from the last final one to the head. A head whose hash
 * differs from the known block at its height, or whose ancestry breaks, is a reorg: the follower walks back
 * to the common ancestor and tells its listeners from which height the chain changed.
 *
 * Finality is the node's `finalized` block where it has one, and never closer to the head than
 * CONFIRMATIONS (docs/interface.md §8): a block is final only if both say so. An upstream without the
 * `finalized` and `safe` tags (an old client) is remembered by the pool as lacking them; when none has
 * them, finality is counted in blocks.
 */
import { parseQuantity, quantity } from "../chain/blockRef";
import { NodeError } from "../errors";
import type { Logger } from "../log";
import type { UpstreamPool } from "../upstream/pool";

/** A head older than this many polls is not used to resolve `latest`. */
const FRESH_POLLS = 3;
/** `finalized` and `safe` move slowly: they are read every this many polls. */
const FINALITY_EVERY_POLLS = 4;
/** The most unfinalized blocks followed (and fetched in one catch-up). */
const MAX_WINDOW = 1_024;

export interface BlockRef {
  number: bigint;
  hash: string;
}

interface Header extends BlockRef {
  parentHash: string;
}

export interface ChainHead {
  /** The head block number, while fresh. */
  latest(): bigint | undefined;
  /** The head block, as last seen. */
  headBlock(): BlockRef | undefined;
  /** The last final block: nothing at or below it can be reorganized away. */
  finalized(): bigint | undefined;
  safe(): bigint | undefined;
  /** The canonical hash at a height between the last final block and the head, when known. */
  canonicalHash(n: bigint): string | undefined;
  /** The height of a canonical block between the last final block and the head, by hash. */
  numberOf(hash: string): bigint | undefined;
  /** Called with the first height whose block changed, when a reorg is seen. */
  onReorg(listener: (from: bigint) => void): void;
  /** Follows the head and reads the finality tags now. */
  refresh(): Promise<void>;
  stop(): void;
}

/** The block a moving tag names now, when it is known. */
export function blockAtTag(head: ChainHead, tag: "latest" | "safe" | "finalized"): bigint | undefined {
  return tag === "latest" ? head.latest() : tag === "safe" ? head.safe() : head.finalized();
}

export function createChainHead(options: {
  pool: UpstreamPool;
  confirmations: number;
  pollMs: number;
  log: Logger;
}): ChainHead {
  const { pool, pollMs, log } = options;
  const confirmations = BigInt(options.confirmations);
  const known = new Map<bigint, Header>();
  const listeners: ((from: bigint) => void)[] = [];
  let head: Header | undefined;
  let seenAt = 0;
  let nodeFinalized: bigint | undefined;
  let nodeSafe: bigint | undefined;
  let polls = 0;
  let following: Promise<void> | undefined;

  async function header(ref: string, minBlock?: bigint, feature?: string): Promise<Header | undefined> {
    const { raw } = await pool.call("eth_getBlockByNumber", [ref, false], { minBlock, feature });
    if (raw === "null") return undefined;
    const b = JSON.parse(raw) as { number: string; hash: string; parentHash: string };
    return { number: parseQuantity(b.number), hash: b.hash, parentHash: b.parentHash };
  }

  /** The tag's block number; undefined when no upstream has the tag (it refuses the request). */
  async function readTag(tag: "finalized" | "safe"): Promise<bigint | undefined> {
    try {
      return (await header(tag, undefined, `tag:${tag}`))?.number;
    } catch (error) {
      if (error instanceof NodeError && !error.retryable) return undefined;
      throw error;
    }
  }

  /** The last final block for a given head. */
  function finalAt(top: bigint): bigint | undefined {
    const depth = top >= confirmations ? top - confirmations : undefined;
    if (nodeFinalized === undefined || depth === undefined) return depth;
    return nodeFinalized < depth ? nodeFinalized : depth;
  }

  const finalized = () => (head ? finalAt(head.number) : undefined);

  /** Lowest height kept: the last final block, as the anchor of the ancestry check. */
  function floor(top: bigint): bigint {
    const final = finalAt(top) ?? 0n;
    const lowest = top > BigInt(MAX_WINDOW) ? top - BigInt(MAX_WINDOW) : 0n;
    return final > lowest ? final : lowest;
  }

  function reorg(from: bigint) {
    log.warn("chain reorganization", { from: from.toString(), head: head?.number.toString() });
    for (const listener of listeners) {
      try {
        listener(from);
      } catch (error) {
        log.error("reorg listener failed", { error });
      }
    }
  }

  async function follow(): Promise<void> {
    // The highest head any healthy upstream reported, asked of one that has reached it.
    const best = pool.head();
    const top = best ? await header(quantity(best.number), best.number) : await header("latest");
    if (!top) return;
    seenAt = Date.now();
    if (head?.hash === top.hash) return;
    const low = floor(top.number);

    // The heights not seen yet (the whole window the first time), fetched together: the batcher sends
    // them as one request.
    const start = head && head.number + 1n > low ? head.number + 1n : low;
    const heights: bigint[] = [];
    for (let n = start; n < top.number; n++) heights.push(n);
    const incoming = new Map<bigint, Header>([[top.number, top]]);
    for (const h of await Promise.all(heights.map((n) => header(quantity(n), n))))
      if (h) incoming.set(h.number, h);

    // Walk down from the head until the chain links to a block already known with the same hash.
    let changedFrom: bigint | undefined;
    let current = top;
    while (current.number > low) {
      const knownHere = known.get(current.number);
      if (knownHere?.hash === current.hash) break;
      if (knownHere) changedFrom = current.number;
      const parentNumber = current.number - 1n;
      let parent = incoming.get(parentNumber);
      if (parent?.hash !== current.parentHash) {
        const knownParent = known.get(parentNumber);
        if (knownParent?.hash === current.parentHash || (!knownParent && parentNumber < start)) break;
        // The known parent was reorganized away: ask the node for the one that replaced it.
        parent = await header(quantity(parentNumber), parentNumber);
        // The chain moved again while we walked: the next poll starts over.
        if (parent?.hash !== current.parentHash) return;
        incoming.set(parentNumber, parent);
      }
      current = parent;
    }

    if (head && top.number < head.number) {
      // A shorter chain: everything above the new head is gone.
      if (changedFrom === undefined || top.number + 1n < changedFrom) changedFrom = top.number + 1n;
      for (const k of known.keys()) if (k > top.number) known.delete(k);
    }
    for (const [k, h] of incoming) known.set(k, h);
    for (const k of known.keys()) if (k < low) known.delete(k);
    head = top;
    if (changedFrom !== undefined) reorg(changedFrom);
  }

  async function refreshFinality() {
    const [f, s] = await Promise.all([readTag("finalized"), readTag("safe")]);
    nodeFinalized = f;
    nodeSafe = s;
  }

  async function poll(): Promise<void> {
    following ??= (async () => {
      try {
        if (polls++ % FINALITY_EVERY_POLLS === 0) await refreshFinality();
        await follow();
      } catch (error) {
        log.debug("head poll failed", { error: (error as Error).message });
      } finally {
        following = undefined;
      }
    })();
    return following;
  }

  const timer = setInterval(() => void poll(), pollMs);
  return {
    latest: () => (head && Date.now() - seenAt <= FRESH_POLLS * pollMs + 1_000 ? head.number : undefined),
    headBlock: () => (head ? { number: head.number, hash: head.hash } : undefined),
    finalized,
    safe: () => {
      const f = finalized();
      if (nodeSafe === undefined || f === undefined) return f;
      const depth = head!.number >= confirmations ? head!.number - confirmations : 0n;
      return nodeSafe > depth ? depth : nodeSafe > f ? nodeSafe : f;
    },
    canonicalHash: (n) => known.get(n)?.hash,
    numberOf(hash) {
      for (const [n, h] of known) if (h.hash === hash) return n;
      return undefined;
    },
    onReorg: (listener) => void listeners.push(listener),
    async refresh() {
      // A poll in progress may have started before the caller's reason to refresh.
      await following;
      polls = 0;
      await poll();
    },
    stop: () => clearInterval(timer),
  };
}
