/**
 * The net rule of watchMatcher.ts applied to a mempool transaction (mempoolFeed.ts) once what its inputs
 * spend is known: what it pays each watched address minus what it spends from it, in satoshis.
 */
import type { NetResult } from "./watchMatcher";

export interface Outpoint {
  txid: string;
  vout: number;
}

/** What an output pays: one address (null for none, or for a bare multisig naming several), in satoshis. */
export interface Paid {
  address: string | null;
  value: bigint;
}

const distinct = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];

/**
 * What a transaction (its outputs, by index) does to each of `watched` (filters: id and address), by the net
 * rule; `spent`: what each of its inputs spends, in input order. One result per filter whose address it pays
 * or spends from.
 */
export function netResults(
  tx: { txid: string; outputs: readonly Paid[] },
  spent: readonly Paid[],
  watched: { filterId: string; address: string }[],
): NetResult[] {
  const sum = (paid: readonly Paid[]) => paid.reduce((s, p) => s + p.value, 0n);
  const fee = sum(spent) - sum(tx.outputs);
  const inputs = distinct(spent.map((p) => p.address));
  const outputs = distinct(tx.outputs.map((p) => p.address));
  const results: NetResult[] = [];
  for (const { filterId, address } of watched) {
    const received = sum(tx.outputs.filter((p) => p.address === address));
    const paidOut = spent.filter((p) => p.address === address);
    if (received === 0n && paidOut.length === 0 && !outputs.includes(address)) continue;
    results.push({ filterId, address, txid: tx.txid, net: received - sum(paidOut), fee, inputs, outputs });
  }
  return results;
}
