/**
 * Version differences detected, not assumed (dialect.ts), on answers of three nodes: litecoind 0.21 recorded
 * from the real node (fixtures/litecoind-0.21.json), Bitcoin Core 22+ and Dogecoin Core 1.14 written from
 * their documentation and source (fixtures/bitcoin-core-22.json, fixtures/dogecoin-1.14.json say where from).
 */
import { describe, expect, test } from "bun:test";
import { arrayElements, objectMembers } from "../../json";
import {
  dialectOf,
  getblockParams,
  outputAddresses,
  outputValue,
  refusesVerbosityLevel,
  satoshisOf,
  transactionFee,
} from "./dialect";
import core from "./fixtures/bitcoin-core-22.json";
import doge from "./fixtures/dogecoin-1.14.json";
import ltc from "./fixtures/litecoind-0.21.json";

/** The JSON texts of a member that is a list of objects (a block's `tx`, a transaction's `vout`). */
function elements(text: string, member: string): string[] {
  const span = objectMembers(text, 0).get(member)!;
  return arrayElements(text, span.start).map((s) => text.slice(s.start, s.end));
}
const member = (text: string, name: string) => {
  const span = objectMembers(text, 0).get(name)!;
  return text.slice(span.start, span.end);
};

describe("what each node's getnetworkinfo says", () => {
  test("litecoind 0.21: levels, `addresses`, no fees in blocks", () => {
    expect(dialectOf(ltc.answers.getnetworkinfo)).toEqual({
      client: "litecoin-core",
      version: [0, 21, 2, 1],
      blockVerbosity: "level",
      outputAddress: "addresses",
      blockFees: false,
    });
  });

  test("Bitcoin Core 22: levels, `address`, fees in blocks", () => {
    expect(dialectOf(core.answers["getnetworkinfo (22.0)"])).toEqual({
      client: "bitcoin-core",
      version: [22, 0, 0],
      blockVerbosity: "level",
      outputAddress: "address",
      blockFees: true,
    });
    // Before 22: the old form.
    const older = core.answers["getnetworkinfo (22.0)"].replace("/Satoshi:22.0.0/", "/Satoshi:0.21.1/");
    expect(dialectOf(older)).toMatchObject({
      outputAddress: "addresses",
      blockFees: false,
      version: [0, 21, 1],
    });
  });

  test("Dogecoin Core 1.14: a boolean verbosity only", () => {
    expect(dialectOf(doge.answers.getnetworkinfo)).toEqual({
      client: "dogecoin-core",
      version: [1, 14, 6],
      blockVerbosity: "boolean",
      outputAddress: "addresses",
      blockFees: false,
    });
  });

  test("a client it does not know: levels and the old address form (the readers take either)", () => {
    expect(dialectOf('{"version":1,"subversion":"/Other:3.0/"}')).toMatchObject({
      client: "unknown",
      blockVerbosity: "level",
    });
  });
});

describe("getblock in the form each node takes", () => {
  const hash = "00000000000000000002a7c4c1e48d76c5a37902165a270156b7a8d72728a054";
  test("levels where taken; booleans on Dogecoin Core 1.14, which cannot give transactions in one call", () => {
    const litecoin = dialectOf(ltc.answers.getnetworkinfo);
    const dogecoin = dialectOf(doge.answers.getnetworkinfo);
    expect(getblockParams(hash, "transactions", litecoin)).toEqual([hash, 2]);
    expect(getblockParams(hash, "ids", litecoin)).toEqual([hash, 1]);
    expect(getblockParams(hash, "hex", litecoin)).toEqual([hash, 0]);
    expect(getblockParams(hash, "ids", dogecoin)).toEqual([hash, true]);
    expect(getblockParams(hash, "hex", dogecoin)).toEqual([hash, false]);
    expect(getblockParams(hash, "transactions", dogecoin)).toBeUndefined();
  });

  test("detected from the answer too: Dogecoin Core 1.14's refusal of a level (dogecoin/dogecoin#1625)", () => {
    const error = JSON.parse(doge.answers["getblock with verbosity 2 (error)"]) as {
      code: number;
      message: string;
    };
    expect(refusesVerbosityLevel(error)).toBe(true);
    expect(refusesVerbosityLevel({ code: -5, message: "Block not found" })).toBe(false);
    expect(refusesVerbosityLevel({ code: -1, message: "Block not available (pruned data)" })).toBe(false);
  });

  test("litecoind 0.21 takes a boolean too (the same block's ids, recorded)", () => {
    const verbose = ltc.answers["getblock verbose true"];
    const detailed = ltc.answers["getblock verbosity 2"];
    expect(JSON.parse(verbose).tx).toEqual(JSON.parse(detailed).tx.map((t: { txid: string }) => t.txid));
  });
});

