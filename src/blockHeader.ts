/** A block's place in the chain, with the node's JSON of it: what head sources (polls, pushes) give, whatever the family. */
export interface BlockHeader {
  number: bigint;
  /** In the family's canonical form (lower-case hex; EVM with a 0x prefix, the Bitcoin family without). */
  hash: string;
  parentHash: string;
  /** Seconds since the epoch; undefined when the node's JSON lacks it. */
  timestamp?: number;
  /** The node's JSON of the block (a newHeads result, or the block with transaction hashes). */
  raw: string;
}

/** A hash's hex digits, lower-case, without the 0x some families write: for names built from it. */
export const hashDigits = (hash: string): string =>
  (hash.startsWith("0x") ? hash.slice(2) : hash).toLowerCase();
