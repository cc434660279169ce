/**
 * The Bitcoin family's part of the index (indexer/indexFamily.ts): a block is `getblockhash <height>` then
 * its raw serialization, `getblock <hash> 0` (Dogecoin Core 1.14: `getblock <hash> false`, dialect.ts), with
 * its header's answer `getblockheader <hash>` (its height and median time past), through the engine (kept
 * as every answer by hash is), decoded in the service by rawBlock.ts: the node serves raw blocks several
 * times faster than it writes them as JSON, and the service reads bytes faster than it parses JSON. A node
 * whose client the service does not recognize (dialect.ts `unknown`) is read as before, at verbosity 2 (or
 * verbosity 1 and each transaction's `getrawtransaction <txid> true` where it takes a boolean only), decoded
 * by decode.ts: its answer then names the addresses, whose rules for it are not known. Before a group is
 * written, its inputs' previous outputs are resolved (prevouts.ts) and each block gets its running maximum
 * of header times; its rows are written by indexWriter.ts into the tables of sql/utxo/.
 */
import type { ChainInfo } from "../../blockchain";
import type { Sql } from "../../db/database";
import { callText, type Engine } from "../../engine/engineApi";
import type { IndexFamily } from "../../indexer/indexFamily";
import { decodeUtxoBlock, type FetchedUtxoBlock, settleBlock, type UtxoBlock } from "./decode";
import { getblockParams, type NodeDialect } from "./dialect";
import { createUtxoIndexWriter, storedTimestamp } from "./indexWriter";
import { isJsonString } from "./members";
import { createNodeFormat } from "./nodeFormat";
import { hashOf } from "./nodeProtocol";
import { createPrevouts } from "./prevouts";
import { decodeRawBlock, RawBlockError, type RawBlockFormat } from "./rawBlock";

/** A block as read: raw, with its header's answer and how to read it; or as the node's JSON (decode.ts). */
export type UtxoBlockRead = { raw: string; header: string; format: RawBlockFormat } | FetchedUtxoBlock;

/**
 * Headers read below an index that starts past block 0, for the running maximum of header times its first
 * block starts from. A block's time must exceed the median of the eleven before it, so a time set far
 * ahead is overtaken within hours of blocks: two weeks of Bitcoin's blocks leave a wide margin.
 */
const TIME_LOOKBACK_BLOCKS = 2_016n;
/** Headers of that lookback read at once (each a getblockhash and a getblockheader through the engine). */
const HEADERS_AT_ONCE = 64n;

/** The hash of the node's block at a height (decimal text), lower-case; undefined where it has none yet. */
async function hashAt(engine: Engine, ref: string): Promise<string | undefined> {
  return (await hashOf(ref, (method, params) => callText(engine, method, params)))?.toLowerCase();
}

/** A block's JSON text with its transactions, in the form the node takes. */
async function readBlock(engine: Engine, hash: string, dialect: NodeDialect): Promise<FetchedUtxoBlock> {
  const params = getblockParams(hash, "transactions", dialect);
  if (params) return { block: await callText(engine, "getblock", params) };
  const block = await callText(engine, "getblock", getblockParams(hash, "ids", dialect)!);
  const txids = (JSON.parse(block) as { tx: string[] }).tx;
  const transactions = await Promise.all(
    txids.map((txid) => callText(engine, "getrawtransaction", [txid, true])),
  );
  return { block, transactions };
}

/** A raw block (hex) and its header's answer (JSON text), read at once. */
async function readRawBlock(engine: Engine, hash: string, dialect: NodeDialect, format: RawBlockFormat) {
  const [hex, header] = await Promise.all([
    callText(engine, "getblock", getblockParams(hash, "hex", dialect)!),
    callText(engine, "getblockheader", [hash]),
  ]);
  if (!isJsonString(hex)) throw new RawBlockError(`getblock ${hash} 0 answered no hex`);
  // Hex has no escapes: the text between the quotes is the string.
  return { raw: hex.slice(hex.indexOf('"') + 1, hex.lastIndexOf('"')), header, format };
}

/** What the index keeps of a block read. */
function decodeRead(read: UtxoBlockRead): UtxoBlock {
  return "raw" in read ? decodeRawBlock(read.raw, read.header, read.format) : decodeUtxoBlock(read);
}

/** The running maximum of header times of the blocks below `number` (read from the node's headers). */
async function timeBelow(engine: Engine, number: bigint): Promise<bigint> {
  const from = number > TIME_LOOKBACK_BLOCKS ? number - TIME_LOOKBACK_BLOCKS : 0n;
  let max = 0n;
  for (let at = from; at < number; at += HEADERS_AT_ONCE) {
    const heights: bigint[] = [];
    for (let n = at; n < number && n < at + HEADERS_AT_ONCE; n++) heights.push(n);
    const times = await Promise.all(
      heights.map(async (n) => {
        const hash = await hashAt(engine, n.toString());
        if (hash === undefined) throw new Error(`the node has no block ${n} below the index's first`);
        return BigInt(
          (JSON.parse(await callText(engine, "getblockheader", [hash])) as { time: number }).time,
        );
      }),
    );
    for (const time of times) if (time > max) max = time;
  }
  return max;
}

export function createUtxoIndex(options: { sql: Sql; engine: Engine; chain: ChainInfo }) {
  const { sql, engine, chain } = options;
  const writer = createUtxoIndexWriter(sql);
  const prevouts = createPrevouts({ sql, engine });
  const nodeDialect = createNodeFormat(engine, chain);
  let firstBlock: bigint | undefined;

  /** Each block's running maximum of header times, from the stored block below the group. */
  async function stamp(blocks: readonly UtxoBlock[]): Promise<void> {
    const first = blocks[0]!.number;
    let max =
      first === 0n ? 0n : ((await storedTimestamp(sql, first - 1n)) ?? (await timeBelow(engine, first)));
    for (const block of blocks) {
      if (block.headerTime > max) max = block.headerTime;
      block.timestamp = max;
    }
  }

  return {
    writer,
    async fetchBlock(ref: string): Promise<UtxoBlockRead | undefined> {
      const hash = await hashAt(engine, ref);
      if (hash === undefined) return undefined;
      const node = await nodeDialect();
      return node.format
        ? readRawBlock(engine, hash, node.dialect, node.format)
        : readBlock(engine, hash, node.dialect);
    },
    decodeBlock: decodeRead,
    async beforeWrite(blocks: readonly UtxoBlock[]): Promise<void> {
      if (blocks.length === 0) return;
      firstBlock ??= (await writer.state())?.firstBlock ?? blocks[0]!.number;
      await prevouts.resolve(blocks, firstBlock);
      for (const block of blocks) settleBlock(block);
      await stamp(blocks);
    },
  };
}

export const utxoIndex: IndexFamily<UtxoBlock, UtxoBlockRead> = {
  migrations: "utxo",
  createIndex: ({ sql, engine, chain }) => createUtxoIndex({ sql, engine, chain }),
};
