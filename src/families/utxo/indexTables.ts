/**
 * The rows the Bitcoin family's index writes (sql/utxo/007_utxo_index.sql, 008's totals), shared by the
 * group writer (indexWriter.ts) and the bulk load (bulkLoad.ts): each table's rows of a block, the spends a
 * group marks, and the days' figures made again from the rows.
 */
import type { Sql } from "../../db/database";
import { type Cell, type IndexTable, indexTable, type Tx, text, utcDay } from "../indexRows";
import { blockSums, type UtxoBlock, type UtxoTransaction } from "./decode";
import { outpointKey } from "./indexedOutputs";

export const BLOCKS = indexTable<UtxoBlock>(
  "blocks",
  [
    ["number", "bigint"],
    ["hash", "hex"],
    ["parent_hash", "hex"],
    ["timestamp", "bigint"],
    ["header_time", "bigint"],
    ["median_time", "bigint"],
    ["day", "date"],
    ["size", "integer"],
    ["weight", "integer"],
    ["transaction_count", "integer"],
    ["transfer_count", "integer"],
    ["output_count", "integer"],
    ["total_output", "numeric"],
    ["total_fees", "numeric"],
    ["miners_reward", "numeric"],
    ["total_vsize", "bigint"],
  ],
  (b, n) => {
    const sums = blockSums(b);
    return [
      [
        n,
        b.hash,
        b.parentHash,
        text(b.timestamp),
        text(b.headerTime),
        text(b.medianTime),
        utcDay(b.timestamp),
        text(b.size),
        text(b.weight),
        text(sums.transactionCount),
        text(sums.transferCount),
        text(sums.outputCount),
        text(sums.totalOutput),
        text(sums.totalFees),
        text(sums.minersReward),
        text(sums.totalVsize),
      ],
    ];
  },
);

export const TRANSACTIONS = indexTable<UtxoBlock>(
  "transactions",
  [
    ["block_number", "bigint"],
    ["position", "integer"],
    ["txid", "hex"],
    ["fee", "bigint"],
    ["size", "integer"],
    ["vsize", "integer"],
    ["weight", "integer"],
    ["coinbase", "boolean"],
    ["input_count", "integer"],
    ["output_count", "integer"],
    ["from_addresses", "text[]"],
  ],
  (b, n) =>
    b.transactions.map((tx) => [
      n,
      tx.position,
      tx.txid,
      tx.fee,
      tx.size,
      tx.vsize,
      tx.weight,
      tx.coinbase,
      tx.inputs.length,
      tx.outputs.length,
      tx.fromAddresses,
    ]),
);

const OUTPUT_COLUMNS = [
  ["txid", "hex"],
  ["vout", "integer"],
  ["block_number", "bigint"],
  ["position", "integer"],
  ["address", "text"],
  ["script", "hex"],
  ["value", "bigint"],
  ["pays", "boolean"],
] as const;
/** A bulk load's outputs spent within its flight of groups are written spent. */
const SPENDER_COLUMNS = [
  ["spent_txid", "hex"],
  ["spent_vin", "integer"],
  ["spent_block", "bigint"],
] as const;

const outputCells = (tx: UtxoTransaction, o: UtxoTransaction["outputs"][number], n: string): Cell[] => [
  tx.txid,
  o.vout,
  n,
  tx.position,
  o.address,
  o.script,
  o.value,
  o.pays,
];

/** An output's spender: its transaction, the input's index, the block (as text). */
export type Spender = readonly [txid: string, vin: string, block: string];
/** Spenders of outputs by the outputs' txid, then vout: one lookup a transaction, none per output. */
export type Spenders = ReadonlyMap<string, ReadonlyMap<number, Spender>>;
const NO_SPENDERS: Spenders = new Map();

/**
 * The outputs of a group but those (by outpointKey) in `skip`: a BIP 30 coinbase's repeated outputs, the
 * first row kept (`repeatedOutputs`). A bulk load's (`spenders` given) are written with their spenders where
 * these are known (spent in the same flight of groups), by COPY.
 */
