/** Token metadata kept in the database, read by the transfer queries and the token operations. */

import type { Sql } from "../../db/database";
import { TransferKind } from "../../transferKind";
import type { TokenMetadata } from "./tokenMetadata";

export interface StoredTokenMetadata extends TokenMetadata {
  address: string;
  updatedAt: Date;
}

export interface TokenStore {
  /** Those of the addresses never looked up (token or not). */
  unknown(addresses: string[]): Promise<string[]>;
  /**
   * The ERC-20 contracts with the most transfers in the last day of indexed chain time (ties: more distinct
   * senders, then the address).
   */
  mostTransferred(limit: number): Promise<string[]>;
  /** A contract's metadata as just read from it. */
  upsert(address: string, meta: TokenMetadata): Promise<void>;
  get(address: string): Promise<StoredTokenMetadata | undefined>;
}

export function createTokenStore(sql: Sql): TokenStore {
  return {
    async unknown(addresses: string[]): Promise<string[]> {
      const rows =
        await sql`select '0x' || a as address from unnest(${addresses.map((a) => a.slice(2))}::text[]) a
        where not exists (select 1 from token_metadata m where m.address = decode(a, 'hex'))`;
      return rows.map((r) => r.address as string);
    },
    async mostTransferred(limit: number): Promise<string[]> {
      const rows = await sql`
        with since as (
          select min(b.number) as first from blocks b
          where b.timestamp > (select l.timestamp - 86400 from indexer_state s join blocks l on l.number = s.last_block)
        )
        select '0x' || encode(contract_address, 'hex') as contract from transfers, since
        where transfer_type = ${TransferKind.erc20} and block_number >= since.first
        group by contract_address
        order by count(*) desc, count(distinct from_address) desc, contract_address
        limit ${limit}`;
      return rows.map((r) => r.contract as string);
    },
    async upsert(address: string, meta: TokenMetadata): Promise<void> {
      await sql`insert into token_metadata (address, is_token, name, symbol, decimals, updated_at)
        values (decode(${address.slice(2)}, 'hex'), ${meta.isToken}, ${meta.name}, ${meta.symbol}, ${meta.decimals}, now())
        on conflict (address) do update set is_token = excluded.is_token, name = excluded.name,
          symbol = excluded.symbol, decimals = excluded.decimals, updated_at = now()`;
    },
    async get(address: string): Promise<StoredTokenMetadata | undefined> {
      const [row] = await sql`select is_token, name, symbol, decimals, updated_at from token_metadata
        where address = decode(${address.slice(2)}, 'hex')`;
      if (!row) return undefined;
      return {
        address,
        isToken: row.is_token as boolean,
        name: row.name as string | null,
        symbol: row.symbol as string | null,
        decimals: row.decimals as number | null,
        updatedAt: row.updated_at as Date,
      };
    },
  };
}
