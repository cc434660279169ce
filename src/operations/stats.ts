/** Block time and daily statistics (docs/interface.md §4.5; the Bitcoin family's §16.5). */
import { Type as T, type TSchema } from "@sinclair/typebox";
import type { BlockRefs } from "../blockRef";
import type { BlockQueries, IndexedBlock } from "../db/blockQueries";
import type { Sql } from "../db/database";
import type { ChainFollower } from "../engine/chainFollower";
import { callText, type Engine } from "../engine/engineApi";
import { IndexBehindError, InternalError, InvalidParamsError, NotFoundError } from "../errors";
import { BlockRange, Bodies } from "../schemas";
import type { NodeProtocol } from "../upstream/protocol";
import { defineOperation, type Operation } from "./operation";

const DAY_SECONDS = 86_400n;
/**
 * Headers of the node walked forward past the index's last block, at most, where block times take the
 * running maximum: following the head, the index is a block or two behind; further, it is catching up.
 */
const NODE_WALK_MAX = 64n;
/** Headers of that walk read at once (each a getblockhash and a getblockheader through the engine). */
const NODE_WALK_CHUNK = 8n;

const Timestamp = T.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "a Unix time in seconds",
});
/** 9999-12-31T23:59:59Z: the last second whose day a date (YYYY-MM-DD) can name; no block is later. */
const LAST_DATE_SECOND = 253_402_300_799;
const Day = T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "a UTC date, YYYY-MM-DD" });

/** The Unix time of a date's midnight (UTC); throws when the date is not on the calendar. */
function midnight(date: string): bigint {
  const ms = Date.parse(`${date}T00:00:00Z`);
  // Date.parse rolls 2024-02-30 over into March: only a date that reads back the same is on the calendar.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date) {
    throw new InvalidParamsError(`invalid params: date: ${date} is not a calendar date`);
  }
  return BigInt(ms / 1000);
}

/**
 * How a block's header is read from the chain family's nodes: its node protocol's reads
 * (upstream/protocol.ts), sent through the engine here, so cached and coalesced.
 */
export type HeaderReads = Pick<NodeProtocol, "latest" | "readHeader">;

/**
 * How a family's block times run (docs/interface.md §4.5, §16.5):
 * - `monotonic` (EVM): a block's time is at or after its parent's; before the index's first block and
 *   past its last, the node's headers are searched by bisection;
 * - `runningMaximum` (the Bitcoin family): a block's time may be below its parent's, so a block's time is
 *   the running maximum of the header times up to it (the index's `blocks.timestamp`) and answers never go
 *   back in time. Past the index's last block the node's headers are walked forward from it (at most
 *   NODE_WALK_MAX: further, the answer waits for the index, 503); before its first block (INDEX_FROM_BLOCK
 *   above 0) nothing is answered (404): that maximum would take every header from block 0.
 */
export type BlockTimes = "monotonic" | "runningMaximum";

/** A family's read of its daily figures (on the callers' database: a replica where one is set). */
export interface DayStatsReads {
  /** A UTC day's (`YYYY-MM-DD`) DayStats as JSON text; undefined for a day without an indexed block. */
  day(date: string): Promise<string | undefined>;
}

/** A family's daily figures (docs/interface.md §4.5; the Bitcoin family's §16.5): their shape and read. */
export interface DayStatsSource {
  /** The family's DayStats object, for the API docs. */
  readonly schema: TSchema;
  create(sql: Sql): DayStatsReads;
}

type Bounds = Awaited<ReturnType<BlockQueries["bounds"]>>;

interface BlockTimeOptions {
  blocks: BlockQueries;
  engine: Engine;
  head: ChainFollower;
  /** How the family's nodes name a block by its number. */
  blockRefs: BlockRefs;
  headers: HeaderReads;
  /** Unsaid: monotonic. */
  blockTimes?: BlockTimes;
}

/**
 * The number of the last block whose timestamp is at or before a time, by the family's rule (BlockTimes):
 * from the index where it holds the blocks, else from the node's headers.
 */
