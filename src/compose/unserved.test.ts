import { expect, test } from "bun:test";
import { MethodNotFoundError, NotServedError } from "../errors";
import { evm } from "../families/evm/evm";
import type { ChainFamily } from "../families/family";
import { createUnserved, unservedSubscription } from "./unserved";

/** A family as this file reads one: its name and namespaces; no index (as the Bitcoin family's first step was). */
const bare = { name: "utxo" } as ChainFamily;
const families = [evm, bare];

const onLtc = createUnserved({
  family: bare,
  families,
  chain: "LTC",
  dataOperations: false,
  watchFilters: false,
});

test("another family's names are refused naming the chain and the family they belong to", () => {
  const error = onLtc.method("eth_blockNumber")!;
  expect(error).toBeInstanceOf(NotServedError);
  expect(error).toBeInstanceOf(MethodNotFoundError);
  expect([error.code, error.status]).toEqual([-32601, 404]);
  expect(error.message).toBe(
    "the method eth_blockNumber is not served on LTC: it is a method of the evm family, and LTC is served by the utxo family",
  );
  // Any name in the namespace, not only the EVM family's rows: eth_sign has no row, on any instance.
  expect(onLtc.method("eth_sign")?.message).toStartWith("the method eth_sign is not served on LTC");
  for (const path of ["/node/rest/eth_getBlockByNumber", "/node/rest/get_token_balances"]) {
    expect(onLtc.path(path)?.message).toBe(
      `${path} is not served on LTC: it is a method of the evm family, and LTC is served by the utxo family`,
    );
  }
  expect(onLtc.path("/node/stream/ext_getBlockReceipts")?.status).toBe(404);
});

test("the data methods and watch filters are refused where the family keeps no index", () => {
  expect(onLtc.method("watch_getTransfers")?.message).toBe(
    "the method watch_getTransfers is not served on LTC: it reads the index, which the utxo family does not keep yet",
  );
  expect(onLtc.path("/node/rest/watch_getStatsByDay")?.message).toBe(
    "/node/rest/watch_getStatsByDay is not served on LTC: it reads the index, which the utxo family does not keep yet",
  );
  for (const path of ["/watch_filters/add", "/watch_filters/lastBlockNumber", "/watch_filters/anything"]) {
    expect(onLtc.path(path)?.message).toBe(
      `${path} is not served on LTC: watch filters match blocks of the index, which the utxo family does not keep yet`,
    );
  }
  for (const path of ["/webhooks", "/webhooks/0b6e7c1e-3f1d-4c57-9a1e-6d2f8f0b5a11/test"]) {
    expect(onLtc.path(path)?.message).toBe(
      `${path} is not served on LTC: webhooks send watch-filter results: watch filters match blocks of the index, which the utxo family does not keep yet`,
    );
  }
  expect(onLtc.path("/webhooksx")).toBeUndefined();
});

test("with its index, the data methods are served and the token ones refused as the EVM family's", () => {
  const indexed = createUnserved({
    family: bare,
    families,
    chain: "LTC",
    dataOperations: true,
    watchFilters: true,
  });
  for (const method of ["watch_getTransfers", "watch_getStatsByDay", "watch_nothing"])
    expect(indexed.method(method)).toBeUndefined();
  for (const path of ["/node/rest/watch_getTransfers", "/watch_filters/add", "/webhooks"])
    expect(indexed.path(path)).toBeUndefined();
  const why = "it is a method of the evm family, and LTC is served by the utxo family";
  for (const method of ["watch_getTokenBalances", "watch_getTokenMetadata"])
    expect(indexed.method(method)?.message).toBe(`the method ${method} is not served on LTC: ${why}`);
  for (const path of ["/node/rest/get_token_balances", "/node/rest/get_token_metadata"])
    expect(indexed.path(path)?.message).toBe(`${path} is not served on LTC: ${why}`);
  expect(indexed.summary).toBe(
    "Not served on LTC, and refused the same way (over REST: 404) with a message naming the chain and why: the evm family's names (`eth_*`, `net_*`, `web3_*`, `debug_*`, `trace_*`, `txpool_*`, `ext_*`, `get_token_*`, `watch_getToken*`).",
  );
});

