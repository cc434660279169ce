/**
 * The operations a chain family adds to the table (the EVM's: families/evm/evm.ts), beside the shared data
 * operations of this folder (transfers.ts, stats.ts), and what the composition root hands it to make them.
 */
import type { ChainInfo } from "../blockchain";
import type { Sql } from "../db/database";
import type { ChainFollower } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";
import type { SocketSubscription } from "../upstream/socket";
import type { Operation } from "./operation";

/** Wraps a store whose calls requests make in the database guard (db/guardDatabase.ts; `retry`: calls safe to repeat). */
export type Guarded = <T extends object>(api: T, retry: readonly (keyof T)[] | "all") => T;

/** What the polls of the filters the service keeps tell (compose/metricEvents.ts makes series of it). */
export interface RpcFilterEvents {
  /** A log filter's poll had a block's logs: its receipts read and parsed for it, or shared from another's. */
  blockLogs(source: "read" | "shared"): void;
}

export interface FamilyOperationDeps {
  engine: Engine;
  head: ChainFollower;
  chain: ChainInfo;
  /** The primary database, for the family's own stores. */
  sql: Sql;
  guarded: Guarded;
  /** DEFAULT_TOKENS from the configuration; undefined: the family's own default (EVM: most transferred). */
  defaultTokens: string[] | undefined;
  /** A pass-through subscription on an upstream's WebSocket (the pool's); undefined when none is live. */
  upstreamSubscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription | undefined;
  /**
   * The filters the service keeps (eth_newFilter & co.): RPC_FILTER_TIMEOUT_MS, RPC_FILTERS_PER_KEY, and
   * what their polls tell.
   */
  rpcFilters: { timeoutMs: number; maxPerKey: number; events?: RpcFilterEvents };
  log: Logger;
}

export interface FamilyOperations {
  /** Its node methods (from its method rows): first in the table. */
  node: Operation[];
  /** Its data operations (EVM: token balances and metadata): after the shared ones, as the docs list them. */
  data: Operation[];
  /** Stops what its operations keep running (the EVM's: the kept filters' sweep and pending feed). */
  stop?(): void;
}
