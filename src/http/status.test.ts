import { expect, test } from "bun:test";
import { quantile } from "./status";

const bounds = [0.001, 0.01, 0.1, Number.POSITIVE_INFINITY];

test("quantiles of what was observed between two readings, as Prometheus's histogram_quantile reads them", () => {
  const older = { bounds, counts: [10, 10, 10, 10] };
  // Since then: 50 observations up to 1 ms, 40 in (1 ms, 10 ms], 10 in (10 ms, 100 ms].
  const newer = { bounds, counts: [60, 100, 110, 110] };
  expect(quantile(0.5, newer, older)).toBe(0.001);
  // Rank 99 is the 9th of the 10 in the third bucket: 10 ms + 90 ms * 9/10.
  expect(quantile(0.99, newer, older)).toBeCloseTo(0.091, 12);
  // Rank 75 is the 25th of the 40 in the second bucket.
  expect(quantile(0.75, newer, older)).toBeCloseTo(0.001 + 0.009 * (25 / 40), 12);
  // Without an older reading, everything since start: rank 55 of 110 is the 55th of 60 in the first bucket.
  expect(quantile(0.5, newer)).toBeCloseTo(0.001 * (55 / 60), 12);
});

test("no observation is null; past the last finite bound the answer is that bound", () => {
  expect(quantile(0.5, { bounds, counts: [3, 3, 3, 3] }, { bounds, counts: [3, 3, 3, 3] })).toBeNull();
  expect(quantile(0.5, { bounds: [], counts: [] })).toBeNull();
  expect(quantile(0.99, { bounds, counts: [0, 0, 1, 100] })).toBe(0.1);
});
