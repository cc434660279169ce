/**
 * What every family's index writer does alike (evm/indexWriter.ts, utxo/indexWriter.ts): rows appended through
 * `unnest` of text arrays, one per column (one statement a table whatever the number of rows, the same text
 * for every group: one prepared statement a table; hex decoded to bytea and amounts cast exactly in SQL), or by
 * COPY in a bulk load (`copyRows`, in COPY's binary format: copyBinary.ts),
 * and the progress row (`indexer_state`, in each family's schema) that fences every write and rewind.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import type { Sql } from "../db/database";
import { FencedError, type IndexerState } from "../indexer/indexFamily";
import { type BinaryCell, type BinaryType, createBinaryRows } from "./copyBinary";

export type Tx = postgres.TransactionSql<Record<string, never>>;

/**
 * A cell as a table's rows give it: its column's text (null is SQL null), or a number, boolean or (text[])
 * list of texts, which `unnest` is handed as their text and COPY as their binary form.
 */
export type Cell = BinaryCell;
/** How a column's text becomes its value: a cast, or (`hex`) bytes decoded from hex digits. */
type ColumnType = BinaryType;

/** A table the indexer appends to, and the rows a block gives it (cells in the order of its columns). */
export interface IndexTable<B> {
  name: string;
  width: number;
  types: ColumnType[];
  rowsOf: (block: B, number: string) => Cell[][];
  /** SQL text made of the constant names below, never of data: its columns, unnest's columns as them, the aliases. */
  names: string;
  values: string;
  aliases: string;
  /** What a row already there means (`on conflict ... do nothing`); empty: an error. */
  conflict: string;
  /**
   * A statement on the rows just inserted (`inserted`), run as part of the insert: what is kept in step with
   * the table, without reading the rows back; empty: none.
   */
  then: string;
}

export function indexTable<B>(
  name: string,
  columns: readonly (readonly [name: string, type: ColumnType])[],
  rowsOf: IndexTable<B>["rowsOf"],
  conflict = "",
  then = "",
): IndexTable<B> {
  return {
    name,
    width: columns.length,
    types: columns.map(([, type]) => type),
    rowsOf,
    names: columns.map(([column]) => column).join(", "),
    values: columns
      .map(([, type], i) => (type === "hex" ? `decode(c${i}, 'hex')` : `c${i}::${type}`))
      .join(", "),
    aliases: columns.map((_, i) => `c${i}`).join(", "),
    conflict,
    then,
  };
}

export const text = (value: bigint | number | boolean) => String(value);
/** The UTC date of a Unix time, as PostgreSQL reads a date. */
export const utcDay = (unixSeconds: bigint) =>
  new Date(Number(unixSeconds) * 1000).toISOString().slice(0, 10);

/** A group's rows of one table, as one text array per column. */
export interface TableRows<B> {
  table: IndexTable<B>;
  columns: (string | null)[][];
}

/** A list of texts as a PostgreSQL array literal, each element quoted. */
const arrayLiteral = (values: readonly string[]) =>
  `{${values.map((v) => `"${v.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;

/** A cell as `unnest` hands it over: text. */
const unnestCell = (cell: Cell): string | null =>
  typeof cell === "string" || cell === null
    ? cell
    : typeof cell === "object"
      ? arrayLiteral(cell)
      : String(cell);

export function encodeRows<B extends { number: bigint }>(
  table: IndexTable<B>,
  blocks: readonly B[],
): TableRows<B> {
  const columns = Array.from({ length: table.width }, (): (string | null)[] => []);
  for (const block of blocks) {
    for (const row of table.rowsOf(block, text(block.number))) {
      for (let i = 0; i < row.length; i++) columns[i]!.push(unnestCell(row[i]!));
    }
  }
  return { table, columns };
}

/** Appends a table's rows in one statement. */
export async function insertRows<B>(tx: Tx, { table, columns }: TableRows<B>): Promise<void> {
  if (columns[0]!.length === 0) return;
  const arrays = columns.map((column, i) => (i === 0 ? tx`${column}::text[]` : tx`, ${column}::text[]`));
  const insert = tx`insert into ${tx(table.name)} (${tx.unsafe(table.names)}) select ${tx.unsafe(table.values)}
    from unnest(${arrays}) as u(${tx.unsafe(table.aliases)}) ${tx.unsafe(table.conflict)}`;
  await (table.then === ""
    ? insert
    : tx`with inserted as (${insert} returning ${tx.unsafe(table.names)}) ${tx.unsafe(table.then)}`);
}

