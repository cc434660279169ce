import { expect, test } from "bun:test";
import { MAX_BLOCK_NUMBER } from "../../blockRef";
import { toNodeBlockRef } from "./blockRef";

test("every accepted form becomes the node's form", () => {
  expect(toNodeBlockRef(0)).toBe("0x0");
  expect(toNodeBlockRef(436)).toBe("0x1b4");
  expect(toNodeBlockRef("0x1b4")).toBe("0x1b4");
  expect(toNodeBlockRef("0X01B4")).toBe("0x1b4");
  expect(toNodeBlockRef("436")).toBe("0x1b4");
  expect(toNodeBlockRef("0436")).toBe("0x1b4");
  expect(toNodeBlockRef(MAX_BLOCK_NUMBER)).toBe("0xffffffffffffffff");
  expect(toNodeBlockRef("18446744073709551615")).toBe("0xffffffffffffffff");
  for (const tag of ["latest", "earliest", "pending", "safe", "finalized"]) {
    expect(toNodeBlockRef(tag)).toBe(tag);
    expect(toNodeBlockRef(tag.toUpperCase())).toBe(tag);
  }
});

test("anything else is refused", () => {
  for (const bad of [
    -1,
    1.5,
    Number.MAX_SAFE_INTEGER + 2,
    "0x",
    "0xg",
    "-1",
    " 1",
    "1e3",
    "",
    "head",
    "18446744073709551616",
    "0x10000000000000000",
    `0x${"0".repeat(63)}1`,
    null,
    true,
    [1],
    {},
    MAX_BLOCK_NUMBER + 1n,
    -1n,
  ]) {
    expect(toNodeBlockRef(bad)).toBeUndefined();
  }
});
