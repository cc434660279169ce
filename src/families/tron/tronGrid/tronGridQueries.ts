/**
 * The index's reads behind TronGrid's v1 API (sql/tron/009 and 012): each page's keys chosen by an index in
 * the order asked, from the fingerprint's position on (keyset: `(block, position) < (b, p)` for newest
 * first), at most `limit` rows from each branch before they are merged; only the page's rows are then joined
 * to what they show. Addresses as 41-hex; every block number as text, exact.
 */
import type { Sql } from "../../../db/database";
import { INTERNAL_LOG_INDEX } from "../decode";

/** The blocks a query covers, both ends included. */
export interface BlockBounds {
  lo: bigint;
  hi: bigint;
}

export interface Keyset {
  order: "asc" | "desc";
  limit: number;
  /** The last row's (block, position) of the previous page. */
  after?: readonly [bigint, bigint];
}

export interface Trc20Row {
  block_number: string;
  log_index: number;
  kind: 0 | 1;
  txid: string;
  timestamp_ms: string;
  contract: string;
  from: string;
  to: string;
  value: string;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
}

export interface EventKey {
  block_number: string;
  transaction_index: number;
  log_index: number;
}

export interface EventTransaction {
  block_number: string;
  transaction_index: number;
  hash: string;
  /** The block-wide position of the transaction's first log the index keeps. */
  first_indexed: number | null;
}

