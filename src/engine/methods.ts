/**
 * Every node method the engine knows, one row each (the policy rules are in cache/policy.ts), and, after
 * the table, the methods that need more than one call to one upstream. A method without a row is passed to
 * the node and never cached.
 */
import { keccak256 } from "ethers";
import type { MethodPolicy } from "../cache/policy";
import { NodeError, UpstreamUnavailableError } from "../errors";
import { rawText } from "../json";
import { withTimeout } from "../timeout";
import type { CallOptions, PoolCallResult, UpstreamPool } from "../upstream/pool";
import { type BlockTraces, callText, type NodeClient } from "./client";
import type { ChainHead } from "./head";

const at = (index: number, optional = false) => ({ kind: "position" as const, index, optional });
const TX_BLOCK = { number: "blockNumber", hash: "blockHash" };
const HASH_LENGTH = 66;
/** How long a sent transaction's answer may wait for the head to reach the node's (read-your-writes). */
const SENT_HEAD_WAIT_MS = 1_000;

export const METHODS: Readonly<Record<string, MethodPolicy>> = {
  eth_chainId: { cache: "static" },
  net_version: { cache: "static" },
  eth_blockNumber: { cache: "head" },
  eth_gasPrice: { cache: "head" },

  eth_getBlockByNumber: { block: at(0), cache: "block", names: { number: "number", hash: "hash" } },
  eth_getBlockTransactionCountByNumber: { block: at(0), cache: "block" },
  eth_getTransactionByBlockNumberAndIndex: {
    block: at(0),
    cache: "block",
    names: TX_BLOCK,
  },
  eth_getUncleCountByBlockNumber: { block: at(0), cache: "block" },
  eth_getBlockReceipts: { block: at(0), cache: "block", names: { ...TX_BLOCK, first: true } },
  trace_block: { block: at(0), cache: "block", names: { ...TX_BLOCK, first: true } },
  debug_traceBlockByNumber: { block: at(0), cache: "block" },
  eth_getLogs: { block: { kind: "filter", index: 0 }, cache: "block" },
  eth_call: { block: at(1, true), cache: "block" },
  eth_getBalance: { block: at(1, true), cache: "block" },
  eth_getCode: { block: at(1, true), cache: "block" },
  eth_getTransactionCount: { block: at(1, true), cache: "block" },
  eth_getStorageAt: { block: at(2, true), cache: "block" },
  // Not immutable: its last base fee is a prediction that some nodes (anvil) recompute as the head moves,
  // even for old ranges. Kept only as long as answers about the head.
  eth_feeHistory: { block: at(1), cache: "head" },

  eth_getBlockByHash: { cache: "result", names: { number: "number", hash: "hash" }, hashParam: 0 },
  eth_getTransactionByBlockHashAndIndex: { cache: "result", names: TX_BLOCK, hashParam: 0 },
  eth_getTransactionByHash: { cache: "result", names: TX_BLOCK },
  eth_getTransactionReceipt: { cache: "result", names: TX_BLOCK },
  trace_transaction: { cache: "result", names: { ...TX_BLOCK, first: true } },
  eth_getBlockTransactionCountByHash: { cache: "result", hashParam: 0 },
  eth_getUncleCountByBlockHash: { cache: "result", hashParam: 0 },

  eth_sendRawTransaction: { cache: "never", write: true },
  eth_estimateGas: { cache: "never" },
};

export interface Methods {
  /** The upstreams' answer to one call that missed the cache, with the method's special handling. */
  fetch(method: string, params: unknown[], options: CallOptions): Promise<PoolCallResult>;
  blockTraces(block: string): Promise<BlockTraces>;
}

const unsupported = (error: unknown) => error instanceof NodeError && error.kind === "method_unsupported";

/**
 * `node` is the engine itself: the calls a fallback makes go through its cache and coalescing, so what
 * it assembles from is shared with every other caller.
 */
export function createMethods(options: {
  pool: UpstreamPool;
  head: ChainHead;
  node: () => NodeClient;
}): Methods {
  const { pool, head, node } = options;

  /**
   * Read-your-writes: the answer waits until the followed head has reached the one the nodes have now, so
   * a call that resolves `latest` after it sees the block that took the transaction (on a chain that mines
   * at once) and never an older one.
   */
  async function headCaughtUp(): Promise<void> {
    await withTimeout(head.refresh(), SENT_HEAD_WAIT_MS, () => new Error("head refresh timed out")).catch(
      () => {},
    );
  }

  async function sendRawTransaction(params: unknown[]): Promise<PoolCallResult> {
    let result: PoolCallResult;
    try {
      // A write goes to one upstream at a time: no hedging.
      result = await pool.call("eth_sendRawTransaction", params, { hedge: false });
    } catch (error) {
      // Sent again, or retried after an upstream that took it timed out: it is in the pool, and that
      // is success. Its hash is the keccak of the raw transaction.
      if (!(error instanceof NodeError && error.kind === "already_known")) throw error;
      result = { raw: JSON.stringify(keccak256(params[0] as string)), upstream: "" };
    }
    await headCaughtUp();
    return result;
  }

  /** eth_getBlockReceipts, or where no upstream has it, the block's transaction receipts one by one. */
  async function blockReceipts(params: unknown[], callOptions: CallOptions): Promise<PoolCallResult> {
    try {
      return await pool.call("eth_getBlockReceipts", params, callOptions);
    } catch (error) {
      if (!unsupported(error)) throw error;
    }
    const ref = params[0] as string;
    const byHash = ref.length === HASH_LENGTH;
    const block = rawText(
      (await node().call(byHash ? "eth_getBlockByHash" : "eth_getBlockByNumber", [ref, false])).raw,
    );
    if (block === "null") return { raw: block, upstream: "" };
    const { hash, transactions } = JSON.parse(block) as { hash: string; transactions: string[] };
    const receipts = await Promise.all(
      transactions.map((tx) => callText(node(), "eth_getTransactionReceipt", [tx])),
    );
    for (const text of receipts) {
      // A reorg between the block and its receipts would mix two chains: refuse rather than mislead.
      if (text === "null" || (JSON.parse(text) as { blockHash: string }).blockHash !== hash) {
        throw new UpstreamUnavailableError("the block changed while its receipts were read; retry");
      }
    }
    return { raw: `[${receipts.join(",")}]`, upstream: "" };
  }

  return {
    fetch(method, params, callOptions) {
      switch (method) {
        case "eth_sendRawTransaction":
          return sendRawTransaction(params);
        case "eth_getBlockReceipts":
          return blockReceipts(params, callOptions);
        default:
          return pool.call(method, params, callOptions);
      }
    },

    async blockTraces(block) {
      try {
        return { format: "parity", traces: await callText(node(), "trace_block", [block]) };
      } catch (error) {
        if (!unsupported(error)) throw error;
      }
      const [traces, header] = await Promise.all([
        callText(node(), "debug_traceBlockByNumber", [block, { tracer: "callTracer" }]),
        callText(node(), "eth_getBlockByNumber", [block, false]),
      ]);
      const transactions =
        header === "null" ? [] : (JSON.parse(header) as { transactions: string[] }).transactions;
      return { format: "callTracer", traces, transactions };
    },
  };
}
