/**
 * A family's node API served at the node's own paths (java-tron's `/wallet/...` and `/walletsolidity/...`,
 * so that its clients take the service's URL as the node's): one row per path, as the family's allow-list
 * says, each answered through the engine (cache, coalescing, failover) and costed. http/nodePaths.ts mounts
 * them under the guard; a path of the API without a row is refused there without a node call.
 */

import type { EngineResult } from "../engine/engineApi";
import type { ServiceError } from "../errors";

export interface NodePath {
  /** The path as the node serves it: `/wallet/getblockbynum`. */
  readonly path: string;
  /** One sentence, for the API document. */
  readonly summary: string;
  /** It changes the chain (a broadcast): POST only. */
  readonly write?: boolean;
  /**
   * A request's body (a JSON object; a GET's query as one, `fromQuery`) as the node's params, checked: a
   * pure function of the body (the HTTP floor keeps it by the body's text). Throws a ServiceError (a 400
   * naming what is wrong) where the body cannot be the node's: no node call is made then.
   */
  params(body: Record<string, unknown>, fromQuery: boolean): unknown[];
  /** What a call costs in rate-limit tokens: what it makes the node read or write. */
  cost(params: unknown[]): number;
  /** What it costs, for the API document, where that depends on the body. */
  readonly costNote?: string;
  /** The answer, as the node writes it. */
  answer(params: unknown[]): EngineResult | Promise<EngineResult>;
}

export interface NodePaths {
  /** Where the API lives: every path under one of these is either a row or refused. */
  readonly prefixes: readonly string[];
  readonly paths: readonly NodePath[];
  /** Why a path under `prefixes` with no row is refused (403 or 404, with the reason). */
  refusal(path: string): ServiceError;
}
