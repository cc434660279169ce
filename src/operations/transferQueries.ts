/**
 * What the transfers operation (transfers.ts) reads of the index, whatever the family that writes it: a page
 * of transfers matching a query, and what the family's rows are (`TransferShape`). The EVM's reads are
 * families/evm/transferQueries.ts.
 */
import type { TSchema } from "@sinclair/typebox";
import type { TransferKind } from "../transferKind";

export interface TransferQuery {
  /**
   * Canonical addresses (the family's codec); a transfer matches when one of them sends or receives it. The
   * Bitcoin family's sender side is any of the transaction's input addresses (`fromAddresses`).
   */
  addresses?: string[];
  /** Narrows `addresses` to the sending or the receiving side. */
  direction?: "from" | "to";
  kind?: TransferKind;
  /** Canonical token contracts (native transfers never match). */
  contracts?: string[];
  fromBlock: bigint;
  toBlock: bigint;
  /**
   * Keyset paging: only the rows after this one in the interface's order (`fromBlock` is then at least its
   * block). Its logIndex as the records have it (negative: the row has none).
   */
  after?: Pick<TransferRecord, "transactionIndex" | "logIndex"> & { blockNumber: bigint };
  offset: number;
  limit: number;
}

/** One transfer with its block time and its token's metadata; amounts as exact decimal digits. */
export interface TransferRecord {
  blockNumber: string;
  /** The block's time (Unix seconds): the index's `blocks.timestamp`. */
  timestamp: string;
  transactionHash: string;
  transactionIndex: number;
  /**
   * The log's index (the Bitcoin family: the output's); negative where the row has none (the EVM's native
   * row, -1 so that it sorts before its transaction's logs), written `null`.
   */
  logIndex: number;
  kind: TransferKind;
  contract: string | null;
  /** The sender (the Bitcoin family: the first input's address, `coinbase` for a coinbase). */
  from: string;
  /** The Bitcoin family's extension: every distinct input address, in input order (`[]` for a coinbase). */
  fromAddresses?: readonly string[];
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

/**
 * What a family's transfer rows are (docs/interface.md §4.6; the Bitcoin family's §16.5). Unsaid: the EVM's,
 * every type and the interface's Transfer.
 */
export interface TransferShape {
  /**
   * The types its index holds. A query for another type, or naming token contracts where it holds none, is
   * refused (422) naming the chain, rather than answered with nothing.
   */
  readonly kinds: readonly TransferKind[];
  /** Its row for the API docs: the interface's Transfer, with the family's extension members. */
  readonly schema: TSchema;
}
