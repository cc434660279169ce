/**
 * The service's view of the node's mempool (the Bitcoin family), as its follower (mempoolFollower.ts) reads
 * it: each transaction worked out once, when it is read (what its inputs spend, the addresses and scripts it
 * pays or spends from, its Esplora JSON), and indexed by address, by script and by the outputs it spends;
 * an address's mempool figures are kept as transactions enter and leave, never summed per request. Pure: no
 * I/O.
 *
 * Bounded by MEMPOOL_MAX_MB (`maxBytes`, against each entry's estimated bytes): past it, the transactions of
 * the lowest fee rate (their own fee over their weight) are left out, each with the transactions that spend
 * its outputs, down to LOW_WATER of the bound, as a node with a smaller mempool would evict them; a
 * transaction spending a left-out one is left out as it comes. A left-out transaction keeps only its fee and
 * weight (the backlog still counts it) until it leaves the node's mempool, and is not read again.
 */

import {
  feeOf,
  type NodeTransaction,
  nodeOutputPrevout,
  type Prevout,
  type ScriptStats,
  spentOutpoints,
  transactionJson,
} from "./esplora/esploraJson";
import { paysAddress, scriptHash } from "./esplora/script";
import { outpointKey } from "./indexedOutputs";
import type { Outpoint } from "./mempoolTransaction";

/** Past the bound, transactions are left out until the view holds this share of it. */
const LOW_WATER = 0.9;
/**
 * An entry's bytes beyond its JSON text, fixed and per input or output: what the view holds of it besides
 * (its objects, the entries of its addresses, outpoints and scripts in the indexes). Measured on Bun with
 * one-input, two-output transactions whose addresses are all new: 5.3 KB of heap each, estimated 5.8 KB.
 */
const ENTRY_BYTES = 1_500;
const PART_BYTES = 1_000;

/** What the node says of a mempool transaction (`getmempoolentry`), amounts in satoshis. */
export interface NodeMempoolEntry {
  /** When it entered the node's mempool (Unix seconds). */
  time: number;
  /** Its fee: `fees.base` (Bitcoin Core 0.21 and later), `fee` before. */
  fees?: { base: bigint };
  fee?: bigint;
}

/** A transaction of the mempool, worked out. */
export interface MempoolEntry {
  readonly txid: string;
  /** When it entered the node's mempool (Unix seconds, the node's word). */
  readonly time: number;
  /** Inputs minus outputs (the node's word where an input's output is unknown), in satoshis. */
  readonly fee: bigint;
  readonly weight: number;
  /** The outputs its inputs spend, in input order. */
  readonly spends: readonly Outpoint[];
  /** What each of them is; undefined where neither the mempool, the index nor the node knows it. */
  readonly prevouts: readonly (Prevout | undefined)[];
  /** Its outputs, by index. */
  readonly outputs: readonly Prevout[];
  /** The distinct addresses it pays or spends from. */
  readonly addresses: readonly string[];
  /** The scripthash of each script with an address it pays or spends from, and that address. */
  readonly scripts: readonly (readonly [scripthash: string, address: string])[];
  /** Esplora's JSON of it (unconfirmed). */
  readonly json: string;
  /** The number of the follower's listing that first held it. */
  readonly listed: number;
  /** What the view holds of it, estimated. */
  readonly bytes: number;
}

/** A transaction as the backlog counts it. */
export interface FeeInfo {
  fee: bigint;
  weight: number;
}

