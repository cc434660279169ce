/**
 * The Bitcoin family's bulk load (indexer/bulk.ts; sql/utxo/013_bulk_load.sql): while the index is far
 * behind the head, a window's groups are written at once, each by COPY in its own transaction, and what
 * only the read side needs waits for the end.
 *
 * - Indexes: those no writer query reads (READ_SIDE_INDEXES: an address's unspent outputs and its rows, by
 *   address and by block) are dropped when it begins and built once when it ends, from the definitions kept
 *   in `bulk_load`. The writers' own stay: the primary keys of blocks, transactions and outputs and the index
 *   by txid (the inputs' outputs are found and marked spent through them: sql/utxo/017), `outputs_spent_block`
 *   (what a resume unspends), and the keys the figures' inserts conflict on. A rewind never runs during a
 *   bulk load: the loop finishes it first.
 * - Spends: an output spent within the same flight of groups is written with its spender (no update of a
 *   row just written); the others are marked as the group writer does, in the spending group's transaction.
 *   A spender's group may then not commit when the output's did (a failure, a crash): `resume` unspends what
 *   blocks above the index's end spent.
 * - Figures: each address's totals (008), its scripthash, the days' active addresses and figures are made
 *   from the rows of the bulk load's blocks when it ends: one pass over the rows instead of one upsert per
 *   address per group. They come out as the group writer's: the totals are sums of the rows, a day's figures
 *   and active addresses are made from the day's blocks and rows as a rewind makes them, and an address's
 *   scripthash is that of the first output paying it. Until it ends they cover the blocks below it only: the
 *   reads that depend on them are refused meanwhile (bulkReads.ts), and it commits no row before those reads
 *   know it began.
 * - The end (sql/utxo/015): the figures and each index are steps, FINISH_STEPS_AT_ONCE at a time, each in a
 *   transaction of its own that records it in `bulk_load.finished` (they read the rows, none writes what
 *   another reads); the primary keys and the end of `bulk_load` last, in one transaction. An end cut short
 *   makes only the steps not recorded, and is ended before anything else is written (`resume`).
 */
import type { Sql } from "../../db/database";
import type { BulkLoad } from "../../indexer/indexFamily";
import { copyRows, fenceWrite, type Tx, text } from "../indexRows";
import { BULK_NOTICE_MS } from "./bulkReads";
import type { UtxoBlock } from "./decode";
import {
  markSpent,
  remakeDays,
  type Spender,
  type Spenders,
  TOTALS,
  tablesToWrite,
  totalsOf,
} from "./indexTables";
import type { PlannerStatistics } from "./plannerStatistics";

/** The indexes only the read side (and a rewind) reads, dropped while a bulk load runs. */
const READ_SIDE_INDEXES = [
  "outputs_unspent",
  "address_transactions_pkey",
  "address_transactions_sending",
  "address_transactions_block",
];
/** Of those, the primary keys: dropped and added back as the table's constraint. */
const PRIMARY_KEYS: Record<string, string> = { address_transactions_pkey: "address_transactions" };

/**
 * The spenders of the outputs a flight of groups makes and spends itself (an input resolved from the index
 * or the flight, whose transaction the flight made before it).
 */
function spendersWithin(blocks: readonly UtxoBlock[]): Spenders {
  const made = new Set<string>();
  const spenders = new Map<string, Map<number, Spender>>();
  for (const block of blocks) {
    const n = text(block.number);
    for (const tx of block.transactions) {
      tx.inputs.forEach((input, vin) => {
        if (!input.indexed || !made.has(input.txid)) return;
        const byVout = spenders.get(input.txid) ?? new Map<number, Spender>();
        spenders.set(input.txid, byVout.set(input.vout, [tx.txid, text(vin), n]));
      });
      made.add(tx.txid);
    }
  }
  return spenders;
}

/** Unspends what blocks above the index's end spent (a spender's group that did not commit). */
async function unspendAboveEnd(sql: Sql | Tx): Promise<void> {
  await sql`update outputs set spent_txid = null, spent_vin = null, spent_block = null
    where spent_block > (select last_block from indexer_state)`;
}

/**
 * Steps of a bulk load's end made at once, each in a transaction of its own on a connection of its own. Two:
 * on two cores the bench's 1,000 blocks loaded in 18.8 s against 22.4 s one at a time, for the same CPU
 * (README, the utxoindex figures); three at once cost PostgreSQL about 4 CPU-seconds more and ended no
 * sooner. A machine with cores to spare may gain from more.
 */
const FINISH_STEPS_AT_ONCE = 2;
/**
 * What a step's hashes and sorts may take in memory (PostgreSQL's default, 4 MB, sends the grouping of the
 * outputs' scripts and of the address rows to disk), and an index build's.
 */
