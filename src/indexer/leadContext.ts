/** What the parts of the indexer's loop share while this instance leads (lead.ts, window.ts, rewind.ts). */
import type { ChainInfo } from "../blockchain";
import type { BlockRefs } from "../blockRef";
import type { ChainFollower } from "../engine/chainFollower";
import type { Logger } from "../log";
import type { FamilyIndex, IndexedBlock } from "./indexFamily";
import type { Maintenance } from "./maintenance";
import type { Wakeups } from "./wakeups";

export interface IndexerEvents {
  /** A group written: its blocks and transfers, the last block, and the seconds its transaction took. */
  written?(blocks: number, transfers: number, last: bigint, seconds: number): void;
  reorg?(from: bigint): void;
  maintained?(seconds: number): void;
}

/** Where the index ends, as this instance knows it: an index with no block has lastBlock < firstBlock. */
export interface IndexCursor {
  firstBlock: bigint;
  lastBlock: bigint;
  /** The hash of lastBlock, as stored; undefined while the index holds no block. */
  lastHash: string | undefined;
}

/** The next window's blocks, read while this one is written (window.ts); its first block's number. */
export interface ReadAhead {
  from: bigint;
  blocks: Promise<unknown[]>;
}

export interface LeadContext {
  readonly index: FamilyIndex<IndexedBlock>;
  /** How the family's nodes write block numbers. */
  readonly refs: BlockRefs;
  readonly head: ChainFollower;
  readonly chain: ChainInfo;
  /** INDEX_FROM_BLOCK; undefined: 0 on a dev chain, else the head minus a day. */
  readonly fromBlock: number | undefined;
  readonly pollMs: number;
  /** INDEX_BULK_DISTANCE_BLOCKS: the index bulk loads while further behind the head than this (0: never). */
  readonly bulkDistance: bigint;
  /** A bulk load is under way (bulk.ts): begun, not yet finished. */
  bulking: boolean;
  readonly log: Logger;
  readonly events: IndexerEvents | undefined;
  readonly cursor: IndexCursor;
  readonly wakeups: Wakeups;
  readonly maintenance: Maintenance;
  /** The reads of the window after the one being written, if started. */
  ahead: ReadAhead | undefined;
  /** Windows in a row that could not progress (window.ts backs off by it); 0 once a group is written. */
  stalls: number;
  stopped(): boolean;
}