/**
 * Appends a table's rows of `blocks` by COPY in its binary format (the bulk load: no statement per group to
 * plan, no arrays to unnest, no text to parse); what a row already there means (`conflict`) and `then` are
 * the caller's to deal with.
 */
export async function copyRows<B extends { number: bigint }>(
  tx: Tx,
  table: IndexTable<B>,
  blocks: readonly B[],
): Promise<number> {
  const rows = createBinaryRows(table.types);
  let count = 0;
  for (const block of blocks) {
    for (const row of table.rowsOf(block, text(block.number))) {
      rows.add(row);
      count++;
    }
  }
  if (count === 0) return 0;
  const copy =
    await tx`copy ${tx(table.name)} (${tx.unsafe(table.names)}) from stdin (format binary)`.writable();
  await pipeline(Readable.from(rows.finish()), copy);
  return count;
}

/** The index's progress row: where it starts and ends. */
export async function indexerState(sql: Sql): Promise<IndexerState | undefined> {
  const [row] = await sql`select first_block::text as first, last_block::text as last from indexer_state`;
  return row ? { firstBlock: BigInt(row.first as string), lastBlock: BigInt(row.last as string) } : undefined;
}

/** The progress row of an index starting at `firstBlock` (the one already there, if any). */
export async function startIndexerState(sql: Sql, firstBlock: bigint): Promise<IndexerState> {
  await sql`insert into indexer_state (first_block, last_block)
    values (${text(firstBlock)}::bigint, ${text(firstBlock - 1n)}::bigint) on conflict (id) do nothing`;
  return (await indexerState(sql))!;
}

/**
 * Moves the index's end from `expectedLast` to `last`, first in a write's transaction: a second writer
 * waits here on the row lock, then finds the index moved on (FencedError).
 */
export async function fenceWrite(tx: Tx, last: string, expectedLast: bigint): Promise<void> {
  const moved = await tx`update indexer_state set last_block = ${last}::bigint, updated_at = now()
    where last_block = ${text(expectedLast)}::bigint`;
  if (moved.count !== 1) throw new FencedError(expectedLast);
}

/** Ends the index below `from`, where it ended at `expectedLast` (else FencedError). */
export async function fenceRewind(tx: Tx, from: bigint, expectedLast: bigint): Promise<void> {
  const moved = await tx`update indexer_state set last_block = least(last_block, ${text(from - 1n)}::bigint),
    updated_at = now() where last_block = ${text(expectedLast)}::bigint`;
  if (moved.count !== 1) throw new FencedError(expectedLast);
}

/** The hash (hex digits, as stored) of the indexed block `number`; undefined where the index has none. */
export async function storedHash(sql: Sql, number: bigint): Promise<string | undefined> {
  const [row] =
    await sql`select encode(hash, 'hex') as hash from blocks where number = ${text(number)}::bigint`;
  return row ? (row.hash as string) : undefined;
}

/**
 * The days' active addresses, from the blocks' `block_addresses` (the EVM and TRON indexes keep the same
 * `day_addresses` and `daily_stats.active_addresses`): an address is new to its day when its row is inserted
 * rather than updated (xmax = 0).
 */
export async function addDayAddresses(tx: Tx, first: string, last: string): Promise<void> {
  await tx`with touched as (
      insert into day_addresses as d (day, address, blocks)
      select b.day, a.address, count(*) from block_addresses a join blocks b on b.number = a.block_number
      where a.block_number between ${first}::bigint and ${last}::bigint group by b.day, a.address
      on conflict (day, address) do update set blocks = d.blocks + excluded.blocks
      returning d.day, d.xmax = 0 as fresh)
    update daily_stats s set active_addresses = s.active_addresses + f.n
    from (select day, count(*) as n from touched where fresh group by day) f where s.day = f.day`;
}

/**
 * Takes the blocks from `from` up out of their days' `day_addresses` (an address none of its day's other
 * blocks touches leaves it); the days those blocks fall on, whose figures the caller makes again.
 */
export async function removeDayAddresses(tx: Tx, from: string): Promise<string[]> {
  const days = (await tx`select distinct day::text as day from blocks where number >= ${from}::bigint`).map(
    (r) => r.day as string,
  );
  if (days.length === 0) return days;
  await tx`update day_addresses d set blocks = d.blocks - g.n
    from (select b.day, a.address, count(*) as n from block_addresses a join blocks b on b.number = a.block_number
      where a.block_number >= ${from}::bigint group by b.day, a.address) g
    where d.day = g.day and d.address = g.address`;
  await tx`delete from day_addresses where day = any(${days}::date[]) and blocks <= 0`;
  return days;
}
