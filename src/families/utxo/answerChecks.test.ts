/**
 * An answer by hash must be about what was asked (answerChecks.ts), on answers recorded from litecoind 0.21
 * (fixtures/litecoind-0.21-live.json): a hex block names its hash through its header's double SHA-256.
 */
import { expect, test } from "bun:test";
import { wrongBlock } from "../../cache/policy";
import { blockHashOfHex } from "./answerChecks";
import { utxoBlockRefs } from "./blockRef";
import recorded from "./fixtures/litecoind-0.21-live.json";
import { utxoMethods } from "./methods";

/** The checks the engine runs on a node's answer (the method's policy, with its `verify`). */
const answerMismatch = (method: string, params: unknown[], raw: string) =>
  wrongBlock(utxoMethods.policy(method)!, params, raw, utxoBlockRefs);

const { block, tx, atTip } = recorded;
const other = "1".repeat(64);

test("a hex block and a hex header name their block: the double SHA-256 of the header, byte-reversed", () => {
  expect(blockHashOfHex(JSON.parse(atTip["getblock 0"]))).toBe(block);
  expect(blockHashOfHex(JSON.parse(atTip["getblockheader hex"]))).toBe(block);
  expect(blockHashOfHex("00")).toBeUndefined();
});

test("answers about what was asked pass, in every form", () => {
  for (const form of ["getblock 0", "getblock 1", "getblock 2"] as const) {
    expect(answerMismatch("getblock", [block, 1], atTip[form])).toBeUndefined();
  }
  expect(answerMismatch("getblockheader", [block], atTip.getblockheader)).toBeUndefined();
  expect(answerMismatch("getblockheader", [block, false], atTip["getblockheader hex"])).toBeUndefined();
  expect(answerMismatch("getrawtransaction", [tx, true], atTip["getrawtransaction verbose"])).toBeUndefined();
  expect(
    answerMismatch("getrawtransaction", [tx, true, block], atTip["getrawtransaction verbose in block"]),
  ).toBeUndefined();
  expect(answerMismatch("getblockhash", [107], `"${block}"`)).toBeUndefined();
});

test("an answer about another block or transaction is the node's fault, said so", () => {
  expect(answerMismatch("getblock", [other, 1], atTip["getblock 1"])).toBe(
    `upstream answered about block ${block} when asked about block ${other}`,
  );
  expect(answerMismatch("getblock", [other, 0], atTip["getblock 0"])).toBe(
    `upstream answered about block ${block} when asked about block ${other}`,
  );
  expect(answerMismatch("getrawtransaction", [other, true], atTip["getrawtransaction verbose"])).toBe(
    `upstream answered about transaction ${tx} when asked about transaction ${other}`,
  );
  expect(answerMismatch("getrawtransaction", [tx, true, other], atTip["getrawtransaction verbose"])).toBe(
    `upstream answered about block ${block} when asked about block ${other}`,
  );
  expect(answerMismatch("getblockhash", [107], '"0x00"')).toBe("upstream answered a malformed block hash");
});
