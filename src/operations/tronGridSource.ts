/**
 * What TronGrid's v1 API (http/tronGrid/tronGridRoutes.ts) reads, and what a chain family supplies for it
 * (families/family.ts `createTronGrid`; the TRON family's: families/tron/tronGrid/). Declared here, as the
 * Esplora API's source is (esploraSource.ts), since a family may import every floor but http. The routes own
 * the paths, the query's parameters (TronGrid's names, snake_case or camelCase), the checks, the costs and
 * the envelope `{data, success, meta}`; the source owns what is read (its index, its node) and the JSON of
 * each row in TronGrid's shapes, and the fingerprints: opaque cursors naming the last row's position in the
 * order asked (keyset paging), which it alone writes and reads.
 */
import type { Sql } from "../db/database";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";
import type { ChargeReads } from "./esploraSource";

/** The rows of one page, as JSON texts, and the fingerprint of its last row where more may follow. */
export interface TronGridPage {
  rows: string[];
  fingerprint?: string;
}

/** What every paged query shares: which blocks, which order, how many, after which row. */
export interface TronGridRange {
  /** only_confirmed: blocks up to the solidified one; only_unconfirmed: the blocks above it. */
  confirmation: "any" | "confirmed" | "unconfirmed";
  /** Block timestamps in ms, both ends included. */
  minTimestamp?: bigint;
  maxTimestamp?: bigint;
  order: "asc" | "desc";
  /** 1 to 200. */
  limit: number;
  /** The previous page's fingerprint, as given (the source refuses one it did not write: a 400). */
  fingerprint?: string;
}

/** only_from / only_to: one side, else both (TronGrid's filters are not exclusive: both given is neither). */
export type TronGridSide = "from" | "to" | undefined;

export interface AccountTransactionsQuery extends TronGridRange {
  /** The account, base58. */
  address: string;
  side: TronGridSide;
  /** search_internal: also the transactions whose internal transfers move TRX to or from it. */
  searchInternal: boolean;
}

export interface Trc20TransfersQuery extends TronGridRange {
  address: string;
  side: TronGridSide;
  /** contract_address, base58. */
  contract?: string;
}

export interface ContractEventsQuery extends TronGridRange {
  contract: string;
  eventName?: string;
  blockNumber?: bigint;
}

export interface TronGridSource {
  /** The account as the node's getaccount answers (the solidity face's with `confirmed`); undefined: none. */
  account(address: string, confirmed: boolean): Promise<string | undefined>;
  /** The account's transactions, in TronGrid's form (the node's transaction with its info's figures). */
  accountTransactions(query: AccountTransactionsQuery, charge: ChargeReads): Promise<TronGridPage>;
  /** Its TRC-20 Transfer and Approval rows. */
  trc20Transfers(query: Trc20TransfersQuery): Promise<TronGridPage>;
  /** The events a contract emitted. */
  contractEvents(query: ContractEventsQuery, charge: ChargeReads): Promise<TronGridPage>;
  /** The events of a transaction (none for one never seen); `txid` 64 lower-case hex digits. */
  transactionEvents(
    txid: string,
    confirmation: TronGridRange["confirmation"],
    charge: ChargeReads,
  ): Promise<TronGridPage>;
  /** The events of a block (`latest`: the index's last); undefined for a block the index does not hold. */
  blockEvents(
    block: bigint | "latest",
    page: { confirmation: TronGridRange["confirmation"]; limit: number; fingerprint?: string },
    charge: ChargeReads,
  ): Promise<TronGridPage | undefined>;
}

/** What a family's source is made of (compose/dataPath.ts hands it over). */
export interface TronGridDeps {
  engine: Engine;
  /** The index's database: callers' reads, so DATABASE_READ_URL's replica when set. */
  sql: Sql;
  /** Wraps the source's queries in the database guard (db/guardDatabase.ts). */
  guard<T extends object>(queries: T): T;
  /** The solidified block's number, as the chain follower knows it (what "confirmed" means). */
  finalized(): bigint | undefined;
  log: Logger;
}