function outputsTable(skip: ReadonlySet<string>, spenders?: Spenders): IndexTable<UtxoBlock> {
  const spent = spenders ?? NO_SPENDERS;
  const columns = spenders ? [...OUTPUT_COLUMNS, ...SPENDER_COLUMNS] : OUTPUT_COLUMNS;
  return indexTable<UtxoBlock>("outputs", columns, (b, n) => {
    const rows: Cell[][] = [];
    for (const tx of b.transactions) {
      const by = spent.get(tx.txid);
      for (const o of tx.outputs) {
        if (skip.size > 0 && skip.has(outpointKey(tx.txid, o.vout))) continue;
        const cells = outputCells(tx, o, n);
        if (spenders) {
          const s = by?.get(o.vout);
          cells.push(s?.[0] ?? null, s?.[1] ?? null, s?.[2] ?? null);
        }
        rows.push(cells);
      }
    }
    return rows;
  });
}

/**
 * The outputs of `blocks` not to write: a coinbase's whose txid repeats one the index holds below them or
 * that `blocks` made before (BIP 30: Bitcoin's blocks 91,842 and 91,880 repeat two earlier coinbases), so
 * that an outpoint names one output of the index, the first. One lookup of the coinbases' txids a group (by
 * `transactions_txid`; the transaction row of a repeat is written, at its own place).
 */
async function repeatedOutputs(sql: Sql | Tx, blocks: readonly UtxoBlock[]): Promise<Set<string>> {
  const coinbases = blocks.flatMap((b) => b.transactions.filter((tx) => tx.coinbase));
  const skip = new Set<string>();
  if (coinbases.length === 0) return skip;
  const stored = new Set(
    (
      await sql`select distinct encode(txid, 'hex') as txid from transactions
        where txid = any(array(select decode(t, 'hex') from unnest(${coinbases.map((tx) => tx.txid)}::text[]) t))
          and block_number < ${text(blocks[0]!.number)}::bigint`
    ).map((r) => r.txid as string),
  );
  const seen = new Set<string>();
  for (const tx of coinbases) {
    for (const o of tx.outputs) {
      const key = outpointKey(tx.txid, o.vout);
      if (stored.has(tx.txid) || seen.has(key)) skip.add(key);
      seen.add(key);
    }
  }
  return skip;
}

/** What one transaction does to each address it touches (address_transactions' row). */
function addressRows(tx: UtxoTransaction) {
  const rows = new Map<string, { received: bigint; sent: bigint; outputs: number; inputs: number }>();
  const row = (address: string) => {
    let r = rows.get(address);
    if (!r) {
      r = { received: 0n, sent: 0n, outputs: 0, inputs: 0 };
      rows.set(address, r);
    }
    return r;
  };
  for (const o of tx.outputs) {
    if (o.address === null) continue;
    const r = row(o.address);
    r.received += o.value;
    r.outputs++;
  }
  for (const i of tx.inputs) {
    if (i.address === null) continue;
    const r = row(i.address);
    r.sent += i.value;
    r.inputs++;
  }
  return rows;
}

/** Columns of address_totals (sql/utxo/008) added and subtracted as the rows come and go. */
export const TOTALS = ["funded_count", "funded_sum", "spent_count", "spent_sum", "tx_count"] as const;
/** The totals of address_transaction rows (`rows`), by address. */
export const totalsOf = (
  rows: string,
) => `select address, sum(outputs) as funded_count, sum(received) as funded_sum,
  sum(inputs) as spent_count, sum(sent) as spent_sum, count(*) as tx_count from ${rows} group by address`;

export const ADDRESS_TRANSACTIONS = indexTable<UtxoBlock>(
  "address_transactions",
  [
    ["address", "text"],
    ["block_number", "bigint"],
    ["position", "integer"],
    ["txid", "hex"],
    ["received", "bigint"],
    ["sent", "bigint"],
    ["outputs", "integer"],
    ["inputs", "integer"],
  ],
  (b, n) =>
    b.transactions.flatMap((tx) =>
      [...addressRows(tx)].map(([address, r]) => [
        address,
        n,
        tx.position,
        tx.txid,
        r.received,
        r.sent,
        r.outputs,
        r.inputs,
      ]),
    ),
  "",
  // Each address's totals move with its rows, in the same statement.
  `insert into address_totals as s (address, ${TOTALS.join(", ")}) ${totalsOf("inserted")}
    on conflict (address) do update set ${TOTALS.map((c) => `${c} = s.${c} + excluded.${c}`).join(", ")}`,
);

