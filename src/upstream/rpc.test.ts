import { expect, test } from "bun:test";
import { NodeError, UpstreamProtocolError } from "../errors";
import { decodeResponses } from "./rpc";

/** Every error is a request error here: the classification is the family's (its own tests). */
const kind = () => "request" as const;

// Bodies as litecoind 0.21.2.1 answered them in regtest (recorded in
// src/families/utxo/fixtures/nodeProtocolAnswers.json): JSON-RPC 1.0 style, `result` and `error` both
// present, `error` null on success, a newline after the body.
const SUCCESS =
  '{"result":"530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9","error":null,"id":1}\n';
const FAILURE = '{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}\n';
const BATCH =
  '[{"result":102,"error":null,"id":1},{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":2},{"result":null,"error":{"code":-8,"message":"Block height out of range"},"id":3},{"result":"530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9","error":null,"id":4}]\n';

test("JSON-RPC 1.0 answers: a null error with a result is a success, its result text kept as sent", () => {
  const outcomes = decodeResponses(SUCCESS, kind);
  expect([...outcomes.keys()]).toEqual([1]);
  expect(outcomes.get(1)).toEqual({
    ok: true,
    raw: '"530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9"',
  });
  // A null result with a null error (a JSON-RPC 1.0 notification-style answer) is a null result.
  expect(decodeResponses('{"result":null,"error":null,"id":7}', kind).get(7)).toEqual({
    ok: true,
    raw: "null",
  });
});

test("JSON-RPC 1.0 errors: a null result beside the error is the node's error, passed through exactly", () => {
  const outcome = decodeResponses(FAILURE, kind).get(1)!;
  expect(outcome.ok).toBe(false);
  const error = (outcome as { error: NodeError }).error;
  expect(error).toBeInstanceOf(NodeError);
  expect([error.code, error.message, error.rpcErrorJson()]).toEqual([
    -5,
    "Block not found",
    '{"code":-5,"message":"Block not found"}',
  ]);
});

test("a batch of JSON-RPC 1.0 answers: each by its id, with its own error", () => {
  const outcomes = decodeResponses(BATCH, kind);
  expect(outcomes.get(1)).toEqual({ ok: true, raw: "102" });
  expect((outcomes.get(2) as { error: NodeError }).error.code).toBe(-32601);
  expect((outcomes.get(3) as { error: NodeError }).error.message).toBe("Block height out of range");
  expect(outcomes.get(4)).toEqual({
    ok: true,
    raw: '"530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9"',
  });
});

test("neither result nor error, or an error that is no error object: not JSON-RPC", () => {
  expect(() => decodeResponses('{"error":null,"id":1}', kind)).toThrow(UpstreamProtocolError);
  expect(() => decodeResponses('{"result":null,"error":"boom","id":1}', kind)).toThrow(UpstreamProtocolError);
});

test("Bitcoin Core 28 and later answer our JSON-RPC 2.0 requests in 2.0's form: only one of result and error", () => {
  // Written from Bitcoin Core's doc/release-notes-27101.md (v28.0): a 2.0 request gets either `result` or
  // `error` (not both, one null), over HTTP 200. The values are ours, not recorded.
  const outcomes = decodeResponses(
    '[{"jsonrpc":"2.0","result":850000,"id":1},{"jsonrpc":"2.0","error":{"code":-5,"message":"Block not found"},"id":2}]',
    kind,
  );
  expect(outcomes.get(1)).toEqual({ ok: true, raw: "850000" });
  expect((outcomes.get(2) as { error: NodeError }).error.rpcErrorJson()).toBe(
    '{"code":-5,"message":"Block not found"}',
  );
});
