/**
 * The EVM index's side of the watch filters: one block's indexed movements matched with a key's filters
 * (or several keys'), a join of the block's transfers and approvals with `watch_filters` (registered by
 * db/filterStore.ts) through its (key, address) or (address, key) index, never a loop of filters times
 * movements.
 */
import type { Sql } from "../../db/database";
import { type FilterKeys, filterKeys, keyOfRow } from "../../db/filterStore";

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

/** A match of one of several keys' filters. */
export interface KeyedMovementMatch extends MovementMatch {
  keyHash: string | null;
}

/** A filter on the native coin of an address (no contract), and its key's hash. */
export interface NativeFilter {
  keyHash: string | null;
  filterId: string;
  address: string;
}

export interface WatchMatchQueries {
  /**
   * One block's movements (native and ERC-20 transfers, ERC-20 approvals for filters that ask for them)
   * matched with the key's filters, ordered by (transaction, log, filter); a page of them when `page` is
   * given.
   */
  matches(
    keyHash: string | null,
    block: bigint,
    page?: { offset: number; limit: number },
  ): Promise<MovementMatch[]>;
  /** As `matches` (all of them), for the filters of any of the keys, each naming its key: one query. */
  matchesOfKeys(keyHashes: readonly (string | null)[], block: bigint): Promise<KeyedMovementMatch[]>;
  /** The keys' filters that follow the native coin of any of the addresses (lower-case 0x-hex). */
  nativeFilters(keyHashes: readonly (string | null)[], addresses: string[]): Promise<NativeFilter[]>;
  /** The plan PostgreSQL chooses for a block's matches (for the bench). */
  explainMatches(keyHash: string | null, block: bigint): Promise<string>;
}

const bytes = (hex: string) => hex.slice(2);
const hex = (value: unknown) => (value === null ? null : `0x${value as string}`);
/** The page the bench's plan is read for: check's. */
const EXPLAINED_PAGE = { offset: 0, limit: 1_000 };

function movementOf(r: Record<string, unknown>): MovementMatch {
  return {
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
  };
}

export function createWatchMatchQueries(sql: Sql): WatchMatchQueries {
  /**
   * The block's movements joined with the filters of `keys`: each side's address (the recipient's only when
   * it is another, so a self-transfer gives one result) finds the filters on it through an index (the
   * (address, key) one of sql/common/016 for several keys), never by comparing every filter with every side.
   */
  function matchQuery(keys: FilterKeys, block: bigint, page?: { offset: number; limit: number }) {
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
      select ${keys.column} f.filter_id::text, encode(f.address, 'hex') as filter_address, m.kind,
        m.transaction_index, m.log_index, encode(m.transaction_hash, 'hex') as transaction_hash,
        encode(m.contract_address, 'hex') as contract_address, encode(m.from_address, 'hex') as from_address,
        encode(m.to_address, 'hex') as to_address, m.value::text as value, m.fee::text as fee,
        m.transaction_error, t.symbol, t.decimals
      from m
      cross join lateral (values (m.from_address), (nullif(m.to_address, m.from_address))) side (address)
      join watch_filters f on f.address = side.address and f.key_hash ${keys.condition}
        and (f.contract_address is null or f.contract_address = m.contract_address)
        and (m.kind <> ${APPROVAL_KIND} or f.with_approval)
      left join token_metadata t on t.address = m.contract_address
      order by m.transaction_index, m.log_index, f.filter_id
      ${page ? sql`offset ${page.offset} limit ${page.limit}` : sql``}`;
  }

  return {
    async matches(keyHash, block, page) {
      return (await matchQuery(filterKeys(sql, keyHash), block, page)).map(movementOf);
    },

    async matchesOfKeys(keyHashes, block) {
      if (keyHashes.length === 0) return [];
      const rows = await matchQuery(filterKeys(sql, keyHashes), block);
      return rows.map((r) => ({ ...movementOf(r), keyHash: keyOfRow(r) }));
    },

    async nativeFilters(keyHashes, addresses) {
      const rows = await sql`select encode(key_hash, 'hex') as key_hash, filter_id::text,
          encode(address, 'hex') as address
        from watch_filters
        where key_hash ${filterKeys(sql, keyHashes).condition}
        and address = any(array(select decode(a, 'hex') from unnest(${addresses.map(bytes)}::text[]) a))
        and contract_address is null`;
      return rows.map((r) => ({
        keyHash: keyOfRow(r),
        filterId: r.filter_id as string,
        address: hex(r.address)!,
      }));
    },

    async explainMatches(keyHash, block) {
      const query = matchQuery(filterKeys(sql, keyHash), block, EXPLAINED_PAGE);
      const rows = await sql`explain (analyze, buffers) ${query}`;
      return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    },
  };
}
