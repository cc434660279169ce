/**
 * The EVM index in PostgreSQL (sql/evm/): the indexer's writes and reads of it. Blocks are written in
 * groups, each group in one transaction together with the progress row, so a crash leaves the index at a
 * group boundary: no gap, and a restart does not write a block twice. Rows go in as every family's do
 * (../indexRows.ts: `unnest` of text arrays), 20/32-byte values decoded from hex, amounts cast exactly.
 */
import type { Sql } from "../../db/database";
import type { IndexWriter } from "../../indexer/indexFamily";
import {
  addDayAddresses,
  encodeRows,
  fenceRewind,
  fenceWrite,
  indexerState,
  indexTable,
  insertRows,
  removeDayAddresses,
  startIndexerState,
  storedHash,
  type Tx,
  text,
  utcDay,
} from "../indexRows";
import type { DecodedBlock, TransferRow } from "./decode";

const hex = (value: string) => value.slice(2);
const hexOrNull = (value: string | null) => (value === null ? null : hex(value));

/** Each address a transfer touches, and its side: 1 sends, 2 receives, 3 both (a self-transfer, one row). */
function sidesOf(r: TransferRow): [string, number][] {
  if (r.to === r.from) return [[r.from, 3]];
  if (r.to === null) return [[r.from, 1]];
  return [
    [r.from, 1],
    [r.to, 2],
  ];
}

const BLOCKS = indexTable<DecodedBlock>(
  "blocks",
  [
    ["number", "bigint"],
    ["hash", "hex"],
    ["parent_hash", "hex"],
    ["timestamp", "bigint"],
    ["day", "date"],
    ["miner", "hex"],
    ["gas_used", "bigint"],
    ["gas_limit", "bigint"],
    ["base_fee_per_gas", "numeric"],
    ["transaction_count", "integer"],
    ["transfer_count", "integer"],
    ["uncle_count", "integer"],
    ["total_fees", "numeric"],
    ["burnt_fees", "numeric"],
    ["gas_price_sum", "numeric"],
  ],
  (b, n) => [
    [
      n,
      hex(b.hash),
      hex(b.parentHash),
      text(b.timestamp),
      utcDay(b.timestamp),
      hex(b.miner),
      text(b.gasUsed),
      text(b.gasLimit),
      b.baseFee === null ? null : text(b.baseFee),
      text(b.transactionCount),
      text(b.transfers.length),
      text(b.uncleCount),
      text(b.totalFees),
      text(b.burntFees),
      text(b.gasPriceSum),
    ],
  ],
);

const TRANSFERS = indexTable<DecodedBlock>(
  "transfers",
  [
    ["block_number", "bigint"],
    ["transaction_index", "integer"],
    ["log_index", "integer"],
    ["transaction_hash", "hex"],
    ["transfer_type", "smallint"],
    ["contract_address", "hex"],
    ["from_address", "hex"],
    ["to_address", "hex"],
    ["value", "numeric"],
    ["fee", "numeric"],
    ["transaction_error", "boolean"],
  ],
  (b, n) =>
    b.transfers.map((r) => [
      n,
      text(r.transactionIndex),
      text(r.logIndex),
      hex(r.transactionHash),
      text(r.kind),
      hexOrNull(r.contract),
      hex(r.from),
      hexOrNull(r.to),
      text(r.value),
      text(r.fee),
      text(r.error),
    ]),
);

/** One row per address a transfer touches, with what the address queries filter on (sql/evm/003). */
const TRANSFER_ADDRESSES = indexTable<DecodedBlock>(
  "transfer_addresses",
  [
    ["address", "hex"],
    ["block_number", "bigint"],
    ["transaction_index", "integer"],
    ["log_index", "integer"],
    ["side", "smallint"],
    ["transfer_type", "smallint"],
    ["contract_address", "hex"],
  ],
  (b, n) =>
    b.transfers.flatMap((r) =>
      sidesOf(r).map(([address, side]) => [
        hex(address),
        n,
        text(r.transactionIndex),
        text(r.logIndex),
        text(side),
        text(r.kind),
        hexOrNull(r.contract),
      ]),
    ),
);

const APPROVALS = indexTable<DecodedBlock>(
  "approvals",
  [
    ["block_number", "bigint"],
    ["transaction_index", "integer"],
    ["log_index", "integer"],
    ["transaction_hash", "hex"],
    ["contract_address", "hex"],
    ["owner", "hex"],
    ["spender", "hex"],
    ["value", "numeric"],
    ["fee", "numeric"],
    ["transaction_error", "boolean"],
  ],
  (b, n) =>
    b.approvals.map((r) => [
      n,
      text(r.transactionIndex),
      text(r.logIndex),
      hex(r.transactionHash),
      hex(r.contract),
      hex(r.owner),
      hex(r.spender),
      text(r.value),
      text(r.fee),
      text(r.error),
    ]),
);

