/**
 * One policy table for every node method (DESIGN.md §5): where its block parameter sits (tags are resolved
 * to numbers before a key is made; a call about block N avoids upstreams behind N) and how its answer may
 * be cached:
 *  - static: never changes (chain id, network id): kept forever;
 *  - head: about the head (block number, gas price): kept for a short time, memory only;
 *  - block: about the block its block parameter names: forever once that block is final, else briefly
 *    and only while that block is still canonical;
 *  - result: about the block its answer names (lookups by transaction or block hash): the same, with the
 *    block read from the answer;
 *  - never: writes, estimates, and anything `pending`.
 */
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

const at = (index: number, optional = false): BlockParam => ({ kind: "position", index, optional });
const TX_BLOCK = { number: "blockNumber", hash: "blockHash" };

export const METHOD_POLICY: Readonly<Record<string, MethodPolicy>> = {
  eth_chainId: { cache: "static" },
  net_version: { cache: "static" },
  eth_blockNumber: { cache: "head" },
  eth_gasPrice: { cache: "head" },

  eth_getBlockByNumber: { block: at(0), cache: "block", blockHashIn: { member: "hash" } },
  eth_getBlockTransactionCountByNumber: { block: at(0), cache: "block" },
  eth_getTransactionByBlockNumberAndIndex: {
    block: at(0),
    cache: "block",
    blockHashIn: { member: "blockHash" },
  },
  eth_getUncleCountByBlockNumber: { block: at(0), cache: "block" },
  eth_getBlockReceipts: { block: at(0), cache: "block", blockHashIn: { member: "blockHash", first: true } },
  trace_block: { block: at(0), cache: "block", blockHashIn: { member: "blockHash", first: true } },
  eth_getLogs: { block: { kind: "filter", index: 0 }, cache: "block" },
  eth_call: { block: at(1, true), cache: "block" },
  eth_getBalance: { block: at(1, true), cache: "block" },
  eth_getCode: { block: at(1, true), cache: "block" },
  eth_getTransactionCount: { block: at(1, true), cache: "block" },
  eth_getStorageAt: { block: at(2, true), cache: "block" },
  // Its last base fee is a prediction some nodes (anvil) recompute as the head moves, even for old ranges:
  // kept only as long as answers about the head.
  eth_feeHistory: { block: at(1), cache: "head" },

  eth_getBlockByHash: { cache: "result", names: { number: "number", hash: "hash" } },
  eth_getTransactionByBlockHashAndIndex: { cache: "result", names: TX_BLOCK },
  eth_getTransactionByHash: { cache: "result", names: TX_BLOCK },
  eth_getTransactionReceipt: { cache: "result", names: TX_BLOCK },
  trace_transaction: { cache: "result", names: { ...TX_BLOCK, first: true } },
  eth_getBlockTransactionCountByHash: { cache: "result", hashParam: 0 },
  eth_getUncleCountByBlockHash: { cache: "result", hashParam: 0 },

  eth_sendRawTransaction: { cache: "never", write: true },
  eth_estimateGas: { cache: "never" },
};

const HEX_NUMBER = /^0x[0-9a-f]{1,16}$/;

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
  return typeof value === "string" && HEX_NUMBER.test(value) ? value : undefined;
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

/**
 * The block an answer names (number and hash), read from its top-level members without parsing it all:
 * `{"number":…,"hash":…}` or, for lists, from the first element.
 */
export function blockOfResult(
  text: string,
  names: { number: string; hash: string; first?: boolean },
): { number: bigint; hash: string } | undefined {
  let start = 0;
  while (text.charCodeAt(start) <= 32) start++;
  if (names.first) {
    if (text.charCodeAt(start) !== 91) return undefined;
    start++;
    while (text.charCodeAt(start) <= 32) start++;
  }
  if (text.charCodeAt(start) !== 123) return undefined;
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
  let start = 0;
  while (text.charCodeAt(start) <= 32) start++;
  if (spec.first) {
    if (text.charCodeAt(start) !== 91) return undefined;
    start++;
    while (text.charCodeAt(start) <= 32) start++;
  }
  if (text.charCodeAt(start) !== 123) return undefined;
  const hash = memberText(text, start, spec.member);
  return hash && hash !== "null" ? (JSON.parse(hash) as string).toLowerCase() : undefined;
}