export function createTronGridQueries(sql: Sql) {
  const empty = sql``;
  const hex = (h: string) => sql`decode(${h}, 'hex')`;

  function keyset(k: Keyset, position: string) {
    const dir = k.order === "asc" ? sql`asc` : sql`desc`;
    const cmp = k.order === "asc" ? sql`>` : sql`<`;
    const atOrPast = k.order === "asc" ? sql`>=` : sql`<=`;
    const after = k.after
      ? sql`and block_number ${atOrPast} ${k.after[0].toString()}::bigint
          and (block_number, ${sql(position)}) ${cmp} (${k.after[0].toString()}::bigint, ${Number(k.after[1])}::integer)`
      : empty;
    return { dir, after };
  }
  const within = (b: BlockBounds) =>
    sql`block_number between ${b.lo.toString()}::bigint and ${b.hi.toString()}::bigint`;
  type Fragment = typeof empty;
  const unionAll = (parts: Fragment[], op: "union" | "union all") =>
    parts.reduce((all, p) => (op === "union" ? sql`${all} union ${p}` : sql`${all} union all ${p}`));

  return {
    /** The blocks of [min, max] ms, within [lo, hi]; undefined where none. */
    async bounds(lo: bigint, hi: bigint, minMs?: bigint, maxMs?: bigint): Promise<BlockBounds | undefined> {
      let from = lo;
      let to = hi;
      if (minMs !== undefined || maxMs !== undefined) {
        const [row] = await sql`select
          (select number::text from blocks where ${minMs === undefined ? sql`true` : sql`timestamp >= ${(minMs / 1000n).toString()}::bigint and timestamp_ms >= ${minMs.toString()}::bigint`}
            order by timestamp, number limit 1) as lo,
          (select number::text from blocks where ${maxMs === undefined ? sql`true` : sql`timestamp <= ${(maxMs / 1000n).toString()}::bigint and timestamp_ms <= ${maxMs.toString()}::bigint`}
            order by timestamp desc, number desc limit 1) as hi`;
        if (row?.lo == null || row.hi == null) return undefined;
        if (BigInt(row.lo) > from) from = BigInt(row.lo);
        if (BigInt(row.hi) < to) to = BigInt(row.hi);
      }
      return from <= to ? { lo: from, hi: to } : undefined;
    },

    /** An account's transactions: as owner, as receiver, and (searchInternal) by its internal TRX transfers. */
    async accountTransactions(
      address: string,
      side: "from" | "to" | undefined,
      searchInternal: boolean,
      bounds: BlockBounds,
      k: Keyset,
    ): Promise<{ block_number: string; transaction_index: number; hash: string }[]> {
      const { dir, after } = keyset(k, "transaction_index");
      const order = sql`order by block_number ${dir}, transaction_index ${dir} limit ${k.limit}`;
      const byColumn = (column: string) =>
        sql`(select block_number, transaction_index from transactions where ${sql(column)} = ${hex(address)}
          and ${within(bounds)} ${after} ${order})`;
      const parts: Fragment[] = [];
      if (side !== "to") parts.push(byColumn("owner_address"));
      if (side !== "from") parts.push(byColumn("to_address"));
      if (searchInternal) {
        const bit = side === "from" ? 1 : side === "to" ? 2 : 3;
        parts.push(sql`(select distinct block_number, transaction_index from transfer_addresses
          where address = ${hex(address)} and log_index >= ${INTERNAL_LOG_INDEX} and side & ${bit} <> 0
          and transfer_type = 0 and ${within(bounds)} ${after} ${order})`);
      }
      return (await sql`select k.block_number::text as block_number, k.transaction_index, encode(t.hash, 'hex') as hash
        from (${unionAll(parts, "union")}) k join transactions t using (block_number, transaction_index)
        order by k.block_number ${dir}, k.transaction_index ${dir} limit ${k.limit}`) as never;
    },

    /** An account's TRC-20 Transfer rows (kind 0) and Approval rows (kind 1). */
    async trc20(
      address: string,
      side: "from" | "to" | undefined,
      contract: string | undefined,
      bounds: BlockBounds,
      k: Keyset,
    ): Promise<Trc20Row[]> {
      const { dir, after } = keyset(k, "log_index");
      const limit = sql`limit ${k.limit}`;
      const ofContract = contract === undefined ? empty : sql`and contract_address = ${hex(contract)}`;
      const sideBit =
        side === "from" ? sql`and side & 1 <> 0` : side === "to" ? sql`and side & 2 <> 0` : empty;
      const parts: Fragment[] = [
        sql`(select block_number, transaction_index, log_index, 0 as kind from transfer_addresses
          where address = ${hex(address)} and transfer_type = 1 ${ofContract} ${sideBit} and ${within(bounds)} ${after}
          order by block_number ${dir}, transaction_index ${dir}, log_index ${dir} ${limit})`,
      ];
      const approvals = (column: string) =>
        sql`(select block_number, transaction_index, log_index, 1 as kind from approvals
          where ${sql(column)} = ${hex(address)} ${ofContract} and ${within(bounds)} ${after}
          order by block_number ${dir}, log_index ${dir} ${limit})`;
      if (side !== "to") parts.push(approvals("owner"));
      if (side !== "from") parts.push(approvals("spender"));
      return (await sql`select k.block_number::text as block_number, k.log_index, k.kind,
          encode(coalesce(t.transaction_hash, a.transaction_hash), 'hex') as txid, b.timestamp_ms::text as timestamp_ms,
          encode(coalesce(t.contract_address, a.contract_address), 'hex') as contract,
          encode(coalesce(t.from_address, a.owner), 'hex') as from, encode(coalesce(t.to_address, a.spender), 'hex') as to,
          coalesce(t.value, a.value)::text as value, m.symbol, m.name, m.decimals
        from (${unionAll(parts, "union")}) k
        left join transfers t on k.kind = 0 and t.block_number = k.block_number
          and t.transaction_index = k.transaction_index and t.log_index = k.log_index
        left join approvals a on k.kind = 1 and a.block_number = k.block_number and a.log_index = k.log_index
        join blocks b on b.number = k.block_number
        left join token_metadata m on m.address = coalesce(t.contract_address, a.contract_address)
        order by k.block_number ${dir}, k.log_index ${dir} ${limit}`) as never;
    },

    /** A contract's events the index keeps (TRC-20/721 Transfer, TRC-20 Approval), by block-wide log position. */
    async contractEvents(
      contract: string,
      eventName: string | undefined,
      blockNumber: bigint | undefined,
      bounds: BlockBounds,
      k: Keyset,
    ): Promise<EventKey[]> {
      const { dir, after } = keyset(k, "log_index");
      const limit = sql`limit ${k.limit}`;
      const inBlock =
        blockNumber === undefined ? empty : sql`and block_number = ${blockNumber.toString()}::bigint`;
      const parts: Fragment[] = [];
      if (eventName === undefined || eventName === "Transfer") {
        parts.push(sql`(select block_number, transaction_index, log_index from transfers
          where contract_address = ${hex(contract)} and transfer_type in (1, 2) and ${within(bounds)} ${inBlock} ${after}
          order by block_number ${dir}, transaction_index ${dir}, log_index ${dir} ${limit})`);
      }
      if (eventName === undefined || eventName === "Approval") {
        parts.push(sql`(select block_number, transaction_index, log_index from approvals
          where contract_address = ${hex(contract)} and ${within(bounds)} ${inBlock} ${after}
          order by block_number ${dir}, log_index ${dir} ${limit})`);
      }
      if (parts.length === 0) return [];
      // Ordered by the keys' own numbers (the text column of the same name would order "13" before "2").
      return (await sql`select k.block_number::text as block_number, k.transaction_index, k.log_index
        from (${unionAll(parts, "union all")}) k order by k.block_number ${dir}, k.log_index ${dir} ${limit}`) as never;
    },

    /** The page's transactions: their ids, and where their first log the index keeps sits in the block. */
    async eventTransactions(keys: readonly EventKey[]): Promise<EventTransaction[]> {
      const blocks = keys.map((k) => k.block_number);
      const indexes = keys.map((k) => k.transaction_index);
      return (await sql`select x.block_number::text as block_number, x.transaction_index, encode(t.hash, 'hex') as hash,
          least(
            (select min(f.log_index) from transfers f where f.block_number = x.block_number
              and f.transaction_index = x.transaction_index and f.log_index between 0 and ${INTERNAL_LOG_INDEX - 1}),
            (select min(p.log_index) from approvals p where p.block_number = x.block_number
              and p.transaction_index = x.transaction_index)) as first_indexed
        from (select distinct * from unnest(${blocks}::bigint[], ${indexes}::integer[]) as u(block_number, transaction_index)) x
        join transactions t using (block_number, transaction_index)`) as never;
    },

    /** A block the index holds (`latest`: its last), with its transaction count. */
    async block(
      number: bigint | "latest",
    ): Promise<{ number: string; transaction_count: number; timestamp_ms: string } | undefined> {
      const which =
        number === "latest" ? sql`(select last_block from indexer_state)` : sql`${number.toString()}::bigint`;
      const [row] =
        await sql`select number::text as number, transaction_count, timestamp_ms::text as timestamp_ms
        from blocks where number = ${which}`;
      return row as never;
    },
  };
}

export type TronGridQueries = ReturnType<typeof createTronGridQueries>;
