/**
 * Params already prepared, by the text they were prepared from (a JSON-RPC call's method and params text, a
 * REST route's body text). Preparing is a pure function of that text (read, checked, turned into the node's
 * form), so a text the full path has prepared once is prepared the next time by one lookup, without being
 * parsed or checked again. The params are frozen: every request that sends the text shares them.
 */
import { LRUCache } from "lru-cache";

/** What a memo may hold, by the estimate below. */
export const PARAMS_MEMO_BYTES = 8 * 1024 * 1024;
/** Longer texts are not kept: large calls (calldata) seldom repeat, and each would hold that much. */
const MAX_KEY_LENGTH = 4096;
/** An entry's estimate: its key (UTF-16) and its params (about as large again), plus this. */
const ENTRY_OVERHEAD_BYTES = 200;

export interface ParamsMemo {
  get(key: string): unknown[] | undefined;
  set(key: string, params: unknown[]): void;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member);
}

export function createParamsMemo(maxBytes = PARAMS_MEMO_BYTES): ParamsMemo {
  const lru = new LRUCache<string, unknown[]>({
    maxSize: maxBytes,
    sizeCalculation: (_params, key) => key.length * 4 + ENTRY_OVERHEAD_BYTES,
  });
  return {
    get: (key) => lru.get(key),
    set(key, params) {
      if (key.length > MAX_KEY_LENGTH) return;
      deepFreeze(params);
      lru.set(key, params);
    },
  };
}
