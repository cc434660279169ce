/**
 * The EVM family's daily figures (docs/interface.md §4.5): the `daily_stats` row the index writer keeps
 * (indexWriter.ts), with the average gas price and the miners' reward derived from its sums.
 */
import type { Sql } from "../../db/database";
import type { DayStatsReads, DayStatsSource } from "../../operations/stats";
import { DayStats } from "../../schemas";

function createEvmDayStatsReads(sql: Sql): DayStatsReads {
  return {
    async day(day: string): Promise<string | undefined> {
      const [s] =
        await sql`select day::text as day, from_block::text as from_block, to_block::text as to_block,
          block_count, transaction_count::text as transaction_count, transfer_count::text as transfer_count,
          active_addresses::text as active_addresses, total_gas_used::text as total_gas_used,
          gas_price_sum::text as gas_price_sum, total_fees::text as total_fees, burnt_fees::text as burnt_fees
        from daily_stats where day = ${day}::date`;
      if (!s) return undefined;
      const transactions = BigInt(s.transaction_count as string);
      const averageGasPrice = transactions > 0n ? BigInt(s.gas_price_sum as string) / transactions : 0n;
      const minersReward = BigInt(s.total_fees as string) - BigInt(s.burnt_fees as string);
      // Built as text: the sums are numeric digits from the database, spliced in exactly.
      return `{"date":"${s.day}","fromBlock":${s.from_block},"toBlock":${s.to_block},"blockCount":${s.block_count},"transactionCount":${s.transaction_count},"transferCount":${s.transfer_count},"activeAddresses":${s.active_addresses},"totalGasUsed":${s.total_gas_used},"averageGasPrice":${averageGasPrice},"totalFees":${s.total_fees},"burntFees":${s.burnt_fees},"minersReward":${minersReward},"uncleBlockReward":0}`;
    },
  };
}

export const evmDayStats: DayStatsSource = { schema: DayStats, create: createEvmDayStatsReads };
