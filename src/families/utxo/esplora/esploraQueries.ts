/**
 * The Esplora API's reads of the Bitcoin family's index (sql/utxo/007_utxo_index.sql, 008_address_totals.sql):
 * the tip, where a transaction is and its fee, prevouts, what spends a transaction's outputs, an address's
 * figures (its totals), history pages and unspent outputs. Hashes and txids are kept as the bytes of their
 * hex (as the node writes them), amounts as satoshis; every list is bounded by its caller's limit.
 */
import type { Sql } from "../../../db/database";
import { type IndexedOutput, indexedOutputs } from "../indexedOutputs";

/** Where a confirmed transaction is: its block, the block's header time, and its fee from the index. */
export interface Located {
  height: bigint;
  hash: string;
  time: number;
  fee: bigint;
  /** Its place in the block, where the query read it (a page's transactions cut from their block by it). */
  position?: number;
}

/** What spends an output, in a block of the index. */
export interface IndexedSpend {
  txid: string;
  vin: number;
  height: bigint;
  hash: string;
  time: number;
}

/** Confirmed figures of an address (Esplora's chain_stats). */
export interface ChainStats {
  fundedCount: bigint;
  fundedSum: bigint;
  spentCount: bigint;
  spentSum: bigint;
  txCount: bigint;
}

/** An address's transaction, in its history (newest first). */
export interface HistoryRow {
  txid: string;
  block: Located;
}

/** An unspent output of an address. */
export interface UnspentRow {
  txid: string;
  vout: number;
  value: bigint;
  block: Omit<Located, "fee">;
}

/** A place in an address's history: the page after it starts below it. */
export interface HistoryCursor {
  block: bigint;
  position: number;
}

export interface EsploraQueries {
  tip(): Promise<{ height: bigint; hash: string } | undefined>;
  blockHash(height: bigint): Promise<string | undefined>;
  /** The indexed ones of `txids`, by txid. */
  locate(txids: readonly string[]): Promise<Map<string, Located>>;
  /** The indexed ones of the outputs, by `txid:vout`. */
  outputs(outpoints: readonly { txid: string; vout: number }[]): Promise<Map<string, IndexedOutput>>;
  /** What spends each output of `txid` (indexed spends only), by vout. */
  spends(txid: string): Promise<Map<number, IndexedSpend>>;
  /** The address of a script (by its SHA-256) an indexed output paid; undefined: none seen. */
  addressOfScript(digest: Uint8Array): Promise<string | undefined>;
  stats(address: string): Promise<ChainStats>;
  /** Where `txid` is in the address's history; undefined when it is not there. */
  historyCursor(address: string, txid: string): Promise<HistoryCursor | undefined>;
  history(address: string, after: HistoryCursor | undefined, limit: number): Promise<HistoryRow[]>;
  /** Unspent outputs, oldest first; at most `limit`. */
  unspent(address: string, limit: number): Promise<UnspentRow[]>;
}

type Row = Record<string, unknown>;
const located = (r: Row): Located => ({
  height: BigInt(r.height as string),
  hash: r.hash as string,
  time: Number(r.time as string),
  fee: BigInt((r.fee as string | undefined) ?? "0"),
  ...(typeof r.position === "number" ? { position: r.position } : {}),
});

/**
 * An address's statements, each an index lookup or a range of its index as long as the page, whatever the
 * length of its history (test/utxo-long-history.test.ts reads their plans on a long one).
 */
