/**
 * The Bitcoin family's daily figures (docs/interface.md §16.5), in satoshis: the `daily_stats` row the index
 * writer keeps as blocks are written and rewound (sql/utxo/; its active addresses counted as their
 * `day_addresses` pairs are written), with the average fee rate derived from its sums. A day is the UTC
 * date of its blocks' running-maximum time.
 */
import { Type as T } from "@sinclair/typebox";
import type { Sql } from "../../db/database";
import type { DayStatsReads, DayStatsSource } from "../../operations/stats";
import { bulkRefusal, createBulkReads } from "./bulkReads";
import { Satoshis } from "./transferShape";

/** The interface's DayStats as this family fills it (same title): the EVM-only members absent. */
export const UtxoDayStats = T.Object(
  {
    date: T.String({ format: "date" }),
    fromBlock: T.Integer(),
    toBlock: T.Integer(),
    blockCount: T.Integer(),
    transactionCount: T.Integer({ description: "the day's transactions, coinbases included" }),
    transferCount: T.Integer({ description: "the day's transfer rows (outputs paying another address)" }),
    activeAddresses: T.Integer({
      description: "distinct addresses an output of the day's blocks pays or an input of them spends from",
    }),
    totalOutput: Satoshis("the outputs of the day's transactions other than coinbases"),
    totalFees: Satoshis("the fees of the day's transactions (inputs minus outputs)"),
    minersReward: Satoshis("the outputs of the day's coinbases: subsidy and the fees claimed"),
    averageFeeRate: T.Integer({
      minimum: 0,
      description:
        "sat/vB, floored: totalFees over the virtual size of the day's transactions other than coinbases",
    }),
  },
  { title: "DayStats" },
);

function createUtxoDayStatsReads(sql: Sql): DayStatsReads {
  const bulk = createBulkReads(sql);
  return {
    async day(day: string): Promise<string | undefined> {
      // A bulk load makes the figures of the days of its blocks when it ends (bulkReads.ts): earlier days'
      // are complete.
      const loading = await bulk.state();
      if (loading && (loading.fromDay === undefined || day >= loading.fromDay)) {
        throw bulkRefusal(`the figures of ${day}`, loading);
      }
      const [s] =
        await sql`select day::text as day, from_block::text as from_block, to_block::text as to_block,
          block_count, transaction_count::text as transaction_count, transfer_count::text as transfer_count,
          active_addresses::text as active_addresses,
          total_output::text as total_output, total_fees::text as total_fees,
          miners_reward::text as miners_reward, total_vsize::text as total_vsize
        from daily_stats where day = ${day}::date`;
      if (!s) return undefined;
      const vsize = BigInt(s.total_vsize as string);
      const averageFeeRate = vsize > 0n ? BigInt(s.total_fees as string) / vsize : 0n;
      // Built as text: the sums are numeric digits from the database, spliced in exactly.
      return `{"date":"${s.day}","fromBlock":${s.from_block},"toBlock":${s.to_block},"blockCount":${s.block_count},"transactionCount":${s.transaction_count},"transferCount":${s.transfer_count},"activeAddresses":${s.active_addresses},"totalOutput":${s.total_output},"totalFees":${s.total_fees},"minersReward":${s.miners_reward},"averageFeeRate":${averageFeeRate}}`;
    },
  };
}

export const utxoDayStats: DayStatsSource = { schema: UtxoDayStats, create: createUtxoDayStatsReads };
