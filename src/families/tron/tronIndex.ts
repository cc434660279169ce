/**
 * The TRON family's part of the index (indexer/indexFamily.ts): a block is `/wallet/getblock` with its
 * transactions (`detail`) and `/wallet/gettransactioninfobyblocknum`, read through the engine (cached by
 * httpApi.ts's rules), decoded by decode.ts, written by indexWriter.ts into the tables of sql/tron/; the
 * metadata of the TRC-20 contracts and TRC-10 assets a group names is read first (tokenReads.ts).
 */
import { callText } from "../../engine/engineApi";
import { type IndexFamily, TornReadError } from "../../indexer/indexFamily";
import {
  type DecodedTronBlock,
  decodeTronBlock,
  infosMatch,
  readExact,
  type TronBlockJson,
  type TronInfoJson,
} from "./decode";
import { isNodeRefusal, pathMethod } from "./httpApi";
import { createTronIndexWriter } from "./indexWriter";
import { createTronTokenLookups } from "./tokenReads";

/** A block as the node answered, with its transactions' infos. */
export interface FetchedTronBlock {
  block: TronBlockJson;
  infos: TronInfoJson[];
}

const GET_BLOCK = pathMethod("wallet", "getblock");
const INFOS = pathMethod("wallet", "gettransactioninfobyblocknum");

export const tronIndex: IndexFamily<DecodedTronBlock, FetchedTronBlock> = {
  migrations: "tron",
  createIndex({ sql, engine, log }) {
    const lookups = createTronTokenLookups({ sql, engine, log });
    return {
      writer: createTronIndexWriter(sql),
      async fetchBlock(ref) {
        const n = BigInt(ref);
        const [blockText, infosText] = await Promise.all([
          // The members in the order the engine keys bodies by (sorted).
          callText(engine, GET_BLOCK, [{ detail: true, id_or_num: n.toString() }]),
          callText(engine, INFOS, [{ num: Number(n) }]),
        ]);
        if (isNodeRefusal(blockText)) return undefined;
        const block = readExact<TronBlockJson>(blockText);
        // java-tron answers `{}` for a block without transactions (and for one it has not got).
        const infos = isNodeRefusal(infosText) ? [] : readExact<TronInfoJson[]>(infosText);
        const mismatch = infosMatch(block, infos);
        if (mismatch !== undefined) {
          if (isNodeRefusal(infosText)) return undefined;
          throw new TornReadError(`block ${n} changed while it was read: ${mismatch}`);
        }
        return { block, infos };
      },
      decodeBlock: ({ block, infos }) => decodeTronBlock(block, infos),
      beforeWrite: (blocks) =>
        lookups.readNew(new Set(blocks.flatMap((b) => b.tokens)), new Set(blocks.flatMap((b) => b.assets))),
    };
  },
};
