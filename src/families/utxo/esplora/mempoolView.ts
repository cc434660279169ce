/**
 * The node's mempool as the Esplora API reads it: each transaction decoded once with its prevouts (from the
 * mempool itself, the index, or the node), by the addresses it pays or spends from, and what spends each
 * output. Read again from `getrawmempool true` at most once per MEMPOOL_REFRESH_MS, when a request needs it
 * (one read in flight, shared): only transactions new since the last read are fetched and decoded, those
 * gone are dropped. So an answer's mempool is at most that old (plus the engine's second for mempool reads).
 */
import { callText, type Engine } from "../../../engine/engineApi";
import type { Logger } from "../../../log";
import { outpointKey } from "../indexedOutputs";
import {
  feeOf,
  type NodeTransaction,
  nodeOutputPrevout,
  type Prevout,
  parseNode,
  spentOutpoints,
  transactionJson,
} from "./esploraJson";
import type { EsploraQueries } from "./esploraQueries";
import { paysAddress, scriptHash } from "./script";

/** How old the view may be before a request reads the node's mempool again. */
const MEMPOOL_REFRESH_MS = 1_000;

/** What the node says of a mempool transaction (`getrawmempool true`), amounts in satoshis. */
interface MempoolEntry {
  time: number;
  fee?: bigint;
  fees?: { base: bigint };
}

/** A transaction of the mempool, decoded, with its prevouts. */
export interface MempoolTx {
  txid: string;
  /** When it entered the node's mempool (Unix seconds). */
  time: number;
  tx: NodeTransaction;
  prevouts: (Prevout | undefined)[];
  /** The addresses it pays or spends from. */
  addresses: ReadonlySet<string>;
  /** The scripthash (Esplora's hex) of each script with an address it pays or spends from, and that address. */
  scripts: readonly (readonly [scripthash: string, address: string])[];
  /** Esplora's JSON of it (unconfirmed). */
  json: string;
}

export interface MempoolSnapshot {
  txs: ReadonlyMap<string, MempoolTx>;
  /** The address's mempool transactions, newest first. */
  ofAddress(address: string): readonly MempoolTx[];
  /** What in the mempool spends an output. */
  spendOf(txid: string, vout: number): { txid: string; vin: number } | undefined;
  /** The address of a script the mempool pays or spends from, by scripthash (Esplora's hex). */
  addressOfScripthash(scripthash: string): string | undefined;
}

export interface MempoolView {
  snapshot(): Promise<MempoolSnapshot>;
}

function emptySnapshot(): MempoolSnapshot {
  return {
    txs: new Map(),
    ofAddress: () => [],
    spendOf: () => undefined,
    addressOfScripthash: () => undefined,
  };
}

const newestFirst = (a: MempoolTx, b: MempoolTx) => b.time - a.time || (a.txid < b.txid ? -1 : 1);

/** The snapshot's indexes over its transactions. */
function index(txs: Map<string, MempoolTx>): MempoolSnapshot {
  const byAddress = new Map<string, MempoolTx[]>();
  const spends = new Map<string, { txid: string; vin: number }>();
  const scripts = new Map<string, string>();
  for (const m of txs.values()) {
    for (const address of m.addresses) {
      const list = byAddress.get(address);
      if (list) list.push(m);
      else byAddress.set(address, [m]);
    }
    for (const [vin, o] of spentOutpoints(m.tx).entries()) {
      spends.set(outpointKey(o.txid, o.vout), { txid: m.txid, vin });
    }
    for (const [hash, address] of m.scripts) scripts.set(hash, address);
  }
  for (const list of byAddress.values()) list.sort(newestFirst);
  return {
    txs,
    ofAddress: (address) => byAddress.get(address) ?? [],
    spendOf: (txid, vout) => spends.get(outpointKey(txid, vout)),
    addressOfScripthash: (hash) => scripts.get(hash),
  };
}

