/**
 * The TRON index in PostgreSQL (sql/tron/009_tron_index.sql): the indexer's writes and its rewind. Blocks are
 * written in groups, each in one transaction with the progress row (../indexRows.ts fences it), rows as
 * every family's are (`unnest` of text arrays; addresses and hashes decoded from hex, amounts cast
 * exactly). The tables have no foreign keys: the rewind deletes a block's rows table by table.
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
import type { DecodedTronBlock, TronTransferRow } from "./decode";

const MS_PER_SECOND = 1000n;

/** Each address a transfer touches, and its side: 1 sends, 2 receives, 3 both (a self-transfer, one row). */
function sidesOf(r: TronTransferRow): [string, number][] {
  if (r.to === r.from) return [[r.from, 3]];
  if (r.to === null) return [[r.from, 1]];
  return [
    [r.from, 1],
    [r.to, 2],
  ];
}

const BLOCKS = indexTable<DecodedTronBlock>(
  "blocks",
  [
    ["number", "bigint"],
    ["hash", "hex"],
    ["parent_hash", "hex"],
    ["timestamp", "bigint"],
    ["timestamp_ms", "bigint"],
    ["day", "date"],
    ["witness", "hex"],
    ["transaction_count", "integer"],
    ["transfer_count", "integer"],
    ["trx_transfer_count", "integer"],
    ["trc20_transfer_count", "integer"],
    ["trx_moved", "numeric"],
    ["total_fees", "numeric"],
    ["energy_fee", "numeric"],
    ["net_fee", "numeric"],
    ["energy_used", "numeric"],
    ["bandwidth_used", "numeric"],
  ],
  (b, n) => {
    const seconds = b.timestampMs / MS_PER_SECOND;
    const s = b.sums;
    return [
      [
        n,
        b.hash.slice(2),
        b.parentHash.slice(2),
        text(seconds),
        text(b.timestampMs),
        utcDay(seconds),
        b.witness,
        text(b.transactions.length),
        text(b.transfers.length),
        text(s.trxTransfers),
        text(s.trc20Transfers),
        text(s.trxMoved),
        text(s.totalFees),
        text(s.energyFee),
        text(s.netFee),
        text(s.energyUsed),
        text(s.bandwidthUsed),
      ],
    ];
  },
);

const TRANSACTIONS = indexTable<DecodedTronBlock>(
  "transactions",
  [
    ["block_number", "bigint"],
    ["transaction_index", "integer"],
    ["hash", "hex"],
    ["contract_type", "text"],
    ["owner_address", "hex"],
    ["to_address", "hex"],
    ["contract_ret", "text"],
    ["fee", "numeric"],
    ["energy_used", "bigint"],
    ["energy_fee", "numeric"],
    ["net_usage", "bigint"],
    ["net_fee", "numeric"],
    ["created", "hex"],
  ],
  (b, n) =>
    b.transactions.map((t) => [
      n,
      text(t.index),
      t.hash,
      t.contractType,
      t.owner,
      t.to,
      t.contractRet,
      text(t.fee),
      text(t.energyUsed),
      text(t.energyFee),
      text(t.netUsage),
      text(t.netFee),
      t.created,
    ]),
);

const TRANSFERS = indexTable<DecodedTronBlock>(
  "transfers",
  [
    ["block_number", "bigint"],
    ["transaction_index", "integer"],
    ["log_index", "integer"],
    ["transaction_hash", "hex"],
    ["transfer_type", "smallint"],
    ["contract_address", "hex"],
    ["asset_id", "text"],
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
      r.transactionHash,
      text(r.kind),
      r.contract,
      r.assetId,
      r.from,
      r.to,
      text(r.value),
      text(r.fee),
      text(r.error),
    ]),
);

const TRANSFER_ADDRESSES = indexTable<DecodedTronBlock>(
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
        address,
        n,
        text(r.transactionIndex),
        text(r.logIndex),
        text(side),
        text(r.kind),
        r.contract,
      ]),
    ),
);