/** A transaction read: the node's decoding, its mempool entry, what its inputs spend (in input order). */
export function mempoolEntry(
  tx: NodeTransaction,
  node: NodeMempoolEntry,
  prevouts: readonly (Prevout | undefined)[],
  listed: number,
): MempoolEntry {
  const outputs = tx.vout.map(nodeOutputPrevout);
  const fee = feeOf(tx, prevouts) ?? node.fees?.base ?? node.fee ?? 0n;
  const addresses = new Set<string>();
  const scripts: [string, string][] = [];
  for (const p of [...prevouts, ...outputs]) {
    if (p?.address == null) continue;
    addresses.add(p.address);
    if (paysAddress(p.script)) scripts.push([scriptHash(p.script), p.address]);
  }
  const json = transactionJson(tx, prevouts, fee, undefined);
  return {
    txid: tx.txid,
    time: node.time,
    fee,
    // Four times the size where the node gives no weight (no segwit: Dogecoin).
    weight: tx.weight ?? tx.size * 4,
    spends: spentOutpoints(tx),
    prevouts,
    outputs,
    addresses: [...addresses],
    scripts,
    json,
    listed,
    bytes: ENTRY_BYTES + json.length + PART_BYTES * (prevouts.length + outputs.length),
  };
}

/** What the Esplora API and the pending matches read of the view. */
export interface MempoolReads {
  /** The address's kept transactions, newest first (entry time, then txid). */
  ofAddress(address: string): MempoolEntry[];
  /** The address's figures in the view (electrs' mempool ScriptStats). */
  stats(address: string): ScriptStats;
  /** What in the view spends an output. */
  spendOf(txid: string, vout: number): { txid: string; vin: number } | undefined;
  /** The address of a script the view pays or spends from, by scripthash. */
  addressOfScripthash(scripthash: string): string | undefined;
  /** The fee and weight of every transaction read, kept or left out. */
  feeInfo(): Iterable<FeeInfo>;
  /** Moves with every change: what is worked out of the whole (the backlog) holds while it stands. */
  readonly version: number;
}

export interface MempoolStore extends MempoolReads {
  /** A kept transaction. */
  get(txid: string): MempoolEntry | undefined;
  /** Read already: kept or left out. */
  has(txid: string): boolean;
  /** Every transaction read, kept or left out. */
  txids(): IterableIterator<string>;
  /** Transactions read; then, past the bound, the lowest fee rates left out. */
  add(entries: readonly MempoolEntry[]): void;
  /** Transactions that left the node's mempool. */
  remove(txids: Iterable<string>): void;
  clear(): void;
  /** The estimated bytes of what is kept. */
  readonly bytes: number;
  /** How many transactions are kept, and how many left out. */
  readonly counts: { kept: number; leftOut: number };
}

interface AddressPool {
  txs: Set<MempoolEntry>;
  stats: ScriptStats;
}

const newestFirst = (a: MempoolEntry, b: MempoolEntry) => b.time - a.time || (a.txid < b.txid ? -1 : 1);
const feeRate = (e: FeeInfo) => Number(e.fee) / e.weight;
const zeroStats = (): ScriptStats => ({
  fundedCount: 0n,
  fundedSum: 0n,
  spentCount: 0n,
  spentSum: 0n,
  txCount: 0n,
});

