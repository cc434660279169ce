import { expect, test } from "bun:test";
import { NodeError } from "../../errors";
import type { NodeSend } from "../../upstream/protocol";
import { decodeResponses } from "../../upstream/rpc";
import { NULL_HASH } from "./blockHeader";
import answers from "./fixtures/nodeProtocolAnswers.json";
import { utxoNodeErrorKind } from "./nodeErrors";
import { LONG_POLL_MS, UTXO_LATEST, utxoNodeProtocol } from "./nodeProtocol";

/**
 * A node made of recorded answers (fixtures/nodeProtocolAnswers.json, litecoind 0.21.2.1 in regtest): each
 * call is looked up by method and params, answered with the recorded result or thrown the recorded error,
 * as the upstream pool does. Every call made is kept.
 */
function recordedNode() {
  const exchanges = Object.values(answers).filter(
    (a): a is { request: string; status: number; body: string } => typeof a === "object" && a !== null,
  );
  const calls: [string, unknown][] = [];
  const send: NodeSend = async (method, params) => {
    calls.push([method, params]);
    const exchange = exchanges.find((e) => {
      const request = JSON.parse(e.request);
      return request.method === method && JSON.stringify(request.params) === JSON.stringify(params);
    });
    if (!exchange) throw new Error(`not recorded: ${method} ${JSON.stringify(params)}`);
    const outcome = decodeResponses(exchange.body, utxoNodeErrorKind).get(1)!;
    if (!outcome.ok) throw outcome.error;
    return outcome.raw;
  };
  return { send, calls };
}

const GENESIS = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";

test("the identity is the chain's name and block 0's hash, from two calls", async () => {
  const node = recordedNode();
  expect(await utxoNodeProtocol.readIdentity(node.send)).toBe(`regtest:${GENESIS}`);
  expect(node.calls).toEqual([
    ["getblockchaininfo", []],
    ["getblockhash", [0]],
  ]);
});

test("an answer naming no chain is no identity", async () => {
  const answering =
    (info: string, genesis: string): NodeSend =>
    async (method) =>
      method === "getblockchaininfo" ? info : genesis;
  expect(await utxoNodeProtocol.readIdentity(answering('{"chain":""}', `"${GENESIS}"`))).toBeUndefined();
  expect(await utxoNodeProtocol.readIdentity(answering("{}", `"${GENESIS}"`))).toBeUndefined();
  expect(await utxoNodeProtocol.readIdentity(answering('{"chain":"main"}', '"0x00"'))).toBeUndefined();
  // The genesis hash of Bitcoin's main chain (a constant of Bitcoin Core's chainparams.cpp).
  const bitcoin = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f";
  expect(await utxoNodeProtocol.readIdentity(answering('{"chain":"main"}', `"${bitcoin}"`))).toBe(
    `main:${bitcoin}`,
  );
});

test("the latest block: getbestblockhash, then its header", async () => {
  const node = recordedNode();
  const header = (await utxoNodeProtocol.readHeader(UTXO_LATEST, node.send))!;
  const expected = JSON.parse(answers.getblockheaderBest.body).result;
  expect([header.number, header.hash, header.parentHash]).toEqual([
    102n,
    expected.hash,
    expected.previousblockhash,
  ]);
  expect(node.calls).toEqual([
    ["getbestblockhash", []],
    ["getblockheader", [expected.hash, true]],
  ]);
});

test("a block at a height: getblockhash with a JSON number, then its header; past the tip: none", async () => {
  const node = recordedNode();
  const genesis = (await utxoNodeProtocol.readHeader("0", node.send))!;
  expect([genesis.number, genesis.hash, genesis.parentHash]).toEqual([0n, GENESIS, NULL_HASH]);
  expect(node.calls).toEqual([
    ["getblockhash", [0]],
    ["getblockheader", [GENESIS, true]],
  ]);
  // litecoind answers -8 "Block height out of range": the node has no such block (yet).
  expect(await utxoNodeProtocol.readHeader("1000000", node.send)).toBeUndefined();
  // A hash the node never had: -5 "Block not found".
  expect(await utxoNodeProtocol.readHeader("00".repeat(32), node.send)).toBeUndefined();
});

test("other node errors are not taken for a missing block", async () => {
  const failing: NodeSend = async () => {
    throw new NodeError(-28, "Verifying wallet(s)...", undefined, "{}", utxoNodeErrorKind(-28, ""));
  };
  await expect(utxoNodeProtocol.readHeader("5", failing)).rejects.toThrow("Verifying wallet(s)...");
  await expect(utxoNodeProtocol.readHeader("tag", failing)).rejects.toThrow("not a block reference");
});

test("the long-poll: waitfornewblock with a timeout in ms, its answer naming the head", () => {
  const poll = utxoNodeProtocol.longPoll!;
  expect(poll.call(poll.timeoutMs)).toEqual({ method: "waitfornewblock", params: [LONG_POLL_MS] });
  const answer = decodeResponses(answers.waitfornewblock.body, utxoNodeErrorKind).get(1)!;
  if (!answer.ok) throw answer.error;
  expect(poll.blockOf(answer.raw)).toEqual({
    number: 102n,
    hash: JSON.parse(answers.getbestblockhash.body).result,
  });
  expect(poll.blockOf("null")).toBeUndefined();
  expect(poll.blockOf('{"hash":"00","height":1}')).toBeUndefined();
  expect(utxoNodeProtocol.errorsWithHttpStatus).toBe(true);
  expect(utxoNodeProtocol.pubsub).toBeUndefined();
});
