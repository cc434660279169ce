/**
 * The chain's head and finality, shared by the engine, the cache and the indexer. The head comes from the
 * pool's polls of every upstream; finality from the node's `finalized` block where it has one, else
 * head - CONFIRMATIONS (DESIGN.md §5). Tags resolve to numbers only while the head is fresh.
 */
import { NodeError } from "../errors";
import type { Logger } from "../log";
import type { UpstreamPool } from "../upstream/pool";
import { parseQuantity } from "./blockRef";

/** A head older than this many poll intervals is not used to resolve `latest`. */
const FRESH_POLLS = 3;
/** `finalized` and `safe` move slowly: they are read every this many head polls. */
const FINALITY_EVERY_POLLS = 4;

export interface ChainHead {
  /** The head block, while fresh. */
  latest(): bigint | undefined;
  /** The last final block: nothing at or below it can be reorganized away. */
  finalized(): bigint | undefined;
  safe(): bigint | undefined;
  /** Reads `finalized` and `safe` now. */
  refresh(): Promise<void>;
  stop(): void;
}

export function createChainHead(options: {
  pool: UpstreamPool;
  confirmations: number;
  pollMs: number;
  log: Logger;
}): ChainHead {
  const { pool, confirmations, pollMs, log } = options;
  let nodeFinalized: bigint | undefined;
  let nodeSafe: bigint | undefined;
  let tagsSupported = true;

  const latest = () => {
    const head = pool.head();
    return head && Date.now() - head.at <= FRESH_POLLS * pollMs + 1_000 ? head.number : undefined;
  };

  async function readTag(tag: "finalized" | "safe"): Promise<bigint | undefined> {
    const { raw } = await pool.call("eth_getBlockByNumber", [tag, false]);
    if (raw === "null") return undefined;
    return parseQuantity((JSON.parse(raw) as { number: string }).number);
  }

  async function refresh() {
    if (!tagsSupported) return;
    try {
      [nodeFinalized, nodeSafe] = await Promise.all([readTag("finalized"), readTag("safe")]);
    } catch (error) {
      // A node without the tags (an old client) says so with an error: count blocks instead.
      if (error instanceof NodeError && error.status === 400) {
        tagsSupported = false;
        log.info("upstream has no finalized tag; finality is head - CONFIRMATIONS", { confirmations });
      }
    }
  }

  const byDepth = () => {
    const head = latest();
    return head === undefined
      ? undefined
      : head >= BigInt(confirmations)
        ? head - BigInt(confirmations)
        : undefined;
  };

  const timer = setInterval(() => void refresh(), pollMs * FINALITY_EVERY_POLLS);
  return {
    latest,
    // Where the node names no final block yet, depth decides.
    finalized: () => (tagsSupported ? (nodeFinalized ?? byDepth()) : byDepth()),
    safe: () => (tagsSupported ? (nodeSafe ?? nodeFinalized ?? byDepth()) : byDepth()),
    refresh,
    stop: () => clearInterval(timer),
  };
}
