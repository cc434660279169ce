/**
 * The raw-block decoder against recorded and public blocks: every recorded block whose raw bytes are known
 * decoded equals what decode.ts reads of the node's verbosity-2 answer of it (fixtures/litecoind-0.21-raw.json:
 * every script type, nonstandard scripts, MWEB peg-in, HogEx and extension blocks, recorded with their raw
 * hex; fixtures/litecoind-0.21-live.json: one block at four moments, recorded raw; fixtures/litecoind-0.21.json
 * and the MWEB block of fixtures/litecoind-0.21-mweb.json: raw bytes rebuilt from their answers' header
 * members and each transaction's `hex`, the node's serialization). Bitcoin Core 22's and Dogecoin Core
 * 1.14's fixtures are written by hand with illustrative transactions (no raw block has them): public raw
 * blocks stand for them (fixtures/public-raw-blocks.json: Bitcoin's genesis and segwit block 542,213,
 * Dogecoin's first AuxPoW blocks), checked against what their sources publish.
 */
import { describe, expect, test } from "bun:test";
import { addressNetworkOf, createUtxoAddressCodec } from "./addresses";
import { decodeUtxoBlock } from "./decode";
import { dialectOf } from "./dialect";
import { merkleBranch } from "./esplora/merkle";
import core from "./fixtures/bitcoin-core-22.json";
import doge from "./fixtures/dogecoin-1.14.json";
import ltc from "./fixtures/litecoind-0.21.json";
import live from "./fixtures/litecoind-0.21-live.json";
import mweb from "./fixtures/litecoind-0.21-mweb.json";
import recorded from "./fixtures/litecoind-0.21-raw.json";
import publicBlocks from "./fixtures/public-raw-blocks.json";
import { decodeRawBlock, RawBlockError, type RawBlockFormat, transactionsOfBlock } from "./rawBlock";
import { createScriptAddresser } from "./scriptAddress";

const litecoin: RawBlockFormat = {
  auxpow: false,
  addressOf: createScriptAddresser(
    addressNetworkOf("LTC", "regtest")!,
    dialectOf(ltc.answers.getnetworkinfo),
  ),
};
const bitcoin: RawBlockFormat = {
  auxpow: false,
  addressOf: createScriptAddresser(
    addressNetworkOf("BTC", "main")!,
    dialectOf(core.answers["getnetworkinfo (22.0)"]),
  ),
};
const dogecoin: RawBlockFormat = {
  auxpow: true,
  addressOf: createScriptAddresser(addressNetworkOf("DOGE", "main")!, dialectOf(doge.answers.getnetworkinfo)),
};

/** A block's raw hex rebuilt from its verbosity-2 answer: the header's members, then each transaction's hex. */
function rebuild(verbose: string): string {
  const b = JSON.parse(verbose);
  const u32 = (n: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32LE(n);
    return bytes.toString("hex");
  };
  if (b.tx.length >= 0xfd) throw new Error("a count this test does not write");
  return (
    u32(b.version) +
    reversed(b.previousblockhash) +
    reversed(b.merkleroot) +
    u32(b.time) +
    u32(Number.parseInt(b.bits, 16)) +
    u32(b.nonce) +
    b.tx.length.toString(16).padStart(2, "0") +
    b.tx.map((tx: { hex: string }) => tx.hex).join("")
  );
}

/** Hex as hashed to hex as written (txids, block hashes), and back. */
const reversed = (hex: string) => Buffer.from(hex, "hex").reverse().toString("hex");

/** A header answer with what the decoder reads of one (for blocks no node answered here). */
const headerOf = (hash: string, height: number, mediantime: number) =>
  JSON.stringify({ hash, height, mediantime });

/** The merkle root of a block's txids, as the node writes it. */
const merkleRoot = (txids: string[]) => merkleBranch(txids, 0).root;

