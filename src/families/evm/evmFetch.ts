/**
 * The EVM node methods that need more than one call to one upstream (docs/architecture.md §5): the engine
 * calls this fetch on a cache miss (engine/methodTable.ts); every other method goes to the pool as it is.
 */
import { keccak256 } from "ethers";
import type { ChainFollower } from "../../engine/chainFollower";
import { callText, type Engine } from "../../engine/engineApi";
import type { MethodFetch } from "../../engine/methodTable";
import { NodeError, UpstreamUnavailableError } from "../../errors";
import { rawText } from "../../json";
import { withTimeout } from "../../timeout";
import type { CallOptions, PoolCallResult, UpstreamPool } from "../../upstream/pool";

const HASH_LENGTH = 66;
/** How long a sent transaction's answer may wait for the head to reach the node's (read-your-writes). */
const SENT_HEAD_WAIT_MS = 1_000;

const unsupported = (error: unknown) => error instanceof NodeError && error.kind === "method_unsupported";

/**
 * `node` is the engine itself: the calls a fallback makes go through its cache and coalescing, so what
 * it assembles from is shared with every other caller.
 */
export function createEvmFetch(options: {
  pool: UpstreamPool;
  head: ChainFollower;
  engine: () => Engine;
}): MethodFetch {
  const { pool, head, engine } = options;

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
      (await engine().call(byHash ? "eth_getBlockByHash" : "eth_getBlockByNumber", [ref, false])).raw,
    );
    if (block === "null") return { raw: block, upstream: "" };
    const { hash, transactions } = JSON.parse(block) as { hash: string; transactions: string[] };
    const receipts = await Promise.all(
      transactions.map((tx) => callText(engine(), "eth_getTransactionReceipt", [tx])),
    );
    for (const text of receipts) {
      // A reorg between the block and its receipts would mix two chains: refuse rather than mislead.
      if (text === "null" || (JSON.parse(text) as { blockHash: string }).blockHash !== hash) {
        throw new UpstreamUnavailableError("the block changed while its receipts were read; retry");
      }
    }
    return { raw: `[${receipts.join(",")}]`, upstream: "" };
  }

  return (method, params, callOptions) => {
    switch (method) {
      case "eth_sendRawTransaction":
        return sendRawTransaction(params);
      case "eth_getBlockReceipts":
        return blockReceipts(params, callOptions);
      default:
        return pool.call(method, params, callOptions);
    }
  };
}
