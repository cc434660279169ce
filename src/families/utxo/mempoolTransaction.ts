/**
 * A transaction as `getrawtransaction <txid> true` answers it (JSON text), read for the watch filters'
 * mempool matching: what it spends (outpoints), what each output pays (an address, or none) and how much,
 * in satoshis read from the text (never through a float). The net rule of watchMatcher.ts applied to it once
 * its inputs are known.
 */
import { arrayElements } from "../../json";
import { outputAddresses, outputValue } from "./dialect";
import { membersOf, stringAt } from "./members";
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

export interface MempoolTransaction {
  txid: string;
  /** Empty for a coinbase (never in a mempool, but read the same). */
  inputs: Outpoint[];
  /** By output index. */
  outputs: Paid[];
}

/** Reads a verbose transaction's text. Throws SyntaxError on a text that is not one. */
export function readMempoolTransaction(text: string): MempoolTransaction {
  const top = membersOf(text, ["txid", "vin", "vout"]);
  const txid = stringAt(text, top.get("txid"));
  const vin = top.get("vin");
  const vout = top.get("vout");
  if (txid === undefined || vin === undefined || vout === undefined) {
    throw new SyntaxError("a transaction without txid, vin or vout");
  }
  const inputs: Outpoint[] = [];
  for (const span of arrayElements(text, vin.start)) {
    const input = text.slice(span.start, span.end);
    const members = membersOf(input, ["coinbase", "txid", "vout"]);
    if (members.has("coinbase")) continue;
    const spent = stringAt(input, members.get("txid"));
    const index = members.get("vout");
    if (spent === undefined || index === undefined) throw new SyntaxError("an input without txid or vout");
    inputs.push({ txid: spent, vout: Number(input.slice(index.start, index.end)) });
  }
  const outputs = arrayElements(text, vout.start).map((span): Paid => {
    const output = text.slice(span.start, span.end);
    const script = membersOf(output, ["scriptPubKey"]).get("scriptPubKey");
    const paid = script === undefined ? [] : outputAddresses(output.slice(script.start, script.end));
    return { address: paid.length === 1 ? paid[0]! : null, value: outputValue(output) };
  });
  return { txid, inputs, outputs };
}

const distinct = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];

/**
 * What a transaction does to each of `watched` (filters: id and address), by the net rule; `spent`: what
 * each of its inputs spends, in input order. One result per filter whose address it pays or spends from.
 */
export function netResults(
  tx: MempoolTransaction,
  spent: Paid[],
  watched: { filterId: string; address: string }[],
): NetResult[] {
  const sum = (paid: Paid[]) => paid.reduce((s, p) => s + p.value, 0n);
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
