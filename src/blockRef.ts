/**
 * Block references in requests (docs/interface.md §3.1), whatever the chain's family: an integer >= 0, a
 * 0x-hex string, a decimal string, or one of the five tags in any case. How a family's nodes write them is
 * the family's `BlockRefs` (the EVM's: families/evm/blockRef.ts), which shared floors are handed: they name
 * blocks in node params only through it.
 */

export const BLOCK_TAGS = ["latest", "earliest", "pending", "safe", "finalized"] as const;
export type BlockTag = (typeof BLOCK_TAGS)[number];

/** Nodes keep block numbers in 64 bits. */
export const MAX_BLOCK_NUMBER = 2n ** 64n - 1n;

const TAG_SET: ReadonlySet<string> = new Set(BLOCK_TAGS);
const HEX = /^0x[0-9a-f]+$/i;
const DECIMAL = /^[0-9]+$/;
/** At most 16 hex digits (64 bits), so a 32-byte hash is never read as a block number. */
const MAX_HEX_LENGTH = 18;
/** Caps BigInt()'s work before the range check: no megabytes of digits parsed. */
const MAX_DECIMAL_LENGTH = 40;

/** A request's block reference: its number, or its tag in lower case; undefined when it is neither. */
export function readBlockRef(value: unknown): bigint | BlockTag | undefined {
  let n: bigint;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) return undefined;
    n = BigInt(value);
  } else if (typeof value === "bigint") {
    n = value;
  } else if (typeof value === "string") {
    const lower = value.toLowerCase();
    if (TAG_SET.has(lower)) return lower as BlockTag;
    if (HEX.test(value) && value.length <= MAX_HEX_LENGTH) n = BigInt(value);
    else if (DECIMAL.test(value) && value.length <= MAX_DECIMAL_LENGTH) n = BigInt(value);
    else return undefined;
  } else {
    return undefined;
  }
  return n >= 0n && n <= MAX_BLOCK_NUMBER ? n : undefined;
}

/**
 * How a family's nodes write block references in their params. A param naming a block by number may be a
 * string (EVM: a hex quantity) or a JSON number (the Bitcoin family's heights): the cache and the engine read
 * either through `numberOf`.
 */
export interface BlockRefs {
  /**
   * The node's form of a block number as the family's header and block reads take it (NodeProtocol
   * `readHeader`, the index's fetch): EVM a hex quantity, which is its params' form too; the Bitcoin family
   * the height in decimal, its params writing heights as JSON numbers.
   */
  encode(n: bigint): string;
  /** The number a node-form reference (a param, or `encode`'s text) names; undefined for a tag, a hash... */
  numberOf(ref: unknown): bigint | undefined;
  /**
   * Whether its nodes name blocks by tag in params (`latest`, `safe`, ...): the engine resolves a tag to the
   * block it names. False (the Bitcoin family): a request's tag is never resolved, nor an omitted block read
   * as the latest.
   */
  readonly tags: boolean;
  /** A request's block reference in the node's form; undefined when it is none (readBlockRef). */
  normalize(value: unknown): string | undefined;
  /** Whether a node-form value (a param, an answer's member) is a block hash, in whatever case. */
  isHash(value: string): boolean;
  /** A block hash in the one form the service compares and keys by. */
  normalizeHash(hash: string): string;
}