test("a name the service never had keeps the plain refusal", () => {
  for (const method of ["getblock", "sendtoaddress", "foo_bar", "", "__proto__", "constructor"])
    expect(onLtc.method(method)).toBeUndefined();
  for (const path of [
    "/",
    "/nope",
    "/node/rest/",
    "/node/rest/getblock",
    "/node/rest/eth_x/y",
    "/watch_filter",
  ])
    expect(onLtc.path(path)).toBeUndefined();
});

test("an EVM instance with its index refuses nothing by name: its refusals stay as they were", () => {
  const onEth = createUnserved({
    family: evm,
    families,
    chain: "ETH",
    dataOperations: true,
    watchFilters: true,
  });
  for (const method of ["eth_sign", "watch_nothing", "getblock", "personal_sign"])
    expect(onEth.method(method)).toBeUndefined();
  for (const path of ["/node/rest/eth_sign", "/watch_filters/nothing", "/node/rest/getblock"])
    expect(onEth.path(path)).toBeUndefined();
  expect(onEth.summary).toBeUndefined();
});

test("the docs' sentence names what is refused so", () => {
  expect(onLtc.summary).toBe(
    "Not served on LTC, and refused the same way (over REST: 404) with a message naming the chain and why: the evm family's names (`eth_*`, `net_*`, `web3_*`, `debug_*`, `trace_*`, `txpool_*`, `ext_*`, `get_token_*`, `watch_getToken*`); the service's data methods (`watch_*`) and watch filters, which read an index the utxo family does not keep yet.",
  );
});

test("the WebSocket's subscription methods are no family's: over HTTP, the plain refusal", () => {
  for (const method of ["eth_subscribe", "eth_unsubscribe"]) expect(onLtc.method(method)).toBeUndefined();
  expect(onLtc.method("eth_newFilter")?.message).toStartWith("the method eth_newFilter is not served on LTC");
});

test("eth_subscribe: watch_filters without an index and the kinds a family's nodes lack are refused naming the chain", () => {
  const tronLike = {
    name: "tron",
    refusesSubscription: (kind: string) => (kind === "newPendingTransactions" ? "no pool" : undefined),
  } as ChainFamily;
  const refused = unservedSubscription({ family: tronLike, chain: "NILE", watchFilters: false });
  const error = refused("watch_filters")!;
  expect(error).toBeInstanceOf(NotServedError);
  expect([error.code, error.message]).toEqual([
    -32601,
    "the subscription watch_filters is not served on NILE: watch filters match blocks of the index, which the tron family does not keep yet",
  ]);
  expect(refused("newPendingTransactions")?.message).toBe(
    "the subscription newPendingTransactions is not served on NILE: no pool",
  );
  // A kind the service never heard of keeps the hub's plain refusal (listing the kinds served).
  expect(refused("syncing")).toBeUndefined();
  expect(
    unservedSubscription({ family: evm, chain: "ETH", watchFilters: true })("watch_filters"),
  ).toBeUndefined();
});

test("the summary leaves out another family's prefixes the instance serves names of (TRON's eth_*, its tokens)", () => {
  const served = ["eth_", "net_", "web3_", "ext_", "get_token_", "watch_getToken"];
  const onTron = createUnserved({
    family: bare,
    families,
    chain: "NILE",
    dataOperations: true,
    watchFilters: true,
    servesPrefix: (prefix) => served.includes(prefix),
  });
  expect(onTron.summary).toBe(
    "Not served on NILE, and refused the same way (over REST: 404) with a message naming the chain and why: the evm family's names (`debug_*`, `trace_*`, `txpool_*`).",
  );
});
