import { expect, test } from "bun:test";
import { FAILING_AFTER_MS, MAX_DELAY_MS, retryDelayMs } from "./schedule";

test("the first retries come soon: 1 s, 5 s, 30 s, 2 min, whatever the draw", () => {
  for (const draw of [0, 0.5, 0.999]) {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, () => draw))).toEqual([1_000, 5_000, 30_000, 120_000]);
  }
});

test("then the delay doubles with ±20% jitter, up to an hour", () => {
  const middle = () => 0.5;
  expect([5, 6, 7, 8, 9, 10].map((n) => retryDelayMs(n, middle))).toEqual([
    240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000,
  ]);
  // The draw's extremes: 20% below, and 20% above (but never past the hour).
  expect(retryDelayMs(5, () => 0)).toBe(192_000);
  expect(retryDelayMs(5, () => 0.9999999)).toBe(288_000);
  expect(retryDelayMs(9, () => 0)).toBe(2_880_000);
  expect(retryDelayMs(9, () => 0.9999999)).toBe(MAX_DELAY_MS);
  expect(retryDelayMs(1_000_000, () => 0.5)).toBe(MAX_DELAY_MS);
});

test("a day of failures takes more than twenty attempts, each within the hour: retried for at least a day", () => {
  let elapsed = 0;
  let attempts = 0;
  while (elapsed < FAILING_AFTER_MS) elapsed += retryDelayMs(++attempts, () => 0.9999999);
  expect(attempts).toBeGreaterThan(20);
  for (let n = 1; n < 200; n++) expect(retryDelayMs(n)).toBeLessThanOrEqual(MAX_DELAY_MS);
});
