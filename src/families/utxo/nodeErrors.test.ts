import { expect, test } from "bun:test";
import type { NodeError } from "../../errors";
import { decodeResponses } from "../../upstream/rpc";
import answers from "./fixtures/nodeProtocolAnswers.json";
import { utxoNodeErrorKind } from "./nodeErrors";

/** The error of a recorded answer (fixtures/nodeProtocolAnswers.json, litecoind 0.21.2.1 in regtest). */
function recorded(body: string): NodeError {
  const outcome = decodeResponses(body, utxoNodeErrorKind).values().next().value!;
  if (outcome.ok) throw new Error("the recorded answer is no error");
  return outcome.error;
}

test("litecoind's errors, as it answered them, are classified by code first", () => {
  const cases: [string, number, string, string][] = [
    ["getblockUnknown", -5, "Block not found", "block_not_found"],
    ["getblockheaderUnknown", -5, "Block not found", "block_not_found"],
    ["getblockhashPastTip", -8, "Block height out of range", "block_not_found"],
    ["getblockstatsPastTip", -8, "Target block height 1000000 after current tip 102", "block_not_found"],
    ["badHash", -8, "hash must be of length 64 (not 2, for 'zz')", "request"],
    ["unknownMethod", -32601, "Method not found", "method_unsupported"],
    ["sendrawtransactionInChain", -27, "Transaction already in block chain", "already_known"],
    ["warmingUp", -28, "Verifying wallet(s)...", "unavailable"],
  ];
  for (const [name, code, message, kind] of cases) {
    const error = recorded((answers as unknown as Record<string, { body: string }>)[name]!.body);
    expect([name, error.code, error.message, error.kind]).toEqual([name, code, message, kind]);
  }
});

test("the words of Bitcoin Core's source, where one code covers several conditions", () => {
  // Written from Bitcoin Core's src/rpc and src/validation.cpp strings (not recorded: these need a pruned
  // node, a warming-up node at that step, or a transaction relayed twice).
  const cases: [number, string, string][] = [
    [-28, "Loading block index...", "unavailable"],
    [-28, "Rewinding blocks...", "unavailable"],
    [-1, "Block not available (pruned data)", "block_not_found"],
    [-1, "Block not found on disk", "block_not_found"],
    [-26, "txn-already-in-mempool", "already_known"],
    [-26, "txn-already-known", "already_known"],
    [-26, "min relay fee not met, 100 < 226", "request"],
    [-25, "bad-txns-inputs-missingorspent", "request"],
    [-5, "No such mempool or blockchain transaction. Use gettransaction for wallet transactions.", "request"],
    [-5, "Invalid address", "request"],
    [-10, "Litecoin is downloading blocks...", "unavailable"],
    [-32, "getaddressesbyaccount is deprecated", "method_unsupported"],
    [-1, "JSON value is not an integer as expected", "request"],
  ];
  for (const [code, message, kind] of cases)
    expect([message, utxoNodeErrorKind(code, message)]).toEqual([message, kind]);
});

test("-28 (warming up) is the node's trouble: a 502 another upstream may answer; -5 is the caller's", () => {
  const warming = recorded(answers.warmingUp!.body);
  expect([warming.status, warming.retryable]).toEqual([502, true]);
  const unknown = recorded(answers.getblockUnknown.body);
  expect([unknown.status, unknown.retryable]).toEqual([400, false]);
  // Passed through exactly as the node wrote it.
  expect(unknown.rpcErrorJson()).toBe('{"code":-5,"message":"Block not found"}');
});
