/**
 * Reads of the TRON transfer index, for the shared transfers operation (operations/transferQueries.ts), as
 * the EVM family's (../evm/transferQueries.ts): a page is chosen by key first (transfer_addresses for
 * address queries, transfers otherwise), and only its rows are joined to their block and token. Addresses
 * come in canonical (base58) and go out base58; a TRC-10 row's contract is its asset id, its symbol and
 * decimals the asset's abbreviation and precision.
 */
import type { Sql } from "../../db/database";
import type { TransferQueries, TransferQuery, TransferRecord } from "../../operations/transferQueries";
import type { TransferKind } from "../../transferKind";
import { transferPageKeys } from "../transferPages";
import { tronAddresses } from "./addresses";

const hexOf = (list: string[]) => list.map((a) => Buffer.from(tronAddresses.toBytes(a)).toString("hex"));
const base58 = (hex: string) => tronAddresses.fromBytes(Buffer.from(hex, "hex"));

export function createTronTransferQueries(sql: Sql): TransferQueries {
  return {
    async transfers(q: TransferQuery): Promise<TransferRecord[]> {
      if (q.limit === 0 || q.fromBlock > q.toBlock) return [];
      const rows = await sql`
        select t.block_number::text as block_number, b.timestamp::text as timestamp,
          encode(t.transaction_hash, 'hex') as transaction_hash, t.transaction_index, t.log_index, t.transfer_type,
          encode(t.contract_address, 'hex') as contract_address, t.asset_id, encode(t.from_address, 'hex') as from_address,
          encode(t.to_address, 'hex') as to_address, t.value::text as value, t.fee::text as fee, t.transaction_error,
          coalesce(m.symbol, a.abbr) as symbol, coalesce(m.decimals, a.precision) as decimals
        from (${transferPageKeys(sql, q, hexOf)}) p
        join transfers t using (block_number, transaction_index, log_index)
        join blocks b on b.number = t.block_number
        left join token_metadata m on m.address = t.contract_address
        left join trc10_assets a on a.id = t.asset_id
        order by t.block_number, t.transaction_index, t.log_index`;
      return rows.map((r) => ({
        blockNumber: r.block_number as string,
        timestamp: r.timestamp as string,
        transactionHash: r.transaction_hash as string,
        transactionIndex: r.transaction_index as number,
        logIndex: r.log_index as number,
        kind: r.transfer_type as TransferKind,
        contract:
          r.contract_address !== null ? base58(r.contract_address as string) : (r.asset_id as string | null),
        from: base58(r.from_address as string),
        to: r.to_address === null ? null : base58(r.to_address as string),
        value: r.value as string,
        fee: r.fee as string,
        error: r.transaction_error as boolean,
        symbol: r.symbol as string | null,
        decimals: r.decimals as number | null,
      }));
    },

    async explain(q: TransferQuery): Promise<string> {
      const rows = await sql`explain (analyze, buffers) ${transferPageKeys(sql, q, hexOf)}`;
      return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    },
  };
}
