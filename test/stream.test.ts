/**
 * The bulk streams: NDJSON, one line per block in order, each equal to the single call's answer; ranges
 * checked; a slow reader does not make the server hold the range in memory.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DevChain } from "../src/families/evm/devChain";
import { calldata, deployContract, populateChain, rpc, rpcBatch } from "./support/chain";
import { startProxy } from "./support/proxy";
import { post, startServiceProcess, startTestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

const hex = (n: number) => `0x${n.toString(16)}`;
const MB = 1024 * 1024;

/** The node's own `result` for a call, exactly as it sent it. */
async function nodeRaw(url: string, method: string, params: unknown[]): Promise<string> {
  const { text } = await post(url, { jsonrpc: "2.0", id: 1, method, params });
  const prefix = '{"jsonrpc":"2.0","id":1,"result":';
  if (!text.startsWith(prefix)) throw new Error(text.slice(0, 200));
  return text.trimEnd().slice(prefix.length, -1);
}

async function inParallel<T>(count: number, width: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  for (let i = 0; i < count; i += width) {
    const part = await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, j) => work(i + j)));
    part.forEach((v, j) => {
      out[i + j] = v;
    });
  }
  return out;
}

let anvil: DevChain;
let service: string;

beforeAll(async () => {
  anvil = await newAnvil();
  await populateChain(anvil.url);
  await rpc(anvil.url)("anvil_mine", ["0x3e8"]);
  service = (await startTestService({ upstreamUrls: [anvil.url], env: { STREAM_MAX_BLOCKS: "2000" } })).url;
}, 60_000);

