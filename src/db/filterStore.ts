/**
 * Watch filters in the database, and the matching of one block's indexed movements against them: a join
 * of the block's transfers and approvals with the caller's filters through their (key, address) index,
 * never a loop of filters times movements.
 */
import type { Sql } from "./database";

export interface StoredFilter {
  filterId: string;
  address: string;
  /** null: the native coin and every token. */
  contract: string | null;
  withApproval: boolean;
  createdAt: Date;
}

/** `kind`: 0 native, 1 ERC-20 transfer, 3 ERC-20 approval (the index's transfer types, and one more). */
export const APPROVAL_KIND = 3;

export interface MovementMatch {
  filterId: string;
  filterAddress: string;
  kind: number;
  transactionIndex: number;
  logIndex: number;
  transactionHash: string;
  contract: string | null;
  from: string;
  to: string | null;
  /** Exact decimal digits. */
  value: string;
  fee: string;
  error: boolean;
  symbol: string | null;
  decimals: number | null;
}

const bytes = (hex: string | null) => (hex === null ? null : hex.slice(2));
/** Looks and inserts of one add: a concurrent add of the same filter can win an insert only once. */
const ADD_ATTEMPTS = 3;
const hex = (value: unknown) => (value === null ? null : `0x${value as string}`);

function filterOf(r: Record<string, unknown>): StoredFilter {
  return {
    filterId: r.filter_id as string,
    address: hex(r.address)!,
    contract: hex(r.contract_address),
    withApproval: r.with_approval as boolean,
    createdAt: r.created_at as Date,
  };
}

