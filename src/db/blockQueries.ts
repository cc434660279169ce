/** Reads of the block index: progress, blocks by time, and the daily figures. */
import type { Sql } from "./database";

export interface IndexedBlock {
  number: bigint;
  timestamp: bigint;
}

/** A UTC day's figures; amounts as exact decimal digits. */
export interface DayStatsRecord {
  day: string;
  fromBlock: string;
  toBlock: string;
  blockCount: number;
  transactionCount: string;
  transferCount: string;
  activeAddresses: string;
  totalGasUsed: string;
  gasPriceSum: string;
  totalFees: string;
  burntFees: string;
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
  /** A UTC day's figures (`YYYY-MM-DD`); undefined for a day without a block. */
  dayStats(day: string): Promise<DayStatsRecord | undefined>;
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

    async block(number: bigint): Promise<{ hash: string; timestamp: bigint } | undefined> {
      const [row] = await sql`select encode(hash, 'hex') as hash, timestamp::text as timestamp from blocks
        where number = ${number.toString()}::bigint`;
      return row
        ? { hash: `0x${row.hash as string}`, timestamp: BigInt(row.timestamp as string) }
        : undefined;
    },

    async atOrBefore(unixSeconds: bigint): Promise<IndexedBlock | undefined> {
      const [row] = await sql`select number::text as number, timestamp::text as timestamp from blocks
        where timestamp <= ${unixSeconds.toString()}::bigint order by timestamp desc, number desc limit 1`;
      return block(row as never);
    },

    async dayStats(day: string): Promise<DayStatsRecord | undefined> {
      const [row] =
        await sql`select day::text as day, from_block::text as from_block, to_block::text as to_block,
          block_count, transaction_count::text as transaction_count, transfer_count::text as transfer_count,
          active_addresses::text as active_addresses, total_gas_used::text as total_gas_used,
          gas_price_sum::text as gas_price_sum, total_fees::text as total_fees, burnt_fees::text as burnt_fees
        from daily_stats where day = ${day}::date`;
      if (!row) return undefined;
      return {
        day: row.day as string,
        fromBlock: row.from_block as string,
        toBlock: row.to_block as string,
        blockCount: row.block_count as number,
        transactionCount: row.transaction_count as string,
        transferCount: row.transfer_count as string,
        activeAddresses: row.active_addresses as string,
        totalGasUsed: row.total_gas_used as string,
        gasPriceSum: row.gas_price_sum as string,
        totalFees: row.total_fees as string,
        burntFees: row.burnt_fees as string,
      };
    },
  };
}
