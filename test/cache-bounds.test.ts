/**
 * The cache's bounds and crash safety, with the service as its own process: writing twice a tier's budget
 * keeps it within the budget (memory: RSS within CACHE_MEMORY_MB plus a stated overhead; disk: the data file
 * within CACHE_DISK_MB), and a kill -9 during heavy disk writes never yields a wrong hit after restart.
 */
import { beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DevChain } from "../src/families/evm/devChain";
import { calldata, deployContract, rpc } from "./support/chain";
import { faults, startProxy } from "./support/proxy";
import { concurrently, post, startServiceProcess } from "./support/service";
import { newAnvil, onTeardown } from "./support/shared";

const MB = 1024 * 1024;
/**
 * What the service may hold beyond CACHE_MEMORY_MB once the writes are done: runtime, pools, allocator
 * slack (measured: 20-30 MB over 32 MB and 128 MB budgets). While large misses stream in, garbage not yet
 * collected adds up to ~100 MB more for a moment (README, Caching).
 */
const RSS_OVERHEAD_MB = 64;
const SETTLE_MS = 1_000;

let anvil: DevChain;
let blob: string;
/** A final block at which eth_call answers are kept for ever. */
const AT = "0x2";

/** `count` distinct eth_call answers of about `kb` KB each (hex doubles the bytes). */
async function bigCalls(count: number, kb: number, seedBase = 0) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => ({
      method: "eth_call",
      params: [{ to: blob, data: await calldata("Blob", "blob", [seedBase + i, (kb * 1024) / 2]) }, AT],
    })),
  );
}

async function send(url: string, calls: { method: string; params: unknown[] }[], parallel = 8) {
  for (let i = 0; i < calls.length; i += parallel) {
    const answers = await Promise.all(
      calls
        .slice(i, i + parallel)
        .map((c, j) => post(`${url}/node/jsonrpc`, { jsonrpc: "2.0", id: i + j, ...c })),
    );
    for (const a of answers) expect(a.json.result).toStartWith("0x");
  }
}

async function health(url: string): Promise<any> {
  return (await fetch(`${url}/health`)).json();
}

beforeAll(async () => {
  anvil = await newAnvil();
  blob = await deployContract(anvil.url, "Blob");
  // Block 2 is final once the head is 64 blocks past it.
  await rpc(anvil.url)("anvil_mine", ["0x50"]);
}, 60_000);

test("writing twice CACHE_MEMORY_MB keeps RSS within it plus the stated overhead", async () => {
  const service = await startServiceProcess({
    upstreamUrls: [anvil.url],
    env: { CACHE_MEMORY_MB: "32", CACHE_DISK_MB: "0" },
  });
  await send(service.url, await bigCalls(8, 256, 10_000));
  const before = await service.rss();
  const calls = await bigCalls(256, 256);
  await send(service.url, calls);
  await Bun.sleep(SETTLE_MS);
  const after = await service.rss();
  const h = await health(service.url);
  expect(h.cache.memory.bytes).toBeLessThanOrEqual(32 * MB);
  expect(h.cache.memory.bytes).toBeGreaterThan(24 * MB);
  expect(after - before).toBeLessThanOrEqual((32 + RSS_OVERHEAD_MB) * MB);
  // The newest answers are the ones kept.
  const last = await post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, ...calls.at(-1)! });
  expect(last.headers.get("x-cache")).toBe("memory");
  await service.stop();
}, 120_000);

test("writing twice CACHE_DISK_MB keeps the disk tier's file within it", async () => {
  const service = await startServiceProcess({
    upstreamUrls: [anvil.url],
    env: { CACHE_MEMORY_MB: "4", CACHE_DISK_MB: "32" },
  });
  await send(service.url, await bigCalls(256, 256, 20_000));
  const h = await health(service.url);
  expect(h.cache.disk.fileBytes).toBeLessThanOrEqual(32 * MB);
  expect(h.cache.disk.usedBytes).toBeLessThanOrEqual(32 * MB);
  expect(h.cache.disk.usedBytes).toBeGreaterThan(8 * MB);
  await service.stop();
}, 120_000);

