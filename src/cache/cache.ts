/**
 * The cache by finality (docs/interface.md §8), between the engine and the upstreams:
 *  - final answers (static ones; about blocks at or below the last final block) go to memory and disk, for
 *    ever;
 *  - answers about unfinalized blocks stay in memory for about one block time, tied to the block they are
 *    about (its number and hash): an entry whose block is no longer the canonical one at its height is a
 *    miss, and a reorg drops every entry at or above the fork;
 *  - a reorg drops the final answers about blocks from its fork up too (each tier keeps the height of the
 *    block a final answer is about, where it is about one): in memory, only one deeper than the finality
 *    depth reaches any; on disk and in the fleet's tier, shared with processes whose finality may be deeper,
 *    any reorg may;
 *  - `null` and errors are never kept, nor anything about a block the chain has not reached.
 * A hit is the answer's bytes as stored, spliced into the response without parsing; where its policy has
 * `live` members (a Bitcoin-family block by hash: its confirmations), with those members as the node would
 * write them at the followed head, kept so until the head moves.
 */
import type { BlockRefs } from "../blockRef";
import { type RawJson, rawText } from "../json";
import type { DiskTier } from "./disk";
import { createLiveAnswers } from "./live";
import type { CacheEntry, MemoryTier } from "./memory";
import { blockOfParams, blockOfResult, type MethodPolicy } from "./policy";

/** Answers longer than this are kept as bytes (they splice faster as parts of a Blob); shorter as text. */
const BYTES_FROM_LENGTH = 16 * 1024;
/** Block heights noted from live answers (a block's height by hash), at most: ~200 bytes each. */
const MAX_NOTED_HEIGHTS = 50_000;
/** `brief` answers without their own TTL are kept this long. */
const BRIEF_TTL_MS = 1_000;

export type CacheTier = "memory" | "disk" | "shared";

/** A tier of final answers shared by the fleet (fleet/sharedCache.ts): slower than disk, faster than a node. */
export interface SharedTier {
  /** The answer's text, verified as written by the fleet; not yet checked as a node's answer is. */
  get(key: string): Promise<string | undefined>;
  /** `height`: the block the answer is about, where it is about one (dropFrom drops it). */
  set(key: string, body: Uint8Array, height?: bigint): void;
  /** Drops the answers about blocks at or above `height` (after any reorg): true once done. */
  dropFrom(height: bigint): Promise<boolean>;
  /** A verified value that failed the checks of a node's answer: counted as bad. */
  refused(): void;
}

export interface CacheEvents {
  lookup?(tier: CacheTier, hit: boolean): void;
  stored?(tier: CacheTier): void;
}

/** What the cache reads of the chain: the follower of engine/chainFollower.ts provides it. */
export interface CanonicalChain {
  /** The head's height, while fresh (pushed, or confirmed by a recent poll). */
  latest(): bigint | undefined;
  /** The last final block: nothing at or below it can be reorganized away. */
  finalized(): bigint | undefined;
  /** The canonical hash at a height between the last final block and the head, when known. */
  canonicalHash(n: bigint): string | undefined;
  /** The height of a canonical block between the last final block and the head, by hash. */
  numberOf(hash: string): bigint | undefined;
  /** Called with the first height whose block changed, when a reorg is seen. */
  onReorg(listener: (from: bigint) => void): void;
  /** Called with the last final block whenever it moves up. */
  onFinalized(listener: (final: bigint) => void): void;
}

