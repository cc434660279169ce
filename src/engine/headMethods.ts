/**
 * A family's node methods whose answer is the head itself (EVM: `eth_blockNumber`; the Bitcoin family:
 * `getblockcount`, `getbestblockhash`). The engine answers them from the followed head (engine/engine.ts), so
 * they and every `latest` name the same block.
 */
export interface HeadMethod {
  readonly method: string;
  /** Its answer's JSON text for the head block, as the family's nodes write it. */
  answer(head: { number: bigint; hash: string }): string;
}
