/** A block's place in the chain, with the node's JSON of it: what head sources (polls, pushes) give, whatever the family. */
export interface BlockHeader {
  number: bigint;
  /** Lower-case 0x-hex, as every hash the service compares. */
  hash: string;
  parentHash: string;
  /** Seconds since the epoch; undefined when the node's JSON lacks it. */
  timestamp?: number;
  /** The node's JSON of the block (a newHeads result, or the block with transaction hashes). */
  raw: string;
}
