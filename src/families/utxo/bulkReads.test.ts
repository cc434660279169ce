import { expect, test } from "bun:test";
import type { Sql } from "../../db/database";
import { IndexBulkLoadError } from "../../errors";
import { BULK_RETRY_AFTER_S, BULK_STATE_TTL_MS, createBulkReads } from "./bulkReads";

/** A stand-in database answering each query with the next of `answers` (a row list, or an error). */
function fakeSql(answers: (Record<string, unknown>[] | Error)[]) {
  const asked = { count: 0 };
  const sql = (() => {
    const answer = answers[asked.count++];
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer ?? []);
  }) as unknown as Sql;
  return { sql, asked };
}

const ROW = { from: "100", last: "250", day: "2020-03-02" };

test("the state is read once every BULK_STATE_TTL_MS at most, on demand, and a failed read is not kept", async () => {
  let now = 0;
  const { sql, asked } = fakeSql([[ROW], new Error("lost"), [], [ROW]]);
  const bulk = createBulkReads(sql, () => now);
  const state = { fromBlock: 100n, lastBlock: 250n, fromDay: "2020-03-02" };
  expect(await bulk.state()).toEqual(state);
  now = BULK_STATE_TTL_MS - 1;
  expect(await bulk.state()).toEqual(state);
  expect(asked.count).toBe(1);
  now = BULK_STATE_TTL_MS;
  await expect(bulk.state()).rejects.toThrow("lost");
  expect(await bulk.state()).toBeUndefined();
  expect(asked.count).toBe(3);
  await bulk.refuse("transfers");
  now += BULK_STATE_TTL_MS;
  expect(await bulk.state()).toEqual(state);
});

test("a read refused during a bulk load is a 503 with Retry-After naming it and how far it is", async () => {
  const { sql } = fakeSql([[{ ...ROW, day: null }]]);
  const bulk = createBulkReads(sql, () => 0);
  expect((await bulk.state())?.fromDay).toBeUndefined();
  const error = await bulk.refuse("transfers").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(IndexBulkLoadError);
  const e = error as IndexBulkLoadError;
  expect([e.status, e.code, e.retryable, e.retryAfterSeconds]).toEqual([
    503,
    -32603,
    true,
    BULK_RETRY_AFTER_S,
  ]);
  expect(e.message).toBe(
    "transfers are not answered while the index is bulk loaded (from block 100, now at block 250): the address totals, scripthashes and daily figures of its blocks, and the lookups by address and by block, are made when it ends; retry later",
  );
});
