/**
 * The index's outputs (sql/utxo/007_utxo_index.sql `outputs`) that outpoints name, by outpointKey: the one
 * read of what an input spends, for the index's writer (prevouts.ts), the pending watch (mempoolFeed.ts,
 * through watchMatchQueries.ts) and the Esplora API (esplora/esploraQueries.ts). An outpoint the index does
 * not hold has no entry. An outpoint is found through its transaction, then the output at its place
 * (sql/utxo/017): a txid twice in the chain (BIP 30) has outputs at its first place only.
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
    join transactions t on t.txid = decode(p.txid, 'hex')
    join outputs o on o.block_number = t.block_number and o.position = t.position and o.vout = p.vout`;
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
