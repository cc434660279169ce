/**
 * How a node method's answer may be cached (docs/interface.md §8), and where its block parameter sits (tags
 * are resolved to numbers before a key is made; a call about block N avoids upstreams behind N). The table
 * of every method's policy is its family's method rows (EVM: families/evm/methods.ts). The rules:
 *  - static: never changes (chain id, network id; a Bitcoin-family block by hash, but for its `live`
 *    members): kept forever;
 *  - head: about the head (block number, gas price): kept for a short time, memory only;
 *  - brief: changes at any time, not only with the head (a mempool, a fee estimate): kept `ttlMs`, memory
 *    only;
 *  - block: about the block its block parameter names: forever once that block is final, else briefly
 *    and only while that block is still canonical;
 *  - result: about the block its answer names (lookups by transaction or block hash): the same, with the
 *    block read from the answer;
 *  - never: writes, estimates, and anything `pending`.
 * Block numbers and hashes in params and answers are read with the family's BlockRefs (blockRef.ts).
 */

import type { BlockRefs } from "../blockRef";
import { UpstreamProtocolError } from "../errors";
import { arrayElements, objectMembers, objectMembersAt, type Span, skipWhitespace } from "../json";

export type BlockParam =
  /** Positional param `index` is a block number or tag (or omitted, meaning latest when `optional`). */
  | { kind: "position"; index: number; optional?: boolean }
  /** The param at `index` is a log filter with fromBlock/toBlock (or a blockHash). */
  | { kind: "filter"; index: number }
  /** Member `member` of the object param at `index` is a block number (java-tron's `{"num": n}` bodies). */
  | { kind: "member"; index: number; member: string };

export type CacheRule = "static" | "head" | "brief" | "block" | "result" | "never";

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
   * The members of the answer that name its block. Every answer but `null` must carry them (an answer
   * about another block than the one asked, by number or by hash, or one that does not say, is refused).
   * For `result`: where the block is read. For `block`: while it is not final, checked against the
   * canonical chain.
   */
  names?: BlockNames;
  /**
   * The param that names the block by hash: checked against the answer's `names`, and for `result`
   * answers without them, the block the answer is kept with.
   */
  hashParam?: number;
  /**
   * For a `block` answer that is the block's hash and nothing else (Bitcoin's `getblockhash`): that hash,
   * checked against the followed chain as `names` are (an answer read before a reorg is not kept).
   */
  answerHash?: (raw: string) => string | undefined;
  /**
   * The block an answer names where `names` cannot read it (members nested, or a hash in the family's own
   * form: java-tron's `blockID`); `hash` unsaid where the answer names only the number (java-tron's
   * transaction infos), which a `result` answer is then kept for only once that block is final.
   */
  answerBlock?: (raw: string) => { number: bigint; hash?: string } | undefined;
  /**
   * Answers in the family's own forms that say "none" or "refused" (java-tron's `{}` and `{"Error": ...}`,
   * given with HTTP 200): passed on as the node wrote them, never kept. `null` never is, whatever the family.
   */
  unkept?: (raw: string) => boolean;
  /**
   * Whether answers to these params may be kept, where that depends on them (java-tron's `getblock` without
   * a block names the head: never kept, while a block named is); unsaid: as the rule says.
   */
  keepsFor?: (params: unknown[]) => boolean;
  /** Calls that change the chain: never shared with a different body, never cached. */
  write?: boolean;
  /** `brief`: how long an answer is kept, in ms. */
  ttlMs?: number;
  /**
   * The family's own check that an answer is about what its params asked, where `names` cannot say (a
   * Bitcoin-family block by hash, whose hex form names its hash only through its header's hash): why it is
   * not, or undefined. Run with the checks of `wrongBlock`, on every node answer and fleet value.
   */
  verify?: (params: unknown[], raw: string) => string | undefined;
  /**
   * Members of a kept answer that change with the head while the rest never does (the Bitcoin family's
   * `confirmations` and `nextblockhash`): a hit answers them as the node would now. Unsaid (EVM): a hit is
   * the stored bytes as they are.
   */
  live?: LiveAnswer;
}

/**
 * An answer kept for ever but for a few members that follow the head: each hit is the stored text with those
 * members as the node would write them now, spliced in (the text is never parsed and written again), so a
 * hit equals the node's answer at the followed head. The family supplies it (the Bitcoin family's:
 * families/utxo/live.ts); the cache applies it on every hit and keeps the result until the head moves.
 */