export function createMempoolView(deps: {
  engine: Engine;
  queries: EsploraQueries;
  log: Logger;
}): MempoolView {
  const { engine, queries, log } = deps;
  let current = emptySnapshot();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<MempoolSnapshot> | undefined;

  /** The node's decoded transaction; undefined when it left the mempool meanwhile. */
  async function decode(txid: string): Promise<NodeTransaction | undefined> {
    try {
      return parseNode<NodeTransaction>(await callText(engine, "getrawtransaction", [txid, true]));
    } catch {
      return undefined;
    }
  }

  /** The prevouts of the new transactions: the mempool's own outputs first, then the index's, then the node's. */
  async function prevoutsOf(fresh: NodeTransaction[], kept: ReadonlyMap<string, MempoolTx>) {
    const found = new Map<string, Prevout>();
    const freshById = new Map(fresh.map((tx) => [tx.txid, tx]));
    const wanted = fresh.flatMap(spentOutpoints).filter((o) => {
      const parent = freshById.get(o.txid) ?? kept.get(o.txid)?.tx;
      const out = parent?.vout.find((v) => v.n === o.vout);
      if (out !== undefined) found.set(outpointKey(o.txid, o.vout), nodeOutputPrevout(out));
      return out === undefined;
    });
    for (const [key, output] of await queries.outputs(wanted)) found.set(key, output);
    const missing = new Set(wanted.filter((o) => !found.has(outpointKey(o.txid, o.vout))).map((o) => o.txid));
    for (const parent of await Promise.all([...missing].map(decode))) {
      for (const out of parent?.vout ?? [])
        found.set(outpointKey(parent!.txid, out.n), nodeOutputPrevout(out));
    }
    return found;
  }

  function entryOf(tx: NodeTransaction, entry: MempoolEntry, found: Map<string, Prevout>): MempoolTx {
    const prevouts = spentOutpoints(tx).map((o) => found.get(outpointKey(o.txid, o.vout)));
    const fee = feeOf(tx, prevouts) ?? entry.fees?.base ?? entry.fee ?? 0n;
    const addresses = new Set<string>();
    const scripts: [string, string][] = [];
    // Worked out once, when it enters: each refresh's snapshot only merges these.
    for (const p of [...prevouts, ...tx.vout.map(nodeOutputPrevout)]) {
      if (p?.address == null) continue;
      addresses.add(p.address);
      if (paysAddress(p.script)) scripts.push([scriptHash(p.script), p.address]);
    }
    return {
      txid: tx.txid,
      time: entry.time,
      tx,
      prevouts,
      addresses,
      scripts,
      json: transactionJson(tx, prevouts, fee, undefined),
    };
  }

  async function read(): Promise<MempoolSnapshot> {
    const entries = parseNode<Record<string, MempoolEntry>>(await callText(engine, "getrawmempool", [true]));
    const kept = new Map<string, MempoolTx>();
    const freshIds: string[] = [];
    for (const txid of Object.keys(entries)) {
      const known = current.txs.get(txid);
      if (known) kept.set(txid, known);
      else freshIds.push(txid);
    }
    // Nothing entered or left: the snapshot stands.
    if (freshIds.length === 0 && kept.size === current.txs.size) return current;
    const fresh = (await Promise.all(freshIds.map(decode))).filter((t) => t !== undefined);
    const found = await prevoutsOf(fresh, kept);
    for (const tx of fresh) kept.set(tx.txid, entryOf(tx, entries[tx.txid]!, found));
    return index(kept);
  }

  return {
    async snapshot() {
      if (performance.now() - readAt < MEMPOOL_REFRESH_MS) return current;
      reading ??= read()
        .then((snapshot) => {
          current = snapshot;
          readAt = performance.now();
          return snapshot;
        })
        .catch((error) => {
          log.warn("the mempool could not be read for the Esplora API", { error });
          throw error;
        })
        .finally(() => {
          reading = undefined;
        });
      return reading;
    },
  };
}