describe("decodeRawBlock on litecoind 0.21's blocks", () => {
  test.each(recorded.blocks.map((b) => [b.height, b] as const))(
    "recorded block %d (raw, header and verbosity 2 from the node) decodes as its verbosity-2 answer",
    (_height, block) => {
      const decoded = decodeRawBlock(JSON.parse(block.raw), block.header, litecoin);
      expect(decoded).toEqual(decodeUtxoBlock({ block: block.verbose }));
    },
  );

  test("the recorded chain has every script type and MWEB's blocks (peg-in, HogEx, extension block)", () => {
    const types = new Set<string>();
    for (const block of recorded.blocks) {
      for (const tx of JSON.parse(block.verbose).tx)
        for (const out of tx.vout) types.add(out.scriptPubKey.type);
    }
    expect(types.size).toBe(12);
    const first = recorded.blocks.find((b) => JSON.parse(b.verbose).mweb !== undefined)!;
    const bytes = JSON.parse(first.raw).length / 2;
    // The extension block follows the HogEx: the block's size counts it, its weight does not.
    expect(bytes).toBe(JSON.parse(first.verbose).size);
    expect(decodeRawBlock(JSON.parse(first.raw), first.header, litecoin).size).toBe(bytes);
  });

  test.each(["atTip", "twoBlocksLater", "nextReplaced", "leftMainChain"] as const)(
    "the live fixture's block %s (getblock 0 and 2 recorded)",
    (moment) => {
      const answers = live[moment];
      const decoded = decodeRawBlock(JSON.parse(answers["getblock 0"]), answers["getblock 2"], litecoin);
      expect(decoded).toEqual(decodeUtxoBlock({ block: answers["getblock 2"] }));
    },
  );

  test("block 106 of fixtures/litecoind-0.21.json, rebuilt from its answer, is the same block", () => {
    const verbose = ltc.answers["getblock verbosity 2"];
    const hex = rebuild(verbose);
    expect(hex.length / 2).toBe(JSON.parse(verbose).size);
    expect(decodeRawBlock(hex, verbose, litecoin)).toEqual(decodeUtxoBlock({ block: verbose }));
  });

  test("MWEB block 432 of fixtures/litecoind-0.21-mweb.json rebuilt without its extension block", () => {
    // The answer lists the extension block as JSON (`mweb`), not its bytes: all but the size must agree.
    const verbose = mweb.answers["getblock verbosity 2"];
    const decoded = decodeRawBlock(rebuild(verbose), verbose, litecoin);
    expect({ ...decoded, size: JSON.parse(verbose).size }).toEqual(decodeUtxoBlock({ block: verbose }));
    expect(decoded.transactions[2]).toMatchObject({
      txid: "9377bc9b17e41353ee5b21aa13986f76eb3bab334e4155b72a2dbd4b7acb8300",
      size: 97,
      vsize: 94,
      weight: 376,
    });
  });
});

describe("decodeRawBlock on public blocks", () => {
  test("Bitcoin's genesis block, as Bitcoin Core 22 answers it at verbosity 2", () => {
    const g = publicBlocks.bitcoin.genesis;
    const block = decodeRawBlock(g.hex, headerOf(g.hash, 0, g.time), bitcoin);
    const script =
      "4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac";
    const output = { vout: 0, value: 5_000_000_000n, address: null, script, pays: false };
    expect(block).toEqual({
      number: 0n,
      hash: g.hash,
      parentHash: "0".repeat(64),
      headerTime: 1231006505n,
      medianTime: 1231006505n,
      size: 285,
      weight: 1140,
      transactions: [
        {
          // Its only transaction's id is the merkle root, which bitcoinjs-lib writes in the hashed order.
          txid: reversed(g.merkleRoot),
          position: 0,
          size: 204,
          vsize: 204,
          weight: 816,
          coinbase: true,
          inputs: [],
          outputs: [output],
          fee: 0n,
          fromAddresses: [],
        },
      ],
      transfers: [output],
      timestamp: 1231006505n,
    });
  });

  test("Bitcoin's segwit block 542,213: its hash, merkle root, size and weight as published", () => {
    const b = publicBlocks.bitcoin["542213"];
    const block = decodeRawBlock(b.hex, headerOf(b.hash, 542213, b.time), bitcoin);
    expect(merkleRoot(block.transactions.map((tx) => tx.txid))).toBe(reversed(b.merkleRoot));
    expect([block.size, block.weight]).toEqual([b.size, b.weight]);
    expect(block.weight).toBe(b.strippedSize * 3 + b.size);
    expect(block.transactions[0]!.coinbase).toBe(true);
    expect(block.transactions.slice(1).every((tx) => !tx.coinbase && tx.inputs.length > 0)).toBe(true);
  });

  test.each(["371337", "894863"] as const)(
    "Dogecoin's AuxPoW block %s: the proof skipped, its hash and merkle root as published",
    (height) => {
      const b = publicBlocks.dogecoin[height];
      const block = decodeRawBlock(b.hex, headerOf(b.hash, Number(height), 0), dogecoin);
      expect(block.hash).toBe(b.hash);
      const header = reversed(b.hex.slice(72, 136));
      expect(merkleRoot(block.transactions.map((tx) => tx.txid))).toBe(header);
      expect(block.size).toBe(b.hex.length / 2);
      // No witness in Dogecoin: weight is four times the size, AuxPoW included.
      expect(block.weight).toBe(block.size * 4);
      const codec = createUtxoAddressCodec(addressNetworkOf("DOGE", "main")!);
      for (const out of block.transfers)
        if (out.address !== null) expect(codec.canonical(out.address)).toBe(out.address);
      expect(block.transfers.some((out) => out.address?.startsWith("D"))).toBe(true);
      // Read without the AuxPoW, the same bytes are no block.
      expect(() => decodeRawBlock(b.hex, headerOf(b.hash, 0, 0), { ...dogecoin, auxpow: false })).toThrow(
        RawBlockError,
      );
    },
  );
});