/**
 * The tables a group of `blocks` writes, in the order they are written (blocks first, which the others
 * reference): the outputs but BIP 30's repeats (`repeatedOutputs`), with their spenders where `spenders` is
 * given (a bulk load's flight).
 */
export async function tablesToWrite(
  sql: Sql | Tx,
  blocks: readonly UtxoBlock[],
  spenders?: Spenders,
): Promise<readonly IndexTable<UtxoBlock>[]> {
  const outputs = outputsTable(await repeatedOutputs(sql, blocks), spenders);
  return [BLOCKS, TRANSACTIONS, outputs, ADDRESS_TRANSACTIONS];
}

/** The outputs of the index a group's inputs spend, with their spender, as columns. */
function spendsOf(blocks: readonly UtxoBlock[], known?: Spenders) {
  const cols = {
    txid: [] as string[],
    vout: [] as string[],
    by: [] as string[],
    vin: [] as string[],
    block: [] as string[],
  };
  for (const block of blocks) {
    const n = text(block.number);
    for (const tx of block.transactions) {
      tx.inputs.forEach((input, vin) => {
        if (!input.indexed || known?.get(input.txid)?.has(input.vout)) return;
        cols.txid.push(input.txid);
        cols.vout.push(text(input.vout));
        cols.by.push(tx.txid);
        cols.vin.push(text(vin));
        cols.block.push(n);
      });
    }
  }
  return cols;
}

/**
 * Marks the spent outputs (but those whose spender `written` says were written with it); every one must be
 * there, unspent (else the index is not what was resolved). Each spent output's transaction is probed by
 * txid apart (`offset 0`, as indexedOutputs.ts says why), then the output by its place: half the time of a
 * join on a copy of the bench's index.
 */
export async function markSpent(tx: Tx, blocks: readonly UtxoBlock[], written?: Spenders): Promise<void> {
  const s = spendsOf(blocks, written);
  if (s.txid.length === 0) return;
  const marked = await tx`update outputs o set spent_txid = decode(u.by, 'hex'), spent_vin = u.vin::integer,
      spent_block = u.block::bigint
    from unnest(${s.txid}::text[], ${s.vout}::text[], ${s.by}::text[], ${s.vin}::text[], ${s.block}::text[])
      as u(txid, vout, by, vin, block)
      cross join lateral (select block_number, position from transactions t
        where t.txid = decode(u.txid, 'hex') offset 0) t
    where o.block_number = t.block_number and o.position = t.position and o.vout = u.vout::integer
      and o.spent_txid is null`;
  if (marked.count !== s.txid.length) {
    throw new Error(
      `${s.txid.length - marked.count} spent outputs were missing or already spent in the index`,
    );
  }
}

/**
 * Makes the days' figures again from the blocks and address rows the index holds (a rewind's days; a bulk
 * load's, which left them): their active addresses, then their sums.
 */
export async function remakeDays(tx: Tx, days: readonly string[]): Promise<void> {
  await tx`delete from day_addresses where day = any(${days}::date[])`;
  await tx`insert into day_addresses (day, address)
    select distinct b.day, a.address from blocks b join address_transactions a on a.block_number = b.number
    where b.day = any(${days}::date[])`;
  await tx`delete from daily_stats where day = any(${days}::date[])`;
  await tx`insert into daily_stats (day, from_block, to_block, block_count, transaction_count, transfer_count,
      total_output, total_fees, miners_reward, total_vsize, active_addresses)
    select day, min(number), max(number), count(*), sum(transaction_count), sum(transfer_count), sum(total_output),
      sum(total_fees), sum(miners_reward), sum(total_vsize),
      (select count(*) from day_addresses d where d.day = b.day)
    from blocks b where day = any(${days}::date[]) group by day`;
}
