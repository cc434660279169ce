/**
 * How java-tron writes block references. Its JSON-RPC takes EVM forms (a minimal 0x-hex quantity, or a tag);
 * its HTTP API takes block numbers as JSON integers in bodies (`{"num": 5}`). Block hashes: the JSON-RPC
 * writes `0x` + the block id, the HTTP API the bare 64 hex digits of `blockID`; the service compares and
 * keys by the JSON-RPC form (lower case, with `0x`), whichever face answered.
 */
import type { BlockRefs } from "../../blockRef";
import { isBlockNumberHex, quantity, toNodeBlockRef } from "../evm/blockRef";

const BLOCK_ID = /^(0x)?[0-9a-fA-F]{64}$/;

/** A block id or hash, either face's form, as the service keeps it: `0x` and 64 lower-case hex digits. */
export const tronHash = (hash: string): string => (hash.startsWith("0x") ? hash : `0x${hash}`).toLowerCase();

/** The number a block id starts with: java-tron's block ids are the number (8 bytes) then a hash's tail. */
export const numberOfBlockId = (id: string): bigint => BigInt(`0x${tronHash(id).slice(2, 18)}`);

export const tronBlockRefs: BlockRefs = {
  encode: quantity,
  numberOf(ref) {
    if (typeof ref === "string") return isBlockNumberHex(ref) ? BigInt(ref) : undefined;
    return typeof ref === "number" && Number.isSafeInteger(ref) && ref >= 0 ? BigInt(ref) : undefined;
  },
  tags: true,
  normalize: toNodeBlockRef,
  isHash: (value) => BLOCK_ID.test(value),
  normalizeHash: tronHash,
};
