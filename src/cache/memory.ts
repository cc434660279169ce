/**
 * The memory tier: lru-cache bounded in bytes, holding each answer's serialized bytes (a string for small
 * answers, bytes for large ones, whichever splices into a response faster).
 */
import { LRUCache } from "lru-cache";

/** Bookkeeping per entry beyond its body and key: the entry object, its LRU node, the map slot. */
const ENTRY_OVERHEAD_BYTES = 160;
/** The largest entry is this share of the budget: one huge answer never pushes out the rest. */
const MAX_ENTRY_SHARE = 16;

export interface CacheEntry {
  body: string | Uint8Array;
  /** Final: true forever. Else valid while `dep` is the canonical block at its height. */
  final: boolean;
  dep?: { number: bigint; hash: string };
  /** A final answer's block height, where it is about a block: a reorg past finality drops it. */
  height?: bigint;
  /** A live answer (policy.ts `live`): the head hash its live members were last answered for. */
  liveAt?: string;
}

export interface MemoryTier {
  get(key: string): CacheEntry | undefined;
  /** The entry without making it recent: bulk reads must not reorder what stays. */
  peek(key: string): CacheEntry | undefined;
  set(key: string, entry: CacheEntry, ttlMs?: number): void;
  delete(key: string): void;
  /**
   * Drops the entries about blocks at or above a height (a reorg): unfinalized ones, and final ones too
   * (only a reorg deeper than the finality depth reaches a final block's height).
   */
  dropFrom(height: bigint): number;
  readonly bytes: number;
  readonly entries: number;
}

export function createMemoryTier(options: { maxBytes: number; onEvict?: () => void }): MemoryTier {
  const lru = new LRUCache<string, CacheEntry>({
    maxSize: options.maxBytes,
    sizeCalculation: (entry, key) => entry.body.length + key.length + ENTRY_OVERHEAD_BYTES,
    // An entry larger than its share of the budget is not kept at all.
    maxEntrySize: Math.max(1, Math.floor(options.maxBytes / MAX_ENTRY_SHARE)),
    dispose: (_value, _key, reason) => {
      if (reason === "evict") options.onEvict?.();
    },
  });
  return {
    get: (key) => lru.get(key),
    peek: (key) => lru.peek(key),
    set: (key, entry, ttlMs) => void lru.set(key, entry, ttlMs ? { ttl: ttlMs } : undefined),
    delete: (key) => void lru.delete(key),
    dropFrom(height) {
      const doomed: string[] = [];
      for (const [key, entry] of lru.entries()) {
        const at = entry.final ? entry.height : entry.dep?.number;
        if (at !== undefined && at >= height) doomed.push(key);
      }
      for (const key of doomed) lru.delete(key);
      return doomed.length;
    },
    get bytes() {
      return lru.calculatedSize;
    },
    get entries() {
      return lru.size;
    },
  };
}
