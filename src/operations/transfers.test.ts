import { expect, test } from "bun:test";
import { pageCost } from "./transfers";

test("a page of transfers costs a token per 500 rows it reads, those its offset skips included", () => {
  const cost = (body?: object) => pageCost(body === undefined ? [] : [body]);
  // No body, or none of the two: the default limit, 50 rows.
  expect([cost(), cost({}), cost({ offset: null, limit: null })]).toEqual([1, 1, 1]);
  expect([cost({ limit: 500 }), cost({ limit: 0 }), cost({ offset: 450 })]).toEqual([1, 1, 1]);
  expect([cost({ offset: 451 }), cost({ offset: 1, limit: 500 }), cost({ offset: 1_000, limit: 0 })]).toEqual(
    [2, 2, 2],
  );
  // The deepest offset served with the largest page; a page `after` a row reads its limit alone.
  expect(cost({ offset: 10_000, limit: 500 })).toBe(21);
  expect(cost({ after: { blockNumber: 10 ** 9, transactionIndex: 0, logIndex: 0 }, limit: 500 })).toBe(1);
});
