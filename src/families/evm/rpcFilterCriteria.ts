/**
 * What a log filter kept by the service matches (eth_newFilter's criteria): checked as geth checks them when
 * a filter is made, kept in the node's form, and matched against the logs of new blocks as nodes match them.
 */
import { InvalidParamsError } from "../../errors";
import { evmAddresses } from "./addresses";
import { evmBlockRefs } from "./blockRef";

/** A log as a node writes it (receipts, eth_getLogs). */
export interface NodeLog {
  address?: unknown;
  topics?: unknown;
  [member: string]: unknown;
}

/** A log filter's criteria in the node's form, as kept: eth_getFilterLogs sends them to eth_getLogs. */
export interface LogCriteria {
  address?: string | string[];
  topics?: (string | null | (string | null)[])[];
  fromBlock?: string;
  toBlock?: string;
}

const CRITERIA_KEYS = ["address", "topics", "fromBlock", "toBlock"] as const;

/** A bound of the range a filter follows: a block number, or "latest" (no bound: the head as it moves). */
function boundOf(name: string, ref: string | undefined): bigint | "latest" {
  if (ref === undefined || ref === "latest") return "latest";
  if (ref === "earliest") return 0n;
  if (ref === "pending") throw new InvalidParamsError("invalid params: pending logs are not supported");
  const n = evmBlockRefs.numberOf(ref);
  if (n === undefined) {
    throw new InvalidParamsError(
      `invalid params: invalid block range params: ${name} ${ref} is no block a filter can follow (a number, earliest or latest)`,
    );
  }
  return n;
}

/**
 * eth_newFilter's filter (valid against its schema, in the node's form) as the criteria kept, or an
 * InvalidParamsError for what geth refuses: a blockHash (a filter follows new blocks: one block's logs are
 * eth_getLogs'), pending, a tag that is not a block number nor earliest nor latest, toBlock below fromBlock,
 * or a number up to latest. Members other than the four are left out, as nodes ignore them.
 */
export function newFilterCriteria(filter: Record<string, unknown>): LogCriteria {
  if (filter.blockHash !== undefined) {
    throw new InvalidParamsError(
      "invalid params: eth_newFilter takes no blockHash: a filter follows new blocks (read one block's logs with eth_getLogs)",
    );
  }
  const criteria: Record<string, unknown> = {};
  for (const key of CRITERIA_KEYS) if (filter[key] !== undefined) criteria[key] = filter[key];
  const { fromBlock, toBlock } = criteria as LogCriteria;
  const from = boundOf("fromBlock", fromBlock);
  const to = boundOf("toBlock", toBlock);
  const valid = to === "latest" || (from !== "latest" && to >= from);
  if (!valid) {
    throw new InvalidParamsError(
      `invalid params: invalid block range params: toBlock ${toBlock} must be latest or at least fromBlock ${fromBlock ?? "latest"}`,
    );
  }
  return criteria as LogCriteria;
}

/** The blocks whose new logs a filter delivers: its numeric bounds (a tag bounds nothing, as in geth). */
export interface BlockBounds {
  from?: bigint;
  to?: bigint;
}

export function boundsOf(criteria: LogCriteria): BlockBounds {
  const number = (ref: string | undefined) => (ref === undefined ? undefined : evmBlockRefs.numberOf(ref));
  return { from: number(criteria.fromBlock), to: number(criteria.toBlock) };
}

/** Whether a log matches, by its address and topics; built once per poll. */
export type LogMatch = (log: NodeLog) => boolean;

/**
 * The criteria's address and topic rules: any of the addresses (none: any); per topic position, any of its
 * alternatives, where `null`, an empty list or a list holding `null` matches anything (an absent topic too,
 * as anvil and reth read it, and as the logs subscription does).
 */
export function logMatch(criteria: LogCriteria): LogMatch {
  const list = criteria.address === undefined ? [] : [criteria.address].flat();
  const addresses = list.length > 0 ? new Set(list) : undefined;
  const topics = (criteria.topics ?? []).map((position) => {
    const alternatives = position === null ? [] : [position].flat();
    return alternatives.length === 0 || alternatives.includes(null)
      ? undefined
      : new Set(alternatives as string[]);
  });
  return (log) => {
    if (addresses) {
      const address = typeof log.address === "string" ? evmAddresses.canonical(log.address) : undefined;
      if (address === undefined || !addresses.has(address)) return false;
    }
    const logTopics = Array.isArray(log.topics) ? (log.topics as unknown[]) : [];
    for (let i = 0; i < topics.length; i++) {
      const wanted = topics[i];
      if (wanted === undefined) continue;
      const topic = logTopics[i];
      if (typeof topic !== "string" || !wanted.has(topic.toLowerCase())) return false;
    }
    return true;
  };
}