export interface Cache {
  /** Whether an answer to these params could ever be kept (else lookups are skipped). */
  cacheable(policy: MethodPolicy, params: unknown[]): boolean;
  lookup(key: string, policy: MethodPolicy): { body: RawJson; tier: CacheTier } | undefined;
  /**
   * Hands a final answer as kept to `use`, for a bulk stream: neither made recent in memory nor brought
   * there from disk, so a long range read once does not push out what is read often. Bytes from disk are
   * valid only during the call (copy them, don't keep them).
   */
  readFinal(key: string, use: (body: RawJson) => void): boolean;
  /** Keeps an answer as its policy allows; returns the form it is kept in (bytes when large). */
  store(key: string, policy: MethodPolicy, params: unknown[], raw: string): RawJson | undefined;
  /**
   * After a miss of the local tiers: the fleet's shared tier, for an answer that could be final there.
   * What it holds is given and kept as a node's answer would be (not shared again) only once `fault`, the
   * checks of a node's answer, finds nothing wrong with it; else it is a miss, counted as a bad value.
   * Undefined at once where there is no shared tier or the answer cannot be final.
   */
  lookupShared(
    key: string,
    policy: MethodPolicy,
    params: unknown[],
    fault: (raw: string) => string | undefined,
  ): Promise<RawJson | undefined> | undefined;
}

const encoder = new TextEncoder();

function asStored(raw: string): RawJson {
  return raw.length > BYTES_FROM_LENGTH ? encoder.encode(raw) : raw;
}

