/**
 * The EVM family's part of the index (indexer/indexFamily.ts): a block is its `eth_getBlockByNumber` with
 * transactions and its `eth_getBlockReceipts`, read through the engine (cached, batched; the engine
 * assembles the receipts where a node lacks the method) and decoded by decode.ts; its rows are written by
 * indexWriter.ts into the tables of sql/evm/; the metadata of the tokens a group names is read first.
 */
import { callText } from "../../engine/engineApi";
import { type IndexFamily, TornReadError } from "../../indexer/indexFamily";
import { type DecodedBlock, decodeBlock, type RawBlock, type RawReceipt } from "./decode";
import { createIndexWriter } from "./indexWriter";
import { createTokenLookups } from "./tokenLookups";
import { createTokenStore } from "./tokenStore";

/** A block as the node answered, with its receipts. */
export interface FetchedBlock {
  block: RawBlock;
  receipts: RawReceipt[];
}

export const evmIndex: IndexFamily<DecodedBlock, FetchedBlock> = {
  migrations: "evm",
  createIndex({ sql, engine, log }) {
    const lookups = createTokenLookups({ engine, tokens: createTokenStore(sql), log });
    return {
      writer: createIndexWriter(sql),
      async fetchBlock(ref) {
        const [blockText, receiptsText] = await Promise.all([
          callText(engine, "eth_getBlockByNumber", [ref, true]),
          callText(engine, "eth_getBlockReceipts", [ref]),
        ]);
        if (blockText === "null" || receiptsText === "null") return undefined;
        const block = JSON.parse(blockText) as RawBlock;
        const receipts = JSON.parse(receiptsText) as RawReceipt[];
        for (const receipt of receipts) {
          if (receipt.blockHash !== block.hash) {
            throw new TornReadError(`block ${ref} changed while it was read`);
          }
        }
        return { block, receipts };
      },
      decodeBlock: ({ block, receipts }) => decodeBlock(block, receipts),
      beforeWrite: (blocks) => lookups.readNew(new Set(blocks.flatMap((block) => block.tokens))),
    };
  },
};
