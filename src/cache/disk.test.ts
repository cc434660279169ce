import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { Packr } from "msgpackr";
import { createLogger } from "../log";
import { createDiskTier, type DiskTier } from "./disk";

const log = createLogger({ level: "silent" });
const dirs: string[] = [];
const tiers: DiskTier[] = [];
afterEach(async () => {
  for (const t of tiers.splice(0)) await t.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tier(maxBytes: number, dir = mkdtempSync(join(tmpdir(), "cg-disk-"))) {
  dirs.push(dir);
  let evicted = 0;
  let bad = 0;
  const t = createDiskTier({
    dir,
    maxBytes,
    log,
    onEvict: (n) => {
      evicted += n;
    },
    onBadRecord: () => {
      bad++;
    },
  });
  tiers.push(t);
  return { t, dir, evicted: () => evicted, bad: () => bad };
}
const body = (i: number, size: number) => new TextEncoder().encode(`"${String(i).padStart(size - 2, "x")}"`);

test("what is written is read back, byte for byte, under its full key", async () => {
  const { t } = tier(64 * 1024 * 1024);
  t.set('eth_getBlockByNumber\u0000["0x1",true]', body(1, 5000));
  await t.flush();
  expect(t.get('eth_getBlockByNumber\u0000["0x1",true]')?.body).toEqual(body(1, 5000));
  expect(t.get('eth_getBlockByNumber\u0000["0x2",true]')).toBeUndefined();
});

test("writing three times the budget keeps the data file within it; the newest survive", async () => {
  const budget = 32 * 1024 * 1024;
  const { t, dir, evicted } = tier(budget);
  const size = 64 * 1024;
  const count = Math.ceil((3 * budget) / size);
  for (let i = 0; i < count; i++) {
    t.set(`k${i}`, body(i, size));
    if (i % 32 === 31) await t.flush();
  }
  await t.flush();
  expect(statSync(join(dir, "data.mdb")).size).toBeLessThanOrEqual(budget);
  expect(t.usage().usedBytes).toBeLessThanOrEqual(budget);
  expect(evicted()).toBeGreaterThan(count / 2);
  expect(t.get(`k${count - 1}`)?.body).toEqual(body(count - 1, size));
  expect(t.get("k0")).toBeUndefined();
});

test("a record that does not verify is a miss and is dropped", async () => {
  const { t, dir, bad } = tier(64 * 1024 * 1024);
  t.set("good", body(1, 100));
  t.set("tampered", body(2, 100));
  await t.flush();
  await t.close();
  tiers.pop();
  // Flip a byte of one record's body behind the tier's back.
  const env = open({ path: dir, maxDbs: 4 });
  const records = env.openDB({ name: "records", encoding: "binary" });
  const packr = new Packr({ useRecords: false });
  for (const { key, value } of records.getRange()) {
    const record = packr.unpack(value as Buffer);
    if (record.key !== "tampered") continue;
    record.body[10] ^= 1;
    await records.put(key, packr.pack(record));
  }
  await env.close();
  const again = tier(64 * 1024 * 1024, dir);
  dirs.pop();
  expect(again.t.get("tampered")).toBeUndefined();
  expect(again.bad()).toBe(1);
  expect(again.t.get("good")?.body).toEqual(body(1, 100));
  expect(bad()).toBe(0);
});

test("eviction goes on past records that do not decode, and drops them", async () => {
  const budget = 32 * 1024 * 1024;
  const size = 64 * 1024;
  const first = tier(budget);
  for (let i = 0; i < 16; i++) first.t.set(`old${i}`, body(i, size));
  await first.t.flush();
  await first.t.close();
  tiers.pop();
  // The oldest records' bytes replaced by something that is not msgpack at all (0xc1 is never used).
  const env = open({ path: first.dir, maxDbs: 4 });
  const records = env.openDB({ name: "records", encoding: "binary" });
  for (const { key } of records.getRange()) await records.put(key, Buffer.alloc(1024, 0xc1));
  await env.close();
  const again = tier(budget, first.dir);
  dirs.pop();
  const count = Math.ceil((3 * budget) / size);
  for (let i = 0; i < count; i++) {
    again.t.set(`k${i}`, body(i, size));
    if (i % 32 === 31) await again.t.flush();
  }
  await again.t.flush();
  expect(again.evicted()).toBeGreaterThan(count / 2);
  expect(again.t.usage().usedBytes).toBeLessThanOrEqual(budget);
  expect(again.t.get(`k${count - 1}`)?.body).toEqual(body(count - 1, size));
  // Every record left is one of the new ones: the undecodable ones went with the eviction.
  let live = 0;
  for (let i = 0; i < count; i++) if (again.t.get(`k${i}`)) live++;
  expect(again.t.usage().entries).toBe(live);
  expect(again.bad()).toBe(0);
});

/** Resolves after the timers due now (lmdb-js's read-snapshot renewal among them) have run. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Records 5 and 6 and the one without a height are read; 7 and 8 (dropped from 7) are misses. */
function expectDropped(reader: DiskTier) {
  expect(reader.get("block 5")?.body).toEqual(body(5, 100));
  expect(reader.get("block 6")?.body).toEqual(body(6, 100));
  expect(reader.get("block 7")).toBeUndefined();
  expect(reader.get("block 8")).toBeUndefined();
  expect(reader.get("chain id")?.body).toEqual(body(0, 100));
}

test("a reorg past finality drops the records from its height up, in every process sharing the directory", async () => {
  const { t, dir } = tier(64 * 1024 * 1024);
  for (let h = 5; h <= 8; h++) t.set(`block ${h}`, body(h, 100), BigInt(h));
  t.set("chain id", body(0, 100));
  await t.flush();
  expect(t.get("block 7")).toEqual({ body: body(7, 100), height: 7n });
  expect(t.get("chain id")).toEqual({ body: body(0, 100), height: undefined });
  // Another process on the same directory drops them: its own reads miss them once the drop commits.
  const other = tier(64 * 1024 * 1024, dir);
  dirs.pop();
  expect(await other.t.dropFrom(7n)).toBe(2);
  expectDropped(other.t);
  // The first process's reads keep the snapshot they began in until lmdb-js renews it at the next event turn
  // (a 0 ms timer; its README, resetReadTxn): one begun before the other's commit still holds them until
  // then. From that turn it misses them too.
  await nextTurn();
  expectDropped(t);
  // Dropped once: nothing is left to drop; a new answer at that height is kept as any other.
  expect(await t.dropFrom(7n)).toBe(0);
  t.set("block 7", body(70, 100), 7n);
  await t.flush();
  expect(t.get("block 7")).toEqual({ body: body(70, 100), height: 7n });
  expect(await t.dropFrom(0n)).toBe(3);
  expect(t.get("chain id")?.body).toEqual(body(0, 100));
});
