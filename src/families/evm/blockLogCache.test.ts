/**
 * The parsed logs the kept log filters' polls share: one read for polls of one block at once and after, what
 * a read finds no block for (or fails) read again, bounded in blocks and bytes (least recently used first).
 */
import { expect, test } from "bun:test";
import { type BlockLogs, createBlockLogCache, sharedLogs } from "./blockLogCache";

const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** A mint's Transfer log as anvil writes it. */
const LOG = {
  address: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  topics: [TRANSFER],
  data: `0x${"0".repeat(63)}5`,
  blockNumber: "0x2",
  logIndex: "0x0",
  removed: false,
};

function counted(options: { maxBlocks?: number; maxBytes?: number } = {}) {
  const sources: string[] = [];
  const cache = createBlockLogCache({
    maxBlocks: options.maxBlocks ?? 10,
    maxBytes: options.maxBytes ?? 1_000_000,
    onRead: (source) => sources.push(source),
  });
  const reads: string[] = [];
  /** Reads block `key` (a log of `size` bytes of data), or none. */
  const get = (key: string, found = true, size = 1) =>
    cache.get(key, async () => {
      reads.push(key);
      await Bun.sleep(1);
      if (!found) return undefined;
      const logs = sharedLogs([{ logs: [{ ...LOG, data: `0x${"0".repeat(size * 2)}` }] }]);
      return { number: 2n, hash: key, logs } satisfies BlockLogs;
    });
  return { get, reads, sources };
}

test("a log kept for the filters: its address and topics to match, and its text as the node wrote it", () => {
  expect(sharedLogs([{ logs: [LOG] }, {}, { logs: [] }])).toEqual([
    { address: LOG.address, topics: LOG.topics, text: JSON.stringify(LOG) },
  ]);
});

test("polls of one block, at once and after: one read, the others shared", async () => {
  const { get, reads, sources } = counted();
  const [a, b, c] = await Promise.all([get("0xa"), get("0xa"), get("0xa")]);
  expect(a).toBe(b!);
  expect(a).toBe(c!);
  expect(await get("0xa")).toBe(a!);
  expect(reads).toEqual(["0xa"]);
  expect(sources).toEqual(["read", "shared", "shared", "shared"]);
});

test("no block, or a failed read, is not kept: the next poll reads again", async () => {
  const { get, reads } = counted();
  expect(await get("0xa", false)).toBeUndefined();
  expect((await get("0xa"))?.hash).toBe("0xa");
  const cache = createBlockLogCache({ maxBlocks: 10, maxBytes: 1_000 });
  await expect(cache.get("0xb", () => Promise.reject(new Error("node away")))).rejects.toThrow("node away");
  expect(await cache.get("0xb", async () => undefined)).toBeUndefined();
  expect(reads).toEqual(["0xa", "0xa"]);
});

test("bounded in blocks: the least recently used goes first", async () => {
  const { get, reads } = counted({ maxBlocks: 2 });
  await get("0xa");
  await get("0xb");
  await get("0xa");
  await get("0xc");
  await get("0xa");
  expect(reads).toEqual(["0xa", "0xb", "0xc"]);
  await get("0xb");
  expect(reads).toEqual(["0xa", "0xb", "0xc", "0xb"]);
});

test("bounded in bytes of the logs' text: a block past the bound alone is not kept", async () => {
  const text = (size: number) => JSON.stringify({ ...LOG, data: `0x${"0".repeat(size * 2)}` }).length;
  const { get, reads } = counted({ maxBytes: text(100) + text(100) });
  await get("0xa", true, 100);
  await get("0xb", true, 100);
  await get("0xa");
  expect(reads).toEqual(["0xa", "0xb"]);
  // Past the bytes of two: the oldest goes.
  await get("0xc", true, 100);
  await get("0xb");
  expect(reads).toEqual(["0xa", "0xb", "0xc", "0xb"]);
  await get("0xd", true, 1_000);
  await get("0xd");
  expect(reads).toEqual(["0xa", "0xb", "0xc", "0xb", "0xd", "0xd"]);
});
