/**
 * The indexer: backfills from INDEX_FROM_BLOCK, then follows the head, writing each block's transfers,
 * approvals and aggregates to PostgreSQL.
 *
 * - Blocks come through the node engine (batched, cached), fetched a window ahead (window.ts).
 * - Each group of blocks is written in one transaction with the progress row: after a crash the index ends
 *   at a group boundary, and a restart resumes there, with no gap and nothing written twice.
 * - Reorgs: a block whose parent is not the stored block below it, or a stored tip the chain follower no
 *   longer holds canonical, makes the indexer walk back to the common ancestor, delete everything from the
 *   fork up (one delete: the derived rows cascade), and index the new branch (rewind.ts).
 * - Far behind the head (INDEX_BULK_DISTANCE_BLOCKS), a bulk load: groups by COPY, several in flight, the
 *   read side's indexes built once it ends (bulk.ts).
 * - One indexer a database (leaderLock.ts): the others wait and serve queries, and one takes over when the
 *   leader's connection dies.
 *
 * What differs between chain families (how a block is read and decoded, the writer of its rows, what runs
 * before a write, the family's tables) is the family's `IndexFamily` (indexFamily.ts).
 */
import type { ChainInfo } from "../blockchain";
import type { BlockRefs } from "../blockRef";
import type { Sql } from "../db/database";
import type { ChainFollower } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import type { Logger } from "../log";
import { FencedError, type IndexFamily } from "./indexFamily";
import { dayOfBlocks, follow, lead } from "./lead";
import type { IndexerEvents, LeadContext } from "./leadContext";
import { leadWhileLocked } from "./leaderLock";
import { createMaintenance } from "./maintenance";
import { createWakeups } from "./wakeups";

export type { IndexerEvents } from "./leadContext";
export { BACKFILL_BLOCKS } from "./progress";

/** How often a standby instance tries for the lock (and a failed leader tries again). */
const LOCK_RETRY_MS = 2_000;

export interface Indexer {
  /** The last block in the index (from the database when this instance is not the leader). */
  readonly lastBlock: bigint | null;
  readonly leading: boolean;
  stop(): Promise<void>;
}

export interface IndexerOptions {
  sql: Sql;
  /** The embedded database serves one process (its directory is locked): no other instance can lead. */
  exclusive: boolean;
  /** False (INDEXER=off): never lead, only follow the progress of the instance that does. */
  enabled: boolean;
  engine: Engine;
  head: ChainFollower;
  chain: ChainInfo;
  /** The chain family's part of the index. */
  family: IndexFamily;
  /** How the family's nodes write block numbers. */
  refs: BlockRefs;
  /** INDEX_FROM_BLOCK; undefined: 0 on a dev chain, else the head minus a day. */
  fromBlock: number | undefined;
  /**
   * INDEX_BULK_DISTANCE_BLOCKS: bulk loads while further behind the head than this (0: never; bulk.ts);
   * undefined: a day of the chain's blocks.
   */
  bulkDistance: number | undefined;
  pollMs: number;
  log: Logger;
  events?: IndexerEvents;
}

export function startIndexer(options: IndexerOptions): Indexer {
  const { sql, events } = options;
  const log = options.log.child({ component: "indexer" });
  const index = options.family.createIndex({ sql, engine: options.engine, log, chain: options.chain });
  const wakeups = createWakeups(options.head);
  let stopped = false;
  let leading = false;
  const ctx: LeadContext = {
    index,
    refs: options.refs,
    head: options.head,
    chain: options.chain,
    fromBlock: options.fromBlock,
    pollMs: options.pollMs,
    // The embedded database is one connection: no groups in flight, and its COPY is not worth the switch.
    bulkDistance: options.exclusive
      ? 0n
      : options.bulkDistance === undefined
        ? dayOfBlocks(options.chain)
        : BigInt(options.bulkDistance),
    bulking: false,
    log,
    events,
    // No block yet: lastBlock < firstBlock.
    cursor: { firstBlock: 0n, lastBlock: -1n, lastHash: undefined },
    wakeups,
    maintenance: createMaintenance({
      writer: index.writer,
      log,
      maintained: (seconds) => events?.maintained?.(seconds),
    }),
    ahead: undefined,
    stalls: 0,
    stopped: () => stopped,
  };

  const running = (async () => {
    while (!stopped) {
      try {
        await leadWhileLocked({
          sql,
          exclusive: options.exclusive,
          enabled: options.enabled,
          lead: (stillLeading) => lead(ctx, stillLeading),
          follow: () => follow(ctx),
          leading: (now) => {
            leading = now;
          },
          wake: wakeups.wake,
        });
      } catch (error) {
        if (stopped) break;
        if (error instanceof FencedError)
          log.warn("another instance took over the index", { error: error.message });
        else log.error("indexing failed; retrying", { error });
      }
      leading = false;
      if (!stopped) await wakeups.sleep(LOCK_RETRY_MS);
    }
  })();

  return {
    get lastBlock() {
      const { firstBlock, lastBlock } = ctx.cursor;
      return lastBlock >= firstBlock ? lastBlock : null;
    },
    get leading() {
      return leading;
    },
    async stop() {
      stopped = true;
      wakeups.wake();
      await running;
      await ctx.maintenance.done();
    },
  };
}
