/**
 * The logs of recent blocks, parsed once and shared by the polls of every kept log filter
 * (rpcFilterChanges.ts): filters polling the same blocks at about the same time, on one instance, read and
 * parse each block's receipts once (a read in flight is joined), where each poll parsed the receipts of every
 * block it covered. Each log is kept as the JSON text it is answered with, and its address and topics to be
 * matched. Bounded in blocks and in bytes (the logs' text): the least recently used block goes first.
 */
import type { NodeLog } from "./rpcFilterCriteria";

/** A log as the filters use it: matched by its address and topics, answered as its text. */
export interface SharedLog extends NodeLog {
  text: string;
}

/** A canonical block's logs, in order; `hash` undefined only for a block without receipts below the follower. */
export interface BlockLogs {
  number: bigint;
  hash: string | undefined;
  logs: SharedLog[];
}

export interface BlockLogCache {
  /**
   * The logs of the block `key` names (its hash, or its number where it has none): kept, joined while another
   * poll reads them, or read with `read`. What `read` gives as undefined (no such block) is not kept.
   */
  get(key: string, read: () => Promise<BlockLogs | undefined>): Promise<BlockLogs | undefined>;
}

/** The logs of receipts as the filters keep them. */
export function sharedLogs(receipts: { logs?: NodeLog[] }[]): SharedLog[] {
  const logs: SharedLog[] = [];
  for (const receipt of receipts) {
    for (const log of receipt.logs ?? []) {
      logs.push({ address: log.address, topics: log.topics, text: JSON.stringify(log) });
    }
  }
  return logs;
}

const bytesOf = (block: BlockLogs) => block.logs.reduce((sum, log) => sum + log.text.length, 0);

export function createBlockLogCache(options: {
  maxBlocks: number;
  maxBytes: number;
  /** Told of each block a poll had: its receipts read and parsed for it, or shared from another poll's read. */
  onRead?: (source: "read" | "shared") => void;
}): BlockLogCache {
  const { maxBlocks, maxBytes, onRead } = options;
  /** Least recently used first. */
  const kept = new Map<string, { block: BlockLogs; bytes: number }>();
  const reading = new Map<string, Promise<BlockLogs | undefined>>();
  let bytes = 0;

  function keep(key: string, block: BlockLogs): void {
    const entry = { block, bytes: bytesOf(block) };
    kept.set(key, entry);
    bytes += entry.bytes;
    for (const [oldest, old] of kept) {
      if (kept.size <= maxBlocks && bytes <= maxBytes) break;
      kept.delete(oldest);
      bytes -= old.bytes;
    }
  }

  return {
    get(key, read) {
      const hit = kept.get(key);
      if (hit) {
        kept.delete(key);
        kept.set(key, hit);
        onRead?.("shared");
        return Promise.resolve(hit.block);
      }
      const joined = reading.get(key);
      if (joined) {
        onRead?.("shared");
        return joined;
      }
      onRead?.("read");
      const done = read()
        .then((block) => {
          if (block !== undefined) keep(key, block);
          return block;
        })
        .finally(() => reading.delete(key));
      reading.set(key, done);
      return done;
    },
  };
}
