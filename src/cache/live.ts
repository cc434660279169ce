/**
 * Live answers (policy.ts `live`): answers kept for ever but for a few members that follow the head (the
 * Bitcoin family's `confirmations` and `nextblockhash` of a block by hash). On a hit the family's `now`
 * splices those members into the stored text for the followed head; the result replaces the memory entry,
 * marked with the head's hash, so further hits at the same head are the stored bytes as they are (a 3 MB
 * block is scanned once per block, not once per hit).
 */
import { type RawJson, rawText } from "../json";
import type { CacheEntry, MemoryTier } from "./memory";
import type { LiveAnswer, LiveChain } from "./policy";

export interface LiveAnswers {
  /**
   * The answer `entry` holds, with its live members for the followed head (kept in memory under `key` so);
   * undefined when the head is not fresh or only the node can say (a miss).
   */
  answer(key: string, entry: CacheEntry, live: LiveAnswer): RawJson | undefined;
  /** Whether a node's answer is kept (the family's `keeps`, noting the heights it reads). */
  keeps(live: LiveAnswer, raw: string, params: readonly unknown[]): boolean;
}

/** What live answers read of the followed chain (cache.ts `CanonicalChain` has it). */
interface FollowedChain {
  latest(): bigint | undefined;
  finalized(): bigint | undefined;
  canonicalHash(n: bigint): string | undefined;
  numberOf(hash: string): bigint | undefined;
}

export function createLiveAnswers(options: {
  chain: FollowedChain;
  memory: MemoryTier;
  /** At most this many heights noted; the oldest noted go first. */
  maxHeights: number;
  /** The form an answer is kept in (bytes when large). */
  asStored: (raw: string) => RawJson;
}): LiveAnswers {
  const { chain, memory, maxHeights, asStored } = options;
  const heights = new Map<string, bigint>();

  const notes: Pick<LiveChain, "noteHeight"> = {
    noteHeight(hash, height) {
      if (heights.get(hash) === height) return;
      heights.set(hash, height);
      if (heights.size > maxHeights) heights.delete(heights.keys().next().value!);
    },
  };

  /** The chain as a live answer reads it, at a fresh head; undefined when there is none. */
  function chainAt(number: bigint, hash: string): LiveChain | undefined {
    const finalized = chain.finalized();
    if (finalized === undefined) return undefined;
    return {
      head: { number, hash },
      finalized,
      canonicalHash: (n) => chain.canonicalHash(n),
      heightOf: (h) => chain.numberOf(h) ?? heights.get(h),
      noteHeight: notes.noteHeight,
    };
  }

  return {
    answer(key, entry, live) {
      const number = chain.latest();
      const hash = number === undefined ? undefined : chain.canonicalHash(number);
      if (hash === undefined) return undefined;
      if (entry.liveAt === hash) return entry.body;
      const at = chainAt(number!, hash);
      const text = rawText(entry.body);
      const now = at && live.now(text, at);
      if (now === undefined) return undefined;
      const body = now === text ? entry.body : asStored(now);
      memory.set(key, { body, final: true, liveAt: hash });
      return body;
    },
    keeps: (live, raw, params) => live.keeps(raw, notes, params),
  };
}
