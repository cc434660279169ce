/**
 * Reads of the Bitcoin family's index for the shared transfers operation (operations/transferQueries.ts):
 * a transfer row is an output that pays (sql/utxo/007: an address not among its transaction's input
 * addresses), in (block, position, vout) order. An address's rows come from its `address_transactions`
 * rows, in order, each joined to its transaction's outputs: with no input of the address, its outputs to the
 * address (they all pay: the address is no sender); with one (direction `from`), every paying output. One
 * ordered scan of the address's rows serves both sides; several addresses are deduplicated. A page's keys are
 * chosen first, and only the page is joined to its block and transaction; a page `after` a row (keyset
 * paging) starts each index range at that row.
 */
import type { Sql } from "../../db/database";
import type { TransferQueries, TransferQuery, TransferRecord } from "../../operations/transferQueries";
import { TransferKind } from "../../transferKind";
import { createBulkReads } from "./bulkReads";
import { DECIMALS } from "./dialect";

/** `from` of a coinbase's rows, and of a transaction none of whose inputs pays an address. */
const COINBASE = "coinbase";
const NONSTANDARD = "nonstandard";

export function createUtxoTransferQueries(sql: Sql): TransferQueries {
  const bulk = createBulkReads(sql);
  /** The page's keys: (block_number, position, vout). */
  function pageKeys(q: TransferQuery) {
    const cursor = q.after && {
      block: sql`${q.after.blockNumber.toString()}::bigint`,
      position: sql`${q.after.transactionIndex}::integer`,
      vout: sql`${q.after.logIndex}::integer`,
    };
    /**
     * The keys of table `t` (outputs `o`, address_transactions `a`) the page may hold: the range and, paging
     * keyset, from the cursor's transaction on. Said of both sides of the join, so that each one's index
     * range starts there (PostgreSQL carries equalities across a join, never ranges).
     */
    const from = (t: "o" | "a") => {
      const [block, position] = [sql(`${t}.block_number`), sql(`${t}.position`)];
      return sql`${block} between ${q.fromBlock.toString()}::bigint and ${q.toBlock.toString()}::bigint
        ${cursor ? sql`and (${block}, ${position}) >= (${cursor.block}, ${cursor.position})` : sql``}`;
    };
    const past = cursor
      ? sql`and (o.block_number, o.position, o.vout) > (${cursor.block}, ${cursor.position}, ${cursor.vout})`
      : sql``;
    const addresses = q.addresses;
    if (!addresses) {
      return sql`select block_number, position, vout from outputs o where pays and ${from("o")} ${past}
        order by block_number, position, vout offset ${q.offset} limit ${q.limit}`;
    }
    const one = addresses.length === 1;
    const which = one ? sql`a.address = ${addresses[0]!}` : sql`a.address = any(${addresses}::text[])`;
    const side =
      q.direction === "to"
        ? sql`a.inputs = 0 and o.address = a.address`
        : q.direction === "from"
          ? sql`a.inputs > 0`
          : sql`(a.inputs > 0 or o.address = a.address)`;
    // An output can be a row of two of several addresses (one receives it, the other sends it).
    const distinct = one ? sql`` : sql`distinct`;
    return sql`select ${distinct} a.block_number, a.position, o.vout from address_transactions a
      join outputs o on o.block_number = a.block_number and o.position = a.position and o.pays and ${side}
        and ${from("o")}
      where ${which} ${q.direction === "from" ? sql`and a.inputs > 0` : sql``} and ${from("a")} ${past}
      order by a.block_number, a.position, o.vout offset ${q.offset} limit ${q.limit}`;
  }

  return {
    async transfers(q: TransferQuery): Promise<TransferRecord[]> {
      // During a bulk load the indexes by block and by address are dropped: any page would scan the chain.
      await bulk.refuse("transfers");
      if (q.limit === 0 || q.fromBlock > q.toBlock) return [];
      // Native transfers only: a query for tokens selects nothing here.
      if ((q.kind !== undefined && q.kind !== TransferKind.trx) || (q.contracts?.length ?? 0) > 0) return [];
      const rows = await sql`
        select o.block_number::text as block_number, b.timestamp::text as timestamp, encode(o.txid, 'hex') as txid,
          o.position, o.vout, o.address, o.value::text as value, t.fee::text as fee, t.coinbase, t.from_addresses
        from (${pageKeys(q)}) p
        join outputs o on o.block_number = p.block_number and o.position = p.position and o.vout = p.vout
        join blocks b on b.number = o.block_number
        join transactions t on t.block_number = o.block_number and t.position = o.position
        order by o.block_number, o.position, o.vout`;
      return rows.map((r) => {
        const fromAddresses = r.from_addresses as string[];
        return {
          blockNumber: r.block_number as string,
          timestamp: r.timestamp as string,
          transactionHash: r.txid as string,
          transactionIndex: r.position as number,
          logIndex: r.vout as number,
          kind: TransferKind.trx,
          contract: null,
          from: r.coinbase ? COINBASE : (fromAddresses[0] ?? NONSTANDARD),
          fromAddresses,
          to: r.address as string,
          value: r.value as string,
          fee: r.fee as string,
          error: false,
          symbol: null,
          decimals: DECIMALS,
        };
      });
    },

    async explain(q: TransferQuery): Promise<string> {
      const rows = await sql`explain (analyze, buffers) ${pageKeys(q)}`;
      return rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    },
  };
}