const APPROVALS = indexTable<DecodedTronBlock>(
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
      r.transactionHash,
      r.contract,
      r.owner,
      r.spender,
      text(r.value),
      text(r.fee),
      text(r.error),
    ]),
);

const BLOCK_ADDRESSES = indexTable<DecodedTronBlock>(
  "block_addresses",
  [
    ["block_number", "bigint"],
    ["address", "hex"],
  ],
  (b, n) => b.addresses.map((address) => [n, address]),
);

const TABLES = [BLOCKS, TRANSACTIONS, TRANSFERS, TRANSFER_ADDRESSES, APPROVALS, BLOCK_ADDRESSES] as const;
/** The tables whose rows belong to a block, by its number: what a rewind deletes. */
const BLOCK_TABLES = ["transactions", "transfers", "transfer_addresses", "approvals", "block_addresses"];

/** The sums daily_stats keeps of its day's blocks (the same names in both tables). */
const SUMS = [
  "transaction_count",
  "transfer_count",
  "trx_transfer_count",
  "trc20_transfer_count",
  "trx_moved",
  "total_fees",
  "energy_fee",
  "net_fee",
  "energy_used",
  "bandwidth_used",
] as const;
// SQL text made of the constant names above, never of data.
const SUM_COLUMNS = SUMS.join(", ");
const SUM_OF = SUMS.map((c) => `sum(${c})`).join(", ");
const SUM_ADD = SUMS.map((c) => `${c} = s.${c} + excluded.${c}`).join(", ");

/** The days' figures of blocks first to last, added to what the days had. */
async function addDailyStats(tx: Tx, first: string, last: string): Promise<void> {
  await tx`insert into daily_stats as s (day, from_block, to_block, block_count, active_addresses,
      ${tx.unsafe(SUM_COLUMNS)})
    select day, min(number), max(number), count(*), 0, ${tx.unsafe(SUM_OF)}
    from blocks where number between ${first}::bigint and ${last}::bigint group by day
    on conflict (day) do update set from_block = least(s.from_block, excluded.from_block),
      to_block = greatest(s.to_block, excluded.to_block), block_count = s.block_count + excluded.block_count,
      ${tx.unsafe(SUM_ADD)}`;
}

/** Removes blocks from `from` up, every row of theirs, and makes their days' figures again from what remains. */
async function removeFrom(tx: Tx, from: string): Promise<void> {
  const days = await removeDayAddresses(tx, from);
  if (days.length === 0) return;
  for (const table of BLOCK_TABLES) await tx`delete from ${tx(table)} where block_number >= ${from}::bigint`;
  await tx`delete from blocks where number >= ${from}::bigint`;
  await tx`delete from daily_stats where day = any(${days}::date[])`;
  await tx`insert into daily_stats (day, from_block, to_block, block_count, active_addresses, ${tx.unsafe(SUM_COLUMNS)})
    select day, min(number), max(number), count(*), (select count(*) from day_addresses d where d.day = b.day),
      ${tx.unsafe(SUM_OF)}
    from blocks b where day = any(${days}::date[]) group by day`;
}

export function createTronIndexWriter(sql: Sql): IndexWriter<DecodedTronBlock> {
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
      await sql.begin(async (tx) => {
        await fenceWrite(tx, last, expectedLast);
        for (const table of rows) await insertRows(tx, table);
        await addDailyStats(tx, first, last);
        if (blocks.some((block) => block.addresses.length > 0)) await addDayAddresses(tx, first, last);
      });
    },

    async maintain() {
      // As the EVM writer's: the planner learns the grown tables' sizes, index-only scans skip the heap.
      await sql`vacuum (analyze) blocks, transactions, transfers, transfer_addresses, approvals, block_addresses,
        daily_stats, day_addresses`;
    },

    async rewind(from, expectedLast) {
      await sql.begin(async (tx) => {
        await fenceRewind(tx, from, expectedLast);
        await removeFrom(tx, text(from));
      });
    },
  };
}
