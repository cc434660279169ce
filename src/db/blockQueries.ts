/**
 * Reads of the block index every family keeps (`blocks`: number, hash, timestamp; `indexer_state`): progress
 * and blocks by time. The daily figures are each family's (operations/stats.ts `DayStatsSource`).
 */
import type { Sql } from "./database";

export interface IndexedBlock {
  number: bigint;
  timestamp: bigint;
}

const block = (row: { number: string; timestamp: string } | undefined): IndexedBlock | undefined =>
  row ? { number: BigInt(row.number), timestamp: BigInt(row.timestamp) } : undefined;

export interface BlockQueries {
  /** The first and the last block of the index; undefined while it is empty. */
  bounds(): Promise<{ first: IndexedBlock; last: IndexedBlock } | undefined>;
  /** Where the index starts and ends (it ends at first - 1 while empty); undefined before it starts. */
  progress(): Promise<{ first: bigint; last: bigint } | undefined>;
  /** An indexed block's hash and time. */
  block(number: bigint): Promise<{ hash: string; timestamp: bigint } | undefined>;
  /** The last indexed block whose timestamp is at or before `unixSeconds`. */
  atOrBefore(unixSeconds: bigint): Promise<IndexedBlock | undefined>;
}

export function createBlockQueries(sql: Sql): BlockQueries {
  return {
    async bounds(): Promise<{ first: IndexedBlock; last: IndexedBlock } | undefined> {
      const [row] = await sql`select f.number::text as first_number, f.timestamp::text as first_timestamp,
          l.number::text as last_number, l.timestamp::text as last_timestamp
        from indexer_state s join blocks f on f.number = s.first_block join blocks l on l.number = s.last_block`;
      if (!row) return undefined;
      return {
        first: {
          number: BigInt(row.first_number as string),
          timestamp: BigInt(row.first_timestamp as string),
        },
        last: { number: BigInt(row.last_number as string), timestamp: BigInt(row.last_timestamp as string) },
      };
    },

    async progress(): Promise<{ first: bigint; last: bigint } | undefined> {
      const [row] = await sql`select first_block::text as first, last_block::text as last from indexer_state`;
      return row ? { first: BigInt(row.first as string), last: BigInt(row.last as string) } : undefined;
    },

    /** An indexed block's hash (hex digits as stored: no 0x) and time. */
    async block(number: bigint): Promise<{ hash: string; timestamp: bigint } | undefined> {
      const [row] = await sql`select encode(hash, 'hex') as hash, timestamp::text as timestamp from blocks
        where number = ${number.toString()}::bigint`;
      return row ? { hash: row.hash as string, timestamp: BigInt(row.timestamp as string) } : undefined;
    },

    async atOrBefore(unixSeconds: bigint): Promise<IndexedBlock | undefined> {
      const [row] = await sql`select number::text as number, timestamp::text as timestamp from blocks
        where timestamp <= ${unixSeconds.toString()}::bigint order by timestamp desc, number desc limit 1`;
      return block(row as never);
    },
  };
}
