import { expect, test } from "bun:test";
import { ConfigError } from "../../config";
import { defaultTokensOf } from "./evmOperations";

test("DEFAULT_TOKENS are token contracts in their canonical form; anything else stops the start, named", () => {
  expect(
    defaultTokensOf([
      "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      "0xdac17f958d2ee523a2206206994597c13d831ec7",
    ]),
  ).toEqual(["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "0xdac17f958d2ee523a2206206994597c13d831ec7"]);
  expect(defaultTokensOf(undefined)).toBeUndefined();
  expect(() => defaultTokensOf(["0xdac17f958d2ee523a2206206994597c13d831ec7", "0x12"])).toThrow(
    new ConfigError(
      'DEFAULT_TOKENS: expected comma-separated token contract addresses (a 20-byte address: 0x followed by 40 hex digits), got "0x12"',
    ),
  );
});
