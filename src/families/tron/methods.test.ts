import { expect, test } from "bun:test";
import { TRON_JSON_RPC, tronMethods, tronRefusal } from "./methods";

test("the EVM's cache rules, but state reads at the head only: java-tron answers them for `latest` alone", () => {
  expect(tronMethods.policy("eth_getBlockByNumber")).toEqual({
    block: { kind: "position", index: 0, optional: false },
    cache: "block",
    names: { number: "number", hash: "hash" },
  });
  for (const method of ["eth_getBalance", "eth_call", "eth_getCode", "eth_getStorageAt"])
    expect(tronMethods.policy(method)).toEqual({ cache: "head" });
  expect(tronMethods.policy("eth_sendRawTransaction")).toBeUndefined();
  expect(tronMethods.policy("wallet/getblockbynum")?.cache).toBe("result");
});

test("the EVM methods java-tron refuses are refused naming why and what to use; its own are not", () => {
  expect(tronRefusal("eth_sendRawTransaction")).toBe(
    "java-tron's JSON-RPC takes no transactions: broadcast a signed one with POST /wallet/broadcasttransaction or /wallet/broadcasthex",
  );
  expect(tronRefusal("eth_getTransactionCount")).toBe("TRON accounts have no nonce (java-tron refuses it)");
  expect(tronRefusal("trace_block")).toBe(
    "java-tron has no traces: a transaction's internal transactions are in /wallet/gettransactioninfobyid",
  );
  expect(tronRefusal("eth_signTypedData_v4")).toBe("java-tron holds no keys for its callers (it refuses it)");
  for (const method of TRON_JSON_RPC) expect(tronRefusal(method)).toBeUndefined();
  expect(tronRefusal("eth_newFilter")).toBeUndefined();
  // A name of no family: the plain refusal.
  expect(tronRefusal("foo_bar")).toBeUndefined();
});
