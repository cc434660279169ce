/**
 * Block numbers in requests (docs/interface.md §3): an integer >= 0, a 0x-hex string, a decimal string, or one of
 * the five tags in any case. All of them become the node's form: a minimal 0x-hex quantity or a lower-case tag.
 */

export const BLOCK_TAGS = ["latest", "earliest", "pending", "safe", "finalized"] as const;

/** Nodes keep block numbers in 64 bits. */
export const MAX_BLOCK_NUMBER = 2n ** 64n - 1n;

const TAG_SET: ReadonlySet<string> = new Set(BLOCK_TAGS);
/** Already the node's form: lower-case hex without leading zeros, at most 16 digits. */
const CANONICAL_HEX = /^0x(?:0|[1-9a-f][0-9a-f]{0,15})$/;
const HEX = /^0x[0-9a-f]+$/i;
const NODE_BLOCK_NUMBER = /^0x[0-9a-f]{1,16}$/;
const DECIMAL = /^[0-9]+$/;

/** A block number in the node's form (tags already resolved): 0x and at most 16 lower-case hex digits. */
export function isBlockNumberHex(value: string): boolean {
  return NODE_BLOCK_NUMBER.test(value);
}

export function quantity(n: number | bigint): string {
  return `0x${n.toString(16)}`;
}

/** A 0x-hex quantity as a bigint; throws on anything else. */
export function parseQuantity(hex: string): bigint {
  if (!HEX.test(hex)) throw new SyntaxError(`not a hex quantity: ${hex}`);
  return BigInt(hex);
}

/** The node's form of a block number or tag, or undefined when the value is neither. */
export function toNodeBlockRef(value: unknown): string | undefined {
  let n: bigint;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) return undefined;
    n = BigInt(value);
  } else if (typeof value === "bigint") {
    n = value;
  } else if (typeof value === "string") {
    if (CANONICAL_HEX.test(value)) return value;
    const lower = value.toLowerCase();
    if (TAG_SET.has(lower)) return lower;
    // At most 16 hex digits (64 bits), so a 32-byte hash is never read as a block number; the caps also
    // keep BigInt() from parsing megabytes of digits before the range check.
    if (HEX.test(value) && value.length <= 18) n = BigInt(value);
    else if (DECIMAL.test(value) && value.length <= 40) n = BigInt(value);
    else return undefined;
  } else {
    return undefined;
  }
  return n >= 0n && n <= MAX_BLOCK_NUMBER ? quantity(n) : undefined;
}