const FINISH_WORK_MEM = "64MB";
const FINISH_INDEX_MEM = "256MB";
/** The scripthashes' step is made in this many parts at once. */
const SCRIPT_PARTS = 2;

/** A step of a bulk load's end: what it makes, by the name `bulk_load.finished` records it under. */
interface FinishStep {
  name: string;
  make: (tx: Tx) => Promise<unknown>;
}

/**
 * The steps that make what a bulk load of blocks `from` to `last` left, the longest first, none reading
 * what another writes: each address's totals, scripthashes and the days' figures from the rows, and the read
 * side's indexes (their primary keys are added once all are made: that locks the table against reads).
 */
function finishSteps(from: string, last: string, definitions: Record<string, string>): FinishStep[] {
  return [
    // The longest step, cut in SCRIPT_PARTS by the address's last character (a checksum's: even parts), so
    // that it is not the end's critical path alone.
    ...Array.from({ length: SCRIPT_PARTS }, (_, part) => ({
      name: `scripts ${part + 1}/${SCRIPT_PARTS}`,
      // Each address's distinct scripts first (a hash of 1.1 million outputs into 200,000 pairs on the
      // bench chain), then its first of them: sorting every output by address instead took three times
      // the CPU (EXPLAIN ANALYZE on that chain: 1.1 s in one process against 2.3 s in three). Those not
      // there yet are inserted, as the totals below.
      make: async (tx: Tx) => {
        await tx`insert into address_scripts (script_hash, address)
          select hash, address from (
            select sha256(script) as hash, address from (
              select distinct on (address) address, script from (
                select address, script, min(array[block_number, position, vout]) as first from outputs
                where block_number between ${from}::bigint and ${last}::bigint and address is not null
                  and ascii(right(address, 1)) % ${SCRIPT_PARTS}::integer = ${part}::integer
                group by address, script) p
              order by address, first) f) g
          where not exists (select from address_scripts s where s.script_hash = g.hash)`;
      },
    })),
    {
      name: "totals",
      // Added to the addresses' rows where they have one (an index bulk loaded past its first blocks), else
      // inserted: the writer of the table alone (no conflict to arbitrate per row: a third less time).
      make: async (tx) => {
        await tx`with r as (select * from address_transactions
            where block_number between ${from}::bigint and ${last}::bigint),
          a as materialized (${tx.unsafe(totalsOf("r"))}),
          added as (update address_totals s set ${tx.unsafe(TOTALS.map((c) => `${c} = s.${c} + a.${c}`).join(", "))}
            from a where s.address = a.address)
          insert into address_totals (address, ${tx.unsafe(TOTALS.join(", "))})
          select address, ${tx.unsafe(TOTALS.join(", "))} from a
          where not exists (select from address_totals t where t.address = a.address)`;
      },
    },
    {
      name: "days",
      make: async (tx) => {
        const days = (
          await tx`select distinct day::text as day from blocks where number between ${from}::bigint and ${last}::bigint`
        ).map((r) => r.day as string);
        if (days.length > 0) await remakeDays(tx, days);
      },
    },
    // The primary key first: the largest build (a unique index over the widest key).
    ...Object.entries(definitions)
      .sort(([a], [b]) => Number(b in PRIMARY_KEYS) - Number(a in PRIMARY_KEYS))
      .map(([name, definition]) => ({ name, make: (tx: Tx) => tx.unsafe(definition) })),
  ];
}

/**
 * Makes each step not yet recorded made, FINISH_STEPS_AT_ONCE at once, each in its own transaction that
 * records it: a step made elsewhere meanwhile (a second instance ending the same load) rolls back. A step
 * that fails does not keep the others from being made (they are independent); the first failure is thrown
 * once every step was tried, and the next try makes only those not recorded.
 */
async function makeSteps(sql: Sql, steps: readonly FinishStep[]): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < steps.length) {
      const step = steps[next++]!;
      await sql
        .begin(async (tx) => {
          // Index builds over a whole chain's rows take longer than any request may.
          await tx`select set_config('statement_timeout', '0', true), set_config('work_mem', ${FINISH_WORK_MEM}, true),
            set_config('maintenance_work_mem', ${FINISH_INDEX_MEM}, true)`;
          await step.make(tx);
          const recorded = await tx`update bulk_load set finished = finished || ${step.name}::text
            where not (${step.name}::text = any(finished))`;
          if (recorded.count !== 1)
            throw new Error(`the bulk load's end step ${step.name} was made elsewhere`);
        })
        .catch((error) => failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: FINISH_STEPS_AT_ONCE }, lane));
  if (failures.length > 0) throw failures[0];
}

