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
import { objectMembers } from "../json";

export type BlockParam =
  /** Positional param `index` is a block number or tag (or omitted, meaning latest when `optional`). */
  | { kind: "position"; index: number; optional?: boolean }
  /** The param at `index` is a log filter with fromBlock/toBlock (or a blockHash). */
  | { kind: "filter"; index: number };

export type CacheRule = "static" | "head" | "block" | "result" | "never";

export interface MethodPolicy {
  block?: BlockParam;
  cache: CacheRule;
  /** For `result`: the members of the answer that name its block; `first` when the answer is a list. */
  names?: { number: string; hash: string; first?: boolean };
  /** For `result` answers without those members: the block hash param that names the block. */
  hashParam?: number;
  /** Calls that change the chain: never shared with a different body, never cached. */
  write?: boolean;
  /** Members of a `block` answer that name its block, to check it against the canonical chain. */
  blockHashIn?: { member: string; first?: boolean };
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

/**
 * The block an answer names (number and hash), read from its top-level members without parsing it all:
 * `{"number":…,"hash":…}` or, for lists, from the first element.
 */
export function blockOfResult(
  text: string,
  names: { number: string; hash: string; first?: boolean },
): { number: bigint; hash: string } | undefined {
  const start = objectStart(text, names.first);
  if (start === undefined) return undefined;
  const numberText = memberText(text, start, names.number);
  const hashText = memberText(text, start, names.hash);
  if (numberText === undefined || hashText === undefined || hashText === "null") return undefined;
  const number = numberText.startsWith('"') ? BigInt(JSON.parse(numberText) as string) : BigInt(numberText);
  return { number, hash: (JSON.parse(hashText) as string).toLowerCase() };
}

/** The block hash a `block` answer names, to compare with the canonical chain. */
export function blockHashOfResult(
  text: string,
  spec: { member: string; first?: boolean },
): string | undefined {
  const start = objectStart(text, spec.first);
  if (start === undefined) return undefined;
  const hash = memberText(text, start, spec.member);
  return hash && hash !== "null" ? (JSON.parse(hash) as string).toLowerCase() : undefined;
}
