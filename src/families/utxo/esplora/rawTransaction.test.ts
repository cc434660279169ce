/**
 * What the node reads as a transaction, on recorded transactions (fixtures/litecoind-0.21.json: a segwit
 * sendmany and a coinbase; fixtures/litecoind-0.21-mweb.json: an MWEB transaction, flag 8) and texts made
 * from them. Each case was sent to Debian's litecoind 0.21.2.1 in regtest as `sendrawtransaction`: those
 * read as transactions here it refused for what they hold (-26: non-final, coinbase, hogex, tx-size-small,
 * bad-txns-vin-empty), the others with TX_DECODE_FAILED (-22).
 */
import { describe, expect, test } from "bun:test";
import { addressNetworkOf } from "../addresses";
import { addressOf as addressOfNode } from "../decode";
import { dialectOf } from "../dialect";
import ltc from "../fixtures/litecoind-0.21.json";
import mweb from "../fixtures/litecoind-0.21-mweb.json";
import recorded from "../fixtures/litecoind-0.21-raw.json";
import { createScriptAddresser } from "../scriptAddress";
import { type NodeTransaction, parseNode } from "./esploraJson";
import { decodeTransaction, RawTransactionError, readsAsTransaction } from "./rawTransaction";

const transactions = (answer: string) => (JSON.parse(answer).tx as { hex: string }[]).map((t) => t.hex);
const [coinbase, segwit] = transactions(ltc.answers["getblock verbosity 2"]) as [string, string];
const withMweb = transactions(mweb.answers["getblock verbosity 2"]).find((h) => h.slice(8, 12) === "0008")!;
/** `createrawtransaction`'s answer for one input and an OP_RETURN output: no witness serialization. */
const LEGACY =
  "0200000001aa000000000000000000000000000000000000000000000000000055f8f630710100000000ffffffff01000000000000" +
  "0000076a05636861696e00000000";
/** The text with its byte at `index` (0-based) replaced by `replacement` (hex). */
const withByte = (hex: string, index: number, replacement: string) =>
  hex.slice(0, 2 * index) + replacement + hex.slice(2 * index + 2);

test("transactions the node reads: witness and legacy serializations, a coinbase, MWEB left to the node", () => {
  expect(segwit.slice(8, 12)).toBe("0001");
  for (const hex of [segwit, coinbase, withMweb, LEGACY, segwit.toUpperCase()]) {
    expect([hex, readsAsTransaction(hex)]).toEqual([hex, true]);
  }
  // No input and no output: an empty input list, flags 0 (no marker), the lock time. The node reads it, then
  // refuses it as bad-txns-vin-empty.
  expect(readsAsTransaction("01000000000000000000")).toBe(true);
});

test("texts the node cannot read as a transaction", () => {
  const cases: Record<string, string> = {
    empty: "",
    "not hex": "zz",
    "a snowman": "☃",
    "odd digits": "0",
    "short of a version": "00",
    "an empty input list and nothing after": "0100000000",
    "a byte past the end": `${segwit}00`,
    "a byte short": segwit.slice(0, -2),
    "an unknown flag": withByte(segwit, 5, "02"),
    "an unknown flag beside the witness's": withByte(segwit, 5, "03"),
    "an unknown flag beside MWEB's": withByte(withMweb, 5, "0a"),
    // The witness flag, every witness empty: the node's "Superfluous witness record".
    "an empty witness": `${LEGACY.slice(0, 8)}0001${LEGACY.slice(8, -8)}00${LEGACY.slice(-8)}`,
    // One input counted in three bytes (fd 0100): not the canonical one byte.
    "a count not canonical": `${LEGACY.slice(0, 8)}fd0100${LEGACY.slice(10)}`,
    "a count past the bytes": `${LEGACY.slice(0, 8)}fe00000002${LEGACY.slice(10)}`,
  };
  for (const [name, hex] of Object.entries(cases))
    expect([name, readsAsTransaction(hex)]).toEqual([name, false]);
});

/**
 * decodeTransaction against the node's own verbose answers of the same bytes: every transaction of the
 * recorded blocks (fixtures/litecoind-0.21-raw.json: every script type, nonstandard scripts, MWEB peg-ins
 * and HogEx; fixtures/litecoind-0.21.json, fixtures/litecoind-0.21-mweb.json), in every member Esplora's
 * JSON reads (esploraJson.ts).
 */
describe("decodeTransaction equals the node's verbose answer", () => {
  const addressOf = createScriptAddresser(
    addressNetworkOf("LTC", "regtest")!,
    dialectOf(ltc.answers.getnetworkinfo),
  );
  /** What esploraJson.ts reads of a node's transaction, amounts as satoshis. */
  const members = (tx: NodeTransaction) => ({
    txid: tx.txid,
    version: tx.version,
    locktime: tx.locktime,
    size: tx.size,
    vsize: tx.vsize,
    weight: tx.weight,
    vin: tx.vin.map((i) =>
      i.coinbase === undefined
        ? {
            txid: i.txid,
            vout: i.vout,
            scriptSig: i.scriptSig?.hex,
            witness: i.txinwitness,
            sequence: i.sequence,
          }
        : { coinbase: i.coinbase, witness: i.txinwitness, sequence: i.sequence },
    ),
    vout: tx.vout.map((o) => ({
      value: o.value,
      n: o.n,
      script: o.scriptPubKey.hex,
      address: addressOfNode(o.scriptPubKey),
    })),
    hex: tx.hex,
  });
  const blocks = [
    ...recorded.blocks.map((b) => [`recorded block ${b.height}`, b.verbose] as const),
    ["fixtures/litecoind-0.21.json", ltc.answers["getblock verbosity 2"]] as const,
    ["fixtures/litecoind-0.21-mweb.json", mweb.answers["getblock verbosity 2"]] as const,
  ];
  test.each(blocks)("%s", (_name, verbose) => {
    const txs = parseNode<{ tx: NodeTransaction[] }>(verbose).tx;
    expect(txs.length).toBeGreaterThan(0);
    for (const tx of txs) expect(members(decodeTransaction(tx.hex!, addressOf))).toEqual(members(tx));
  });
  test("the recorded blocks hold what the decoder must read", () => {
    const all = blocks.flatMap(([, verbose]) => parseNode<{ tx: NodeTransaction[] }>(verbose).tx);
    expect(all.some((t) => t.vin[0]!.coinbase !== undefined && t.vin[0]!.txinwitness)).toBe(true);
    expect(all.some((t) => t.hex!.slice(8, 12) === "0001")).toBe(true);
    expect(all.some((t) => t.hex!.slice(8, 12) === "0008")).toBe(true);
    expect(all.some((t) => t.vout.some((o) => addressOfNode(o.scriptPubKey) === null))).toBe(true);
  });
  test("bytes that are no transaction of a block are refused", () => {
    const cases: Record<string, string> = {
      "not hex": "zz",
      "a byte short": segwit.slice(0, -2),
      "a byte past the end": `${segwit}00`,
      "an unknown flag": withByte(segwit, 5, "02"),
      "no inputs": "01000000000000000000",
    };
    for (const [name, hex] of Object.entries(cases))
      expect(() => decodeTransaction(hex, addressOf), name).toThrow(RawTransactionError);
  });
});