describe("an output's addresses and amounts, whichever form", () => {
  test("litecoind 0.21 (`addresses`): a sendmany's outputs of three kinds, exact amounts", () => {
    const tx = ltc.answers["getrawtransaction verbose"];
    const outputs = elements(tx, "vout");
    expect(outputs.map((o) => outputAddresses(member(o, "scriptPubKey")))).toEqual([
      ["QedmUDxLFsKThwnaMLFgrGH19eAS7xb3BK"],
      ["rltc1qtk9untwr2vw0754hxlk620pl9ugl8n0a8yl63r"],
      ["mp1uwJDtrfDQh6MNFxBph8g5dFc23cD7h2"],
      ["rltc1qfszftl2wam6x6f9e4zd538unhvr38k26zhe0rt"],
    ]);
    expect(outputs.map(outputValue)).toEqual([4_550_000_000n, 6_000_000_000n, 12_345_678n, 4_062_649_152n]);
    expect(transactionFee(tx)).toBeUndefined();
  });

  test("litecoind 0.21 blocks carry no fee at verbosity 2; the coinbase's OP_RETURN output has no address", () => {
    const [coinbase, spend] = elements(ltc.answers["getblock verbosity 2"], "tx");
    expect(transactionFee(coinbase!)).toBeUndefined();
    expect(transactionFee(spend!)).toBeUndefined();
    const outputs = elements(coinbase!, "vout");
    expect(outputAddresses(member(outputs[1]!, "scriptPubKey"))).toEqual([]);
  });

  test("Bitcoin Core 22 (`address`, `fee`): one address an output, the fee in satoshis", () => {
    const [coinbase, spend] = elements(core.answers["getblock verbosity 2 (22.0 order)"], "tx");
    const scripts = [...elements(coinbase!, "vout"), ...elements(spend!, "vout")].map((o) =>
      outputAddresses(member(o, "scriptPubKey")),
    );
    expect(scripts).toEqual([
      ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"],
      [],
      ["1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"],
      ["3P14159f73E4gFr7JterCCQh9QjiTjiZrG"],
    ]);
    expect(transactionFee(coinbase!)).toBeUndefined();
    expect(transactionFee(spend!)).toBe(12_345n);
    // 21 million coins in satoshis: past 2^50, exact.
    expect(outputValue(elements(spend!, "vout")[1]!)).toBe(2_100_000_000_000_000n);
  });

  test("Dogecoin Core 1.14 (`addresses`, several for a multisig output)", () => {
    const outputs = elements(doge.answers["getrawtransaction verbose"], "vout");
    expect(outputs.map((o) => outputAddresses(member(o, "scriptPubKey")))).toEqual([
      ["DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"],
      ["DEgDVFa2DoW1533dxeDVdTxQFhMzs1pMke", "DBXu2kgc3xtvCUWFcxFE3r9hEYgmuaaCyD"],
    ]);
    expect(outputs.map(outputValue)).toEqual([100_000_000_000n, 12_345_678n]);
  });

  test("amounts are read as text: no float rounding, anything else refused", () => {
    expect(satoshisOf("0.29")).toBe(29_000_000n);
    expect(Math.round(0.29 * 1e8)).toBe(29_000_000); // (the float happens to round back here ...)
    expect(0.29 * 1e8).not.toBe(29_000_000); // (... but is not exact)
    expect(satoshisOf("20999999.97690000")).toBe(2_099_999_997_690_000n);
    expect(satoshisOf("0.00000001")).toBe(1n);
    expect(satoshisOf("-1.5")).toBe(-150_000_000n);
    for (const bad of ["1e-8", "0.000000001", "", "1.", ".5", "0x10"])
      expect(() => satoshisOf(bad)).toThrow();
  });
});