describe("decodeRawBlock refuses what is not the block", () => {
  const block = recorded.blocks[1]!;
  const hex = JSON.parse(block.raw) as string;

  test("bytes cut short, bytes after the transactions, or another block's header", () => {
    expect(() => decodeRawBlock(hex.slice(0, -2), block.header, litecoin)).toThrow(RawBlockError);
    expect(() => decodeRawBlock(`${hex}00`, block.header, litecoin)).toThrow(RawBlockError);
    expect(() => decodeRawBlock(hex, recorded.blocks[0]!.header, litecoin)).toThrow(/header/);
    expect(() => decodeRawBlock("zz", block.header, litecoin)).toThrow(RawBlockError);
  });
});

describe("transactionsOfBlock: a page's transactions cut from their block", () => {
  test.each(recorded.blocks.map((b) => [b.height, b] as const))(
    "recorded block %d: each transaction's bytes as the node serializes it (its verbosity-2 `hex`), found by txid or by position",
    (_height, block) => {
      const raw = JSON.parse(block.raw) as string;
      const txs = JSON.parse(block.verbose).tx as { txid: string; hex: string }[];
      const byTxid = new Map(txs.map((tx) => [tx.txid, undefined]));
      expect([...transactionsOfBlock(raw, litecoin, byTxid)]).toEqual(txs.map((tx) => [tx.txid, tx.hex]));
      const byPosition = new Map(txs.map((tx, position) => [tx.txid, position]));
      expect([...transactionsOfBlock(raw, litecoin, byPosition)]).toEqual(txs.map((tx) => [tx.txid, tx.hex]));
      // Some of them, and a txid the block does not hold: those it holds only.
      const last = txs.at(-1)!;
      const some = new Map([
        [last.txid, undefined],
        ["00".repeat(32), undefined],
      ]);
      expect(transactionsOfBlock(raw, litecoin, some)).toEqual(new Map([[last.txid, last.hex]]));
      // By position, what lies there (the caller checks its txid as it decodes it).
      expect(transactionsOfBlock(raw, litecoin, new Map([[last.txid, txs.length - 1]]))).toEqual(
        new Map([[last.txid, last.hex]]),
      );
    },
  );

  test("Dogecoin's AuxPoW block 371337: the proof skipped, every transaction found by its txid", () => {
    const b = publicBlocks.dogecoin["371337"];
    const decoded = decodeRawBlock(b.hex, headerOf(b.hash, 371_337, 0), dogecoin);
    const txids = decoded.transactions.map((tx) => tx.txid);
    const found = transactionsOfBlock(b.hex, dogecoin, new Map(txids.map((txid) => [txid, undefined])));
    expect([...found.keys()]).toEqual(txids);
    // The transactions' bytes laid end to end are the block's after its header, AuxPoW and count.
    expect(b.hex.endsWith([...found.values()].join(""))).toBe(true);
  });
});
