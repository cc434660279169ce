/**
 * How Bitcoin-family nodes write block references (BlockRefs, blockRef.ts at the root of src/): a height is a
 * JSON number in their params (`getblockhash 12`); a hash is 64 hex digits with no 0x, which they write in
 * lower case. They take no tags: `latest` & co. are never resolved for them (the schemas of the family's
 * method rows refuse them). `encode` gives a height as decimal text, the form the family's header reads
 * take (nodeProtocol.ts `readHeader`).
 */
import { type BlockRefs, readBlockRef } from "../../blockRef";

/** A height as `encode` writes it: decimal, no leading zeros, within 2^53. */
const HEIGHT_TEXT = /^(0|[1-9][0-9]{0,15})$/;
const BLOCK_HASH = /^[0-9a-fA-F]{64}$/;

/** The height a param (a JSON number) or `encode`'s text names. */
function heightOf(ref: unknown): bigint | undefined {
  if (typeof ref === "number") return Number.isSafeInteger(ref) && ref >= 0 ? BigInt(ref) : undefined;
  return typeof ref === "string" && HEIGHT_TEXT.test(ref) ? BigInt(ref) : undefined;
}

export const utxoBlockRefs: BlockRefs = {
  encode: (n) => n.toString(),
  numberOf: heightOf,
  tags: false,
  normalize(value) {
    const ref = readBlockRef(value);
    return typeof ref === "bigint" ? ref.toString() : undefined;
  },
  isHash: (value) => BLOCK_HASH.test(value),
  // These nodes write hashes in lower case and read either.
  normalizeHash: (hash) => hash.toLowerCase(),
};
