/**
 * What the node reads as a transaction, on recorded transactions (fixtures/litecoind-0.21.json: a segwit
 * sendmany and a coinbase; fixtures/litecoind-0.21-mweb.json: an MWEB transaction, flag 8) and texts made
 * from them. Each case was sent to Debian's litecoind 0.21.2.1 in regtest as `sendrawtransaction`: those
 * read as transactions here it refused for what they hold (-26: non-final, coinbase, hogex, tx-size-small,
 * bad-txns-vin-empty), the others with TX_DECODE_FAILED (-22).
 */
import { expect, test } from "bun:test";
import ltc from "../fixtures/litecoind-0.21.json";
import mweb from "../fixtures/litecoind-0.21-mweb.json";
import { readsAsTransaction } from "./rawTransaction";

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
