import { expect, test } from "bun:test";
import { ConfigError } from "../../config";
import { tronEndpoints } from "./endpoints";

test("one base URL: the three faces under it (TronGrid, a reverse proxy)", () => {
  const grid = tronEndpoints("https://nile.trongrid.io");
  expect(grid.rpcUrl).toBe("https://nile.trongrid.io/jsonrpc");
  expect(grid.pathUrl("wallet/getnowblock")).toBe("https://nile.trongrid.io/wallet/getnowblock");
  expect(grid.pathUrl("walletsolidity/getnowblock")).toBe(
    "https://nile.trongrid.io/walletsolidity/getnowblock",
  );
  expect(grid.pathUrl("eth_blockNumber")).toBeUndefined();
  expect(grid.headers).toEqual({});
  const proxied = tronEndpoints("https://proxy.example/tron/");
  expect(proxied.rpcUrl).toBe("https://proxy.example/tron/jsonrpc");
  expect(proxied.pathUrl("wallet/getblockbynum")).toBe("https://proxy.example/tron/wallet/getblockbynum");
});

test("a bare node's ports after #, and a provider's key sent as TRON-PRO-API-KEY", () => {
  const node = tronEndpoints("http://10.0.0.1:8090#solidity=8091&jsonrpc=8545");
  expect(node.rpcUrl).toBe("http://10.0.0.1:8545/jsonrpc");
  expect(node.pathUrl("wallet/getnowblock")).toBe("http://10.0.0.1:8090/wallet/getnowblock");
  expect(node.pathUrl("walletsolidity/getnowblock")).toBe("http://10.0.0.1:8091/walletsolidity/getnowblock");
  const whole = tronEndpoints("http://a:8090#solidity=http://b:9091&jsonrpc=http://c:9545/rpc&key=k-1");
  expect(whole.rpcUrl).toBe("http://c:9545/rpc");
  expect(whole.pathUrl("walletsolidity/getblockbynum")).toBe("http://b:9091/walletsolidity/getblockbynum");
  expect(whole.headers).toEqual({ "TRON-PRO-API-KEY": "k-1" });
});

test("credentials ride on every face; anything else after # is refused", () => {
  const node = tronEndpoints("http://user:pass@10.0.0.1:8090#solidity=8091");
  expect(node.pathUrl("walletsolidity/getnowblock")).toBe(
    "http://user:pass@10.0.0.1:8091/walletsolidity/getnowblock",
  );
  expect(node.rpcUrl).toBe("http://user:pass@10.0.0.1:8090/jsonrpc");
  expect(() => tronEndpoints("http://10.0.0.1:8090#solid=8091")).toThrow(
    new ConfigError(
      `UPSTREAM_URLS: a TRON upstream's URL takes solidity=, jsonrpc= and key= after "#", not "solid"`,
    ),
  );
  expect(() => tronEndpoints("http://10.0.0.1:8090#jsonrpc=port")).toThrow(ConfigError);
});
