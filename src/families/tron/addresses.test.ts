import { expect, test } from "bun:test";
import { tronAddresses } from "./addresses";

// USDT's TRC-20 contract on mainnet, as TronScan and java-tron write it in both forms.
const USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const USDT_HEX = "41a614f803b6fd780986a42c78ec9c7f77e6ded13c";
// The address of 20 zero bytes (java-tron's black hole for burned TRC-10).
const ZERO = "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb";

test("base58check, 41 + hex and 0x + hex are one address, canonical in base58check", () => {
  expect(tronAddresses.canonical(USDT)).toBe(USDT);
  expect(tronAddresses.canonical(USDT_HEX)).toBe(USDT);
  expect(tronAddresses.canonical(USDT_HEX.toUpperCase())).toBe(USDT);
  expect(tronAddresses.canonical(`0x${USDT_HEX.slice(2)}`)).toBe(USDT);
  expect(tronAddresses.canonical(`41${"0".repeat(40)}`)).toBe(ZERO);
});

test("a bad checksum, another case, another version byte or length is no address", () => {
  // One character changed: the checksum fails.
  expect(tronAddresses.canonical("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u")).toBeUndefined();
  // Base58 is case-sensitive.
  expect(tronAddresses.canonical(USDT.toLowerCase())).toBeUndefined();
  // A Bitcoin address: version 0x00.
  expect(tronAddresses.canonical("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")).toBeUndefined();
  expect(tronAddresses.canonical(USDT_HEX.slice(0, 40))).toBeUndefined();
  expect(tronAddresses.canonical("")).toBeUndefined();
});

test("the index keeps the 21 bytes, and gives the base58check back", () => {
  const bytes = tronAddresses.toBytes(USDT);
  expect(Buffer.from(bytes).toString("hex")).toBe(USDT_HEX);
  expect(tronAddresses.fromBytes(bytes)).toBe(USDT);
});

test("what is wrong with a text that is no address: a bad checksum is named", () => {
  expect(tronAddresses.problem!(USDT)).toBeUndefined();
  expect(tronAddresses.problem!(USDT_HEX)).toBeUndefined();
  expect(tronAddresses.problem!("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u")).toBe("bad base58check checksum");
  expect(tronAddresses.problem!("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")).toBe("not a TRON address");
  expect(tronAddresses.problem!(USDT.toLowerCase())).toBe("not a TRON address");
  expect(tronAddresses.problem!(USDT_HEX.slice(0, 40))).toBe("not a TRON address");
  expect(tronAddresses.problem!("T".repeat(100_000))).toBe("not a TRON address");
});
