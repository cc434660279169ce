/**
 * What the transfers operation (transfers.ts) reads of the index, whatever the family that writes it: a page
 * of transfers matching a query. The EVM's reads are families/evm/transferQueries.ts.
 */
import type { TransferKind } from "../transferKind";

export interface TransferQuery {
  /** Canonical addresses (the family's codec); a transfer matches when one of them sends or receives it. */
  addresses?: string[];
  /** Narrows `addresses` to the sending or the receiving side. */
  direction?: "from" | "to";
  kind?: TransferKind;
  /** Canonical token contracts (native transfers never match). */
  contracts?: string[];
  fromBlock: bigint;
  toBlock: bigint;
  offset: number;
  limit: number;
}

/** One transfer with its block time and its token's metadata; amounts as exact decimal digits. */
export interface TransferRecord {
  blockNumber: string;
  timestamp: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
  kind: TransferKind;
  contract: string | null;
  from: string;
  to: string | null;
  value: string;
  fee: string;
  error: boolean;
  symbol: string | null;
  decimals: number | null;
}

export interface TransferQueries {
  /** A page of transfers, in the interface's order (blockNumber, transactionIndex, logIndex). */
  transfers(q: TransferQuery): Promise<TransferRecord[]>;
  /** The plan PostgreSQL chooses for a query (for the bench). */
  explain(q: TransferQuery): Promise<string>;
}
