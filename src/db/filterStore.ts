/**
 * Watch filters in the database: their registration per API key. Addresses come and go as the bytes the
 * family's codec gives (addresses.ts); matching a block against the filters is the family's index code
 * (EVM: families/evm/watchMatchQueries.ts), which joins its own tables with `watch_filters`.
 */
import type postgres from "postgres";
import type { Sql } from "./database";

export interface StoredFilter {
  filterId: string;
  /** As the family's codec stores it. */
  address: Uint8Array;
  /** null: the native coin and every token. */
  contract: Uint8Array | null;
  withApproval: boolean;
  createdAt: Date;
}

export interface FilterStore {
  /**
   * The filter's id: the existing one when the same filter was added before, else a new one. Undefined
   * when the key already holds `max` filters. One statement finds, counts and inserts; a concurrent add
   * of the same filter makes it look again, and a concurrent remove orders before or after it, never
   * between.
   */
  add(
    keyHash: string | null,
    address: Uint8Array,
    contract: Uint8Array | null,
    withApproval: boolean,
    max: number,
  ): Promise<string | undefined>;
  /** False when the key has no such filter. `filterId` must be a UUID. */
  remove(keyHash: string | null, filterId: string): Promise<boolean>;
  /** The key's filters, on one address or all of them, oldest first. */
  list(keyHash: string | null, address?: Uint8Array): Promise<StoredFilter[]>;
  /** A page of all the key's filters, oldest first, after the one given (keyset paging). */
  page(keyHash: string | null, after: StoredFilter | undefined, limit: number): Promise<StoredFilter[]>;
}

/**
 * Whose filters a family's match query joins (`join watch_filters f on f.key_hash <condition>`): one key's
 * (check's results), or several keys' (a block's results for every key with a webhook endpoint,
 * webhooks/producer.ts), each row then naming its key (`column`, selected as `key_hash`: keyOfRow reads it).
 */
export interface FilterKeys {
  condition: postgres.Fragment;
  /** Empty for one key; `encode(f.key_hash, 'hex') as key_hash,` for several. */
  column: postgres.Fragment;
}

/** A key as stored: its SHA-256, or empty in open mode. */
const storedKey = (keyHash: string | null) => keyHash ?? "";

/** A key as the tables that belong to keys hold it (watch filters, webhook endpoints): its bytes. */
export const keyBytes = (sql: Sql, keyHash: string | null) => sql`decode(${storedKey(keyHash)}, 'hex')`;

export function filterKeys(sql: Sql, keys: string | null | readonly (string | null)[]): FilterKeys {
  if (keys === null || typeof keys === "string") {
    return { condition: sql`= decode(${storedKey(keys)}, 'hex')`, column: sql`` };
  }
  return {
    condition: sql`= any(array(select decode(k, 'hex') from unnest(${keys.map(storedKey)}::text[]) k))`,
    column: sql`encode(f.key_hash, 'hex') as key_hash,`,
  };
}

/** The key of a row of several keys' filters (FilterKeys' `key_hash`): null for open mode's. */
export const keyOfRow = (row: Record<string, unknown>): string | null =>
  (row.key_hash as string) === "" ? null : (row.key_hash as string);

/** Looks and inserts of one add: a concurrent add of the same filter can win an insert only once. */
const ADD_ATTEMPTS = 3;

function filterOf(r: Record<string, unknown>): StoredFilter {
  return {
    filterId: r.filter_id as string,
    address: r.address as Uint8Array,
    contract: r.contract_address as Uint8Array | null,
    withApproval: r.with_approval as boolean,
    createdAt: r.created_at as Date,
  };
}

export function createFilterStore(sql: Sql): FilterStore {
  const key = (keyHash: string | null) => keyBytes(sql, keyHash);
  const columns = sql`filter_id::text, address, contract_address, with_approval, created_at`;

  return {
    async add(keyHash, address, contract, withApproval, max) {
      const a = sql`${address}::bytea`;
      const c = sql`${contract}::bytea`;
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

    async remove(keyHash, filterId) {
      const removed = await sql`delete from watch_filters
        where key_hash = ${key(keyHash)} and filter_id = ${filterId}::uuid`;
      return removed.count === 1;
    },

    async list(keyHash, address) {
      const rows = await sql`select ${columns} from watch_filters where key_hash = ${key(keyHash)}
        ${address === undefined ? sql`` : sql`and address = ${address}::bytea`}
        order by created_at, filter_id`;
      return rows.map(filterOf);
    },

    async page(keyHash, after, limit) {
      const rows = await sql`select ${columns} from watch_filters where key_hash = ${key(keyHash)}
        ${after === undefined ? sql`` : sql`and (created_at, filter_id) > (${after.createdAt}, ${after.filterId}::uuid)`}
        order by created_at, filter_id limit ${limit}`;
      return rows.map(filterOf);
    },
  };
}
