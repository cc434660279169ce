/**
 * The indexer's writes and reads of the chain index. Blocks are written in groups, each group in one
 * transaction together with the progress row, so a crash leaves the index at a group boundary: no gap, and
 * a restart does not write a block twice. Rows go in through `unnest` of text arrays: one prepared statement
 * whatever the number of rows, and 20/32-byte values decoded from hex, amounts cast to numeric exactly.
 */
import type { DecodedBlock } from "../families/evm/decode";
import type { Sql } from "./database";

const hex = (value: string) => value.slice(2);
/** The UTC date of a Unix time, as PostgreSQL reads a date. */
export const utcDay = (unixSeconds: bigint) =>
  new Date(Number(unixSeconds) * 1000).toISOString().slice(0, 10);

export class FencedError extends Error {
  constructor(expected: bigint) {
    super(`the index no longer ends at block ${expected}: another instance is writing it`);
  }
}
const text = (value: bigint | number | boolean) => String(value);

export interface IndexerState {
  firstBlock: bigint;
  lastBlock: bigint;
}

export interface ChainStore {
  state(): Promise<IndexerState | undefined>;
  /** Starts an empty index at `firstBlock` (a no-op when there is one). */
  start(firstBlock: bigint): Promise<IndexerState>;
  /** The stored hash of a block, lower-case 0x-hex. */
  hashOf(number: bigint): Promise<string | undefined>;
  /**
   * Appends blocks to an index that ends at `expectedLast`. Throws FencedError when it does not (another
   * instance wrote meanwhile): the writer has lost the lead and must stop.
   */
  write(blocks: DecodedBlock[], expectedLast: bigint): Promise<void>;
  /** Removes every block from `from` up (and all derived from them); the index then ends at from - 1. */
  rewind(from: bigint, expectedLast: bigint): Promise<void>;
  /** Refreshes the planner's statistics and the visibility map of the tables the indexer grows. */
  maintain(): Promise<void>;
}