export function createFilterStore(sql: Sql) {
  /** The key as stored: its SHA-256, or empty in open mode. */
  const key = (keyHash: string | null) => sql`decode(${keyHash ?? ""}, 'hex')`;
  const columns = sql`filter_id::text, encode(address, 'hex') as address,
    encode(contract_address, 'hex') as contract_address, with_approval, created_at`;

  /**
   * One block's movements (native and ERC-20 transfers, ERC-20 approvals for filters that ask for them)
   * matched with the key's filters, ordered by (transaction, log, filter); a page of them when `page` is
   * given.
   */
  function matchQuery(keyHash: string | null, block: bigint, page?: { offset: number; limit: number }) {
    const n = block.toString();
    return sql`
      with m as (
        select transaction_index, log_index, transaction_hash, transfer_type as kind, contract_address,
          from_address, to_address, value, fee, transaction_error
        from transfers where block_number = ${n}::bigint and transfer_type <> 2
        union all
        select transaction_index, log_index, transaction_hash, ${APPROVAL_KIND}::smallint, contract_address,
          owner, spender, value, fee, transaction_error
        from approvals where block_number = ${n}::bigint
      )
      select f.filter_id::text, encode(f.address, 'hex') as filter_address, m.kind, m.transaction_index,
        m.log_index, encode(m.transaction_hash, 'hex') as transaction_hash,
        encode(m.contract_address, 'hex') as contract_address, encode(m.from_address, 'hex') as from_address,
        encode(m.to_address, 'hex') as to_address, m.value::text as value, m.fee::text as fee,
        m.transaction_error, t.symbol, t.decimals
      from m
      join watch_filters f on f.key_hash = ${key(keyHash)}
        and f.address in (m.from_address, m.to_address)
        and (f.contract_address is null or f.contract_address = m.contract_address)
        and (m.kind <> ${APPROVAL_KIND} or f.with_approval)
      left join token_metadata t on t.address = m.contract_address
      order by m.transaction_index, m.log_index, f.filter_id
      ${page ? sql`offset ${page.offset} limit ${page.limit}` : sql``}`;
  }

  return {
    /**
     * The filter's id: the existing one when the same filter was added before, else a new one. Undefined
     * when the key already holds `max` filters. One statement finds, counts and inserts; a concurrent add
     * of the same filter makes it look again, and a concurrent remove orders before or after it, never
     * between.
     */
    async add(
      keyHash: string | null,
      address: string,
      contract: string | null,
      withApproval: boolean,
      max: number,
    ): Promise<string | undefined> {
      const a = sql`decode(${bytes(address)}, 'hex')`;
      const c = sql`decode(${bytes(contract)}, 'hex')`;
      for (let attempt = 0; attempt < ADD_ATTEMPTS; attempt++) {
        const [row] = await sql`
          with existing as (
            select filter_id from watch_filters
            where key_hash = ${key(keyHash)} and address = ${a}
              and coalesce(contract_address, '\\x'::bytea) = coalesce(${c}, '\\x'::bytea)
              and with_approval = ${withApproval}
          ), held as (
            select count(*) as n from watch_filters where key_hash = ${key(keyHash)}
          ), added as (
            insert into watch_filters (key_hash, address, contract_address, with_approval)
            select ${key(keyHash)}, ${a}, ${c}, ${withApproval}
            where not exists (select 1 from existing) and (select n from held) < ${max}
            on conflict (key_hash, address, coalesce(contract_address, '\\x'::bytea), with_approval) do nothing
            returning filter_id
          )
          select (select filter_id::text from existing limit 1) as existing,
            (select filter_id::text from added limit 1) as added, (select n from held)::bigint as held`;
        const id = (row!.existing ?? row!.added) as string | null;
        if (id !== null) return id;
        if (BigInt(row!.held as string) >= BigInt(max)) return undefined;
        // Another add of the same filter won the insert: its id is found on the next look.
      }
      throw new Error("watch filter add kept losing to concurrent adds");
    },

    /** False when the key has no such filter. `filterId` must be a UUID. */
    async remove(keyHash: string | null, filterId: string): Promise<boolean> {
      const removed = await sql`delete from watch_filters
        where key_hash = ${key(keyHash)} and filter_id = ${filterId}::uuid`;
      return removed.count === 1;
    },

    /** The key's filters, on one address or all of them, oldest first. */
    async list(keyHash: string | null, address?: string): Promise<StoredFilter[]> {
      const rows = await sql`select ${columns} from watch_filters where key_hash = ${key(keyHash)}
        ${address === undefined ? sql`` : sql`and address = decode(${bytes(address)}, 'hex')`}
        order by created_at, filter_id`;
      return rows.map(filterOf);
    },

    /** A page of all the key's filters, oldest first, after the one given (keyset paging). */
    async page(
      keyHash: string | null,
      after: StoredFilter | undefined,
      limit: number,
    ): Promise<StoredFilter[]> {
      const rows = await sql`select ${columns} from watch_filters where key_hash = ${key(keyHash)}
        ${after === undefined ? sql`` : sql`and (created_at, filter_id) > (${after.createdAt}, ${after.filterId}::uuid)`}
        order by created_at, filter_id limit ${limit}`;
      return rows.map(filterOf);
    },

    /** The key's filters that follow the native coin of any of the addresses. */
    async nativeFilters(keyHash: string | null, addresses: string[]): Promise<StoredFilter[]> {
      const rows = await sql`select ${columns} from watch_filters where key_hash = ${key(keyHash)}
        and address = any(array(select decode(a, 'hex') from unnest(${addresses.map(bytes)}::text[]) a))
        and contract_address is null`;
      return rows.map(filterOf);
    },

    async matches(
      keyHash: string | null,
      block: bigint,
      page?: { offset: number; limit: number },
    ): Promise<MovementMatch[]> {
      const rows = await matchQuery(keyHash, block, page);
      return rows.map((r) => ({
        filterId: r.filter_id as string,
        filterAddress: hex(r.filter_address)!,
        kind: r.kind as number,
        transactionIndex: r.transaction_index as number,
        logIndex: r.log_index as number,
        transactionHash: hex(r.transaction_hash)!,
        contract: hex(r.contract_address),
        from: hex(r.from_address)!,
        to: hex(r.to_address),
        value: r.value as string,
        fee: r.fee as string,
        error: r.transaction_error as boolean,
        symbol: r.symbol as string | null,
        decimals: r.decimals as number | null,
      }));
    },

    /** The plan PostgreSQL chooses for a block's matches (for the bench). */
    async explainMatches(keyHash: string | null, block: bigint): Promise<string> {
      const rows =
        await sql`explain (analyze, buffers) ${matchQuery(keyHash, block, { offset: 0, limit: 1000 })}`;
      return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    },
  };
}

export type FilterStore = ReturnType<typeof createFilterStore>;