export interface LiveAnswer {
  /**
   * Whether a node's answer is kept (a transaction in no block yet is not, nor one whose block the chain
   * left); it may note the height of the block the answer is about, for the answers naming only its hash.
   * `params`: the call's, as the method's row normalized them.
   */
  keeps(raw: string, heights: Pick<LiveChain, "noteHeight">, params: readonly unknown[]): boolean;
  /** The kept answer as the node would give it at `chain`'s head; undefined: only the node can say. */
  now(stored: string, chain: LiveChain): string | undefined;
}

/** What a live answer reads of the chain: the followed head and the blocks around it (the cache gives it). */
export interface LiveChain {
  /** The followed head (only a fresh one is given: else the node is asked). */
  readonly head: { number: bigint; hash: string };
  /** The last final block: a block at or below it never leaves the main chain, nor changes. */
  readonly finalized: bigint;
  /** The canonical hash at a height from the last final block to the head; undefined outside. */
  canonicalHash(n: bigint): string | undefined;
  /** A block's height by hash: a canonical block of the followed window, or one noted before. */
  heightOf(hash: string): bigint | undefined;
  /** Notes a block's height, read from an answer about it (any branch: a block's height never changes). */
  noteHeight(hash: string, height: bigint): void;
}

/** The param naming the block a call is about: its block param, or a log filter's end (not by hash). */
function blockParam(policy: MethodPolicy, params: unknown[]): unknown {
  const block = policy.block;
  if (!block) return undefined;
  if (block.kind === "position") return params[block.index];
  if (block.kind === "member")
    return (params[block.index] as Record<string, unknown> | undefined)?.[block.member];
  const filter = params[block.index] as { toBlock?: unknown; blockHash?: unknown } | undefined;
  return filter?.blockHash === undefined ? filter?.toBlock : undefined;
}

/** The block number a prepared `block`-rule call is about, when its params name one. */
export function blockOfParams(policy: MethodPolicy, params: unknown[], refs: BlockRefs): bigint | undefined {
  return refs.numberOf(blockParam(policy, params));
}

