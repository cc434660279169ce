/**
 * The Bitcoin family's index in PostgreSQL (sql/utxo/007_utxo_index.sql, and 008's address totals): the
 * indexer's writes, and its rewind. Blocks are written in groups, each group in one transaction with the
 * progress row (a crash leaves the index at a group boundary). Rows go in as every family's do
 * (../indexRows.ts: `unnest` of text arrays), hex decoded to bytea, amounts cast exactly. The outputs a
 * group's inputs spend are marked spent in the same transaction (those of the group itself once inserted),
 * and each address's totals move with its rows; a rewind unspends what the removed blocks spent, deletes
 * their rows, table by table (taking them off the totals), and makes their days' figures again from what
 * remains. Scripts and (day, address) pairs already written are remembered (a bounded set), so that an
 * address seen again costs no insert that would do nothing, and forgotten whenever the writer cannot be sure
 * the database still holds them: a failed write, the index found elsewhere than the writer left it, a
 * rewind, a new term of the lead. Far behind the head, the bulk load (bulkLoad.ts) writes instead; the rows
 * of both are indexTables.ts'.
 */
import type { Sql } from "../../db/database";
import type { IndexWriter } from "../../indexer/indexFamily";
import {
  encodeRows,
  fenceRewind,
  fenceWrite,
  indexerState,
  insertRows,
  startIndexerState,
  storedHash,
  type Tx,
  text,
  utcDay,
} from "../indexRows";
import { createUtxoBulkLoad } from "./bulkLoad";
import type { UtxoBlock } from "./decode";
import { markSpent, remakeDays, TOTALS, tablesToWrite, totalsOf } from "./indexTables";
import { createPlannerStatistics } from "./plannerStatistics";

/** Addresses whose scripthash, and (day, address) pairs, are remembered as written: a busy chain's reused ones. */
const KNOWN_ADDRESSES = 100_000;

/**
 * Remembers what is written, so that it is not written again (the rows stay: a reused address costs nothing):
 * the last KNOWN_ADDRESSES / 2 to KNOWN_ADDRESSES keys, as two generations of a Set, the older dropped when
 * the newer fills. Only keys not known are added, so an LRU would keep the same keys; this costs a Set's
 * lookups and no bookkeeping per key (an LRU's was a tenth of a backfill's JavaScript time).
 */
function createKnown() {
  const generation = KNOWN_ADDRESSES / 2;
  let newer = new Set<string>();
  let older = new Set<string>();
  return {
    /** Those of `keys` not known yet. */
    fresh: (keys: Iterable<string>) => [...keys].filter((k) => !newer.has(k) && !older.has(k)),
    /** Marks them known, once their transaction committed. */
    add: (keys: readonly string[]) => {
      for (const k of keys) {
        newer.add(k);
        if (newer.size >= generation) {
          older = newer;
          newer = new Set();
        }
      }
    },
    clear: () => {
      newer = new Set();
      older = new Set();
    },
  };
}
type Known = ReturnType<typeof createKnown>;

/** The scripthash of each address the group's outputs pay (sql/utxo/007 `address_scripts`); what it wrote. */
async function addScripts(tx: Tx, blocks: readonly UtxoBlock[], known: Known): Promise<string[]> {
  const scripts = new Map<string, string>();
  for (const output of blocks.flatMap((b) => b.transfers)) {
    if (output.address !== null && !scripts.has(output.address)) scripts.set(output.address, output.script);
  }
  const fresh = known.fresh(scripts.keys());
  if (fresh.length === 0) return fresh;
  await tx`insert into address_scripts (script_hash, address)
    select sha256(decode(s, 'hex')), a from unnest(${fresh.map((a) => scripts.get(a)!)}::text[], ${fresh}::text[]) as u(s, a)
    on conflict (script_hash) do nothing`;
  return fresh;
}

/** The group's active addresses of each day (sql/utxo/007 `day_addresses`); the pairs it wrote. */
async function addDayAddresses(tx: Tx, blocks: readonly UtxoBlock[], known: Known): Promise<string[]> {
  const pairs = new Set<string>();
  for (const block of blocks) {
    const day = utcDay(block.timestamp);
    for (const t of block.transactions) {
      for (const o of t.outputs) if (o.address !== null) pairs.add(`${day} ${o.address}`);
      for (const i of t.inputs) if (i.address !== null) pairs.add(`${day} ${i.address}`);
    }
  }
  const fresh = known.fresh(pairs);
  if (fresh.length === 0) return fresh;
  // "YYYY-MM-DD address": the day is the first ten characters. A pair inserted is new to its day, whose
  // figures (written before this, in the same transaction) count it.
  await tx`with added as (
      insert into day_addresses (day, address)
      select left(p, 10)::date, substr(p, 12) from unnest(${fresh}::text[]) as u(p) on conflict do nothing
      returning day)
    update daily_stats s set active_addresses = s.active_addresses + a.n
    from (select day, count(*) as n from added group by day) a where s.day = a.day`;
  return fresh;
}

/** The days' figures of blocks first to last, added to what the days had. */
async function addDailyStats(tx: Tx, first: string, last: string): Promise<void> {
  await tx`insert into daily_stats as s (day, from_block, to_block, block_count, transaction_count, transfer_count,
      total_output, total_fees, miners_reward, total_vsize, active_addresses)
    select day, min(number), max(number), count(*), sum(transaction_count), sum(transfer_count), sum(total_output),
      sum(total_fees), sum(miners_reward), sum(total_vsize), 0
    from blocks where number between ${first}::bigint and ${last}::bigint group by day
    on conflict (day) do update set from_block = least(s.from_block, excluded.from_block),
      to_block = greatest(s.to_block, excluded.to_block), block_count = s.block_count + excluded.block_count,
      transaction_count = s.transaction_count + excluded.transaction_count,
      transfer_count = s.transfer_count + excluded.transfer_count,
      total_output = s.total_output + excluded.total_output, total_fees = s.total_fees + excluded.total_fees,
      miners_reward = s.miners_reward + excluded.miners_reward, total_vsize = s.total_vsize + excluded.total_vsize`;
}

