/**
 * One poll of a block or log filter kept by the service (eth_getFilterChanges): what the canonical chain
 * gained after the filter's cursor, as the chain follower knows it, and what a reorg took back.
 *
 * - The cursor is the last block covered and the recent blocks delivered (number, hash) that a reorg could
 *   still drop (those above the last final block, and the highest final one: a reorg deeper than the
 *   finality depth drops it too). A delivered block whose hash is no longer the canonical one at its height
 *   was dropped, and every block of its branch from the fork up (the chain follower names the branch's
 *   blocks below it, a deep reorg's, as far as it saw them dropped): a log filter gives their matching logs
 *   again with `"removed": true` (lowest block first), then both kinds go on from the fork.
 * - New blocks are the canonical ones after the cursor up to the head (and a log filter's toBlock), at most
 *   BLOCK_POLL_BLOCKS of them for a block filter and LOG_POLL_BLOCKS for a log filter: a filter left behind
 *   catches up over several polls, each one token. A log filter reads each block's receipts through the
 *   engine by number (cached, shared with the indexer and the logs subscription), parsed once for every
 *   filter polling that block (blockLogCache.ts), and stops before a block the node has not got or whose
 *   receipts name another block (the chain moved meanwhile: the next poll sees how).
 * - The logs of each unfinalized block read are kept in the database (db/rpcFilterStore.ts) until final, so
 *   that the poll after a reorg, on whichever instance, has the dropped blocks' logs: a node may forget a block
 *   a reorg dropped (anvil does). Where none are kept, they are asked of the node by block hash.
 */

import type { DeliveredBlock, RpcFilterCursor, RpcFilterStore } from "../../db/rpcFilterStore";
import type { ChainFollower } from "../../engine/chainFollower";
import { callText, type Engine } from "../../engine/engineApi";
import type { Logger } from "../../log";
import type { RpcFilterEvents } from "../../operations/familyOperations";
import { type BlockLogs, createBlockLogCache, sharedLogs } from "./blockLogCache";
import { quantity } from "./blockRef";
import type { BlockBounds, LogMatch, NodeLog } from "./rpcFilterCriteria";

/**
 * The most new blocks one poll of a block filter covers: their hashes, from the chain follower's window (1,024
 * blocks) or, below it, their headers; one rate-limit token's worth of eth_getLogs range (methods.ts).
 */
const BLOCK_POLL_BLOCKS = 1_000n;
/**
 * The most new blocks one poll of a log filter covers: it reads every one's receipts (on mainnet a few
 * hundred KB to a few MB each), so a poll, one token, reads at most this many. A poll costs the same whatever
 * it covers, and the range is the service's to bound, not the caller's: a cost by the blocks covered could
 * exceed a key's burst, and the filter could then never be polled again. This many blocks is what a fast
 * chain makes between two polls of a client (Arbitrum's 4 a second: 25 s), so a filter polled as clients do
 * keeps up.
 */
const LOG_POLL_BLOCKS = 100n;
/** The most recent delivered blocks a filter remembers to see a reorg by (those above the final block). */
const FILTER_REORG_BLOCKS = 256;
/** Blocks whose receipts (or headers) one poll asks for at once. */
const READ_WINDOW = 32;
/** Block hashes whose logs this instance has kept already (the database skips them too, but they are sent). */
const KEPT_HASHES = 1_024;
/**
 * The parsed logs of the blocks polls read lately, shared by the filters polling them: a few polls' worth of
 * blocks, and on mainnet (a few hundred KB of logs a block) about a hundred blocks by bytes.
 */
const SHARED_BLOCKS = 256;
const SHARED_BYTES = 32 * 1024 * 1024;

export interface FilterChanges {
  /** Each result as JSON text, in order. */
  results: string[];
  cursor: RpcFilterCursor;
  /** False when the poll changed nothing: the cursor need not be written. */
  moved: boolean;
}

export interface ChangeSource {
  head: ChainFollower;
  engine: Engine;
  store: Pick<RpcFilterStore, "keepBlockLogs" | "blockLogs">;
  log: Logger;
  events?: RpcFilterEvents;
}

