/**
 * `logs` (docs/interface.md §14): the logs of each new canonical block, read from its receipts (through the
 * engine, so cached and shared with the indexer), filtered per subscription by address and topics; on a
 * reorg, the logs sent for the dropped blocks are sent again with `removed: true`, then the new branch's.
 */
import type { BlockHeader } from "../../blockHeader";
import { readBlockRef } from "../../blockRef";
import type { ChainChange, ChainFollower } from "../../engine/chainFollower";
import { callText } from "../../engine/engineApi";
import { InvalidParamsError } from "../../errors";
import type {
  SubscriptionContext,
  SubscriptionFeed,
  SubscriptionKind,
} from "../../realtime/subscriptionKind";
import { evmAddresses } from "./addresses";
import { quantity } from "./blockRef";
import { MAX_LOG_ADDRESSES, MAX_TOPIC_ALTERNATIVES } from "./schemas";

/** Blocks whose logs are kept, to be sent again as removed should a reorg drop them. */
const LOG_BLOCKS_KEPT = 256;
/** eth_subscribe's topic positions. */
const MAX_TOPICS = 4;

export interface LogFilter {
  addresses?: Set<string>;
  /** Per position: null matches anything, else one of the set. */
  topics: (Set<string> | null)[];
  /** Logs of blocks below this are not sent (a fromBlock past the head). */
  fromBlock?: bigint;
  /** Logs of blocks above this are not sent (a toBlock at the head or later). */
  toBlock?: bigint;
}

interface StoredLog {
  /** Canonical; undefined where the node wrote no address (it then matches no address filter). */
  address: string | undefined;
  topics: string[];
  object: Record<string, unknown>;
  text: string;
}

const HEX_32 = /^0x[0-9a-fA-F]{64}$/;

interface SubscribeFilter {
  address?: unknown;
  topics?: unknown;
  fromBlock?: unknown;
  toBlock?: unknown;
}

/** A bound as a block number; undefined for none (absent, `latest`, `pending`: the live head). */
function boundOf(name: string, value: unknown, head: bigint | undefined): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  const ref = readBlockRef(value);
  if (ref === undefined) {
    throw new InvalidParamsError(`invalid params: ${name} should be a block number or a tag`);
  }
  if (ref === "latest" || ref === "pending") return undefined;
  if (typeof ref === "bigint") return ref;
  // earliest, safe, finalized: at or below the head, never ahead of it.
  return ref === "earliest" ? 0n : (head ?? 0n);
}

/**
 * A subscription's block bounds, as geth reads them: a fromBlock in the past starts nothing earlier (a live
 * subscription sends the blocks to come); a bound at the head or later keeps out the logs of blocks beyond
 * it; a toBlock below the head names only past blocks, which a live subscription never sends: refused.
 */
function boundsOf(f: SubscribeFilter, head: bigint | undefined): Pick<LogFilter, "fromBlock" | "toBlock"> {
  const from = boundOf("fromBlock", f.fromBlock, head);
  const to = boundOf("toBlock", f.toBlock, head);
  if (to !== undefined && head !== undefined && to < head) {
    throw new InvalidParamsError(
      `invalid params: toBlock ${to} is below the head (${head}): a logs subscription sends new blocks only; read past logs with eth_getLogs`,
    );
  }
  if (from !== undefined && to !== undefined && from > to) {
    throw new InvalidParamsError(`invalid params: fromBlock ${from} is above toBlock ${to}`);
  }
  const bounds: Pick<LogFilter, "fromBlock" | "toBlock"> = {};
  if (from !== undefined && (head === undefined || from > head)) bounds.fromBlock = from;
  if (to !== undefined) bounds.toBlock = to;
  return bounds;
}