/**
 * Deletes the address rows of blocks from `from` up, and takes them off their addresses' totals: an address
 * left without rows loses its totals row (the two changes touch different rows of it, as one statement must).
 */
async function removeAddressRows(tx: Tx, from: string): Promise<void> {
  await tx`with removed as (
      delete from address_transactions where block_number >= ${from}::bigint
      returning address, received, sent, outputs, inputs),
    r as (${tx.unsafe(totalsOf("removed"))}),
    emptied as (delete from address_totals s using r where s.address = r.address and s.tx_count = r.tx_count)
    update address_totals s set ${tx.unsafe(TOTALS.map((c) => `${c} = s.${c} - r.${c}`).join(", "))}
    from r where s.address = r.address and s.tx_count <> r.tx_count`;
}

/** Removes blocks from `from` up: unspends what they spent, and makes their days' figures again. */
async function removeFrom(tx: Tx, from: string): Promise<void> {
  const days = (await tx`select distinct day::text as day from blocks where number >= ${from}::bigint`).map(
    (r) => r.day as string,
  );
  if (days.length === 0) return;
  await tx`update outputs set spent_txid = null, spent_vin = null, spent_block = null
    where spent_block >= ${from}::bigint`;
  await removeAddressRows(tx, from);
  await tx`delete from outputs where block_number >= ${from}::bigint`;
  await tx`delete from transactions where block_number >= ${from}::bigint`;
  await tx`delete from blocks where number >= ${from}::bigint`;
  await remakeDays(tx, days);
}

export function createUtxoIndexWriter(sql: Sql): IndexWriter<UtxoBlock> {
  const statistics = createPlannerStatistics(sql);
  const knownScripts = createKnown();
  const knownDays = createKnown();
  // Where this writer last left the index, with what it remembers written there; undefined once it cannot
  // be sure the database still holds what it remembers.
  let lastWritten: bigint | undefined;
  const forget = () => {
    knownScripts.clear();
    knownDays.clear();
    lastWritten = undefined;
  };
  return {
    state: () => indexerState(sql),
    start: (firstBlock) => startIndexerState(sql, firstBlock),
    hashOf: (number) => storedHash(sql, number),
    forget,
    bulk: createUtxoBulkLoad(sql, statistics),

    async write(blocks, expectedLast) {
      if (blocks.length === 0) return;
      const rows = (await tablesToWrite(sql, blocks)).map((table) => encodeRows(table, blocks));
      const first = text(blocks[0]!.number);
      const last = text(blocks[blocks.length - 1]!.number);
      // The index ends elsewhere than this writer left it: another instance wrote (and may have rewound)
      // meanwhile, or a database crash lost the last groups' commits (synchronous_commit off, below; a
      // reconnect that lost none finds the index where it was). Rows written again must not be skipped.
      if (lastWritten !== expectedLast) forget();
      const writing = sql.begin(async (tx) => {
        await fenceWrite(tx, last, expectedLast);
        // The index is made again from the node: a commit lost to a database crash (the last few, never a
        // part of one) leaves it at an earlier group, where the fence above sends the indexer back to resume.
        // Not waiting for each group's WAL flush is a tenth of a backfill's time.
        // The statements are sent at once: the connection runs them in this order (what each reads, the ones
        // before wrote), and the next one's rows are serialized here while the database runs the one before
        // (the backend idle in the transaction a third less of the time; README "Bench").
        const statements = [
          tx`set local synchronous_commit = off`,
          ...rows.map((table) => insertRows(tx, table)),
          markSpent(tx, blocks),
          addDailyStats(tx, first, last),
        ];
        const scripts = addScripts(tx, blocks, knownScripts);
        const days = addDayAddresses(tx, blocks, knownDays);
        await Promise.all([...statements, scripts, days]);
        return { scripts: await scripts, days: await days };
      });
      // A failed write committed or not (a connection lost with the commit's answer): nothing remembered holds.
      const written = await writing.catch((error) => {
        forget();
        throw error;
      });
      knownScripts.add(written.scripts);
      knownDays.add(written.days);
      lastWritten = BigInt(last);
      await statistics.written(blocks.reduce((n, b) => n + b.transactions.length, 0));
    },

    async maintain() {
      // Autovacuum waits for a fifth of a table to be new before it looks: until then the planner thinks a
      // grown table is small, and index-only scans visit the heap.
      await sql`vacuum (analyze) blocks, transactions, outputs, address_transactions, address_totals, address_scripts,
        daily_stats, day_addresses`;
    },

    async rewind(from, expectedLast) {
      // The undone days' pairs are made again from what remains: some of those remembered go.
      forget();
      await sql.begin(async (tx) => {
        await fenceRewind(tx, from, expectedLast);
        await removeFrom(tx, text(from));
      });
    },
  };
}

/** The stored running maximum of header times of block `number`; undefined where the index has none. */
export async function storedTimestamp(sql: Sql, number: bigint): Promise<bigint | undefined> {
  const [row] =
    await sql`select timestamp::text as timestamp from blocks where number = ${text(number)}::bigint`;
  return row ? BigInt(row.timestamp as string) : undefined;
}
