import { expect, test } from "bun:test";
import { parseJson } from "../json";
import { deliveryBodies, newDeliveryId, RESULTS_PER_DELIVERY, removedBody, resultsBlockHash } from "./bodies";

const block = { number: 7, hash: "0xabc" };
const result = (i: number) => ({ filter_id: `f${i}`, value: { value: 10n ** 30n + BigInt(i) }, block });

test("a block's results in one body; none gives no body", () => {
  const [only, ...rest] = deliveryBodies("block", "ETH", block, [result(1), result(2)]);
  expect(rest).toEqual([]);
  expect(only).toBe(
    '{"type":"block","chain":"ETH","block":{"number":7,"hash":"0xabc"},"results":[' +
      '{"filter_id":"f1","value":{"value":1000000000000000000000000000001},"block":{"number":7,"hash":"0xabc"}},' +
      '{"filter_id":"f2","value":{"value":1000000000000000000000000000002},"block":{"number":7,"hash":"0xabc"}}]}',
  );
  expect(deliveryBodies("block", "ETH", block, [])).toEqual([]);
});

test("more than a page: parts in order, each saying which of how many", () => {
  const results = Array.from({ length: 2 * RESULTS_PER_DELIVERY + 1 }, (_, i) => result(i));
  const bodies = deliveryBodies("pending", "LTC", null, results).map((b) => parseJson(b) as any);
  expect(bodies.map((b) => [b.type, b.block, b.part, b.parts, b.results.length])).toEqual([
    ["pending", null, 1, 3, 1_000],
    ["pending", null, 2, 3, 1_000],
    ["pending", null, 3, 3, 1],
  ]);
  expect(bodies.flatMap((b) => b.results)).toEqual(results);
});

test("a removal repeats the results with removed: true, in the same parts, amounts exact", () => {
  const [sent] = deliveryBodies("block", "ETH", block, [result(1)]);
  expect(removedBody(sent!)).toBe(
    '{"type":"block.removed","chain":"ETH","block":{"number":7,"hash":"0xabc"},"results":[' +
      '{"filter_id":"f1","value":{"value":1000000000000000000000000000001},"block":{"number":7,"hash":"0xabc"},"removed":true}]}',
  );
  const parts = deliveryBodies(
    "block",
    "ETH",
    block,
    Array.from({ length: 1_001 }, (_, i) => result(i)),
  );
  expect(parseJson(removedBody(parts[1]!))).toMatchObject({ part: 2, parts: 2, type: "block.removed" });
});

test("the block hash is the results' own", () => {
  expect(resultsBlockHash([result(1)])).toBe("0xabc");
  expect(resultsBlockHash([])).toBeUndefined();
});

test("a delivery id is msg_ and a ULID: 10 characters of time, 16 random, Crockford's base32", () => {
  // 2026-11-28T10:00:00Z: 1795860000000 ms, written in base32 on 10 characters.
  const ms = Date.UTC(2026, 10, 28, 10);
  const id = newDeliveryId(ms);
  expect(id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
  let time = 0;
  for (const c of id.slice(4, 14)) time = time * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(c);
  expect(time).toBe(ms);
  expect(id.slice(4, 14)).toBe(newDeliveryId(ms).slice(4, 14));
});

test("ids never repeat, and sort by the millisecond they were made", () => {
  const ids = Array.from({ length: 10_000 }, () => newDeliveryId(1_000));
  expect(new Set(ids).size).toBe(ids.length);
  expect(newDeliveryId(1_001) > newDeliveryId(1_000)).toBe(true);
  expect(newDeliveryId(2 ** 48 - 1).slice(4, 14)).toBe("7ZZZZZZZZZ");
});