export function createChainStore(sql: Sql): ChainStore {
  // The growing tables' partitions (sql/005_index_partitions.sql), made one partition ahead of the writes.
  let partitionBlocks: bigint | undefined;
  let coveredUpTo = -1n;
  async function partitionsFor(first: bigint, last: bigint): Promise<void> {
    if (partitionBlocks === undefined) {
      const [row] = await sql`select blocks::text as blocks from index_partitioning`;
      partitionBlocks = BigInt(row!.blocks as string);
    }
    const ahead = last + partitionBlocks;
    if (ahead <= coveredUpTo) return;
    // Outside the write's transaction: making a partition locks its table, briefly and once.
    await sql`select ensure_index_partitions(${text(first)}::bigint, ${text(ahead)}::bigint)`;
    coveredUpTo = (ahead / partitionBlocks + 1n) * partitionBlocks - 1n;
  }

  async function state(): Promise<IndexerState | undefined> {
    const [row] = await sql`select first_block::text as first, last_block::text as last from indexer_state`;
    return row
      ? { firstBlock: BigInt(row.first as string), lastBlock: BigInt(row.last as string) }
      : undefined;
  }

  return {
    state,
    async start(firstBlock) {
      await sql`insert into indexer_state (first_block, last_block)
        values (${text(firstBlock)}::bigint, ${text(firstBlock - 1n)}::bigint) on conflict (id) do nothing`;
      return (await state())!;
    },

    async hashOf(number) {
      const [row] =
        await sql`select encode(hash, 'hex') as hash from blocks where number = ${text(number)}::bigint`;
      return row ? `0x${row.hash as string}` : undefined;
    },

    async write(blocks, expectedLast) {
      if (blocks.length === 0) return;
      const b = {
        number: [] as string[],
        hash: [] as string[],
        parent: [] as string[],
        timestamp: [] as string[],
        day: [] as string[],
        miner: [] as string[],
        gasUsed: [] as string[],
        gasLimit: [] as string[],
        baseFee: [] as (string | null)[],
        txCount: [] as string[],
        transferCount: [] as string[],
        uncleCount: [] as string[],
        totalFees: [] as string[],
        burntFees: [] as string[],
        gasPriceSum: [] as string[],
      };
      const t = {
        block: [] as string[],
        txIndex: [] as string[],
        logIndex: [] as string[],
        txHash: [] as string[],
        kind: [] as string[],
        contract: [] as (string | null)[],
        from: [] as string[],
        to: [] as (string | null)[],
        value: [] as string[],
        fee: [] as string[],
        error: [] as string[],
      };
      const a = {
        address: [] as string[],
        block: [] as string[],
        txIndex: [] as string[],
        logIndex: [] as string[],
        side: [] as string[],
        kind: [] as string[],
        contract: [] as (string | null)[],
      };
      const p = {
        block: [] as string[],
        txIndex: [] as string[],
        logIndex: [] as string[],
        txHash: [] as string[],
        contract: [] as string[],
        owner: [] as string[],
        spender: [] as string[],
        value: [] as string[],
        fee: [] as string[],
        error: [] as string[],
      };
      const ba = { block: [] as string[], address: [] as string[] };

      for (const block of blocks) {
        const n = text(block.number);
        b.number.push(n);
        b.hash.push(hex(block.hash));
        b.parent.push(hex(block.parentHash));
        b.timestamp.push(text(block.timestamp));
        b.day.push(utcDay(block.timestamp));
        b.miner.push(hex(block.miner));
        b.gasUsed.push(text(block.gasUsed));
        b.gasLimit.push(text(block.gasLimit));
        b.baseFee.push(block.baseFee === null ? null : text(block.baseFee));
        b.txCount.push(text(block.transactionCount));
        b.transferCount.push(text(block.transfers.length));
        b.uncleCount.push(text(block.uncleCount));
        b.totalFees.push(text(block.totalFees));
        b.burntFees.push(text(block.burntFees));
        b.gasPriceSum.push(text(block.gasPriceSum));
        for (const r of block.transfers) {
          t.block.push(n);
          t.txIndex.push(text(r.transactionIndex));
          t.logIndex.push(text(r.logIndex));
          t.txHash.push(hex(r.transactionHash));
          t.kind.push(text(r.kind));
          t.contract.push(r.contract === null ? null : hex(r.contract));
          t.from.push(hex(r.from));
          t.to.push(r.to === null ? null : hex(r.to));
          t.value.push(text(r.value));
          t.fee.push(text(r.fee));
          t.error.push(text(r.error));
          // One row per address touched: a self-transfer is one row on both sides.
          const sides: [string, number][] =
            r.to === r.from
              ? [[r.from, 3]]
              : r.to === null
                ? [[r.from, 1]]
                : [
                    [r.from, 1],
                    [r.to, 2],
                  ];
          for (const [address, side] of sides) {
            a.address.push(hex(address));
            a.block.push(n);
            a.txIndex.push(text(r.transactionIndex));
            a.logIndex.push(text(r.logIndex));
            a.side.push(text(side));
            a.kind.push(text(r.kind));
            a.contract.push(r.contract === null ? null : hex(r.contract));
          }
        }
        for (const r of block.approvals) {
          p.block.push(n);
          p.txIndex.push(text(r.transactionIndex));
          p.logIndex.push(text(r.logIndex));
          p.txHash.push(hex(r.transactionHash));
          p.contract.push(hex(r.contract));
          p.owner.push(hex(r.owner));
          p.spender.push(hex(r.spender));
          p.value.push(text(r.value));
          p.fee.push(text(r.fee));
          p.error.push(text(r.error));
        }
        for (const address of block.addresses) {
          ba.block.push(n);
          ba.address.push(hex(address));
        }
      }
      const first = b.number[0]!;
      const last = b.number[b.number.length - 1]!;
      await partitionsFor(BigInt(first), BigInt(last));

      await sql.begin(async (tx) => {
        // Taken first: a second writer waits here on the row lock, then finds the index moved on.
        const moved = await tx`update indexer_state set last_block = ${last}::bigint, updated_at = now()
          where last_block = ${text(expectedLast)}::bigint`;
        if (moved.count !== 1) throw new FencedError(expectedLast);
        await tx`insert into blocks (number, hash, parent_hash, timestamp, day, miner, gas_used, gas_limit, base_fee_per_gas,
            transaction_count, transfer_count, uncle_count, total_fees, burnt_fees, gas_price_sum)
          select n::bigint, decode(h, 'hex'), decode(p, 'hex'), ts::bigint, d::date, decode(m, 'hex'), gu::bigint, gl::bigint,
            bf::numeric, tc::integer, trc::integer, uc::integer, tf::numeric, bu::numeric, gp::numeric
          from unnest(${b.number}::text[], ${b.hash}::text[], ${b.parent}::text[], ${b.timestamp}::text[], ${b.day}::text[],
            ${b.miner}::text[], ${b.gasUsed}::text[], ${b.gasLimit}::text[], ${b.baseFee}::text[], ${b.txCount}::text[],
            ${b.transferCount}::text[], ${b.uncleCount}::text[], ${b.totalFees}::text[], ${b.burntFees}::text[],
            ${b.gasPriceSum}::text[]) as u(n, h, p, ts, d, m, gu, gl, bf, tc, trc, uc, tf, bu, gp)`;
        if (t.block.length > 0) {
          await tx`insert into transfers (block_number, transaction_index, log_index, transaction_hash, transfer_type,
              contract_address, from_address, to_address, value, fee, transaction_error)
            select bn::bigint, ti::integer, li::integer, decode(th, 'hex'), k::smallint, decode(c, 'hex'),
              decode(f, 'hex'), decode(t, 'hex'), v::numeric, fe::numeric, e::boolean
            from unnest(${t.block}::text[], ${t.txIndex}::text[], ${t.logIndex}::text[], ${t.txHash}::text[],
              ${t.kind}::text[], ${t.contract}::text[], ${t.from}::text[], ${t.to}::text[], ${t.value}::text[],
              ${t.fee}::text[], ${t.error}::text[]) as u(bn, ti, li, th, k, c, f, t, v, fe, e)`;
          await tx`insert into transfer_addresses (address, block_number, transaction_index, log_index, side,
              transfer_type, contract_address)
            select decode(ad, 'hex'), bn::bigint, ti::integer, li::integer, s::smallint, k::smallint, decode(c, 'hex')
            from unnest(${a.address}::text[], ${a.block}::text[], ${a.txIndex}::text[], ${a.logIndex}::text[],
              ${a.side}::text[], ${a.kind}::text[], ${a.contract}::text[]) as u(ad, bn, ti, li, s, k, c)`;
        }
        if (p.block.length > 0) {
          await tx`insert into approvals (block_number, transaction_index, log_index, transaction_hash, contract_address,
              owner, spender, value, fee, transaction_error)
            select bn::bigint, ti::integer, li::integer, decode(th, 'hex'), decode(c, 'hex'), decode(o, 'hex'),
              decode(s, 'hex'), v::numeric, fe::numeric, e::boolean
            from unnest(${p.block}::text[], ${p.txIndex}::text[], ${p.logIndex}::text[], ${p.txHash}::text[],
              ${p.contract}::text[], ${p.owner}::text[], ${p.spender}::text[], ${p.value}::text[], ${p.fee}::text[],
              ${p.error}::text[]) as u(bn, ti, li, th, c, o, s, v, fe, e)`;
        }
        if (ba.block.length > 0) {
          await tx`insert into block_addresses (block_number, address)
            select bn::bigint, decode(ad, 'hex') from unnest(${ba.block}::text[], ${ba.address}::text[]) as u(bn, ad)`;
        }
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
        if (ba.block.length > 0) {
          // An address is new to its day when its row is inserted rather than updated (xmax = 0).
          await tx`with touched as (
              insert into day_addresses as d (day, address, blocks)
              select b.day, a.address, count(*) from block_addresses a join blocks b on b.number = a.block_number
              where a.block_number between ${first}::bigint and ${last}::bigint group by b.day, a.address
              on conflict (day, address) do update set blocks = d.blocks + excluded.blocks
              returning d.day, d.xmax = 0 as fresh)
            update daily_stats s set active_addresses = s.active_addresses + f.n
            from (select day, count(*) as n from touched where fresh group by day) f where s.day = f.day`;
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
      const start = text(from);
      await sql.begin(async (tx) => {
        const moved =
          await tx`update indexer_state set last_block = least(last_block, ${text(from - 1n)}::bigint),
          updated_at = now() where last_block = ${text(expectedLast)}::bigint`;
        if (moved.count !== 1) throw new FencedError(expectedLast);
        const days = (
          await tx`select distinct day::text as day from blocks where number >= ${start}::bigint`
        ).map((r) => r.day as string);
        if (days.length === 0) return;
        await tx`update day_addresses d set blocks = d.blocks - g.n
          from (select b.day, a.address, count(*) as n from block_addresses a join blocks b on b.number = a.block_number
            where a.block_number >= ${start}::bigint group by b.day, a.address) g
          where d.day = g.day and d.address = g.address`;
        await tx`delete from day_addresses where day = any(${days}::date[]) and blocks <= 0`;
        await tx`delete from blocks where number >= ${start}::bigint`;
        // The undone days' figures, again from what remains of them.
        await tx`delete from daily_stats where day = any(${days}::date[])`;
        await tx`insert into daily_stats (day, from_block, to_block, block_count, transaction_count, transfer_count,
            active_addresses, total_gas_used, gas_price_sum, total_fees, burnt_fees)
          select day, min(number), max(number), count(*), sum(transaction_count), sum(transfer_count),
            (select count(*) from day_addresses d where d.day = b.day),
            sum(gas_used), sum(gas_price_sum), sum(total_fees), sum(burnt_fees)
          from blocks b where day = any(${days}::date[]) group by day`;
      });
    },
  };
}
