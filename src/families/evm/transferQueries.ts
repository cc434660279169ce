/**
 * Reads of the EVM transfer index, for the shared transfers operation (operations/transferQueries.ts). A page
 * is chosen first, by key only (from transfer_addresses for address queries, from transfers otherwise), and
 * only its rows are joined to their block and token: a page deep in an address's history costs one index
 * range, never a join per skipped row.
 */
import type { Sql } from "../../db/database";
import type { TransferQueries, TransferQuery, TransferRecord } from "../../operations/transferQueries";
import type { TransferKind } from "../../transferKind";
import { transferPageKeys } from "../transferPages";

const unhex = (list: string[]) => list.map((a) => a.slice(2));

export function createEvmTransferQueries(sql: Sql): TransferQueries {
  return {
    async transfers(q: TransferQuery): Promise<TransferRecord[]> {
      if (q.limit === 0 || q.fromBlock > q.toBlock) return [];
      const rows = await sql`
        select t.block_number::text as block_number, b.timestamp::text as timestamp,
          encode(t.transaction_hash, 'hex') as transaction_hash, t.transaction_index, t.log_index, t.transfer_type,
          encode(t.contract_address, 'hex') as contract_address, encode(t.from_address, 'hex') as from_address,
          encode(t.to_address, 'hex') as to_address, t.value::text as value, t.fee::text as fee, t.transaction_error,
          m.symbol, m.decimals
        from (${transferPageKeys(sql, q, unhex)}) p
        join transfers t using (block_number, transaction_index, log_index)
        join blocks b on b.number = t.block_number
        left join token_metadata m on m.address = t.contract_address
        order by t.block_number, t.transaction_index, t.log_index`;
      return rows.map((r) => ({
        blockNumber: r.block_number as string,
        timestamp: r.timestamp as string,
        transactionHash: `0x${r.transaction_hash as string}`,
        transactionIndex: r.transaction_index as number,
        logIndex: r.log_index as number,
        kind: r.transfer_type as TransferKind,
        contract: r.contract_address === null ? null : `0x${r.contract_address as string}`,
        from: `0x${r.from_address as string}`,
        to: r.to_address === null ? null : `0x${r.to_address as string}`,
        value: r.value as string,
        fee: r.fee as string,
        error: r.transaction_error as boolean,
        symbol: r.symbol as string | null,
        decimals: r.decimals as number | null,
      }));
    },

    async explain(q: TransferQuery): Promise<string> {
      const rows = await sql`explain (analyze, buffers) ${transferPageKeys(sql, q, unhex)}`;
      return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    },
  };
}