export function createUtxoBulkLoad(sql: Sql, statistics: PlannerStatistics): BulkLoad<UtxoBlock> {
  /**
   * Until when a bulk load this writer began keeps its rows from being seen (bulkReads.ts): its first
   * groups are written meanwhile and commit after it.
   */
  let noticeUntil = 0;
  const load: BulkLoad<UtxoBlock> = {
    async resume() {
      const [row] = await sql`select cardinality(finished) as steps from bulk_load`;
      if (!row) return false;
      // An end cut short is ended first: the steps made cover the blocks up to the index's end, no further.
      if ((row.steps as number) > 0) {
        await load.finish();
        return false;
      }
      await unspendAboveEnd(sql);
      return true;
    },

    async begin() {
      const begun = await sql.begin(async (tx) => {
        const indexes = await tx`select indexname as name, indexdef as definition from pg_indexes
          where schemaname = current_schema() and indexname = any(${READ_SIDE_INDEXES}::text[])
          order by indexname`;
        const names = indexes.map((i) => i.name as string);
        const begun = await tx`insert into bulk_load (from_block, index_names, index_definitions)
          select last_block + 1, ${names}::text[], ${indexes.map((i) => i.definition as string)}::text[]
          from indexer_state on conflict (id) do nothing`;
        if (begun.count !== 1) return false;
        for (const name of names) {
          const table = PRIMARY_KEYS[name];
          await (table
            ? tx`alter table ${tx(table)} drop constraint ${tx(name)}`
            : tx`drop index ${tx(name)}`);
        }
        return true;
      });
      // No row visible before every reader knows (bulkReads.ts): none answers from its figures as if
      // complete. The rows are written meanwhile; their commits wait (write, below).
      if (begun) noticeUntil = performance.now() + BULK_NOTICE_MS;
    },

    async write(groups, expectedLast, committed) {
      const all = groups.flat();
      const spenders = spendersWithin(all);
      const tables = await tablesToWrite(sql, all, spenders);
      // Each group moves the progress row on from the end of the one below, once that one committed (a
      // statement's snapshot would not see a move not yet committed: it would not wait for it, and find
      // the row not moved): so the groups commit in order, and one that fails stops those above it. The
      // first waits for the notice of a bulk load just begun.
      const notice = noticeUntil - performance.now();
      let below: Promise<unknown> = notice > 0 ? Bun.sleep(notice) : Promise.resolve();
      let from = expectedLast;
      const writes = groups.map((blocks) => {
        const expected = from;
        const last = blocks[blocks.length - 1]!.number;
        from = last;
        const turn = below;
        const write = sql.begin(async (tx) => {
          // As the group writer's: a commit a database crash loses is written again from the node.
          await tx`set local synchronous_commit = off`;
          for (const table of tables) await copyRows(tx, table, blocks);
          await markSpent(tx, blocks, spenders);
          await turn;
          await fenceWrite(tx, text(last), expected);
        });
        below = write;
        write.catch(() => {});
        return write;
      });
      // Every group settles before this returns: no transaction of the flight outlives it.
      const results = await Promise.allSettled(writes);
      for (const [i, result] of results.entries()) {
        if (result.status === "rejected") throw result.reason;
        committed(i);
      }
      await statistics.written(all.reduce((n, b) => n + b.transactions.length, 0));
    },

    async finish() {
      const [row] = await sql`select from_block::text as from, index_names, index_definitions, finished
        from bulk_load`;
      if (!row) return;
      // The planner's statistics of the rows it wrote (a sample of each table) before the steps read them
      // (their plans: hashes sized by them); those of the figures' tables once made, below. The vacuum of
      // its pages waits for the backfill to catch up (indexer/bulk.ts endBulk).
      await sql.begin(async (tx) => {
        await tx`set local statement_timeout = 0`;
        await unspendAboveEnd(tx);
        await tx`analyze blocks, transactions, outputs, address_transactions`;
      });
      const [state] = await sql`select last_block::text as last from indexer_state`;
      const names = row.index_names as string[];
      const definitions = Object.fromEntries(
        names.map((n, i) => [n, (row.index_definitions as string[])[i]!]),
      );
      const finished = new Set(row.finished as string[]);
      await makeSteps(
        sql,
        finishSteps(row.from as string, state!.last as string, definitions).filter(
          (s) => !finished.has(s.name),
        ),
      );
      await sql.begin(async (tx) => {
        await tx`set local statement_timeout = 0`;
        await tx`analyze address_scripts, address_totals, day_addresses, daily_stats`;
      });
      await sql.begin(async (tx) => {
        const [held] = await tx`select from bulk_load for update`;
        if (!held) return;
        await tx`set local statement_timeout = 0`;
        // Last: adding a primary key locks its table against reads until the commit.
        for (const name of names) {
          const table = PRIMARY_KEYS[name];
          if (table)
            await tx`alter table ${tx(table)} add constraint ${tx(name)} primary key using index ${tx(name)}`;
        }
        await tx`delete from bulk_load`;
      });
    },
  };
  return load;
}