export function createMempoolStore(maxBytes: number): MempoolStore {
  const kept = new Map<string, MempoolEntry>();
  const leftOut = new Map<string, FeeInfo>();
  const byAddress = new Map<string, AddressPool>();
  const spends = new Map<string, { txid: string; vin: number }>();
  const scripts = new Map<string, { address: string; count: number }>();
  let bytes = 0;
  let version = 0;

  /** Adds (1) or takes away (-1) an entry in the indexes. */
  function index(e: MempoolEntry, sign: 1 | -1) {
    const delta = new Map<string, ScriptStats>();
    const statsOf = (address: string) => {
      const known = delta.get(address);
      if (known) return known;
      const made = zeroStats();
      delta.set(address, made);
      return made;
    };
    for (const out of e.outputs) {
      if (out.address === null) continue;
      const s = statsOf(out.address);
      s.fundedCount++;
      s.fundedSum += out.value;
    }
    for (const p of e.prevouts) {
      if (p?.address == null) continue;
      const s = statsOf(p.address);
      s.spentCount++;
      s.spentSum += p.value;
    }
    const n = BigInt(sign);
    for (const address of e.addresses) {
      const pool = byAddress.get(address) ?? { txs: new Set<MempoolEntry>(), stats: zeroStats() };
      byAddress.set(address, pool);
      const d = delta.get(address) ?? zeroStats();
      const s = pool.stats;
      s.txCount += n;
      s.fundedCount += n * d.fundedCount;
      s.fundedSum += n * d.fundedSum;
      s.spentCount += n * d.spentCount;
      s.spentSum += n * d.spentSum;
      if (sign > 0) pool.txs.add(e);
      else if (pool.txs.delete(e) && pool.txs.size === 0) byAddress.delete(address);
    }
    e.spends.forEach((o, vin) => {
      const key = outpointKey(o.txid, o.vout);
      if (sign > 0) spends.set(key, { txid: e.txid, vin });
      else if (spends.get(key)?.txid === e.txid) spends.delete(key);
    });
    for (const [hash, address] of e.scripts) {
      const known = scripts.get(hash);
      if (sign > 0) scripts.set(hash, { address, count: (known?.count ?? 0) + 1 });
      else if (known && --known.count === 0) scripts.delete(hash);
    }
  }

  function take(e: MempoolEntry) {
    kept.delete(e.txid);
    index(e, -1);
    bytes -= e.bytes;
  }

  /** Leaves a kept transaction out, with every kept transaction spending its outputs. */
  function leaveOut(entry: MempoolEntry) {
    const stack = [entry];
    while (stack.length > 0) {
      const e = stack.pop()!;
      if (kept.get(e.txid) !== e) continue;
      for (let vout = 0; vout < e.outputs.length; vout++) {
        const child = kept.get(spends.get(outpointKey(e.txid, vout))?.txid ?? "");
        if (child) stack.push(child);
      }
      take(e);
      leftOut.set(e.txid, { fee: e.fee, weight: e.weight });
    }
  }

  /** Past the bound: the lowest fee rates out, down to LOW_WATER of it. */
  function evict() {
    const lowestFirst = [...kept.values()].sort((a, b) => feeRate(a) - feeRate(b));
    for (const e of lowestFirst) {
      if (bytes <= maxBytes * LOW_WATER) break;
      leaveOut(e);
    }
  }

  return {
    get: (txid) => kept.get(txid),
    has: (txid) => kept.has(txid) || leftOut.has(txid),
    *txids() {
      yield* kept.keys();
      yield* leftOut.keys();
    },
    ofAddress: (address) => [...(byAddress.get(address)?.txs ?? [])].sort(newestFirst),
    stats: (address) => ({ ...(byAddress.get(address)?.stats ?? zeroStats()) }),
    spendOf: (txid, vout) => spends.get(outpointKey(txid, vout)),
    addressOfScripthash: (hash) => scripts.get(hash)?.address,
    *feeInfo() {
      yield* kept.values();
      yield* leftOut.values();
    },
    add(entries) {
      if (entries.length === 0) return;
      for (const e of entries) {
        if (kept.has(e.txid) || leftOut.has(e.txid)) continue;
        if (e.spends.some((o) => leftOut.has(o.txid))) {
          leftOut.set(e.txid, { fee: e.fee, weight: e.weight });
          continue;
        }
        kept.set(e.txid, e);
        index(e, 1);
        bytes += e.bytes;
      }
      if (bytes > maxBytes) evict();
      version++;
    },
    remove(txids) {
      for (const txid of txids) {
        const e = kept.get(txid);
        if (e) take(e);
        else if (!leftOut.delete(txid)) continue;
        version++;
      }
    },
    clear() {
      for (const m of [kept, leftOut, byAddress, spends, scripts]) m.clear();
      bytes = 0;
      version++;
    },
    get version() {
      return version;
    },
    get bytes() {
      return bytes;
    },
    get counts() {
      return { kept: kept.size, leftOut: leftOut.size };
    },
  };
}
