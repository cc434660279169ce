/**
 * A family's node method whose answer is the head's number (EVM: `eth_blockNumber`). The engine answers it
 * from the followed head (engine/engine.ts), so it and every `latest` name the same block.
 */
export interface HeadNumberMethod {
  readonly method: string;
  /** Its answer's JSON text for a head at `n`, as the family's nodes write it. */
  answer(n: bigint): string;
}