describe("streams", () => {
  test("1,000 blocks of receipts: each line equals ext_getBlockReceipts of its block", async () => {
    const response = await fetch(`${service}/node/stream/ext_getBlockReceipts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fromBlock: 0, toBlock: "0x3e7" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await response.text()).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(1000);
    const expected = await inParallel(1000, 25, (n) => nodeRaw(anvil.url, "eth_getBlockReceipts", [hex(n)]));
    for (let n = 0; n < 1000; n++) expect(lines[n]).toBe(`{"number":${n},"receipts":${expected[n]}}`);
    // The same answers, one at a time, as the REST operation gives them.
    const single = await post(`${service}/node/rest/ext_getBlockReceipts`, { number: 14 });
    expect(JSON.stringify(single.json)).toBe(JSON.stringify(JSON.parse(lines[14]!).receipts));
  }, 60_000);

  test("final blocks the cache holds are written as stored (streams and long batches), with no node call; misses between them in order", async () => {
    const proxy = startProxy(anvil.url);
    const dataDir = mkdtempSync(join(tmpdir(), "cg-stream-"));
    try {
      const first = await startTestService({ upstreamUrls: [proxy.url], dataDir });
      await until("the final block known", async () => {
        const health = (await (await fetch(`${first.url}/health`)).json()) as any;
        return health.head.finalized >= 200 ? true : undefined;
      });
      const expected = await inParallel(100, 25, (i) =>
        nodeRaw(anvil.url, "eth_getBlockReceipts", [hex(100 + i)]),
      );
      const lines = expected.map((raw, i) => `{"number":${100 + i},"receipts":${raw}}\n`).join("");
      const streamed = async (url: string) => {
        const before = proxy.callsOf("eth_getBlockReceipts").length;
        const text = await (
          await fetch(`${url}/node/stream/ext_getBlockReceipts`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ fromBlock: 100, toBlock: 199 }),
          })
        ).text();
        return { text, calls: proxy.callsOf("eth_getBlockReceipts").length - before };
      };
      // Every third block asked once: 34 of the 100 are kept.
      for (let n = 100; n < 200; n += 3) {
        const single = await post(`${first.url}/node/jsonrpc`, {
          jsonrpc: "2.0",
          id: n,
          method: "ext_getBlockReceipts",
          params: [hex(n)],
        });
        expect(single.headers.get("x-cache")).toBe("miss");
      }
      expect(await streamed(first.url)).toEqual({ text: lines, calls: 66 });
      expect(await streamed(first.url)).toEqual({ text: lines, calls: 0 });
      await first.stop();

      // Restarted: the memory tier is empty and the range is read from disk, without being brought to memory.
      const second = await startTestService({
        upstreamUrls: [proxy.url],
        dataDir,
        databaseUrl: first.databaseUrl,
      });
      expect(await streamed(second.url)).toEqual({ text: lines, calls: 0 });
      // A long JSON-RPC batch of the same blocks (streamed, past 16 calls) is written the same way.
      const ids = expected.map((_, i) => (i % 2 === 0 ? 100 + i : `"b${100 + i}"`));
      const before = proxy.callsOf("eth_getBlockReceipts").length;
      const batch = await post(
        `${second.url}/node/jsonrpc`,
        `[${ids.map((id, i) => `{"jsonrpc":"2.0","id":${id},"method":"ext_getBlockReceipts","params":["${hex(100 + i)}"]}`).join(",")}]`,
        { raw: true },
      );
      expect(batch.text).toBe(
        `[${expected.map((raw, i) => `{"jsonrpc":"2.0","id":${ids[i]},"result":${raw}}`).join(",")}]`,
      );
      expect(proxy.callsOf("eth_getBlockReceipts").length).toBe(before);
      const ask = () =>
        post(`${second.url}/node/jsonrpc`, {
          jsonrpc: "2.0",
          id: 1,
          method: "ext_getBlockReceipts",
          params: [hex(150)],
        });
      expect((await ask()).headers.get("x-cache")).toBe("disk");
      expect((await ask()).headers.get("x-cache")).toBe("memory");
      await second.stop();
    } finally {
      proxy.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  test("traces, with tags for the bounds", async () => {
    const response = await fetch(`${service}/node/stream/trace_block`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fromBlock: "earliest", toBlock: "20" }),
    });
    const lines = (await response.text()).trimEnd().split("\n");
    expect(lines).toHaveLength(21);
    for (let n = 0; n <= 20; n++) {
      expect(lines[n]).toBe(`{"number":${n},"traces":${await nodeRaw(anvil.url, "trace_block", [hex(n)])}}`);
    }
  });

  test("ranges are checked", async () => {
    const stream = (body: unknown) => post(`${service}/node/stream/ext_getBlockReceipts`, body);
    expect((await stream({ fromBlock: 10, toBlock: 9 })).json).toEqual({
      detail: [
        { loc: ["body", "toBlock"], msg: "toBlock should be at or after fromBlock", type: "value_error" },
      ],
    });
    expect((await stream({ fromBlock: 0, toBlock: 2000 })).json).toEqual({
      detail: [
        {
          loc: ["body", "toBlock"],
          msg: "the range holds 2001 blocks; at most 2000 (STREAM_MAX_BLOCKS) a request",
          type: "value_error",
        },
      ],
    });
    expect((await stream({ fromBlock: "pending", toBlock: 1 })).json).toEqual({
      detail: [
        { loc: ["body", "fromBlock"], msg: "pending is not a block a range can name", type: "value_error" },
      ],
    });
    const missing = await stream({ fromBlock: 1 });
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([
      { loc: ["body", "toBlock"], msg: "Field required", type: "missing" },
    ]);
  });

  test("the OpenAPI document lists the streams", async () => {
    const doc = (await (await fetch(`${service}/swagger/json`)).json()) as any;
    for (const path of ["/node/stream/ext_getBlockReceipts", "/node/stream/trace_block"]) {
      expect(Object.keys(doc.paths[path].post.responses["200"].content)).toEqual(["application/x-ndjson"]);
    }
  });
});

test("a reader that stops does not make the server fetch, or hold, the rest of a ~100 MB range, from the node or from the cache", async () => {
  const big = await newAnvil();
  const blob = await deployContract(big.url, "Blob");
  const call = rpc(big.url);
  const [sender] = (await call("eth_accounts")) as string[];
  const BLOCKS = 200;
  const TXS = 4;
  await call("evm_setAutomine", [false]);
  const first = Number(await call("eth_blockNumber")) + 1;
  for (let b = 0; b < BLOCKS; b++) {
    const data = await Promise.all(
      Array.from({ length: TXS }, (_, t) => calldata("Blob", "emitBlob", [b * TXS + t, 64 * 1024])),
    );
    await rpcBatch(big.url, [
      ...data.map((d) => ({
        method: "eth_sendTransaction",
        params: [{ from: sender, to: blob, data: d, gas: "0x2dc6c0" }],
      })),
      { method: "evm_mine", params: [] },
    ]);
  }
  const last = first + BLOCKS - 1;
  expect((await call("eth_getBlockReceipts", [hex(last)])).length).toBe(TXS);

  // A reader that reads 5 MB, stops for two seconds, then reads the rest; what the server held meanwhile.
  const stopAndGo = async (server: Awaited<ReturnType<typeof startServiceProcess>>) => {
    const base = await server.rss();
    const response = await fetch(`${server.url}/node/stream/ext_getBlockReceipts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fromBlock: first, toBlock: last }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let bytes = 0;
    const read = async () => {
      const { done, value } = await reader.read();
      if (!done) {
        bytes += value.length;
        text += decoder.decode(value, { stream: true });
      }
      return done;
    };
    while (bytes < 5 * MB) await read();
    await Bun.sleep(2_000);
    const fetched = proxy.callsOf("eth_getBlockReceipts").length;
    const held = (await server.rss()) - base;
    while (!(await read())) {}
    return { text, bytes, fetched, held };
  };

  // No cache, so whatever the server holds is buffering; four blocks fetched ahead of the reader.
  const proxy = startProxy(big.url);
  const uncached = await startServiceProcess({
    upstreamUrls: [proxy.url],
    env: { CACHE_MEMORY_MB: "0", STREAM_PREFETCH: "4" },
  });
  const stopped = await stopAndGo(uncached);
  await uncached.stop();
  // The server fetches a few blocks ahead (its prefetch, and what socket buffers take), never the rest of
  // the range, and holds no more than that.
  expect(stopped.fetched).toBeLessThan(BLOCKS / 2);
  expect(stopped.held).toBeLessThan(48 * MB);
  const lines = stopped.text.trimEnd().split("\n");
  expect(lines).toHaveLength(BLOCKS);
  expect(stopped.bytes).toBeGreaterThan(90 * MB);
  expect(JSON.parse(lines[BLOCKS - 1]!).number).toBe(last);

  // From the cache (final blocks, on disk and partly in memory) the stream runs at the reader's pace too.
  await call("anvil_mine", [hex(80)]);
  const cached = await startServiceProcess({ upstreamUrls: [proxy.url], env: { CACHE_MEMORY_MB: "16" } });
  await until("the range final", async () => {
    const health = (await (await fetch(`${cached.url}/health`)).json()) as any;
    return health.head.finalized >= last ? true : undefined;
  });
  const filled = await (
    await fetch(`${cached.url}/node/stream/ext_getBlockReceipts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fromBlock: first, toBlock: last }),
    })
  ).text();
  expect(filled).toBe(stopped.text);
  const calls = proxy.callsOf("eth_getBlockReceipts").length;
  const again = await stopAndGo(cached);
  await cached.stop();
  expect(again.fetched).toBe(calls);
  expect(again.held).toBeLessThan(48 * MB);
  expect(again.text).toBe(stopped.text);
}, 300_000);
