/**
 * The TRON index's token tables as the token operations read them (tokens.ts): token_metadata (TRC-20, by
 * the 21-byte address) and trc10_assets (by id), kept by the index (tokenReads.ts) and by those operations.
 * Contracts here are the node's `41...` hex, lower-case.
 */
import type { Sql } from "../../db/database";
import { TransferKind } from "../../transferKind";
import { keepTrc10Asset, keepTrc20Metadata, type Trc10Asset, type Trc20Metadata } from "./tokenReads";

export interface StoredTrc20 extends Trc20Metadata {
  updatedAt: Date;
}
export interface StoredTrc10 extends Trc10Asset {
  updatedAt: Date;
}
/** A token of DEFAULT_TOKENS: a TRC-20 contract (`41...` hex) or a TRC-10 asset id. */
export type IndexedToken = { kind: "trc20"; contract41: string } | { kind: "trc10"; id: string };

export interface TronTokenStore {
  trc20(contract41: string): Promise<StoredTrc20 | undefined>;
  trc10(id: string): Promise<StoredTrc10 | undefined>;
  keepTrc20(contract41: string, meta: Trc20Metadata): Promise<void>;
  keepTrc10(asset: Trc10Asset): Promise<void>;
  /**
   * The TRC-20 and TRC-10 tokens with the most transfers of successful transactions in the last day of
   * indexed chain time (ties: more distinct senders, then TRC-20 before TRC-10, then contract or id).
   */
  mostTransferred(limit: number): Promise<IndexedToken[]>;
}

export function createTronTokenStore(sql: Sql): TronTokenStore {
  return {
    async trc20(contract41) {
      const [row] = await sql`select is_token, name, symbol, decimals, updated_at from token_metadata
        where address = decode(${contract41}, 'hex')`;
      return (
        row && {
          isToken: row.is_token as boolean,
          name: row.name as string | null,
          symbol: row.symbol as string | null,
          decimals: row.decimals as number | null,
          updatedAt: row.updated_at as Date,
        }
      );
    },
    async trc10(id) {
      const [row] = await sql`select name, abbr, precision, encode(owner_address, 'hex') as owner, updated_at
        from trc10_assets where id = ${id}`;
      return (
        row && {
          id,
          name: row.name as string | null,
          abbr: row.abbr as string | null,
          precision: row.precision as number,
          owner: row.owner as string | null,
          updatedAt: row.updated_at as Date,
        }
      );
    },
    keepTrc20: (contract41, meta) => keepTrc20Metadata(sql, contract41, meta),
    keepTrc10: (asset) => keepTrc10Asset(sql, asset),
    async mostTransferred(limit) {
      const rows = await sql`
        with since as (
          select min(b.number) as first from blocks b
          where b.timestamp > (select l.timestamp - 86400 from indexer_state s join blocks l on l.number = s.last_block)
        )
        select transfer_type, encode(contract_address, 'hex') as contract, asset_id from transfers, since
        where transfer_type in (${TransferKind.erc20}, ${TransferKind.trc10}) and block_number >= since.first
          and not transaction_error
        group by transfer_type, contract_address, asset_id
        order by count(*) desc, count(distinct from_address) desc, transfer_type, contract_address, asset_id
        limit ${limit}`;
      return rows.map((r) =>
        r.transfer_type === TransferKind.trc10
          ? { kind: "trc10" as const, id: r.asset_id as string }
          : { kind: "trc20" as const, contract41: r.contract as string },
      );
    },
  };
}
