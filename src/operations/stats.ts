/** Block time and daily statistics (docs/interface.md §4). */
import { Type as T } from "@sinclair/typebox";
import type { BlockRefs } from "../blockRef";
import type { BlockQueries } from "../db/blockQueries";
import type { ChainFollower } from "../engine/chainFollower";
import { callText, type Engine } from "../engine/engineApi";
import { InternalError, InvalidParamsError, NotFoundError } from "../errors";
import { BlockRange, Bodies, DayStats } from "../schemas";
import type { NodeProtocol } from "../upstream/protocol";
import { defineOperation, type Operation } from "./operation";

const DAY_SECONDS = 86_400n;

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

export function createStatsOperations(options: {
  blocks: BlockQueries;
  engine: Engine;
  head: ChainFollower;
  /** How the family's nodes name a block by its number. */
  blockRefs: BlockRefs;
  headers: HeaderReads;
}): Operation[] {
  const { blocks, engine, head, blockRefs, headers } = options;
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
   * The number of the last block whose timestamp is at or before `t`. The index answers inside the range
   * it holds; before it (INDEX_FROM_BLOCK above 0) and past its tip, the node's headers do.
   */
  async function blockAt(
    t: bigint,
    bounds: Awaited<ReturnType<BlockQueries["bounds"]>>,
  ): Promise<bigint | undefined> {
    if (bounds && t >= bounds.first.timestamp && t < bounds.last.timestamp) {
      return (await blocks.atOrBefore(t))?.number;
    }
    if (bounds && t < bounds.first.timestamp) return searchNode(t, 0n, bounds.first.number - 1n);
    return searchNode(t, bounds ? bounds.last.number : 0n, await nodeLatest());
  }

  return [
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
      method: "watch_getStatsByDay",
      group: "Methods",
      summary:
        "Figures of the UTC day that contains the given Unix time, from the indexed blocks of that day.",
      params: [{ name: "timestamp", schema: Timestamp }],
      result: T.Union([DayStats, T.Null()]),
      rest: {
        name: "watch_getStatsByDay",
        body: Bodies.timestamp,
        toParams: (b) => [b.timestamp],
        response: T.Union([DayStats, T.Null()]),
      },
      run: async ([timestamp]) => {
        if ((timestamp as number) > LAST_DATE_SECOND) return { raw: "null" };
        const s = await blocks.dayStats(new Date((timestamp as number) * 1000).toISOString().slice(0, 10));
        if (!s) return { raw: "null" };
        const transactions = BigInt(s.transactionCount);
        const averageGasPrice = transactions > 0n ? BigInt(s.gasPriceSum) / transactions : 0n;
        const minersReward = BigInt(s.totalFees) - BigInt(s.burntFees);
        return {
          raw: `{"date":"${s.day}","fromBlock":${s.fromBlock},"toBlock":${s.toBlock},"blockCount":${s.blockCount},"transactionCount":${s.transactionCount},"transferCount":${s.transferCount},"activeAddresses":${s.activeAddresses},"totalGasUsed":${s.totalGasUsed},"averageGasPrice":${averageGasPrice},"totalFees":${s.totalFees},"burntFees":${s.burntFees},"minersReward":${minersReward},"uncleBlockReward":0}`,
        };
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
}
