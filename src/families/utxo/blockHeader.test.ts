import { expect, test } from "bun:test";
import { decodeResponses } from "../../upstream/rpc";
import { NULL_HASH, parseUtxoHeader } from "./blockHeader";
import answers from "./fixtures/nodeProtocolAnswers.json";
import { utxoNodeErrorKind } from "./nodeErrors";

/** The result text of a recorded answer (fixtures/nodeProtocolAnswers.json, litecoind 0.21.2.1, regtest). */
function result(body: string): string {
  const outcome = decodeResponses(body, utxoNodeErrorKind).values().next().value!;
  if (!outcome.ok) throw outcome.error;
  return outcome.raw;
}

const GENESIS = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";

test("getblockheader answers become headers; block 0 has the null hash for parent", () => {
  const genesis = parseUtxoHeader(result(answers.getblockheaderGenesis.body))!;
  expect(genesis).toMatchObject({ number: 0n, hash: GENESIS, parentHash: NULL_HASH, timestamp: 1296688602 });
  expect(genesis.raw).toBe(result(answers.getblockheaderGenesis.body));
  const first = parseUtxoHeader(result(answers.getblockheaderFirst.body))!;
  const json = JSON.parse(first.raw);
  expect(first).toMatchObject({ number: 1n, hash: json.hash, parentHash: GENESIS, timestamp: json.time });
  const best = parseUtxoHeader(result(answers.getblockheaderBest.body))!;
  expect([best.number, best.hash]).toEqual([102n, JSON.parse(result(answers.getbestblockhash.body))]);
});

test("anything but a header is none", () => {
  const first = JSON.parse(result(answers.getblockheaderFirst.body));
  const without = (member: string) => {
    const copy = { ...first };
    delete copy[member];
    return JSON.stringify(copy);
  };
  expect(parseUtxoHeader("null")).toBeUndefined();
  expect(parseUtxoHeader('"a string"')).toBeUndefined();
  // Only block 0 may lack a parent.
  expect(parseUtxoHeader(without("previousblockhash"))).toBeUndefined();
  expect(parseUtxoHeader(without("hash"))).toBeUndefined();
  expect(parseUtxoHeader(without("height"))).toBeUndefined();
  expect(parseUtxoHeader(JSON.stringify({ ...first, height: "1" }))).toBeUndefined();
  expect(parseUtxoHeader(JSON.stringify({ ...first, hash: `0x${first.hash}` }))).toBeUndefined();
  expect(parseUtxoHeader(JSON.stringify({ ...first, height: -1 }))).toBeUndefined();
});