const BLOCK_ADDRESSES = indexTable<DecodedBlock>(
  "block_addresses",
  [
    ["block_number", "bigint"],
    ["address", "hex"],
  ],
  (b, n) => b.addresses.map((address) => [n, hex(address)]),
);

/** In the order they are written: blocks first, which the others reference. */
const TABLES = [BLOCKS, TRANSFERS, TRANSFER_ADDRESSES, APPROVALS, BLOCK_ADDRESSES] as const;

/** The days' figures of blocks first to last, added to what the days had. */
async function addDailyStats(tx: Tx, first: string, last: string): Promise<void> {
  await tx`insert into daily_stats as s (day, from_block, to_block, block_count, transaction_count, transfer_count,
      active_addresses, total_gas_used, gas_price_sum, total_fees, burnt_fees)
    select day, min(number), max(number), count(*), sum(transaction_count), sum(transfer_count), 0,
      sum(gas_used), sum(gas_price_sum), sum(total_fees), sum(burnt_fees)
    from blocks where number between ${first}::bigint and ${last}::bigint group by day
    on conflict (day) do update set from_block = least(s.from_block, excluded.from_block),
      to_block = greatest(s.to_block, excluded.to_block), block_count = s.block_count + excluded.block_count,
      transaction_count = s.transaction_count + excluded.transaction_count,
      transfer_count = s.transfer_count + excluded.transfer_count,
      total_gas_used = s.total_gas_used + excluded.total_gas_used,
      gas_price_sum = s.gas_price_sum + excluded.gas_price_sum,
      total_fees = s.total_fees + excluded.total_fees, burnt_fees = s.burnt_fees + excluded.burnt_fees`;
}

/** Removes blocks from `from` up, and takes what they added out of their days' figures. */
async function removeFrom(tx: Tx, from: string): Promise<void> {
  const days = await removeDayAddresses(tx, from);
  if (days.length === 0) return;
  await tx`delete from blocks where number >= ${from}::bigint`;
  // The undone days' figures, again from what remains of them.
  await tx`delete from daily_stats where day = any(${days}::date[])`;
  await tx`insert into daily_stats (day, from_block, to_block, block_count, transaction_count, transfer_count,
      active_addresses, total_gas_used, gas_price_sum, total_fees, burnt_fees)
    select day, min(number), max(number), count(*), sum(transaction_count), sum(transfer_count),
      (select count(*) from day_addresses d where d.day = b.day),
      sum(gas_used), sum(gas_price_sum), sum(total_fees), sum(burnt_fees)
    from blocks b where day = any(${days}::date[]) group by day`;
}

/** The growing tables' partitions (sql/evm/005_index_partitions.sql), made one partition ahead of the writes. */
function createPartitioner(sql: Sql) {
  let partitionBlocks: bigint | undefined;
  let coveredUpTo = -1n;
  return async function partitionsFor(first: bigint, last: bigint): Promise<void> {
    if (partitionBlocks === undefined) {
      const [row] = await sql`select blocks::text as blocks from index_partitioning`;
      partitionBlocks = BigInt(row!.blocks as string);
    }
    const ahead = last + partitionBlocks;
    if (ahead <= coveredUpTo) return;
    // Outside the write's transaction: making a partition locks its table, briefly and once.
    await sql`select ensure_index_partitions(${text(first)}::bigint, ${text(ahead)}::bigint)`;
    coveredUpTo = (ahead / partitionBlocks + 1n) * partitionBlocks - 1n;
  };
}

export function createIndexWriter(sql: Sql): IndexWriter<DecodedBlock> {
  const partitionsFor = createPartitioner(sql);

  return {
    state: () => indexerState(sql),
    start: (firstBlock) => startIndexerState(sql, firstBlock),

    async hashOf(number) {
      const hash = await storedHash(sql, number);
      return hash === undefined ? undefined : `0x${hash}`;
    },

    async write(blocks, expectedLast) {
      if (blocks.length === 0) return;
      const rows = TABLES.map((table) => encodeRows(table, blocks));
      const first = text(blocks[0]!.number);
      const last = text(blocks[blocks.length - 1]!.number);
      await partitionsFor(BigInt(first), BigInt(last));
      await sql.begin(async (tx) => {
        await fenceWrite(tx, last, expectedLast);
        for (const table of rows) await insertRows(tx, table);
        await addDailyStats(tx, first, last);
        if (blocks.some((block) => block.addresses.length > 0)) {
          await addDayAddresses(tx, first, last);
        }
      });
    },

    async maintain() {
      // Autovacuum waits for a fifth of a table to be new before it looks (and PGlite has none): until
      // then the planner thinks a grown table is small, and index-only scans visit the heap.
      await sql`vacuum (analyze) blocks, transfers, transfer_addresses, approvals, block_addresses, daily_stats,
        day_addresses`;
    },

    async rewind(from, expectedLast) {
      await sql.begin(async (tx) => {
        await fenceRewind(tx, from, expectedLast);
        await removeFrom(tx, text(from));
      });
    },
  };
}
