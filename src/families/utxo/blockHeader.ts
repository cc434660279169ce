/**
 * A Bitcoin-family block's header read from the node's JSON of it: `getblockheader <hash>` (verbose), or a
 * block at verbosity 1 or 2, which carry the same members: `hash`, `height`, `previousblockhash` (absent
 * on block 0), `time`.
 */
import type { BlockHeader } from "../../blockHeader";

/** The parent of block 0, as the node writes a null hash (the header's `hashPrevBlock`). */
export const NULL_HASH = "0".repeat(64);

/** A block hash as these nodes write it: 64 hex digits, no 0x. */
const HASH = /^[0-9a-fA-F]{64}$/;

/** The header of a block's JSON text; undefined for `null` or anything without height, hash and parent. */
export function parseUtxoHeader(raw: string): BlockHeader | undefined {
  if (raw === "null") return undefined;
  const block = JSON.parse(raw) as {
    hash?: unknown;
    height?: unknown;
    previousblockhash?: unknown;
    time?: unknown;
  } | null;
  const height = block?.height;
  if (typeof height !== "number" || !Number.isSafeInteger(height) || height < 0) return undefined;
  if (typeof block!.hash !== "string" || !HASH.test(block!.hash)) return undefined;
  // Only block 0 has no parent; any other block without one is not a header.
  const parent = block!.previousblockhash ?? (height === 0 ? NULL_HASH : undefined);
  if (typeof parent !== "string" || !HASH.test(parent)) return undefined;
  return {
    number: BigInt(height),
    // These nodes write hashes in lower case; kept so, as every hash the service compares.
    hash: block!.hash.toLowerCase(),
    parentHash: parent.toLowerCase(),
    timestamp: typeof block!.time === "number" && Number.isFinite(block!.time) ? block!.time : undefined,
    raw,
  };
}
