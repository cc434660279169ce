/**
 * The TRON family's daily figures (the design's §14): the `daily_stats` row the index writer keeps as blocks
 * are written and rewound (sql/tron/009_tron_index.sql; active addresses counted as their `day_addresses`
 * rows are written). A day is the UTC date of its blocks' times (milliseconds).
 */
import { Type as T } from "@sinclair/typebox";
import type { Sql } from "../../db/database";
import type { DayStatsReads, DayStatsSource } from "../../operations/stats";

const Exact = (description: string) => T.Integer({ minimum: 0, description: `${description}; exact` });

/** The interface's DayStats as this family fills it (same title): TRON's figures in place of gas. */
export const TronDayStats = T.Object(
  {
    date: T.String({ format: "date" }),
    fromBlock: T.Integer(),
    toBlock: T.Integer(),
    blockCount: T.Integer(),
    transactionCount: T.Integer({ description: "the day's transactions, of every contract type" }),
    transferCount: T.Integer({
      description: "the day's transfer rows (trx, TRC-20, TRC-721, TRC-10), failed included",
    }),
    trxTransferCount: T.Integer({
      description: "TRX transfers of successful transactions (internal included)",
    }),
    trc20TransferCount: T.Integer({ description: "TRC-20 Transfer events of successful transactions" }),
    activeAddresses: T.Integer({
      description: "distinct addresses that sent or received a transaction or a transfer",
    }),
    trxMoved: Exact("sun moved by those TRX transfers"),
    totalFees: Exact("sun burned: the sum of the transaction infos' `fee`"),
    energyFee: Exact("sun burned for energy (receipts' energy_fee)"),
    netFee: Exact("sun burned for bandwidth (receipts' net_fee)"),
    energyUsed: Exact("energy consumed (receipts' energy_usage_total), however paid"),
    bandwidthUsed: Exact("bandwidth points consumed from stake or the free allowance (receipts' net_usage)"),
  },
  { title: "DayStats" },
);

function createTronDayStatsReads(sql: Sql): DayStatsReads {
  return {
    async day(day: string): Promise<string | undefined> {
      const [s] =
        await sql`select day::text as day, from_block::text as from_block, to_block::text as to_block,
          block_count, transaction_count::text as transaction_count, transfer_count::text as transfer_count,
          trx_transfer_count::text as trx_transfer_count, trc20_transfer_count::text as trc20_transfer_count,
          active_addresses::text as active_addresses, trx_moved::text as trx_moved, total_fees::text as total_fees,
          energy_fee::text as energy_fee, net_fee::text as net_fee, energy_used::text as energy_used,
          bandwidth_used::text as bandwidth_used
        from daily_stats where day = ${day}::date`;
      if (!s) return undefined;
      // Built as text: the sums are numeric digits from the database, spliced in exactly.
      return `{"date":"${s.day}","fromBlock":${s.from_block},"toBlock":${s.to_block},"blockCount":${s.block_count},"transactionCount":${s.transaction_count},"transferCount":${s.transfer_count},"trxTransferCount":${s.trx_transfer_count},"trc20TransferCount":${s.trc20_transfer_count},"activeAddresses":${s.active_addresses},"trxMoved":${s.trx_moved},"totalFees":${s.total_fees},"energyFee":${s.energy_fee},"netFee":${s.net_fee},"energyUsed":${s.energy_used},"bandwidthUsed":${s.bandwidth_used}}`;
    },
  };
}

export const tronDayStats: DayStatsSource = { schema: TronDayStats, create: createTronDayStatsReads };
