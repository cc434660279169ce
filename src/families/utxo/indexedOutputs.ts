/**
 * The index's outputs (sql/utxo/007_utxo_index.sql `outputs`) that outpoints name, by outpointKey: the one
 * read of what an input spends, for the index's writer (prevouts.ts), the pending watch (mempoolFeed.ts,
 * through watchMatchQueries.ts) and the Esplora API (esplora/esploraQueries.ts). An outpoint the index does
 * not hold has no entry. An outpoint is found through its transaction, then the output at its place
 * (sql/utxo/017): a txid twice in the chain (BIP 30) has outputs at its first place only. Each outpoint's
 * is a subquery the planner keeps apart (`offset 0`): one probe of each index an outpoint, where a join lets
 * it hash the whole of `transactions` for a few thousand outpoints, or read every output of each
 * transaction and filter them (3-5 times the time on a copy of the bench's index).
 */
import type { Sql } from "../../db/database";

/** An output the index keeps. */
export interface IndexedOutput {
  script: Uint8Array;
  value: bigint;
  address: string | null;
}

/** An outpoint as a map's key. */
export const outpointKey = (txid: string, vout: number) => `${txid}:${vout}`;

export async function indexedOutputs(
  sql: Sql,
  outpoints: readonly { txid: string; vout: number }[],
): Promise<Map<string, IndexedOutput>> {
  if (outpoints.length === 0) return new Map();
  const rows = await sql`select encode(o.txid, 'hex') as txid, o.vout, o.script, o.value::text as value,
      o.address
    from unnest(${outpoints.map((o) => o.txid)}::text[], ${outpoints.map((o) => o.vout)}::integer[]) as p(txid, vout)
    cross join lateral (select o.* from transactions t
      join outputs o on o.block_number = t.block_number and o.position = t.position and o.vout = p.vout
      where t.txid = decode(p.txid, 'hex') offset 0) o`;
  return new Map(
    rows.map((r) => [
      outpointKey(r.txid as string, r.vout as number),
      {
        script: r.script as Uint8Array,
        value: BigInt(r.value as string),
        address: r.address as string | null,
      },
    ]),
  );
}
