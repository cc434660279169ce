/**
 * The Bitcoin-family index's side of the watch filters (sql/utxo/007_utxo_index.sql): what one block's
 * transactions do to each address of a key's filters, or of several keys' (`address_transactions`: received
 * and sent per address and transaction, the inputs spending outputs older than the index's first block
 * included), joined with `watch_filters` through its (key, address) or (address, key) index: never a loop of
 * filters times transactions; and the addresses those transactions name (`transactions.from_addresses`,
 * their outputs'). Addresses are the codec's canonical text, kept in `watch_filters` as its UTF-8 bytes. Also
 * what the mempool follower reads: the filters of several keys on a transaction's addresses, and the indexed
 * outputs its inputs spend.
 */
import type { Sql } from "../../db/database";
import { type FilterKeys, filterKeys, keyOfRow } from "../../db/filterStore";
import { type IndexedOutput, indexedOutputs } from "./indexedOutputs";

/** One (filter, transaction) of a block: what the transaction pays the filter's address, less what it spends. */
export interface NetMatch {
  filterId: string;
  address: string;
  txid: string;
  position: number;
  /** Satoshis, exact: received minus sent (negative: the address paid). */
  net: bigint;
  fee: bigint;
  coinbase: boolean;
  /** The transaction's distinct input addresses, in input order. */
  inputs: string[];
}

/** A match of one of several keys' filters. */
export interface KeyedNetMatch extends NetMatch {
  keyHash: string | null;
}

/** A filter of the native coin on an address (the only kind this family matches). */
export interface AddressFilter {
  keyHash: string | null;
  filterId: string;
  address: string;
}

export interface UtxoWatchQueries {
  /** A block's (filter, transaction) pairs for a key's filters, by (position, filter id); a page when given. */
  matches(
    keyHash: string | null,
    block: bigint,
    page?: { offset: number; limit: number },
  ): Promise<NetMatch[]>;
  /** As `matches` (all of them), for the filters of any of the keys, each naming its key: one query. */
  matchesOfKeys(keyHashes: readonly (string | null)[], block: bigint): Promise<KeyedNetMatch[]>;
  /** The distinct addresses the outputs of a block's transactions pay, in output order, by position. */
  outputAddresses(block: bigint, positions: number[]): Promise<Map<number, string[]>>;
  /** The filters (without a contract) of any of the keys on any of the addresses, by filter id. */
  filtersOf(keyHashes: (string | null)[], addresses: string[]): Promise<AddressFilter[]>;
  /** The outputs the index holds of these (txid, vout). */
  outputs(outpoints: readonly { txid: string; vout: number }[]): Promise<Map<string, IndexedOutput>>;
}

function netMatchOf(r: Record<string, unknown>): NetMatch {
  return {
    filterId: r.filter_id as string,
    address: r.address as string,
    txid: r.txid as string,
    position: r.position as number,
    net: BigInt(r.net as string),
    fee: BigInt(r.fee as string),
    coinbase: r.coinbase as boolean,
    inputs: r.from_addresses as string[],
  };
}

export function createUtxoWatchQueries(sql: Sql): UtxoWatchQueries {
  function matchQuery(keys: FilterKeys, block: bigint, page?: { offset: number; limit: number }) {
    return sql`
      select ${keys.column} f.filter_id::text as filter_id, a.address, encode(a.txid, 'hex') as txid,
        a.position, (a.received - a.sent)::text as net, t.fee::text as fee, t.coinbase, t.from_addresses
      from address_transactions a
      join watch_filters f on f.key_hash ${keys.condition}
        and f.address = convert_to(a.address, 'UTF8') and f.contract_address is null
      join transactions t on t.block_number = a.block_number and t.position = a.position
      where a.block_number = ${block.toString()}::bigint
      order by a.position, f.filter_id
      ${page ? sql`offset ${page.offset} limit ${page.limit}` : sql``}`;
  }

  return {
    async matches(keyHash, block, page) {
      return (await matchQuery(filterKeys(sql, keyHash), block, page)).map(netMatchOf);
    },

    async matchesOfKeys(keyHashes, block) {
      if (keyHashes.length === 0) return [];
      const rows = await matchQuery(filterKeys(sql, keyHashes), block);
      return rows.map((r) => ({ ...netMatchOf(r), keyHash: keyOfRow(r) }));
    },

    async outputAddresses(block, positions) {
      const rows = await sql`select position, address from outputs
        where block_number = ${block.toString()}::bigint and position = any(${positions}::integer[])
          and address is not null
        order by position, vout`;
      const found = new Map<number, string[]>(positions.map((p) => [p, []]));
      for (const r of rows) {
        const list = found.get(r.position as number);
        if (list && !list.includes(r.address as string)) list.push(r.address as string);
      }
      return found;
    },

    async filtersOf(keyHashes, addresses) {
      if (keyHashes.length === 0 || addresses.length === 0) return [];
      const rows = await sql`select encode(key_hash, 'hex') as key_hash, filter_id::text as filter_id,
          convert_from(address, 'UTF8') as address
        from watch_filters
        where key_hash ${filterKeys(sql, keyHashes).condition}
          and address = any(array(select convert_to(a, 'UTF8') from unnest(${addresses}::text[]) a))
          and contract_address is null
        order by filter_id`;
      return rows.map((r) => ({
        keyHash: keyOfRow(r),
        filterId: r.filter_id as string,
        address: r.address as string,
      }));
    },

    outputs: (outpoints) => indexedOutputs(sql, outpoints),
  };
}
