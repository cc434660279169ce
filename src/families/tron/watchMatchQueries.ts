/**
 * The TRON index's side of the watch filters (sql/tron/009_tron_index.sql): one block's transfers (TRX,
 * TRC-20, TRC-10; never TRC-721) and TRC-20 approvals matched with a key's filters (or several keys'), a join with
 * `watch_filters` (db/filterStore.ts) through its (key, address) or (address, key) index, never a loop of filters times
 * movements. Addresses come out as the index's 21 bytes in hex (`41...`).
 */
import type { Sql } from "../../db/database";
import { type FilterKeys, filterKeys, keyOfRow } from "../../db/filterStore";
import { TransferKind } from "../../transferKind";

/** `kind`: the index's transfer types, and one more for an approval (the approvals table). */
export const APPROVAL_KIND = 4;
/** The first log_index of an internal TRX transfer (/work/tron-schema.md "log_index"). */
export const INTERNAL_LOG_INDEX = 1_000_000_000;

export interface TronMovementMatch {
  filterId: string;
  /** The filter's address: 41 + 40 hex digits. */
  filterAddress: string;
  kind: number;
  transactionIndex: number;
  logIndex: number;
  transactionHash: string;
  /** A TRC-20 contract (41-hex); null for TRX and TRC-10. */
  contract: string | null;
  /** A TRC-10 asset's id (decimal text); null otherwise. */
  assetId: string | null;
  from: string;
  to: string | null;
  /** Exact decimal digits. */
  value: string;
  fee: string;
  error: boolean;
  /** The TRC-20's symbol or the TRC-10's abbreviation. */
  symbol: string | null;
  /** The TRC-20's decimals or the TRC-10's precision. */
  decimals: number | null;
}

/** A match of one of several keys' filters. */
export interface KeyedTronMovementMatch extends TronMovementMatch {
  keyHash: string | null;
}

export interface TronWatchMatchQueries {
  /**
   * One block's movements matched with the key's filters, ordered by (transaction, log, filter): a page of
   * them when `page` is given. Internal TRX transfers only `withInternal` (check_v2).
   */
  matches(
    keyHash: string | null,
    block: bigint,
    withInternal: boolean,
    page?: { offset: number; limit: number },
  ): Promise<TronMovementMatch[]>;
  /** As `matches` (all of them), for the filters of any of the keys, each naming its key: one query. */
  matchesOfKeys(
    keyHashes: readonly (string | null)[],
    block: bigint,
    withInternal: boolean,
  ): Promise<KeyedTronMovementMatch[]>;
  /** A contract's row of token_metadata: undefined where the index has not looked it up. */
  tokenOf(contract: Uint8Array): Promise<{ isToken: boolean } | undefined>;
}

function movementOf(r: Record<string, unknown>): TronMovementMatch {
  return {
    filterId: r.filter_id as string,
    filterAddress: r.filter_address as string,
    kind: r.kind as number,
    transactionIndex: r.transaction_index as number,
    logIndex: r.log_index as number,
    transactionHash: r.transaction_hash as string,
    contract: r.contract_address as string | null,
    assetId: r.asset_id as string | null,
    from: r.from_address as string,
    to: r.to_address as string | null,
    value: r.value as string,
    fee: r.fee as string,
    error: r.transaction_error as boolean,
    symbol: r.symbol as string | null,
    decimals: r.decimals as number | null,
  };
}

export function createTronWatchMatchQueries(sql: Sql): TronWatchMatchQueries {
  const empty = sql``;

  /**
   * The block's movements joined with the filters of `keys`: each side's address (the recipient's only when
   * it is another, so a self-transfer gives one result) finds the filters on it through an index (the
   * (address, key) one of sql/common/016 for several keys), never by comparing every filter with every side.
   */
  function matchQuery(
    keys: FilterKeys,
    block: bigint,
    withInternal: boolean,
    page?: { offset: number; limit: number },
  ) {
    const n = block.toString();
    return sql`
      with m as (
        select transaction_index, log_index, transaction_hash, transfer_type as kind, contract_address,
          asset_id, from_address, to_address, value, fee, transaction_error
        from transfers where block_number = ${n}::bigint and transfer_type <> ${TransferKind.erc721}
          ${withInternal ? empty : sql`and log_index < ${INTERNAL_LOG_INDEX}`}
        union all
        select transaction_index, log_index, transaction_hash, ${APPROVAL_KIND}::smallint, contract_address,
          null, owner, spender, value, fee, transaction_error
        from approvals where block_number = ${n}::bigint
      )
      select ${keys.column} f.filter_id::text, encode(f.address, 'hex') as filter_address, m.kind,
        m.transaction_index, m.log_index, encode(m.transaction_hash, 'hex') as transaction_hash,
        encode(m.contract_address, 'hex') as contract_address, m.asset_id,
        encode(m.from_address, 'hex') as from_address, encode(m.to_address, 'hex') as to_address,
        m.value::text as value, m.fee::text as fee, m.transaction_error,
        coalesce(t.symbol, a.abbr) as symbol, coalesce(t.decimals, a.precision) as decimals
      from m
      cross join lateral (values (m.from_address), (nullif(m.to_address, m.from_address))) side (address)
      join watch_filters f on f.address = side.address and f.key_hash ${keys.condition}
        and (f.contract_address is null or f.contract_address = m.contract_address)
        and (m.kind <> ${APPROVAL_KIND} or f.with_approval)
      left join token_metadata t on t.address = m.contract_address
      left join trc10_assets a on a.id = m.asset_id
      order by m.transaction_index, m.log_index, f.filter_id
      ${page ? sql`offset ${page.offset} limit ${page.limit}` : empty}`;
  }

  return {
    async matches(keyHash, block, withInternal, page) {
      return (await matchQuery(filterKeys(sql, keyHash), block, withInternal, page)).map(movementOf);
    },

    async matchesOfKeys(keyHashes, block, withInternal) {
      if (keyHashes.length === 0) return [];
      const rows = await matchQuery(filterKeys(sql, keyHashes), block, withInternal);
      return rows.map((r) => ({ ...movementOf(r), keyHash: keyOfRow(r) }));
    },

    async tokenOf(contract) {
      const [row] = await sql`select is_token from token_metadata where address = ${contract}`;
      return row ? { isToken: row.is_token as boolean } : undefined;
    },
  };
}
