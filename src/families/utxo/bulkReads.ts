/**
 * What the read side knows of a bulk load under way (bulkLoad.ts; sql/utxo/013_bulk_load.sql `bulk_load`):
 * until it ends, its blocks' rows are in the index but the address totals, scripthashes and days' figures
 * they add are not, and the indexes by txid, by block and by address are dropped. A read whose answer
 * depends on those is refused (IndexBulkLoadError: 503, Retry-After, naming the bulk load and how far it
 * is) or answered another way (esplora/esploraQueries.ts `locate`), never answered wrong or by a scan of
 * the whole chain.
 *
 * The state is read from the database the reads read (a replica where one is set, whichever instance
 * writes the index), at most once every BULK_STATE_TTL_MS, on demand: never a query per request. A bulk
 * load that begins commits no row until BULK_NOTICE_MS after (bulkLoad.ts `begin`, `write`), so a state
 * read before it began is stale before the first of its rows is visible; one that ends is at most
 * BULK_STATE_TTL_MS more of refusals.
 */
import type { Sql } from "../../db/database";
import { IndexBulkLoadError } from "../../errors";

/**
 * How long a read of the state is taken as it is: an instance asks a one-row query at most 4 times a second
 * while its reads need it, and a bulk load waits twice this before its first rows (below).
 */
export const BULK_STATE_TTL_MS = 250;
/**
 * What a bulk load waits between its beginning and its first rows: every state read before it began has
 * expired BULK_STATE_TTL_MS before those rows are visible, what a read let through by one had to begin its
 * query (its snapshot is taken then: rows committed later are not in it).
 */
export const BULK_NOTICE_MS = 2 * BULK_STATE_TTL_MS;
/** When a refused read may be tried again: a bulk load lasts hours on a mainnet. */
export const BULK_RETRY_AFTER_S = 60;

/** A bulk load under way. */
export interface BulkLoadState {
  /** Its first block. */
  fromBlock: bigint;
  /** The index's last block: how far it is. */
  lastBlock: bigint;
  /**
   * The first UTC day whose figures it may change (the day of its first block; while none is written, of
   * the block below it); undefined where neither is in the index (a bulk load from block 0): every day.
   */
  fromDay: string | undefined;
}

export interface BulkReads {
  /** The bulk load under way, as read at most BULK_STATE_TTL_MS ago; undefined: none. */
  state(): Promise<BulkLoadState | undefined>;
  /** Throws IndexBulkLoadError for `what` (the plural a sentence starts with) while a bulk load is under way. */
  refuse(what: string): Promise<void>;
}

/** The refusal of `what` during the bulk load `state`. */
export function bulkRefusal(what: string, state: BulkLoadState): IndexBulkLoadError {
  return new IndexBulkLoadError(
    `${what} are not answered while the index is bulk loaded (from block ${state.fromBlock}, now at block ${state.lastBlock}): the address totals, scripthashes and daily figures of its blocks, and the lookups by address and by block, are made when it ends; retry later`,
    BULK_RETRY_AFTER_S,
  );
}

export function createBulkReads(sql: Sql, now: () => number = () => performance.now()): BulkReads {
  let read: { at: number; state: Promise<BulkLoadState | undefined> } | undefined;

  async function query(): Promise<BulkLoadState | undefined> {
    const [row] = await sql`select b.from_block::text as from, s.last_block::text as last,
        coalesce((select day from blocks where number = b.from_block),
          (select day from blocks where number = b.from_block - 1))::text as day
      from bulk_load b cross join indexer_state s`;
    if (!row) return undefined;
    return {
      fromBlock: BigInt(row.from as string),
      lastBlock: BigInt(row.last as string),
      fromDay: (row.day as string | null) ?? undefined,
    };
  }

  function state(): Promise<BulkLoadState | undefined> {
    const at = now();
    if (read && at - read.at < BULK_STATE_TTL_MS) return read.state;
    const reading = query();
    const current = { at, state: reading };
    read = current;
    // A failed read is not kept: the next asks again.
    reading.catch(() => {
      if (read === current) read = undefined;
    });
    return reading;
  }

  return {
    state,
    async refuse(what) {
      const bulk = await state();
      if (bulk) throw bulkRefusal(what, bulk);
    },
  };
}
