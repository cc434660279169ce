import { expect, test } from "bun:test";
import { newDeliveryId } from "./endpoints";

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
