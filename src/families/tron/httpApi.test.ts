/** The HTTP API rows' answer checks, on java-tron's answers as recorded on Nile (test/fixtures/tron/). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { blockOfAnswer, isNodeRefusal, PATH_POLICIES, PATH_WRITES } from "./httpApi";

const recorded = (name: string) =>
  readFileSync(join(import.meta.dir, "../../../test/fixtures/tron/nile", `${name}.json`), "utf8");

const BLOCK = recorded("getblockbynum");
const BLOCK_ID = "0000000003fe262d52bfa4b2814f816fd2e57af5b98a33d60d8630a03a908e0e";

test("a block answer is the block its blockID names: number from its first 8 bytes, hash with 0x", () => {
  expect(blockOfAnswer(BLOCK)).toEqual({ number: 66_987_565n, hash: `0x${BLOCK_ID}` });
  expect(blockOfAnswer(recorded("getblockbyid"))).toEqual({ number: 66_987_565n, hash: `0x${BLOCK_ID}` });
  expect(blockOfAnswer("{}")).toBeUndefined();
  expect(blockOfAnswer('{"Error":"class java.lang.NullPointerException : null"}')).toBeUndefined();
});

test('java-tron\'s none ({}) and its errors ({"Error": ...}) are refusals; its answers are not', () => {
  expect(isNodeRefusal("{}")).toBe(true);
  expect(isNodeRefusal(" { } ")).toBe(true);
  expect(isNodeRefusal('{"Error":"class org.tron.json.JSONException : Unexpected character"}')).toBe(true);
  expect(isNodeRefusal(BLOCK)).toBe(false);
  expect(isNodeRefusal(recorded("gettransactioninfobyid"))).toBe(false);
  // A broadcast's refusal is its answer, never kept either: writes are never cached at all.
  expect(isNodeRefusal(recorded("broadcasttransaction-sigerror"))).toBe(false);
});

test("a block by number: an answer about another block is the node's fault, never kept nor given", () => {
  const policy = PATH_POLICIES.get("wallet/getblockbynum")!;
  expect(policy.verify!([{ num: 66_987_565 }], BLOCK)).toBeUndefined();
  expect(policy.verify!([{ num: 66_987_566 }], BLOCK)).toBe(
    "upstream answered block 66987565 when asked about block 66987566",
  );
  const byId = PATH_POLICIES.get("wallet/getblockbyid")!;
  expect(byId.verify!([{ value: BLOCK_ID }], BLOCK)).toBeUndefined();
  expect(byId.verify!([{ value: "00".repeat(32) }], BLOCK)).toBe(
    `upstream answered block 0x${BLOCK_ID} when asked about block ${"00".repeat(32)}`,
  );
  expect(policy.unkept!("{}")).toBe(true);
});

test("cache rules: blocks by what they name, `getblock` of the head never, the solidity face final, writes never", () => {
  expect(PATH_POLICIES.get("wallet/getblockbynum")!.block).toEqual({
    kind: "member",
    index: 0,
    member: "num",
  });
  const getblock = PATH_POLICIES.get("wallet/getblock")!;
  expect(getblock.keepsFor!([{ detail: false }])).toBe(false);
  expect(getblock.keepsFor!([{ detail: true, id_or_num: "66987565" }])).toBe(true);
  expect(PATH_POLICIES.get("walletsolidity/gettransactioninfobyid")!.cache).toBe("static");
  // The full node's face: the info names its block's number only, kept once that block is final.
  const info = PATH_POLICIES.get("wallet/gettransactioninfobyid")!;
  expect(info.answerBlock!(recorded("gettransactioninfobyid"))).toEqual({ number: 66_985_120n });
  expect(PATH_POLICIES.get("wallet/getnowblock")!.cache).toBe("never");
  expect(PATH_POLICIES.get("wallet/getaccount")!.cache).toBe("head");
  expect([...PATH_WRITES]).toEqual(["wallet/broadcasttransaction", "wallet/broadcasthex"]);
  for (const write of PATH_WRITES) expect(PATH_POLICIES.get(write)).toEqual({ cache: "never", write: true });
  // Paths that take a key have no row at all.
  for (const name of ["easytransferbyprivate", "gettransactionsign", "createaddress", "generateaddress"])
    expect(PATH_POLICIES.has(`wallet/${name}`)).toBe(false);
});
