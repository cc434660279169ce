/**
 * How a node method's answer may be cached (docs/interface.md §8), and where its block parameter sits (tags
 * are resolved to numbers before a key is made; a call about block N avoids upstreams behind N). The table
 * of every method's policy is engine/methods.ts. The rules:
 *  - static: never changes (chain id, network id): kept forever;
 *  - head: about the head (block number, gas price): kept for a short time, memory only;
 *  - block: about the block its block parameter names: forever once that block is final, else briefly
 *    and only while that block is still canonical;
 *  - result: about the block its answer names (lookups by transaction or block hash): the same, with the
 *    block read from the answer;
 *  - never: writes, estimates, and anything `pending`.
 */
import { isBlockNumberHex } from "../chain/blockRef";
import { UpstreamProtocolError } from "../errors";
import { arrayElements, objectMembers } from "../json";

export type BlockParam =
  /** Positional param `index` is a block number or tag (or omitted, meaning latest when `optional`). */
  | { kind: "position"; index: number; optional?: boolean }
  /** The param at `index` is a log filter with fromBlock/toBlock (or a blockHash). */
  | { kind: "filter"; index: number };

export type CacheRule = "static" | "head" | "block" | "result" | "never";

/** The members of an answer that name its block; `first`: of the first element, the answer being a list. */
export interface BlockNames {
  number: string;
  hash: string;
  first?: boolean;
}

export interface MethodPolicy {
  block?: BlockParam;
  cache: CacheRule;
  /**
   * The members of the answer that name its block. For `result`: where the block is read. For `block`:
   * checked against the block asked (an answer about another block is refused) and, while it is not
   * final, against the canonical chain.
   */
  names?: BlockNames;
  /** For `result` answers without those members: the block hash param that names the block. */
  hashParam?: number;
  /** Calls that change the chain: never shared with a different body, never cached. */
  write?: boolean;
}

/** The block number a prepared `block`-rule call is about, as node-form hex, when its params name one. */
export function blockHexOfParams(policy: MethodPolicy, params: unknown[]): string | undefined {
  const block = policy.block;
  if (!block) return undefined;
  const value =
    block.kind === "filter"
      ? (() => {
          const filter = params[block.index] as { toBlock?: unknown; blockHash?: unknown } | undefined;
          return filter?.blockHash === undefined ? filter?.toBlock : undefined;
        })()
      : params[block.index];
  return typeof value === "string" && isBlockNumberHex(value) ? value : undefined;
}

/** The block number a prepared `block`-rule call is about, when its params name one. */
export function blockOfParams(policy: MethodPolicy, params: unknown[]): bigint | undefined {
  const hex = blockHexOfParams(policy, params);
  return hex === undefined ? undefined : BigInt(hex);
}

function memberText(text: string, start: number, name: string): string | undefined {
  const span = objectMembers(text, start).get(name);
  return span ? text.slice(span.start, span.end) : undefined;
}

/** Where the answer's object starts: the answer itself, or with `first` the first element of a list. */
function objectStart(text: string, first: boolean | undefined): number | undefined {
  let start = 0;
  while (text.charCodeAt(start) <= 32) start++;
  if (first) {
    if (text.charCodeAt(start) !== 91) return undefined;
    start++;
    while (text.charCodeAt(start) <= 32) start++;
  }
  return text.charCodeAt(start) === 123 ? start : undefined;
}

const malformed = (what: string) => new UpstreamProtocolError(`upstream answered a malformed ${what}`);

/** A block number member: a hex quantity or an integer (traces). */
function numberOf(text: string): bigint {
  if (text.startsWith('"')) {
    const value = JSON.parse(text) as string;
    if (!/^0x[0-9a-fA-F]{1,64}$/.test(value)) throw malformed("block number");
    return BigInt(value);
  }
  if (!/^\d{1,20}$/.test(text)) throw malformed("block number");
  return BigInt(text);
}

/**
 * The block an answer names (number and hash), read from its top-level members without parsing it all:
 * `{"number":…,"hash":…}` or, for lists, from the first element. Undefined when it names none (`null`, an
 * empty list, a transaction not yet in a block); an UpstreamProtocolError when the members are not what a
 * node sends (a number that is no number, a hash that is no string).
 */
export function blockOfResult(text: string, names: BlockNames): { number: bigint; hash: string } | undefined {
  const start = objectStart(text, names.first);
  if (start === undefined) return undefined;
  const numberText = memberText(text, start, names.number);
  const hashText = memberText(text, start, names.hash);
  if (numberText === undefined || hashText === undefined || hashText === "null") return undefined;
  if (!hashText.startsWith('"')) throw malformed("block hash");
  return { number: numberOf(numberText), hash: (JSON.parse(hashText) as string).toLowerCase() };
}

/**
 * Why an answer is not about the block its params asked about (a node that answered another block, or
 * logs out of the range asked), or undefined when it is, or does not say.
 */
export function wrongBlock(policy: MethodPolicy, params: unknown[], text: string): string | undefined {
  try {
    return blockMismatch(policy, params, text);
  } catch (error) {
    // The scanner found no list of objects where one belongs: the node's answer has the wrong shape.
    if (error instanceof SyntaxError) return "upstream answered a malformed result";
    throw error;
  }
}

function blockMismatch(policy: MethodPolicy, params: unknown[], text: string): string | undefined {
  const block = policy.block;
  if (!block) return undefined;
  if (block.kind === "filter") {
    const filter = params[block.index] as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
    const from =
      typeof filter?.fromBlock === "string" && isBlockNumberHex(filter.fromBlock)
        ? BigInt(filter.fromBlock)
        : undefined;
    const to = blockOfParams(policy, params);
    if (from === undefined || to === undefined) return undefined;
    const logs = arrayElements(text, 0);
    for (const log of [logs[0], logs[logs.length - 1]]) {
      if (!log) continue;
      const n = numberOf(memberText(text, log.start, "blockNumber") ?? '"0x0"');
      if (n < from || n > to) return `upstream answered a log of block ${n} for the range ${from} to ${to}`;
    }
    return undefined;
  }
  const asked = blockOfParams(policy, params);
  if (asked === undefined || !policy.names) return undefined;
  const named = blockOfResult(text, policy.names);
  return named && named.number !== asked
    ? `upstream answered about block ${named.number} when asked about block ${asked}`
    : undefined;
}
