import { expect, test } from "bun:test";
import { NodeError } from "../../errors";
import { nodeErrorKind } from "./nodeErrors";

test("codes decide where they are specific, whatever the words", () => {
  expect(nodeErrorKind(-32601, "anything")).toBe("method_unsupported");
  expect(nodeErrorKind(-32603, "batch too large")).toBe("internal");
  expect(nodeErrorKind(-32005, "daily request count exceeded")).toBe("rate_limited");
  expect(nodeErrorKind(-32002, "resource unavailable")).toBe("unavailable");
});

test("generic codes are read by the words of each node", () => {
  const cases: [number, string, string][] = [
    [-32600, "Unsupported method: trace_block. See available methods", "method_unsupported"], // Alchemy
    [-32000, "Method debug_traceBlockByNumber is not supported", "method_unsupported"], // Nethermind
    [-32600, "batch size too large", "batch_too_large"], // Alchemy, QuickNode
    [-32000, "header not found", "block_not_found"], // geth
    [-32000, "missing trie node 0x12ab (path )", "block_not_found"], // geth, pruned state
    [-32000, "already known", "already_known"], // geth
    [-32010, "Transaction with the same hash was already imported.", "already_known"], // OpenEthereum
    [-32000, "execution reverted", "request"],
    [3, "execution reverted: no balance", "request"],
    [-32602, "invalid argument 0: hex string without 0x prefix", "request"],
  ];
  for (const [code, message, kind] of cases)
    expect([message, nodeErrorKind(code, message)]).toEqual([message, kind]);
});

test("the kind decides status and retry: the node's own trouble is a 502 another upstream may answer", () => {
  const of = (code: number, message: string) =>
    new NodeError(code, message, undefined, "{}", nodeErrorKind(code, message));
  expect([of(-32603, "boom").status, of(-32603, "boom").retryable]).toEqual([502, true]);
  expect([of(-32005, "slow down").status, of(-32005, "slow down").retryable]).toEqual([502, true]);
  expect([of(-32000, "execution reverted").status, of(-32000, "execution reverted").retryable]).toEqual([
    400,
    false,
  ]);
  expect(of(-32601, "no such method").status).toBe(400);
});
