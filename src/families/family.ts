/**
 * A chain family: what changes between chains whose nodes speak different protocols (docs/architecture.md
 * §10). One plain object, chosen once from CHAIN (families/familyOf.ts) and handed down by the composition
 * root; the shared floors (http, engine, cache, upstream, the indexer loop, watch registration, realtime,
 * db, fleet) import no family, only the interfaces they declare for what a family gives them, which this
 * interface gathers.
 */
import type { Blockchain, ChainInfo } from "../blockchain";
import type { BlockRefs } from "../blockRef";
import type { Logger } from "../log";

/** A node the service started itself, where no upstream is configured. */
export interface DevNode {
  /** Its JSON-RPC URL. */
  url: string;
  /** How often its head is polled where HEAD_POLL_MS is unset: it makes blocks on demand, so closely. */
  headPollMs: number;
  stop(): Promise<void>;
}

export interface ChainFamily {
  /** Its name, in logs and the docs. */
  readonly name: string;
  /**
   * Whether it serves a chain of the `Blockchain` enumeration (CHAIN); `undefined` (no CHAIN): the family
   * that reads its chain from the node.
   */
  serves(chain: Blockchain | undefined): boolean;
  /** How its nodes write block references. */
  readonly blockRefs: BlockRefs;
  /** The chain served, from the node's identity (EVM: its chain id) and the configuration. */
  describe(identity: bigint, overrides: { blockchain?: Blockchain; confirmations?: number }): ChainInfo;
  /** Starts its dev node (state kept under `dataDir`), for a service with no UPSTREAM_URLS. */
  startDevNode(options: { dataDir: string; log: Logger }): Promise<DevNode>;
  // -- the node protocol, the head follower's reads (upstream, engine) --
  // -- method rows, operations, streams (engine, operations, http) --
  // -- the index (indexer, db) --
  // -- addresses, watch filters, subscriptions (watch, realtime, db) --
}