function createBlockAt(options: BlockTimeOptions) {
  const { blocks, engine, head, blockRefs, headers } = options;
  const runningMaximum = options.blockTimes === "runningMaximum";
  const send = (method: string, params: unknown[]) => callText(engine, method, params);

  async function nodeTimestamp(n: bigint): Promise<bigint> {
    const header = await headers.readHeader(blockRefs.encode(n), send);
    if (!header) throw new NotFoundError(`block ${n} is not on the node`);
    // A node's block without a time is no block we can answer about (a 500, as it always was).
    if (header.timestamp === undefined)
      throw new InternalError(new SyntaxError(`block ${n} has no timestamp`));
    return BigInt(header.timestamp);
  }

  /** The number of the node's latest block: the followed head's, else the node's own answer. */
  async function nodeLatest(): Promise<bigint> {
    const latest = head.latest() ?? (await headers.readHeader(headers.latest, send))?.number;
    if (latest === undefined) throw new NotFoundError("the node has no latest block");
    return latest;
  }

  /** The last block in [lo, hi] whose timestamp is at or before `t`, by bisection over the node's headers. */
  async function searchNode(t: bigint, lo: bigint, hi: bigint): Promise<bigint | undefined> {
    if (hi < lo || (await nodeTimestamp(lo)) > t) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1n) / 2n;
      if ((await nodeTimestamp(mid)) <= t) lo = mid;
      else hi = mid - 1n;
    }
    return lo;
  }

  /**
   * The last block whose running-maximum time is at or before `t`, past `from` (the index's last block; none:
   * from block 0): the node's headers are walked forward until that maximum passes `t`, or to the node's
   * latest block. A walk longer than NODE_WALK_MAX waits for the index.
   */
  async function walkNode(t: bigint, from: IndexedBlock | undefined): Promise<bigint | undefined> {
    const latest = await nodeLatest();
    let n = from ? from.number + 1n : 0n;
    let max = from ? from.timestamp : -1n;
    const limit = n + NODE_WALK_MAX;
    while (n <= latest) {
      if (n >= limit) {
        throw new IndexBehindError(
          `the index is ${latest - (from ? from.number : -1n)} blocks behind the node: block times past block ${n - 1n} are answered once it reaches them; retry shortly`,
        );
      }
      const last = [latest, limit - 1n, n + NODE_WALK_CHUNK - 1n].reduce((a, b) => (a < b ? a : b));
      const numbers = Array.from({ length: Number(last - n + 1n) }, (_, i) => n + BigInt(i));
      for (const time of await Promise.all(numbers.map(nodeTimestamp))) {
        if (time > max) max = time;
        if (max > t) return n === 0n ? undefined : n - 1n;
        n++;
      }
    }
    return latest;
  }

  /**
   * The number of the last block whose timestamp is at or before `t`. The index answers inside the range
   * it holds; before it (INDEX_FROM_BLOCK above 0) and past its tip, the node's headers do, by the
   * family's rule (BlockTimes).
   */
  return async function blockAt(t: bigint, bounds: Bounds): Promise<bigint | undefined> {
    if (bounds && t >= bounds.first.timestamp && t < bounds.last.timestamp) {
      return (await blocks.atOrBefore(t))?.number;
    }
    if (bounds && t < bounds.first.timestamp) {
      if (runningMaximum && bounds.first.number > 0n) {
        throw new NotFoundError(
          `block times before block ${bounds.first.number} (the index's first) are not answered on this chain: its blocks' times may go back, and the running maximum they are answered by starts at the index's first block`,
        );
      }
      return searchNode(t, 0n, bounds.first.number - 1n);
    }
    if (runningMaximum) return walkNode(t, bounds?.last);
    return searchNode(t, bounds ? bounds.last.number : 0n, await nodeLatest());
  };
}

export function createStatsOperations(
  options: BlockTimeOptions & {
    /** The family's daily figures; unsaid: no watch_getStatsByDay. */
    days?: { schema: TSchema; reads: DayStatsReads };
  },
): Operation[] {
  const { blocks, days } = options;
  const blockAt = createBlockAt(options);
  const operations = [
    defineOperation({
      method: "watch_getBlockNumberByTimestamp",
      group: "Methods",
      summary: "The number of the last block whose timestamp is at or before the given Unix time.",
      params: [{ name: "timestamp", schema: Timestamp }],
      result: T.Integer(),
      rest: {
        name: "watch_getBlockNumberByTimestamp",
        body: Bodies.timestamp,
        toParams: (b) => [b.timestamp],
        response: T.Integer(),
      },
      run: async ([timestamp]) => {
        const n = await blockAt(BigInt(timestamp as number), await blocks.bounds());
        if (n === undefined) throw new NotFoundError(`no block has a timestamp at or before ${timestamp}`);
        return { raw: n.toString() };
      },
    }),
    defineOperation({
      method: "watch_getBlockNumbersByDay",
      group: "Methods",
      summary: "The first and last block of a UTC day.",
      params: [{ name: "date", schema: Day }],
      result: T.Union([BlockRange, T.Null()]),
      rest: {
        name: "watch_getBlockNumbersByDay",
        body: Bodies.date,
        toParams: (b) => [b.date],
        response: T.Union([BlockRange, T.Null()]),
      },
      run: async ([date]) => {
        const start = midnight(date as string);
        const bounds = await blocks.bounds();
        const before = await blockAt(start - 1n, bounds);
        const fromBlock = before === undefined ? 0n : before + 1n;
        const toBlock = await blockAt(start + DAY_SECONDS - 1n, bounds);
        if (toBlock === undefined || toBlock < fromBlock) return { raw: "null" };
        return {
          raw: `{"date":"${date}","fromBlock":${fromBlock},"toBlock":${toBlock},"blockCount":${toBlock - fromBlock + 1n}}`,
        };
      },
    }),
  ];
  if (!days) return operations;
  // After the block-by-time operation, as the docs have always listed them.
  operations.splice(1, 0, dayStatsOperation(days));
  return operations;
}

function dayStatsOperation(days: { schema: TSchema; reads: DayStatsReads }): Operation {
  return defineOperation({
    method: "watch_getStatsByDay",
    group: "Methods",
    summary: "Figures of the UTC day that contains the given Unix time, from the indexed blocks of that day.",
    params: [{ name: "timestamp", schema: Timestamp }],
    result: T.Union([days.schema, T.Null()]),
    rest: {
      name: "watch_getStatsByDay",
      body: Bodies.timestamp,
      toParams: (b) => [b.timestamp],
      response: T.Union([days.schema, T.Null()]),
    },
    run: async ([timestamp]) => {
      if ((timestamp as number) > LAST_DATE_SECOND) return { raw: "null" };
      const raw = await days.reads.day(new Date((timestamp as number) * 1000).toISOString().slice(0, 10));
      return { raw: raw ?? "null" };
    },
  });
}