function memberText(text: string, members: Map<string, Span>, name: string): string | undefined {
  const span = members.get(name);
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

/** A block hash member, in the form every hash the service compares is in. */
function hashOf(text: string, refs: BlockRefs): string {
  const value = text.startsWith('"') ? (JSON.parse(text) as string) : undefined;
  if (value === undefined || !refs.isHash(value)) throw malformed("block hash");
  return refs.normalizeHash(value);
}

/**
 * The block an answer names (number and hash), read from its top-level members without parsing it all:
 * `{"number":…,"hash":…}` or, for lists, from the first element. Undefined when it names none (`null`, an
 * empty list, a transaction not yet in a block); an UpstreamProtocolError when the members are not what a
 * node sends (a number that is no number, a hash that is no hash).
 */
export function blockOfResult(
  text: string,
  names: BlockNames,
  refs: BlockRefs,
): { number: bigint; hash: string } | undefined {
  const start = objectStart(text, names.first);
  if (start === undefined) return undefined;
  const members = objectMembers(text, start);
  const numberText = memberText(text, members, names.number);
  const hashText = memberText(text, members, names.hash);
  if (numberText === undefined || hashText === undefined || hashText === "null") return undefined;
  return { number: numberOf(numberText), hash: hashOf(hashText, refs) };
}

/**
 * Why an answer is not about the block its params asked about (a node that answered another block, an
 * answer that does not name its block, logs out of the range asked, the wrong shape), or undefined when it
 * is. Never throws: the engine applies it to every node answer and every value of the fleet's shared tier
 * before either is kept or given.
 */
export function wrongBlock(
  policy: MethodPolicy,
  params: unknown[],
  text: string,
  refs: BlockRefs,
): string | undefined {
  try {
    return policy.verify?.(params, text) ?? blockMismatch(policy, params, text, refs);
  } catch (error) {
    // The scanner found no list of objects where one belongs: the node's answer has the wrong shape.
    if (error instanceof SyntaxError) return "upstream answered a malformed result";
    if (error instanceof UpstreamProtocolError) return error.message;
    throw error;
  }
}

function blockMismatch(
  policy: MethodPolicy,
  params: unknown[],
  text: string,
  refs: BlockRefs,
): string | undefined {
  if (policy.block?.kind === "filter") return logsOutOfRange(policy, params, text, refs);
  return policy.names ? namesMismatch(text, policy.names, askedOf(policy, params, refs), refs) : undefined;
}

function logsOutOfRange(
  policy: MethodPolicy,
  params: unknown[],
  text: string,
  refs: BlockRefs,
): string | undefined {
  const filter = params[policy.block!.index] as { fromBlock?: unknown; toBlock?: unknown };
  const from = typeof filter?.fromBlock === "string" ? refs.numberOf(filter.fromBlock) : undefined;
  const to = blockOfParams(policy, params, refs);
  if (from === undefined || to === undefined) return undefined;
  const logs = arrayElements(text, 0);
  for (const log of [logs[0], logs[logs.length - 1]]) {
    if (!log) continue;
    const n = numberOf(memberText(text, objectMembers(text, log.start), "blockNumber") ?? '"0x0"');
    if (n < from || n > to) return `upstream answered a log of block ${n} for the range ${from} to ${to}`;
  }
  return undefined;
}

/** The block a call names: by number, by hash, or neither (a tag; a transaction's hash). */
interface Asked {
  number?: bigint;
  hash?: string;
  /**
   * Where an answer may name no block: `both` (a transaction not yet in a block has neither number nor
   * hash), `either` (the pending block may lack its hash, or its number).
   */
  unnamed?: "both" | "either";
}

function askedOf(policy: MethodPolicy, params: unknown[], refs: BlockRefs): Asked {
  if (policy.hashParam !== undefined) return { hash: refs.normalizeHash(String(params[policy.hashParam])) };
  // A result named by a transaction's hash: the transaction may not be in a block yet.
  if (policy.block?.kind !== "position") return { unnamed: "both" };
  const ref = params[policy.block.index];
  const number = refs.numberOf(ref);
  if (number !== undefined) return { number };
  if (typeof ref !== "string") return {};
  if (refs.isHash(ref)) return { hash: refs.normalizeHash(ref) };
  return ref === "pending" ? { unnamed: "either" } : {};
}

const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;

/** `null` is "not found"; anything else is the object, or for `first` the list of objects, naming the block. */
function namesMismatch(text: string, names: BlockNames, asked: Asked, refs: BlockRefs): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text.startsWith("null", i)) return undefined;
  if (!names.first) return objectMismatch(text, objectMembers(text, i), names, asked, refs);
  // Every element, in one pass: a list that mixes blocks is as wrong as one about another block.
  if (text.charCodeAt(i) !== LBRACKET) throw new SyntaxError("expected a list");
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === RBRACKET) return undefined;
  for (;;) {
    const { members, end } = objectMembersAt(text, i);
    const wrong = objectMismatch(text, members, names, asked, refs);
    if (wrong) return wrong;
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) === RBRACKET) return undefined;
    if (text.charCodeAt(i) !== COMMA) throw new SyntaxError("expected a comma");
    i = skipWhitespace(text, i + 1);
  }
}

function objectMismatch(
  text: string,
  members: Map<string, Span>,
  names: BlockNames,
  asked: Asked,
  refs: BlockRefs,
): string | undefined {
  const numberText = memberText(text, members, names.number);
  const hashText = memberText(text, members, names.hash);
  // Not in a block yet, where that may be: both null, or both left out (never kept either way).
  if (asked.unnamed === "both" && (numberText ?? "null") === "null" && (hashText ?? "null") === "null") {
    return undefined;
  }
  const nullable = asked.unnamed === "either";
  if (numberText === undefined || (numberText === "null" && !nullable)) return without(names, "number");
  if (hashText === undefined || (hashText === "null" && !nullable)) return without(names, "hash");
  const number = numberText === "null" ? undefined : numberOf(numberText);
  if (number !== undefined && asked.number !== undefined && number !== asked.number) {
    return `upstream answered about block ${number} when asked about block ${asked.number}`;
  }
  const hash = hashText === "null" ? undefined : hashOf(hashText, refs);
  if (hash !== undefined && asked.hash !== undefined && hash !== asked.hash) {
    return `upstream answered about block ${hash} when asked about block ${asked.hash}`;
  }
  return undefined;
}

const without = (names: BlockNames, member: "number" | "hash") =>
  names[member] === member
    ? `upstream answered a block without its ${member}`
    : `upstream answered without its ${names[member]}`;