test("kill -9 during heavy disk writes: after a restart every hit equals the node's answer", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "cg-kill-"));
  onTeardown(async () => rmSync(dataDir, { recursive: true, force: true }));
  // The node's answers to the full blocks the load asks for are held back until after the kill (the proxy
  // hangs them; the service's own reads ask for headers only): requests are surely in flight when it comes,
  // however quickly the rest is answered.
  const proxy = startProxy(anvil.url);
  const asksBlock = (c: any) => c?.method === "eth_getBlockByNumber" && c.params?.[1] === true;
  proxy.mode = faults.forCalls(asksBlock, faults.hang());
  const first = await startServiceProcess({
    upstreamUrls: [proxy.url],
    dataDir,
    env: { CACHE_MEMORY_MB: "16" },
  });
  const calls = [
    ...(await bigCalls(400, 64, 30_000)),
    ...Array.from({ length: 60 }, (_, n) => ({
      method: "eth_getBlockByNumber",
      params: [`0x${n.toString(16)}`, true],
    })),
  ];
  // Heavy writes in flight: every answer is final, so each is written to disk.
  const load = concurrently(
    calls.map((c, i) => ({ url: `${first.url}/node/jsonrpc`, body: { jsonrpc: "2.0", id: i, ...c } })),
  );
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const h = await health(first.url).catch(() => undefined);
    if (h && h.cache.disk.entries >= 40) break;
    await Bun.sleep(10);
  }
  await first.kill("SIGKILL");
  const interrupted = (await load).filter((a) => a.status === 0).length;
  expect(interrupted).toBeGreaterThan(0);

  const second = await startServiceProcess({
    upstreamUrls: [anvil.url],
    dataDir,
    databaseUrl: first.databaseUrl,
  });
  let hits = 0;
  for (const [i, c] of calls.entries()) {
    const answer = await post(`${second.url}/node/jsonrpc`, { jsonrpc: "2.0", id: i, ...c });
    const expected = await post(anvil.url, { jsonrpc: "2.0", id: i, ...c });
    expect(answer.json).toEqual(expected.json);
    if (answer.headers.get("x-cache") === "disk") hits++;
  }
  expect(hits).toBeGreaterThan(0);
  const text = await (await fetch(`${second.url}/metrics`)).text();
  expect(text).toContain("gateway_cache_bad_records_total 0");
  await second.stop();
}, 180_000);

test("two service processes share one DATA_DIR: one's final answers are the other's disk hits", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "cg-shared-"));
  onTeardown(async () => rmSync(dataDir, { recursive: true, force: true }));
  const a = await startServiceProcess({ upstreamUrls: [anvil.url], dataDir });
  const b = await startServiceProcess({ upstreamUrls: [anvil.url], dataDir, databaseUrl: a.databaseUrl });
  const calls = await bigCalls(20, 16, 40_000);
  for (const [i, c] of calls.entries()) {
    const first = await post(`${a.url}/node/jsonrpc`, { jsonrpc: "2.0", id: i, ...c });
    expect(first.headers.get("x-cache")).toBe("miss");
  }
  // A's writes commit in batches: wait until its disk tier holds them, then B finds them all there.
  const deadline = Date.now() + 10_000;
  while ((await health(a.url)).cache.disk.entries < calls.length && Date.now() < deadline)
    await Bun.sleep(50);
  for (const [i, c] of calls.entries()) {
    const answer = await post(`${b.url}/node/jsonrpc`, { jsonrpc: "2.0", id: i, ...c });
    expect(answer.headers.get("x-cache")).toBe("disk");
    expect(answer.json).toEqual((await post(anvil.url, { jsonrpc: "2.0", id: i, ...c })).json);
  }
  await a.stop();
  await b.stop();
}, 120_000);
