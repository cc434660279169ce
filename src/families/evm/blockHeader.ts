/** An EVM block's header read from the node's JSON of it (a newHeads result, or a block). */
import type { BlockHeader } from "../../blockHeader";
import { parseQuantity } from "./blockRef";

/** A timestamp quantity as a number: the status figures need no more, and a bad one must not lose the header. */
function secondsOf(value: unknown): number | undefined {
  const seconds = typeof value === "string" && value.startsWith("0x") ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** The header of a block's JSON text; undefined for `null` or anything without number, hash and parent. */
export function parseHeader(raw: string): BlockHeader | undefined {
  if (raw === "null") return undefined;
  const block = JSON.parse(raw) as {
    number?: unknown;
    hash?: unknown;
    parentHash?: unknown;
    timestamp?: unknown;
  } | null;
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
    timestamp: secondsOf(block.timestamp),
    raw,
  };
}