export function createCache(options: {
  chain: CanonicalChain;
  /** How the family's nodes write block numbers and hashes, in params and answers. */
  refs: BlockRefs;
  memory: MemoryTier;
  disk?: DiskTier;
  shared?: SharedTier;
  /** How long answers about the head (block number, gas price) are kept. */
  headTtlMs: number;
  /** How long answers about unfinalized blocks are kept (about one block time). */
  unfinalizedTtlMs: number;
  events?: CacheEvents;
}): Cache {
  const { chain, refs, memory, disk, shared, events } = options;

  /** Keys of the memory entries tied to an unfinalized block, by its height: written to disk once final. */
  const awaitingFinality = new Map<bigint, string[]>();
  const live = createLiveAnswers({ chain, memory, maxHeights: MAX_NOTED_HEIGHTS, asStored });

  /**
   * While the fleet's tier drops a reorg's answers, or after it could not: the lowest height dropped.
   * The fleet's answers by height at or above it are misses (another instance may still write a stale one,
   * until its own follower sees the reorg), those naming their block are checked against the chain.
   */
  let sharedFloor: bigint | undefined;
  /** Drops of the fleet's tier under way: a failed one is made again only once none is. */
  let sharedDrops = 0;

  // Memory holds only this process's answers, but the disk directory is shared by the workers (cluster/)
  // and the fleet's tier by the instances: one whose finality is deeper (another upstream, or this one
  // lagging) may have kept final answers from the fork up, however far above this process's own finality.
  // Both tiers are dropped on every reorg, then; with nothing there to drop, each is one indexed lookup
  // (disk.ts, fleet/sharedCache.ts).
  chain.onReorg((from) => {
    memory.dropFrom(from);
    void disk?.dropFrom(from);
    dropShared(from);
  });
  chain.onFinalized(promote);

  function dropShared(from: bigint) {
    if (!shared) return;
    sharedFloor = sharedFloor === undefined || from < sharedFloor ? from : sharedFloor;
    sharedDrops++;
    void shared.dropFrom(from).then((done) => {
      sharedDrops--;
      // Only a drop from the floor down lifts it: one from higher up, ending first, left answers below it.
      if (done && sharedFloor !== undefined && from <= sharedFloor) sharedFloor = undefined;
    });
  }

  /**
   * Answers kept while their block was not final, whose block now is: final in memory, and on disk, so a
   * restart finds them (they would have gone when their block left the follower's window).
   */
  function promote(final: bigint) {
    // A drop the fleet's Redis missed (down, or late) is made again as the chain moves: else every answer
    // from its floor up, the newest blocks', would miss the fleet's tier until the next reorg.
    if (sharedFloor !== undefined && sharedDrops === 0) dropShared(sharedFloor);
    for (const [number, keys] of awaitingFinality) {
      if (number > final) continue;
      awaitingFinality.delete(number);
      for (const key of keys) {
        const entry = memory.get(key);
        if (!entry || entry.final || !valid(entry)) continue;
        keepFinal(key, entry.body, true, number);
      }
    }
  }

  function valid(entry: CacheEntry): boolean {
    return (
      entry.final || (entry.dep !== undefined && chain.canonicalHash(entry.dep.number) === entry.dep.hash)
    );
  }

  /**
   * A final answer into memory and disk, and to the fleet unless it came from there; `height`: the block it
   * is about, where it is about one.
   */
  function keepFinal(key: string, raw: RawJson, share: boolean, height?: bigint): RawJson {
    const body = typeof raw === "string" ? asStored(raw) : raw;
    memory.set(key, { body, final: true, height });
    events?.stored?.("memory");
    if (disk || (shared && share)) {
      const bytes = typeof body === "string" ? encoder.encode(body) : body;
      if (disk) {
        disk.set(key, bytes, height);
        events?.stored?.("disk");
      }
      if (shared && share) shared.set(key, bytes, height);
    }
    return body;
  }

  /** Whether an answer to these params may be final: then the fleet may hold it. */
  function maybeFinal(policy: MethodPolicy, params: unknown[]): boolean {
    switch (policy.cache) {
      case "static":
      case "result":
        return true;
      case "block": {
        const number = blockOfParams(policy, params, refs);
        const final = chain.finalized();
        if (sharedFloor !== undefined && number !== undefined && number >= sharedFloor) return false;
        return number !== undefined && final !== undefined && number <= final;
      }
      default:
        return false;
    }
  }

  /**
   * The block an answer names (`names`, `answerBlock`), or is (`answerHash`, at the height its params ask);
   * its hash undefined where the answer names only its number.
   */
  function blockNamed(
    policy: MethodPolicy,
    params: unknown[],
    raw: string,
  ): { number: bigint; hash?: string } | undefined {
    if (policy.names) return blockOfResult(raw, policy.names, refs);
    if (policy.answerBlock) return policy.answerBlock(raw);
    const hash = policy.answerHash?.(raw);
    const number = hash === undefined ? undefined : blockOfParams(policy, params, refs);
    return number === undefined ? undefined : { number, hash: hash! };
  }

  function isFinal(number: bigint): boolean {
    const final = chain.finalized();
    return final !== undefined && number <= final;
  }

  function keepWhileCanonical(key: string, raw: string, dep: { number: bigint; hash: string }): RawJson {
    const body = asStored(raw);
    memory.set(key, { body, final: false, dep }, options.unfinalizedTtlMs);
    events?.stored?.("memory");
    const keys = awaitingFinality.get(dep.number);
    if (keys) keys.push(key);
    else awaitingFinality.set(dep.number, [key]);
    return body;
  }

  /** The block an answer is about, final or tied to its canonical hash; undefined: not kept. */
  function placeBlock(
    number: bigint,
    hash: string | undefined,
    raw: string,
    key: string,
    share: boolean,
  ): RawJson | undefined {
    const canonical = chain.canonicalHash(number);
    // A block the chain no longer holds (the answer was read before a reorg): not kept, final or not.
    if (hash !== undefined && canonical !== undefined && hash !== canonical) return undefined;
    if (isFinal(number)) return keepFinal(key, raw, share, number);
    // Unknown height (ahead of the head seen): not kept.
    if (canonical === undefined) return undefined;
    return keepWhileCanonical(key, raw, { number, hash: canonical });
  }

  /** Keeps an answer as its policy allows; `share`: a final one goes to the fleet too. */
  function keep(
    key: string,
    policy: MethodPolicy,
    params: unknown[],
    raw: string,
    share: boolean,
  ): RawJson | undefined {
    if (raw === "null" || policy.unkept?.(raw)) return undefined;
    if (policy.live && !live.keeps(policy.live, raw, params)) return undefined;
    switch (policy.cache) {
      case "static":
        return keepFinal(key, raw, share);
      case "head":
      case "brief": {
        const body = asStored(raw);
        const ttlMs = policy.cache === "head" ? options.headTtlMs : (policy.ttlMs ?? BRIEF_TTL_MS);
        memory.set(key, { body, final: true }, ttlMs);
        return body;
      }
      case "block": {
        const number = blockOfParams(policy, params, refs);
        if (number === undefined) return undefined;
        return placeBlock(number, blockNamed(policy, params, raw)?.hash, raw, key, share);
      }
      case "result": {
        if (policy.names || policy.answerBlock) {
          // A transaction not yet in a block has a null block hash: nothing to tie it to.
          const block = blockNamed(policy, params, raw);
          if (!block) return undefined;
          // Named by its number only: nothing to check it against but finality.
          if (block.hash === undefined && !isFinal(block.number)) return undefined;
          return placeBlock(block.number, block.hash, raw, key, share);
        }
        // Answers that do not name their block (counts by block hash): cached while the hash is one of
        // the blocks the follower knows.
        const hash = refs.normalizeHash(params[policy.hashParam ?? 0] as string);
        const number = chain.numberOf(hash);
        return number === undefined ? undefined : placeBlock(number, hash, raw, key, share);
      }
      default:
        return undefined;
    }
  }

  return {
    cacheable(policy, params) {
      if (policy.keepsFor && !policy.keepsFor(params)) return false;
      switch (policy.cache) {
        case "static":
        case "head":
        case "brief":
        case "result":
          return true;
        case "block":
          return blockOfParams(policy, params, refs) !== undefined;
        default:
          return false;
      }
    },

    lookup(key, policy) {
      const entry = memory.get(key);
      if (entry) {
        if (valid(entry)) {
          // A live answer the followed head cannot give (only the node can) is a miss, disk's copy too.
          const body = policy.live ? live.answer(key, entry, policy.live) : entry.body;
          events?.lookup?.("memory", body !== undefined);
          return body === undefined ? undefined : { body, tier: "memory" };
        }
        memory.delete(key);
      }
      events?.lookup?.("memory", false);
      if (!disk || policy.cache === "head" || policy.cache === "brief") return undefined;
      const found = disk.get(key);
      events?.lookup?.("disk", found !== undefined);
      if (!found) return undefined;
      const stored: CacheEntry = {
        body: found.body.length > BYTES_FROM_LENGTH ? found.body : rawText(found.body),
        final: true,
        height: found.height,
      };
      memory.set(key, stored);
      const body = policy.live ? live.answer(key, stored, policy.live) : stored.body;
      return body === undefined ? undefined : { body, tier: "disk" };
    },

    lookupShared(key, policy, params, fault) {
      if (!shared || !maybeFinal(policy, params)) return undefined;
      return shared.get(key).then((raw) => {
        const refused = raw !== undefined && fault(raw) !== undefined;
        if (refused) shared.refused();
        events?.lookup?.("shared", raw !== undefined && !refused);
        if (raw === undefined || refused) return undefined;
        // An answer naming a block the chain no longer holds (kept before a reorg): a miss.
        const named = blockNamed(policy, params, raw);
        const canonical = named?.hash !== undefined ? chain.canonicalHash(named.number) : undefined;
        if (canonical !== undefined && canonical !== named!.hash) return undefined;
        const kept = keep(key, policy, params, raw, false);
        if (!policy.live) return kept ?? raw;
        // Another instance kept it at its head: given with its live members at this one's, or asked.
        const entry = kept === undefined ? undefined : memory.peek(key);
        return entry && live.answer(key, entry, policy.live);
      });
    },

    readFinal(key, use) {
      const entry = memory.peek(key);
      if (entry?.final) {
        events?.lookup?.("memory", true);
        use(entry.body);
        return true;
      }
      events?.lookup?.("memory", false);
      if (!disk) return false;
      const found = disk.read(key, use);
      events?.lookup?.("disk", found);
      return found;
    },

    store: (key, policy, params, raw) => keep(key, policy, params, raw, true),
  };
}
