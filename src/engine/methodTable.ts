/**
 * What the engine needs of a chain family's node methods (the EVM's: families/evm/methods.ts): how each
 * one's answers are cached, and the way to the upstreams of the methods that need more than one call.
 */
import type { MethodPolicy } from "../cache/policy";
import type { CallOptions, PoolCallResult, UpstreamPool } from "../upstream/pool";
import type { ChainFollower } from "./chainFollower";
import type { Engine } from "./engineApi";

/** The upstreams' answer to one call that missed the cache, with the method's special handling. */
export type MethodFetch = (
  method: string,
  params: unknown[],
  options: CallOptions,
) => Promise<PoolCallResult>;

export interface MethodTable {
  /**
   * A node method's policy (cache/policy.ts): its cache rule and where its block parameter sits. Undefined:
   * the method is passed to the node and never cached.
   */
  policy(method: string): MethodPolicy | undefined;
  /**
   * The fetch the engine calls on a miss. `engine` is the engine itself: the calls a fallback makes go
   * through its cache and coalescing, so what it assembles from is shared with every other caller.
   */
  createFetch(deps: { pool: UpstreamPool; head: ChainFollower; engine: () => Engine }): MethodFetch;
}
