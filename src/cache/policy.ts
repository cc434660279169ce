/**
 * What each node method's answer depends on: where its block parameter sits, so tags can be resolved to
 * numbers before a key is made and a call about block N avoids upstreams behind N.
 */

export type BlockParam =
  /** Positional param `index` is a block number or tag (or omitted, meaning latest when `optional`). */
  | { kind: "position"; index: number; optional?: boolean }
  /** The param at `index` is a log filter with fromBlock/toBlock (or a blockHash). */
  | { kind: "filter"; index: number };

export interface MethodPolicy {
  block?: BlockParam;
  /** Calls that change the chain: never shared with a different body, never cached. */
  write?: boolean;
}

const at = (index: number, optional = false): BlockParam => ({ kind: "position", index, optional });

export const METHOD_POLICY: Readonly<Record<string, MethodPolicy>> = {
  eth_getBlockByNumber: { block: at(0) },
  eth_getBlockTransactionCountByNumber: { block: at(0) },
  eth_getTransactionByBlockNumberAndIndex: { block: at(0) },
  eth_getUncleCountByBlockNumber: { block: at(0) },
  eth_getBlockReceipts: { block: at(0) },
  trace_block: { block: at(0) },
  eth_getLogs: { block: { kind: "filter", index: 0 } },
  eth_call: { block: at(1, true) },
  eth_getBalance: { block: at(1, true) },
  eth_getCode: { block: at(1, true) },
  eth_getTransactionCount: { block: at(1, true) },
  eth_getStorageAt: { block: at(2, true) },
  eth_feeHistory: { block: at(1) },
  eth_sendRawTransaction: { write: true },
};