/** The `logs` filter: `{address?, topics?, fromBlock?, toBlock?}` as eth_subscribe takes it. */
function logFilterOf(value: unknown, head: ChainFollower): LogFilter {
  if (value === undefined || value === null) return { topics: [] };
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidParamsError(
      "invalid params: the logs filter must be an object {address?, topics?, fromBlock?, toBlock?}",
    );
  }
  const { address, topics, fromBlock, toBlock, ...rest } = value as SubscribeFilter;
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw new InvalidParamsError(
      `invalid params: the logs filter takes address, topics, fromBlock and toBlock, not ${extra.join(", ")}`,
    );
  }
  const filter: LogFilter = {
    topics: [],
    ...boundsOf({ fromBlock, toBlock }, head.headBlock()?.number ?? head.latest()),
  };
  if (address !== undefined && address !== null) {
    if (Array.isArray(address) && address.length > MAX_LOG_ADDRESSES) {
      throw new InvalidParamsError(
        `invalid params: address should be a list of at most ${MAX_LOG_ADDRESSES} addresses, not ${address.length}`,
      );
    }
    const list = (Array.isArray(address) ? address : [address]).map((a) =>
      typeof a === "string" ? evmAddresses.canonical(a) : undefined,
    );
    if (list.some((a) => a === undefined)) {
      throw new InvalidParamsError("invalid params: address should be a 20-byte address or a list of them");
    }
    filter.addresses = new Set(list as string[]);
  }
  if (topics !== undefined && topics !== null) {
    if (!Array.isArray(topics) || topics.length > MAX_TOPICS) {
      throw new InvalidParamsError("invalid params: topics should be a list of at most 4 positions");
    }
    filter.topics = topics.map((t, position) => {
      if (t === null) return null;
      const alternatives = Array.isArray(t) ? t : [t];
      if (alternatives.length > MAX_TOPIC_ALTERNATIVES) {
        throw new InvalidParamsError(
          `invalid params: topics[${position}] should be a list of at most ${MAX_TOPIC_ALTERNATIVES} alternatives, not ${alternatives.length}`,
        );
      }
      if (alternatives.some((x) => x !== null && (typeof x !== "string" || !HEX_32.test(x)))) {
        throw new InvalidParamsError(
          "invalid params: a topic should be a 32-byte hash, null, or a list of them",
        );
      }
      // As geth reads a position (and eth_newFilter's criteria, rpcFilterCriteria.ts logMatch): an empty
      // list, or one holding null, matches anything.
      if (alternatives.length === 0 || alternatives.includes(null)) return null;
      return new Set(alternatives.map((x) => (x as string).toLowerCase()));
    });
  }
  return filter;
}

function matches(filter: LogFilter, log: StoredLog, block: bigint): boolean {
  if (filter.fromBlock !== undefined && block < filter.fromBlock) return false;
  if (filter.toBlock !== undefined && block > filter.toBlock) return false;
  if (filter.addresses && (log.address === undefined || !filter.addresses.has(log.address))) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const wanted = filter.topics[i];
    if (wanted === null || wanted === undefined) continue;
    const topic = log.topics[i];
    if (topic === undefined || !wanted.has(topic)) return false;
  }
  return true;
}

export const logsSubscription: SubscriptionKind<LogFilter> = {
  name: "logs",
  parse: logFilterOf,
  open: openLogs,
};

/** The chain follower's changes, in order, as the logs of the blocks they drop and add. */
function openLogs(context: SubscriptionContext<LogFilter>): SubscriptionFeed<LogFilter> {
  const { subscriptions, notify, engine, log } = context;
  /** The logs of recent canonical blocks, by block hash, in the order they were processed. */
  const blockLogs = new Map<string, StoredLog[]>();
  let logWork: Promise<void> = Promise.resolve();

  async function logsOf(block: BlockHeader): Promise<StoredLog[] | undefined> {
    const text = await callText(engine, "eth_getBlockReceipts", [quantity(block.number)]);
    if (text === "null") return undefined;
    const receipts = JSON.parse(text) as { blockHash: string; logs: Record<string, unknown>[] }[];
    // Receipts of another block at that height: the chain moved on; the change that follows says how.
    if (receipts.some((r) => r.blockHash.toLowerCase() !== block.hash)) return undefined;
    return receipts.flatMap((r) =>
      r.logs.map((object) => ({
        address: evmAddresses.canonical(String(object.address)),
        topics: (object.topics as string[]).map((t) => t.toLowerCase()),
        object,
        text: JSON.stringify(object),
      })),
    );
  }

  function keep(hash: string, logs: StoredLog[]) {
    blockLogs.set(hash, logs);
    if (blockLogs.size > LOG_BLOCKS_KEPT) blockLogs.delete(blockLogs.keys().next().value!);
  }

  async function sendLogs(change: ChainChange): Promise<void> {
    if (subscriptions.size === 0) return;
    for (const block of change.removed) {
      const logs = blockLogs.get(block.hash);
      blockLogs.delete(block.hash);
      if (!logs) continue;
      for (const subscription of subscriptions) {
        for (const l of logs) {
          if (matches(subscription.options, l, block.number)) {
            notify(subscription, JSON.stringify({ ...l.object, removed: true }));
          }
        }
      }
    }
    // Every block's receipts asked at once (one batch upstream), sent in order.
    const reads = change.added.map((block) => logsOf(block).catch((error: unknown) => error as Error));
    for (let i = 0; i < reads.length; i++) {
      const logs = await reads[i];
      const block = change.added[i]!;
      if (logs instanceof Error || logs === undefined) {
        if (logs instanceof Error)
          log.warn("logs of a new block could not be read", {
            block: block.number.toString(),
            error: logs.message,
          });
        continue;
      }
      keep(block.hash, logs);
      for (const subscription of subscriptions) {
        for (const l of logs)
          if (matches(subscription.options, l, block.number)) notify(subscription, l.text);
      }
    }
  }

  return {
    changed(change) {
      logWork = logWork
        .then(() => sendLogs(change))
        .catch((error) => log.error("logs notification failed", { error }));
    },
  };
}
