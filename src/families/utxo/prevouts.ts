/**
 * The outputs a write group's inputs spend (their address and value: a fee is inputs minus outputs, and an
 * output pays someone else when its address is not among its transaction's input addresses), resolved
 * before the group is written, from, in order:
 *  1. the group itself: an output of an earlier transaction of the group (of the same block, too);
 *  2. the index: one query for the rest;
 *  3. the node, for outputs older than the index's first block (INDEX_FROM_BLOCK > 0): the previous
 *     transaction's `getrawtransaction <txid> true` through the engine (cached there and here: a transaction
 *     with many outputs is spent by many later ones).
 * An output found nowhere is an error: the index would hold a wrong fee. On an index from block 0 every
 * output spent is in it, so there the node is never asked.
 */
import { LRUCache } from "lru-cache";
import type { Sql } from "../../db/database";
import { callText, type Engine } from "../../engine/engineApi";
import { addressOf, parseAmountsExact, type UtxoBlock, type UtxoInput, type UtxoOutput } from "./decode";
import { satoshisOf } from "./dialect";
import { indexedOutputs, outpointKey } from "./indexedOutputs";

/** Previous transactions read from the node kept here (their outputs only). */
const NODE_TX_CACHE = 10_000;
/** Previous transactions read from the node at once. */
const NODE_READS_AT_ONCE = 32;

interface Spent {
  address: string | null;
  value: bigint;
}

export interface Prevouts {
  /** Sets every input's `address`, `value` and `indexed` of the blocks (in chain order, one write group). */
  resolve(blocks: readonly UtxoBlock[], firstBlock: bigint): Promise<void>;
}

/** An input no source had. */
export class MissingPrevoutError extends Error {}

/**
 * Resolves inputs against the group's own earlier outputs (of the same block, too), found by their
 * transaction's txid (a lookup a transaction made, none per output); returns those left.
 */
export function resolveInGroup(blocks: readonly UtxoBlock[]): UtxoInput[] {
  const made = new Map<string, readonly UtxoOutput[]>();
  const left: UtxoInput[] = [];
  for (const block of blocks) {
    for (const tx of block.transactions) {
      for (const input of tx.inputs) {
        const outputs = made.get(input.txid);
        // Outputs are in vout order; found by their vout where one is missing.
        const spent =
          outputs?.[input.vout]?.vout === input.vout
            ? outputs[input.vout]
            : outputs?.find((o) => o.vout === input.vout);
        if (spent) {
          input.address = spent.address;
          input.value = spent.value;
          input.indexed = true;
        } else {
          left.push(input);
        }
      }
      made.set(tx.txid, tx.outputs);
    }
  }
  return left;
}

export function createPrevouts(deps: { sql: Sql; engine: Engine }): Prevouts {
  const { sql, engine } = deps;
  const fromNode = new LRUCache<string, Spent[]>({ max: NODE_TX_CACHE });

  async function fromIndex(inputs: UtxoInput[]): Promise<UtxoInput[]> {
    if (inputs.length === 0) return inputs;
    const found = await indexedOutputs(sql, inputs);
    return inputs.filter((input) => {
      const spent = found.get(outpointKey(input.txid, input.vout));
      if (!spent) return true;
      input.address = spent.address;
      input.value = spent.value;
      input.indexed = true;
      return false;
    });
  }

  async function nodeOutputs(txid: string): Promise<Spent[]> {
    const cached = fromNode.get(txid);
    if (cached) return cached;
    const tx = parseAmountsExact(await callText(engine, "getrawtransaction", [txid, true])) as {
      vout: { n: number; value: string; scriptPubKey: { hex: string } }[];
    };
    const outputs: Spent[] = [];
    for (const o of tx.vout)
      outputs[o.n] = { address: addressOf(o.scriptPubKey), value: satoshisOf(o.value) };
    fromNode.set(txid, outputs);
    return outputs;
  }

  async function fromTheNode(inputs: UtxoInput[]): Promise<void> {
    // Kept here for the group: more parents than the cache holds would be read again, one at a time.
    const parents = new Map<string, Spent[]>();
    const txids = [...new Set(inputs.map((i) => i.txid))];
    for (let at = 0; at < txids.length; at += NODE_READS_AT_ONCE) {
      const batch = txids.slice(at, at + NODE_READS_AT_ONCE);
      const read = await Promise.all(batch.map(nodeOutputs));
      for (const [i, txid] of batch.entries()) parents.set(txid, read[i]!);
    }
    for (const input of inputs) {
      const spent = parents.get(input.txid)![input.vout];
      if (!spent) throw new MissingPrevoutError(`the node's ${input.txid} has no output ${input.vout}`);
      input.address = spent.address;
      input.value = spent.value;
      input.indexed = false;
    }
  }

  return {
    async resolve(blocks, firstBlock) {
      const left = await fromIndex(resolveInGroup(blocks));
      if (left.length === 0) return;
      if (firstBlock === 0n) {
        const { txid, vout } = left[0]!;
        throw new MissingPrevoutError(
          `${left.length} inputs spend outputs the index does not hold (the first: ${txid}:${vout})`,
        );
      }
      await fromTheNode(left);
    },
  };
}
