/**
 * The engine as the floors above it see it (operations, the indexer, watch filters, subscriptions, a
 * family's code): node methods answered through the cache, coalesced and sent upstream (engine/engine.ts
 * makes it). Results stay raw JSON (the node's bytes, or the cache's), so they are spliced into answers
 * without being re-serialized.
 */
import { type RawJson, rawText } from "../json";

/** Where a result came from (the `x-cache` header). */
export type ResultSource = "memory" | "disk" | "shared" | "coalesced" | "miss";

export interface EngineResult {
  /** The result as JSON: text, or the bytes a cache tier holds. */
  raw: RawJson;
  /** Set for results that came through the engine. */
  source?: ResultSource;
  /** The upstream that answered (`upstream-1`, …), when one did. */
  upstream?: string;
}

export interface Engine {
  /**
   * A node method with params in the node's form. Synchronous on a cache hit; a Promise when the answer
   * must be fetched. A family's methods that need more than one call work on every upstream (EVM:
   * `eth_getBlockReceipts` is assembled from the block's transaction receipts where one lacks it,
   * families/evm/evmFetch.ts).
   */
  call(method: string, params: unknown[]): EngineResult | Promise<EngineResult>;
  /**
   * Hands the final answer the cache holds for this call to `use` and returns true, else false: no node
   * call, no tag resolution, the memory tier left as it was (bulk streams read history this way, then
   * `call` what is missing). Bytes are valid only during `use`.
   */
  readStored(method: string, params: unknown[], use: (raw: RawJson) => void): boolean;
}

/** The result as JSON text, for callers that read it. */
export async function callText(engine: Engine, method: string, params: unknown[]): Promise<string> {
  return rawText((await engine.call(method, params)).raw);
}
