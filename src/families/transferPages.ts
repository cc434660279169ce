/**
 * The page of an index's transfers a query asks for, by key only: from `transfer_addresses` for address
 * queries, from `transfers` otherwise (the EVM and TRON indexes keep both tables with the same keys and
 * columns). Only the page's rows are then joined to their block and token by the family's reads, so a page
 * deep in an address's history costs one index range, never a join per skipped row.
 */
import type { Sql } from "../db/database";
import type { TransferQuery } from "../operations/transferQueries";

const SIDE_BIT = { from: 1, to: 2 } as const;

/**
 * The query of the page's keys `(block_number, transaction_index, log_index)`, in order. `hex` turns the
 * query's canonical addresses and contracts into the hex of the bytes the index keeps.
 */
export function transferPageKeys(sql: Sql, q: TransferQuery, hex: (canonical: string[]) => string[]) {
  const empty = sql``;
  const contracts = hex(q.contracts ?? []);
  const filters = sql`
    ${q.kind === undefined ? empty : sql`and transfer_type = ${q.kind}`}
    ${
      contracts.length === 0
        ? empty
        : contracts.length === 1
          ? sql`and contract_address = decode(${contracts[0]!}, 'hex')`
          : sql`and contract_address = any(array(select decode(c, 'hex') from unnest(${contracts}::text[]) c))`
    }`;
  // Keyset paging: the keys after the cursor (fromBlock is at least its block: the partitions before go).
  const after = q.after
    ? sql`and (block_number, transaction_index, log_index) > (${q.after.blockNumber.toString()}::bigint,
        ${q.after.transactionIndex}::integer, ${q.after.logIndex}::integer)`
    : empty;
  const range = sql`block_number between ${q.fromBlock.toString()}::bigint and ${q.toBlock.toString()}::bigint
    ${after}`;
  if (!q.addresses) {
    return sql`select block_number, transaction_index, log_index from transfers where ${range} ${filters}
      order by block_number, transaction_index, log_index offset ${q.offset} limit ${q.limit}`;
  }
  const addresses = hex(q.addresses);
  const side = q.direction ? sql`and side & ${SIDE_BIT[q.direction]} <> 0` : empty;
  // One address reads its index range in order; several are merged and deduplicated.
  if (addresses.length === 1) {
    return sql`select block_number, transaction_index, log_index from transfer_addresses
      where address = decode(${addresses[0]!}, 'hex') and ${range} ${side} ${filters}
      order by block_number, transaction_index, log_index offset ${q.offset} limit ${q.limit}`;
  }
  return sql`select distinct block_number, transaction_index, log_index from transfer_addresses
    where address = any(array(select decode(a, 'hex') from unnest(${addresses}::text[]) a))
      and ${range} ${side} ${filters}
    order by block_number, transaction_index, log_index offset ${q.offset} limit ${q.limit}`;
}
