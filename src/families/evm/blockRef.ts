/**
 * How EVM nodes write block references: a minimal 0x-hex quantity, or a lower-case tag (the request forms
 * are read by blockRef.ts at the root of src/).
 */
import { type BlockRefs, readBlockRef } from "../../blockRef";

/** Already the node's form: lower-case hex without leading zeros, at most 16 digits. */
const CANONICAL_HEX = /^0x(?:0|[1-9a-f][0-9a-f]{0,15})$/;
const HEX = /^0x[0-9a-f]+$/i;
const NODE_BLOCK_NUMBER = /^0x[0-9a-f]{1,16}$/;
/** 32 bytes of hex, in any case: nodes differ, and so do callers. */
const BLOCK_HASH = /^0x[0-9a-fA-F]{64}$/;

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
  // The form a node would write is taken as it is: most requests send it.
  if (typeof value === "string" && CANONICAL_HEX.test(value)) return value;
  const ref = readBlockRef(value);
  return typeof ref === "bigint" ? quantity(ref) : ref;
}

export const evmBlockRefs: BlockRefs = {
  encode: quantity,
  numberOf: (ref) => (typeof ref === "string" && isBlockNumberHex(ref) ? BigInt(ref) : undefined),
  tags: true,
  normalize: toNodeBlockRef,
  isHash: (value) => BLOCK_HASH.test(value),
  // Lower case, as every hash the service compares (blockHeader.ts lower-cases the headers' too).
  normalizeHash: (hash) => hash.toLowerCase(),
};