export function addressStatements(sql: Sql) {
  return {
    /** Its totals (sql/utxo/008): one row, none for an address the index has not seen. */
    stats: (address: string) => sql`select funded_count::text, funded_sum::text, spent_count::text,
        spent_sum::text, tx_count::text
      from address_totals where address = ${address}`,
    /**
     * Where `txid` is in the address's history: the transaction by its own index, then the address's row by
     * its key. A txid twice in the chain (BIP 30's repeated coinbases) is taken at its later place, so the
     * page after it holds the earlier one rather than skip what lies between.
     */
    historyCursor: (address: string, txid: string) => sql`select a.block_number::text as block, a.position
      from transactions t
      join address_transactions a on a.address = ${address} and a.block_number = t.block_number
        and a.position = t.position
      where t.txid = decode(${txid}, 'hex')
      order by t.block_number desc limit 1`,
    /** A page of its history, newest first, below `after`. */
    history: (address: string, after: HistoryCursor | undefined, limit: number) => {
      const below = after
        ? sql`and (a.block_number, a.position) < (${after.block.toString()}::bigint, ${after.position}::integer)`
        : sql``;
      return sql`select encode(a.txid, 'hex') as txid, a.block_number::text as height, a.position,
          encode(b.hash, 'hex') as hash, b.header_time::text as time, t.fee::text as fee
        from address_transactions a
        join blocks b on b.number = a.block_number
        join transactions t on t.block_number = a.block_number and t.position = a.position
        where a.address = ${address} ${below}
        order by a.block_number desc, a.position desc
        limit ${limit}`;
    },
  };
}

export function createEsploraQueries(sql: Sql): EsploraQueries {
  const statements = addressStatements(sql);
  const txidArray = (txids: readonly string[]) =>
    sql`array(select decode(t, 'hex') from unnest(${txids as string[]}::text[]) t)`;
  return {
    async tip() {
      const [row] = await sql`select number::text as height, encode(hash, 'hex') as hash
        from blocks order by number desc limit 1`;
      return row && { height: BigInt(row.height as string), hash: row.hash as string };
    },

    async blockHash(height) {
      const [row] =
        await sql`select encode(hash, 'hex') as hash from blocks where number = ${height.toString()}::bigint`;
      return row?.hash as string | undefined;
    },

    async locate(txids) {
      if (txids.length === 0) return new Map();
      const columns = sql`encode(t.txid, 'hex') as txid, t.block_number::text as height, t.position,
          encode(b.hash, 'hex') as hash, b.header_time::text as time, t.fee::text as fee`;
      const rows = await sql`select ${columns} from transactions t join blocks b on b.number = t.block_number
        where t.txid = any(${txidArray(txids)})`;
      return new Map(rows.map((r) => [r.txid as string, located(r)]));
    },

    outputs: (outpoints) => indexedOutputs(sql, outpoints),

    async spends(txid) {
      const rows = await sql`select o.vout, encode(o.spent_txid, 'hex') as txid, o.spent_vin as vin,
          o.spent_block::text as height, encode(b.hash, 'hex') as hash, b.header_time::text as time
        from transactions t
        join outputs o on o.block_number = t.block_number and o.position = t.position
        join blocks b on b.number = o.spent_block
        where t.txid = decode(${txid}, 'hex') and o.spent_txid is not null`;
      return new Map(
        rows.map((r) => [r.vout as number, { txid: r.txid as string, vin: r.vin as number, ...located(r) }]),
      );
    },

    async addressOfScript(digest) {
      const [row] = await sql`select address from address_scripts where script_hash = ${digest as Buffer}`;
      return row?.address as string | undefined;
    },

    async stats(address) {
      const [row] = await statements.stats(address);
      const total = (column: string) => BigInt((row?.[column] as string | undefined) ?? "0");
      return {
        fundedCount: total("funded_count"),
        fundedSum: total("funded_sum"),
        spentCount: total("spent_count"),
        spentSum: total("spent_sum"),
        txCount: total("tx_count"),
      };
    },

    async historyCursor(address, txid) {
      const [row] = await statements.historyCursor(address, txid);
      return row && { block: BigInt(row.block as string), position: row.position as number };
    },

    async history(address, after, limit) {
      const rows = await statements.history(address, after, limit);
      return rows.map((r) => ({ txid: r.txid as string, block: located(r) }));
    },

    async unspent(address, limit) {
      const rows = await sql`select encode(o.txid, 'hex') as txid, o.vout, o.value::text as value,
          o.block_number::text as height, encode(b.hash, 'hex') as hash, b.header_time::text as time
        from outputs o join blocks b on b.number = o.block_number
        where o.address = ${address} and o.spent_txid is null
        order by o.block_number, o.position, o.vout
        limit ${limit}`;
      return rows.map((r) => {
        const { fee: _fee, ...block } = located(r);
        return { txid: r.txid as string, vout: r.vout as number, value: BigInt(r.value as string), block };
      });
    },
  };
}