/** A canonical block of the poll: its hash as the follower names it (undefined: below its window, final). */
interface Covered {
  number: bigint;
  hash: string | undefined;
}

export interface ChangeReader {
  /** A block filter's poll: the hashes of the new canonical blocks. */
  blocks(cursor: RpcFilterCursor): Promise<FilterChanges>;
  /** A log filter's poll: removed logs after a reorg, then the new blocks' matching logs. */
  logs(cursor: RpcFilterCursor, match: LogMatch, bounds: BlockBounds): Promise<FilterChanges>;
}

export function createChangeReader(source: ChangeSource): ChangeReader {
  const { head, engine, store, log } = source;
  const kept = new Set<string>();
  const shared = createBlockLogCache({
    maxBlocks: SHARED_BLOCKS,
    maxBytes: SHARED_BYTES,
    onRead: (from) => source.events?.blockLogs(from),
  });

  /**
   * The delivered blocks a reorg dropped, lowest first, with those of their branch below the lowest one
   * (not in the cursor: final when delivered); undefined when the chain still has them all.
   */
  function droppedOf(delivered: DeliveredBlock[]): { fork: bigint; blocks: DeliveredBlock[] } | undefined {
    const index = delivered.findIndex((b) => {
      const canonical = head.canonicalHash(b.number);
      return canonical !== undefined && canonical !== b.hash;
    });
    if (index < 0) return undefined;
    const lowest = delivered[index]!;
    const below = head.droppedBranch(lowest.number, lowest.hash)?.slice(0, -1) ?? [];
    return { fork: below[0]?.number ?? lowest.number, blocks: [...below, ...delivered.slice(index)] };
  }

  /** Where a poll starts after the cursor: at the fork where a reorg dropped what it delivered. */
  function rewound(cursor: RpcFilterCursor) {
    const dropped = droppedOf(cursor.delivered);
    const last = cursor.lastBlock ?? 0n;
    if (!dropped) return { last, delivered: cursor.delivered, dropped: [] };
    return {
      last: dropped.fork - 1n < last ? dropped.fork - 1n : last,
      delivered: cursor.delivered.filter((b) => b.number < dropped.fork),
      dropped: dropped.blocks,
    };
  }

  /** The new blocks of a poll: after `last` (and from `bounds.from`), up to the head, `bounds.to`, `most`. */
  function span(last: bigint, bounds: BlockBounds, most: bigint): Covered[] {
    const top = head.headBlock()?.number;
    if (top === undefined) return [];
    const from = bounds.from !== undefined && bounds.from > last + 1n ? bounds.from : last + 1n;
    let to = from + most - 1n;
    if (to > top) to = top;
    if (bounds.to !== undefined && to > bounds.to) to = bounds.to;
    const out: Covered[] = [];
    for (let n = from; n <= to; n++) out.push({ number: n, hash: head.canonicalHash(n) });
    return out;
  }

  /**
   * The cursor after a poll: the blocks delivered that a reorg could still drop, the most recent kept, and
   * the highest final one (a reorg past the finality depth is seen by it).
   */
  function nextCursor(last: bigint, delivered: DeliveredBlock[]): RpcFilterCursor {
    const final = head.finalized();
    const firstOpen = delivered.findIndex((b) => final === undefined || b.number > final);
    const from = firstOpen < 0 ? delivered.length - 1 : firstOpen > 0 ? firstOpen - 1 : 0;
    return { lastBlock: last, delivered: delivered.slice(from).slice(-FILTER_REORG_BLOCKS), lastSeq: null };
  }

  /** Reads in windows of READ_WINDOW, in order; stops at the first block `read` gives nothing for. */
  async function inWindows<T>(blocks: Covered[], read: (b: Covered) => Promise<T | undefined>): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < blocks.length; i += READ_WINDOW) {
      const window = await Promise.all(blocks.slice(i, i + READ_WINDOW).map(read));
      for (const item of window) {
        if (item === undefined) return out;
        out.push(item);
      }
    }
    return out;
  }

  /**
   * A canonical block's logs, shared by the polls reading it (by its hash; a final block below the
   * follower's window by its number); undefined when the node has it not, or another.
   */
  function blockLogs(block: Covered): Promise<BlockLogs | undefined> {
    return shared.get(block.hash ?? `#${block.number}`, () => readBlockLogs(block));
  }

  /** A block's logs from its receipts by number. */
  async function readBlockLogs(block: Covered): Promise<BlockLogs | undefined> {
    const text = await callText(engine, "eth_getBlockReceipts", [quantity(block.number)]);
    if (text === "null") return undefined;
    const receipts = JSON.parse(text) as { blockHash?: string; logs?: NodeLog[] }[];
    let hash = block.hash;
    for (const receipt of receipts) {
      const named = String(receipt.blockHash).toLowerCase();
      if (hash !== undefined && named !== hash) return undefined;
      hash = named;
    }
    return { number: block.number, hash, logs: sharedLogs(receipts) };
  }

  /** Keeps an unfinalized block's logs for a reorg's removed logs; a failure only costs those. */
  async function keep(block: BlockLogs): Promise<void> {
    const final = head.finalized();
    if (block.hash === undefined || kept.has(block.hash) || (final !== undefined && block.number <= final))
      return;
    try {
      await store.keepBlockLogs(block.hash, block.number, `[${block.logs.map((l) => l.text).join(",")}]`);
      kept.add(block.hash);
      if (kept.size > KEPT_HASHES) kept.delete(kept.values().next().value!);
    } catch (error) {
      log.warn("a block's logs could not be kept for reorgs", { block: block.number.toString(), error });
    }
  }

  /** The logs of a block a reorg dropped: as kept, else from a node that still has the block. */
  async function droppedLogs(block: DeliveredBlock): Promise<NodeLog[]> {
    const stored = await store.blockLogs(block.hash);
    if (stored !== undefined) return JSON.parse(stored) as NodeLog[];
    const text = await callText(engine, "eth_getBlockReceipts", [block.hash]);
    const receipts = text === "null" ? [] : (JSON.parse(text) as { blockHash?: string; logs?: NodeLog[] }[]);
    if (text === "null" || receipts.some((r) => String(r.blockHash).toLowerCase() !== block.hash)) {
      log.warn("the logs of a block a reorg dropped are unknown: its removed logs are not given", {
        block: block.number.toString(),
        hash: block.hash,
      });
      return [];
    }
    return receipts.flatMap((r) => r.logs ?? []);
  }

  /** A block's hash: the follower's, else (a final block below its window) its header's. */
  async function hashOf(block: Covered): Promise<DeliveredBlock | undefined> {
    if (block.hash !== undefined) return { number: block.number, hash: block.hash };
    const text = await callText(engine, "eth_getBlockByNumber", [quantity(block.number), false]);
    if (text === "null") return undefined;
    return { number: block.number, hash: String((JSON.parse(text) as { hash?: string }).hash).toLowerCase() };
  }

  return {
    async blocks(cursor) {
      let { last, delivered, dropped } = rewound(cursor);
      const added = await inWindows(span(last, {}, BLOCK_POLL_BLOCKS), hashOf);
      if (dropped.length === 0 && added.length === 0) return { results: [], cursor, moved: false };
      if (added.length > 0) last = added[added.length - 1]!.number;
      return {
        results: added.map((b) => JSON.stringify(b.hash)),
        cursor: nextCursor(last, [...delivered, ...added]),
        moved: true,
      };
    },

    async logs(cursor, match, bounds) {
      let { last, delivered, dropped } = rewound(cursor);
      const results: string[] = [];
      for (const block of dropped) {
        for (const l of await droppedLogs(block)) {
          if (match(l)) results.push(JSON.stringify({ ...l, removed: true }));
        }
      }
      const read = await inWindows(span(last, bounds, LOG_POLL_BLOCKS), blockLogs);
      if (dropped.length === 0 && read.length === 0) return { results, cursor, moved: false };
      const named: DeliveredBlock[] = [];
      for (const block of read) {
        await keep(block);
        for (const l of block.logs) if (match(l)) results.push(l.text);
        if (block.hash !== undefined) named.push({ number: block.number, hash: block.hash });
      }
      if (read.length > 0) last = read[read.length - 1]!.number;
      return { results, cursor: nextCursor(last, [...delivered, ...named]), moved: true };
    },
  };
}
