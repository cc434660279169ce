/**
 * What the indexer loop (indexer.ts) needs of a chain family: how a block is read from the node and decoded
 * into what the index keeps, the writer of those rows (and its rewind), what must be done before a group
 * of blocks is written, and the folder of sql/ that holds the family's tables (db/migrate.ts). The loop
 * itself (the leader lock, the window of blocks read ahead, write groups, reorgs, progress, maintenance)
 * is the same for every family.
 */
import type { ChainInfo } from "../blockchain";
import type { Sql } from "../db/database";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";

/** What the loop reads of a decoded block; the rest is the family's, for its writer. */
export interface IndexedBlock {
  readonly number: bigint;
  /** In the form the writer stores it (its `hashOf` answers the same), lower-case. */
  readonly hash: string;
  readonly parentHash: string;
  /** What the block adds to the index: write groups, maintenance and progress are counted in these. */
  readonly transfers: readonly unknown[];
}

/** Where the index starts and ends. */
export interface IndexerState {
  firstBlock: bigint;
  lastBlock: bigint;
}

/**
 * The index in the database. Blocks are written in groups, each in one transaction with the progress row,
 * so a crash leaves the index at a group boundary: no gap, and a restart does not write a block twice.
 */
export interface IndexWriter<B extends IndexedBlock> {
  state(): Promise<IndexerState | undefined>;
  /** Starts an empty index at `firstBlock` (a no-op when there is one). */
  start(firstBlock: bigint): Promise<IndexerState>;
  /** The stored hash of a block, as the decoded block has it. */
  hashOf(number: bigint): Promise<string | undefined>;
  /**
   * Appends blocks to an index that ends at `expectedLast`. Throws FencedError when it does not (another
   * instance wrote meanwhile): the writer has lost the lead and must stop.
   */
  write(blocks: readonly B[], expectedLast: bigint): Promise<void>;
  /** Removes every block from `from` up (and all derived from them); the index then ends at from - 1. */
  rewind(from: bigint, expectedLast: bigint): Promise<void>;
  /** Refreshes the planner's statistics and the visibility map of the tables the indexer grows. */
  maintain(): Promise<void>;
  /**
   * Drops what the writer remembers of the rows it wrote (a writer that remembers nothing has none): called
   * as this instance takes the lead, since another may have written and rewound the index meanwhile.
   */
  forget?(): void;
  /** The bulk load past the head's reach (bulk.ts), where the family has one. */
  readonly bulk?: BulkLoad<B>;
}

/**
 * A bulk load (indexer/bulk.ts): while the index is far behind the head, groups of blocks go in by COPY,
 * several in flight on connections of their own, the read side's indexes and the figures made from the rows
 * (the family's) left until it ends. Each group is still one transaction with the progress row, which the
 * groups take in order: a group commits only once the one below it has, so the index still ends at a group
 * boundary, with nothing written above its end.
 */
export interface BulkLoad<B extends IndexedBlock> {
  /**
   * Whether a bulk load is under way (begun and not finished: a restart resumes or finishes it), once what
   * its groups in flight left above the index's end when they did not all commit is undone. One whose end
   * had begun is ended here (false): its steps made cover the blocks it had, no more can be added.
   */
  resume(): Promise<boolean>;
  /** Begins one after the index's end: the read side's indexes go until `finish`. */
  begin(): Promise<void>;
  /**
   * Writes groups of consecutive blocks (in order, the first after `expectedLast`) at once, each its own
   * transaction; `committed(i)` is called, in order, as group i commits. Rejects with the first failure
   * (the groups below it committed, none above). FencedError as `IndexWriter.write`.
   */
  write(
    groups: readonly (readonly B[])[],
    expectedLast: bigint,
    committed: (group: number) => void,
  ): Promise<void>;
  /**
   * Ends it: the figures it left are made from the rows, the read side's indexes built (in steps, each
   * committed once; the load ends with the last, and a restart makes those not made).
   */
  finish(): Promise<void>;
}

/**
 * A family's side of one instance's index, on its database and node. `F` is a block as read from the node,
 * before it is decoded.
 */
export interface FamilyIndex<B extends IndexedBlock, F = unknown> {
  readonly writer: IndexWriter<B>;
  /**
   * Block `ref` (the node's form: the family's BlockRefs) read through the engine; undefined where the node
   * has not got it yet. Throws TornReadError when its parts were read from two sides of a reorg. A window
   * of blocks is read at once, then decoded in order.
   */
  fetchBlock(ref: string): Promise<F | undefined>;
  /** What the index keeps of a block read. */
  decodeBlock(fetched: F): B;
  /**
   * Runs before a group is written, so that a block's results are whole once it is in the index (EVM: the
   * metadata of the tokens its transfers name).
   */
  beforeWrite(blocks: readonly B[]): Promise<void>;
}

export interface IndexFamily<B extends IndexedBlock = IndexedBlock, F = unknown> {
  /** The folder of sql/ with the family's tables, applied with sql/common/ (db/migrate.ts). */
  readonly migrations: string;
  /** `log` is the indexer's; `chain` the chain served (its network: how its scripts name addresses). */
  createIndex(options: { sql: Sql; engine: Engine; log: Logger; chain: ChainInfo }): FamilyIndex<B, F>;
}

/** The index no longer ends where this writer left it: another instance writes it. */
export class FencedError extends Error {
  constructor(expected: bigint) {
    super(`the index no longer ends at block ${expected}: another instance is writing it`);
  }
}

/** A block's parts read from two sides of a reorg: read them again. */
export class TornReadError extends Error {}
