import { expect, test } from "bun:test";
import { ConfigError } from "../../config";
import { utxoBlockRefs } from "./blockRef";
import { describeUtxoChain } from "./chains";

const LTC_REGTEST = "regtest:530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";
const BTC_MAIN = "main:000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f";

test("each CHAIN: its SLIP-44 coin type, coin, 8 decimals, block time and depth; regtest one block deep", () => {
  expect(describeUtxoChain(BTC_MAIN, { blockchain: "BTC" })).toEqual({
    chainId: 0n,
    blockchain: "BTC",
    nativeSymbol: "BTC",
    nativeDecimals: 8,
    confirmations: 6,
    blockTimeMs: 600_000,
    devChain: false,
    network: "main",
  });
  const testnet4 = "testnet4:00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043";
  expect(describeUtxoChain(testnet4, { blockchain: "BTC_TESTNET" })).toMatchObject({
    chainId: 1n,
    confirmations: 6,
  });
  const ltc = "main:12a765e31ffd4059bada1e25190f6e98c99d9714d334efa41a195a7e7e04bfe2";
  expect(describeUtxoChain(ltc, { blockchain: "LTC" })).toMatchObject({
    chainId: 2n,
    nativeSymbol: "LTC",
    confirmations: 12,
    blockTimeMs: 150_000,
    devChain: false,
  });
  const doge = "main:1a91e3dace36e2be3bf030a65679fe821aa1d6ef92e7c9902eb318182c355691";
  expect(describeUtxoChain(doge, { blockchain: "DOGE" })).toMatchObject({
    chainId: 3n,
    nativeSymbol: "DOGE",
    confirmations: 40,
    blockTimeMs: 60_000,
  });
  expect(describeUtxoChain(LTC_REGTEST, { blockchain: "LTC" })).toMatchObject({
    chainId: 2n,
    confirmations: 1,
    blockTimeMs: 1_000,
    devChain: true,
    network: "regtest",
  });
  // CONFIRMATIONS overrides, regtest too.
  expect(describeUtxoChain(LTC_REGTEST, { blockchain: "LTC", confirmations: 6 }).confirmations).toBe(6);
});

test("a node of another chain than CHAIN's, or no CHAIN: a configuration error saying what CHAIN takes", () => {
  expect(() => describeUtxoChain(LTC_REGTEST, { blockchain: "BTC" })).toThrow(ConfigError);
  expect(() => describeUtxoChain(LTC_REGTEST, { blockchain: "BTC" })).toThrow(
    "CHAIN=BTC takes nodes of Bitcoin's main chain (main:000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f), Bitcoin's regtest (regtest:0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206)",
  );
  // Bitcoin's testnet is BTC_TESTNET's, not BTC's.
  const testnet3 = "test:000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943";
  expect(() => describeUtxoChain(testnet3, { blockchain: "BTC" })).toThrow(ConfigError);
  expect(() => describeUtxoChain(BTC_MAIN, {})).toThrow("set CHAIN to one of BTC, BTC_TESTNET, LTC, DOGE");
});

test("block references: heights are JSON numbers in params, decimal text for header reads; no tags", () => {
  expect(utxoBlockRefs.tags).toBe(false);
  expect(utxoBlockRefs.encode(12n)).toBe("12");
  expect(utxoBlockRefs.numberOf(12)).toBe(12n);
  expect(utxoBlockRefs.numberOf("12")).toBe(12n);
  for (const none of ["latest", "0x0c", "012", -1, 1.5, null, undefined, "a".repeat(64)]) {
    expect(utxoBlockRefs.numberOf(none)).toBeUndefined();
  }
  expect(utxoBlockRefs.normalize("latest")).toBeUndefined();
  expect(utxoBlockRefs.normalize(7)).toBe("7");
  expect(utxoBlockRefs.isHash("A".repeat(64))).toBe(true);
  expect(utxoBlockRefs.isHash(`0x${"a".repeat(64)}`)).toBe(false);
  expect(utxoBlockRefs.normalizeHash("AB".repeat(32))).toBe("ab".repeat(32));
});
