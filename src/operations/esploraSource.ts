/**
 * What the Esplora-compatible API (http/esplora/esploraRoutes.ts) reads, and what a chain family supplies
 * for it (families/family.ts `followMempool`; the Bitcoin family's: families/utxo/esplora/). Declared here,
 * beside the family's other operations, since a family may import every floor but http. The routes own the
 * paths, the checks of path params, the pages' sizes, the status codes and the answers' content types, as
 * Blockstream's Esplora has them; the source owns what is read (its index, its node, its mempool) and the
 * JSON of each answer, in Esplora's shapes (amounts in satoshis).
 */
import type { ChainInfo } from "../blockchain";
import type { Sql } from "../db/database";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";

/** A script named by a request: by an address (the family codec's canonical form), or by its scripthash. */
export type ScriptRef = { address: string } | { scripthash: string };

/** The chain's tip as Esplora serves it: the index's last block. */
export interface EsploraTip {
  height: bigint;
  hash: string;
}

/**
 * Charges the request for what it reads past its route's cost: one token for each transaction read from the
 * node for its outputs (prevouts the index does not hold: the mempool's, or before the index's first block),
 * taken before the reads (http/guard.ts `RequestContext.charge`: a 429 when the caller cannot pay).
 */
export type ChargeReads = (reads: number) => void | Promise<void>;

/** A page of an address's unspent outputs, or the refusal of one holding more than asked (UTXO_MAX). */
export type UtxoPage = { utxos: string[] } | { tooMany: true };

/**
 * Each read gives Esplora's JSON text (a value, or a list's elements to join); undefined where Esplora
 * answers 404. Hashes and txids arrive as 64 lower-case hex digits, block heights and indexes checked.
 */
export interface EsploraSource {
  tip(): Promise<EsploraTip | undefined>;
  /** The hash of the main chain's block at `height`, up to the tip. */
  blockHash(height: bigint): Promise<string | undefined>;
  /**
   * Up to `count` blocks of the main chain from `start` (the tip when undefined) down, newest first, each as
   * `block` gives it; undefined when `start` is past the tip.
   */
  blocks(start: bigint | undefined, count: number): Promise<string[] | undefined>;
  block(hash: string): Promise<string | undefined>;
  /** The block's 80-byte header, in hex. */
  blockHeader(hash: string): Promise<string | undefined>;
  /** `{in_best_chain, height, next_best}`; a block never seen is not in the best chain. */
  blockStatus(hash: string): Promise<string>;
  blockTxids(hash: string): Promise<readonly string[] | undefined>;
  /** Transactions `txids` of block `hash` (one page), each with its prevouts, fee and status. */
  blockTransactions(hash: string, txids: readonly string[], charge: ChargeReads): Promise<string[]>;
  /** The whole block, in hex. */
  blockHex(hash: string): Promise<string | undefined>;
  transaction(txid: string, charge: ChargeReads): Promise<string | undefined>;
  transactionHex(txid: string): Promise<string | undefined>;
  /** `{confirmed, block_height, block_hash, block_time}`; a transaction never seen is unconfirmed. */
  transactionStatus(txid: string): Promise<string>;
  /** What spends each output, in order; undefined for a transaction never seen. */
  outspends(txid: string): Promise<string[] | undefined>;
  outspend(txid: string, vout: number): Promise<string>;
  /** Electrum's `blockchain.transaction.get_merkle`: undefined unless confirmed. */
  merkleProof(txid: string): Promise<string | undefined>;
  /** `{chain_stats, mempool_stats}` of the script (the route adds its `address` or `scripthash`). */
  scriptStats(script: ScriptRef): Promise<{ chain: string; mempool: string }>;
  /** Confirmed transactions, newest first, after `lastSeen` (none when it is not in the history). */
  scriptChainTransactions(
    script: ScriptRef,
    lastSeen: string | undefined,
    limit: number,
    charge: ChargeReads,
  ): Promise<string[]>;
  /** Transactions in the mempool, newest first. */
  scriptMempoolTransactions(script: ScriptRef, limit: number): Promise<string[]>;
  /** Unspent outputs (confirmed ones less those the mempool spends, then the mempool's); at most `max`. */
  scriptUtxos(script: ScriptRef, max: number): Promise<UtxoPage>;
  /**
   * The node's refusal (its error object, as JSON text) of a broadcast's text it cannot read as a
   * transaction (not hex, not a transaction's bytes), known without asking it; undefined when it reads as one.
   */
  undecodable(hex: string): string | undefined;
  /** Sends a raw transaction (hex) to the node; its txid. A refusal is the node's error (NodeError). */
  broadcast(hex: string): Promise<string>;
  /** `{<blocks>: <sat/vB>}` for Esplora's targets the node has an estimate for. */
  feeEstimates(): Promise<string>;
  /** `{count, vsize, total_fee, fee_histogram}`. */
  mempool(): Promise<string>;
  mempoolTxids(): Promise<string>;
}

/** What a family's source is made of (compose/dataPath.ts hands it over). */
export interface EsploraDeps {
  engine: Engine;
  chain: ChainInfo;
  /** The index's database: callers' reads, so DATABASE_READ_URL's replica when set. */
  sql: Sql;
  /** Wraps the source's queries in the database guard (db/guardDatabase.ts). */
  guard<T extends object>(queries: T): T;
  log: Logger;
}
