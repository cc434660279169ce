/** A block's place in the chain, with the node's JSON of it: what head sources (polls, newHeads) give. */
import { parseQuantity } from "./blockRef";

export interface BlockHeader {
  number: bigint;
  /** Lower-case 0x-hex, as every hash the service compares. */
  hash: string;
  parentHash: string;
  /** The node's JSON of the block (a newHeads result, or the block with transaction hashes). */
  raw: string;
}

/** The header of a block's JSON text; undefined for `null` or anything without number, hash and parent. */
export function parseHeader(raw: string): BlockHeader | undefined {
  if (raw === "null") return undefined;
  const block = JSON.parse(raw) as { number?: unknown; hash?: unknown; parentHash?: unknown } | null;
  if (
    typeof block?.number !== "string" ||
    typeof block.hash !== "string" ||
    typeof block.parentHash !== "string"
  ) {
    return undefined;
  }
  return {
    number: parseQuantity(block.number),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    raw,
  };
}
