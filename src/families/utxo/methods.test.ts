/**
 * The allow-list (methods.ts): the methods of the design's §12, positional or named params (Bitcoin Core's
 * names, mapped to positions: the same call, the same params), and nothing else.
 */
import { describe, expect, test } from "bun:test";
import { InvalidParamsError } from "../../errors";
import type { FamilyOperationDeps } from "../../operations/familyOperations";
import type { Operation } from "../../operations/operation";
import { UTXO_METHODS, utxoMethods, utxoOperations } from "./methods";

const HASH = "6e18db616d887c46b42a0addadc27311cc175c19fed3204ab55238b9aa2b73f7";
const TXID = "7072fa4b00dd181f81f0e9480bc5409a6630d2e37348fb9460ebfb0cf9040963";

const operations = utxoOperations({ engine: {}, head: {} } as FamilyOperationDeps).node;
const op = (method: string) => operations.find((o) => o.method === method) as Operation;

test("the allow-list is §12's, in its order; wallet, mining, control and network admin have no row", () => {
  expect(UTXO_METHODS).toEqual([
    "getblockchaininfo",
    "getbestblockhash",
    "getblockcount",
    "getblockhash",
    "getblock",
    "getblockheader",
    "getblockstats",
    "getchaintips",
    "getdifficulty",
    "getrawtransaction",
    "gettxout",
    "getblockfilter",
    "getrawmempool",
    "getmempoolinfo",
    "getmempoolentry",
    "estimatesmartfee",
    "decoderawtransaction",
    "decodescript",
    "validateaddress",
    "sendrawtransaction",
    "testmempoolaccept",
  ]);
  for (const refused of [
    "generatetoaddress",
    "sendtoaddress",
    "stop",
    "addnode",
    "getnewaddress",
    "setban",
  ]) {
    expect(operations.find((o) => o.method === refused)).toBeUndefined();
    expect(utxoMethods.policy(refused)).toBeUndefined();
  }
  expect(operations.every((o) => o.rest === undefined && o.byName === true)).toBe(true);
});

describe("params by name", () => {
  test("mapped to Bitcoin Core's positions: the same params as by position", () => {
    const getblock = op("getblock");
    expect(getblock.prepare(getblock.fromNamed({ blockhash: HASH, verbosity: 2 }))).toEqual(
      getblock.prepare([HASH, 2]),
    );
    expect(getblock.prepare(getblock.fromNamed({ verbosity: 2, blockhash: HASH }))).toEqual([HASH, 2]);
    // The older name of the same param (Dogecoin Core 1.14, Bitcoin Core before 0.15).
    expect(getblock.fromNamed({ blockhash: HASH, verbose: true })).toEqual([HASH, true]);
    expect(getblock.fromNamed({ blockhash: HASH })).toEqual([HASH]);
  });

  test("a position left out before a named one is null, the node's default (as Bitcoin Core fills it)", () => {
    const getrawtransaction = op("getrawtransaction");
    const params = getrawtransaction.fromNamed({ txid: TXID, blockhash: HASH });
    expect(params).toEqual([TXID, null, HASH]);
    expect(getrawtransaction.prepare(params)).toEqual([TXID, null, HASH]);
  });

  test("hashes in any case are one call (lower case, as the nodes write them)", () => {
    const getblock = op("getblock");
    expect(getblock.prepare(getblock.fromNamed({ blockhash: HASH.toUpperCase(), verbosity: 1 }))).toEqual([
      HASH,
      1,
    ]);
  });

  test("a name the method does not take, or one param named twice: -32602 naming them", () => {
    const getblock = op("getblock");
    expect(() => getblock.fromNamed({ blockhash: HASH, foo: 1, bar: 2 })).toThrow(
      new InvalidParamsError(
        'invalid params: getblock has no param named "foo", "bar" (its params: blockhash, verbosity)',
      ),
    );
    expect(() => getblock.fromNamed({ blockhash: HASH, verbose: true, verbosity: 1 })).toThrow(
      new InvalidParamsError("invalid params: getblock's param verbosity named twice"),
    );
    expect(() => op("getblockcount").fromNamed({ x: 1 })).toThrow(
      new InvalidParamsError('invalid params: getblockcount has no param named "x" (its params: none)'),
    );
  });

  test("a missing required param: the schema's -32602", () => {
    const getblock = op("getblock");
    expect(() => getblock.prepare(getblock.fromNamed({ verbosity: 1 }))).toThrow(InvalidParamsError);
  });
});

test("cache rules: by hash kept for ever with live members; by height by finality; mempool and fees a second", () => {
  expect(utxoMethods.policy("getblock")).toMatchObject({ cache: "static" });
  expect(utxoMethods.policy("getblock")!.live).toBeDefined();
  expect(utxoMethods.policy("getblockheader")!.live).toBe(utxoMethods.policy("getblock")!.live);
  expect(utxoMethods.policy("getrawtransaction")!.live).toBeDefined();
  expect(utxoMethods.policy("getblockhash")).toMatchObject({
    block: { kind: "position", index: 0 },
    cache: "block",
  });
  // Answers by hash, and hashes by height, are checked to be about what was asked (answerChecks.ts).
  for (const method of ["getblock", "getblockheader", "getrawtransaction", "getblockhash"]) {
    expect(utxoMethods.policy(method)!.verify).toBeDefined();
  }
  expect(utxoMethods.policy("getblockstats")).toEqual({
    block: { kind: "position", index: 0 },
    cache: "block",
  });
  for (const method of [
    "gettxout",
    "getrawmempool",
    "getmempoolinfo",
    "getmempoolentry",
    "estimatesmartfee",
  ]) {
    expect(utxoMethods.policy(method)).toEqual({ cache: "brief", ttlMs: 1_000 });
  }
  for (const method of [
    "getblockcount",
    "getbestblockhash",
    "getblockchaininfo",
    "getchaintips",
    "getdifficulty",
  ]) {
    expect(utxoMethods.policy(method)).toEqual({ cache: "head" });
  }
  expect(utxoMethods.policy("sendrawtransaction")).toEqual({ cache: "never", write: true });
  for (const method of ["decoderawtransaction", "decodescript", "validateaddress"]) {
    expect(utxoMethods.policy(method)).toBeUndefined();
  }
});
