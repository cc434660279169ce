/**
 * The operator's status page (GET /status) and its JSON (GET /status.json) against a running service with
 * traffic on a real anvil: the JSON's figures equal /health and /metrics, and the page, rendered in a real
 * headless Chromium, loads with no failed request and no console error, shows the node's head and follows it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, launchBrowser } from "./support/browser";
import { rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const KEY = "status-page-key-0123456789";
/** Blocks mined before the service starts: the indexer has a backfill to do. */
const START_BLOCKS = 40;

let anvilUrl: string;
/** The second upstream, which a test takes away and brings back. */
let proxy: NodeProxy;
let service: TestService;
let socket: TestSocket;
let browser: Browser;
const shots = mkdtempSync(join(tmpdir(), "cg-status-"));

const nodeHead = async () => Number(BigInt(await rpc(anvilUrl)("eth_blockNumber", [])));
const json = async (path: string) => (await fetch(`${service.url}${path}`)).json() as Promise<any>;
const call = (method: string, params: unknown[] = []) =>
  post(
    `${service.url}/node/jsonrpc`,
    { jsonrpc: "2.0", id: 1, method, params },
    { headers: { "x-api-key": KEY } },
  );

/** Waits until the service's head and index are at the node's head. */
async function caughtUp(): Promise<number> {
  const head = await nodeHead();
  await until(
    "the service and its index at the node's head",
    async () => {
      const h = await json("/health");
      return h.head.number === head && h.indexer.lastBlockNumber === head ? true : undefined;
    },
    20_000,
  );
  return head;
}

beforeAll(async () => {
  const anvil = await newAnvil();
  anvilUrl = anvil.url;
  await rpc(anvilUrl)("anvil_mine", [`0x${START_BLOCKS.toString(16)}`]);
  proxy = startProxy(anvilUrl);
  service = await startTestService({
    upstreamUrls: [anvilUrl, proxy.url],
    env: { API_KEYS: KEY, INDEXER: "on", UPSTREAM_COOLDOWN_MS: "500" },
  });
  // Traffic of every kind the page shows: answers, a hit from memory, a refusal, a node error, a socket.
  for (let i = 0; i < 5; i++) expect((await call("eth_blockNumber")).status).toBe(200);
  for (let i = 0; i < 3; i++) await call("eth_getBlockByNumber", ["0x1", false]);
  await call("eth_getBalance", ["not an address", "latest"]);
  await call("eth_call", [{ to: "0x0000000000000000000000000000000000000001", data: "0xzz" }, "latest"]);
  socket = await connectSocket(wsUrl(service.url, KEY));
  await socket.request("eth_subscribe", ["newHeads"]);
  await caughtUp();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  socket?.close();
  await browser?.close();
  rmSync(shots, { recursive: true, force: true });
});

test("/status.json says what /health and /metrics say", async () => {
  // Two samples a second apart make the first chart point.
  await until(
    "two status samples",
    async () => ((await json("/status.json")).series.at.length > 0 ? true : undefined),
    5_000,
  );
  // Nothing else runs now: the three reads see the same counters.
  const status = await json("/status.json");
  const health = await json("/health");
  const metrics = await (await fetch(`${service.url}/metrics`)).text();

  expect(status.status).toBe(health.status);
  expect(status.chainId).toBe(health.chainId);
  expect(status.head.number).toBe(health.head.number);
  expect(status.head.number).toBe(await nodeHead());
  expect(status.head.finalized).toBe(health.head.finalized);
  expect(status.head.number).toBe(metric(metrics, "gateway_head_block"));
  // The age is that of the head block's own timestamp (anvil's clock is this machine's).
  const block = await rpc(anvilUrl)("eth_getBlockByNumber", ["latest", false]);
  const age = status.at / 1000 - Number(BigInt(block.timestamp));
  expect(Math.abs(status.head.ageSeconds - age)).toBeLessThanOrEqual(1);
  expect(Math.abs(metric(metrics, "gateway_head_age_seconds")! - age)).toBeLessThanOrEqual(2);
  expect(status.upstreams.map((u: any) => u.name)).toEqual(["upstream-1", "upstream-2"]);
  for (const [i, u] of status.upstreams.entries()) {
    const hu = health.upstream.upstreams[i];
    expect([u.name, u.state, u.headBlockNumber, u.pushing, u.batchLimit]).toEqual([
      hu.name,
      hu.state,
      hu.headBlockNumber,
      hu.pushing,
      hu.batchLimit,
    ]);
    expect(u.lastMinute.errors).toBe(0);
  }
  const first = status.upstreams[0];
  expect(first.lastMinute.requests).toBeGreaterThan(0);
  expect(first.lastMinute.p99Ms).toBeGreaterThanOrEqual(first.lastMinute.p50Ms);

  expect(status.cache.memory.bytes).toBe(health.cache.memory.bytes);
  expect(status.cache.memory.entries).toBe(health.cache.memory.entries);
  expect(status.cache.memory.budgetBytes).toBe(
    metric(metrics, "gateway_cache_budget_bytes", { tier: "memory" }),
  );
  expect(status.cache.disk.entries).toBe(health.cache.disk.entries);
  expect(status.cache.disk.budgetBytes).toBe(metric(metrics, "gateway_cache_budget_bytes", { tier: "disk" }));
  const lookups = (tier: string, result: string) =>
    metric(metrics, "gateway_cache_lookups_total", { tier, result }) ?? 0;
  expect(status.totals.cache).toEqual({
    memoryHits: lookups("memory", "hit"),
    diskHits: lookups("disk", "hit"),
    misses: lookups("memory", "miss") - lookups("disk", "hit"),
  });
  expect(status.totals.cache.memoryHits).toBeGreaterThanOrEqual(2);

  // Every (operation, outcome) counted, summed over transports, exactly as /metrics counts it.
  const fromMetrics = new Map<string, number>();
  for (const line of metrics.split("\n")) {
    const m =
      /^gateway_requests_total\{operation="([^"]+)",transport="[^"]+",outcome="([^"]+)"\} (\d+)$/.exec(line);
    if (m) fromMetrics.set(`${m[1]} ${m[2]}`, (fromMetrics.get(`${m[1]} ${m[2]}`) ?? 0) + Number(m[3]));
  }
  const fromStatus = new Map<string, number>(
    status.totals.requests.map((r: any) => [`${r.operation} ${r.outcome}`, r.count] as [string, number]),
  );
  expect(Object.fromEntries(fromStatus)).toEqual(Object.fromEntries(fromMetrics));
  expect(fromStatus.get("eth_blockNumber ok")).toBe(5);
  expect(fromStatus.get("eth_getBalance invalid")).toBe(1);

  expect(status.indexer).toMatchObject({
    enabled: true,
    leading: health.indexer.leading,
    lastBlockNumber: health.indexer.lastBlockNumber,
    lag: health.indexer.lag,
    backfilling: false,
  });
  expect(status.indexer.lag).toBe(metric(metrics, "gateway_indexer_lag_blocks"));
  expect(status.database.status).toBe(health.database.status);
  expect(status.websocket.connections).toBe(metric(metrics, "gateway_ws_connections"));
  expect(status.websocket.connections).toBe(1);
  expect(status.websocket.subscriptions.newHeads).toBe(
    metric(metrics, "gateway_ws_subscriptions", { kind: "newHeads" }),
  );
  expect(status.websocket.subscriptions.newHeads).toBe(1);
  // One point per sampled second, the same length in every series.
  const n = status.series.at.length;
  expect(n).toBeGreaterThan(0);
  for (const values of [...Object.values(status.series.requests), ...Object.values(status.series.cache)])
    expect((values as number[]).length).toBe(n);
});

test("neither the page nor its JSON needs a key or names one, or an upstream's URL", async () => {
  const page = await fetch(`${service.url}/status`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(page.headers.get("content-security-policy")).toStartWith("default-src 'none'; script-src 'sha256-");
  const body = await page.text();
  const data = await (await fetch(`${service.url}/status.json`)).text();
  for (const text of [body, data]) {
    expect(text).not.toContain(KEY);
    for (const url of [anvilUrl, proxy.url]) expect(text).not.toContain(new URL(url).host);
  }
  // No asset from anywhere: nothing to fetch but its own JSON.
  expect(body).not.toMatch(/\b(src|href)="(?!data:)/);
});

test("the page in a real Chromium: no failed request or console error, the node's head, followed live", async () => {
  const page = await browser.open(`${service.url}/status`, { width: 1280, height: 1000 });
  try {
    const head = await nodeHead();
    await page.waitFor(`document.body.dataset.rendered !== undefined`, 10_000);
    expect(await page.evaluate<string>(`document.getElementById("head-number").textContent`)).toBe(
      head.toLocaleString("en-US"),
    );
    expect(
      await page.evaluate<string>(
        `document.querySelector('#upstreams tr[data-upstream="upstream-1"] td:nth-child(2)').textContent`,
      ),
    ).toBe("closed");
    expect(await page.evaluate<string>(`document.getElementById("indexer-last").textContent`)).toBe(
      head.toLocaleString("en-US"),
    );
    expect(await page.evaluate<string>(`document.getElementById("ws-connections").textContent`)).toBe("1");
    const operations = await page.evaluate<string[]>(
      `[...document.querySelectorAll("#operations tr td:first-child")].map((td) => td.textContent)`,
    );
    expect(operations).toContain("eth_blockNumber");
    expect(operations).toContain("eth_getBlockByNumber");

    // A new block: the page shows it within a few of its one-second reads, without a reload.
    await rpc(anvilUrl)("evm_mine", []);
    const next = await caughtUp();
    expect(next).toBe(head + 1);
    await page.waitFor(
      `document.getElementById("head-number").textContent === ${JSON.stringify(next.toLocaleString("en-US"))}`,
      5_000,
    );
    // Traffic while it watches (about 3 s of it) draws the request chart: four layers, one per outcome group.
    const until3s = Date.now() + 3_000;
    for (let i = 0; i < 300 && Date.now() < until3s; i++) {
      await call(i % 3 === 0 ? "eth_getBlockByNumber" : "eth_blockNumber", i % 3 === 0 ? ["0x2", false] : []);
      await Bun.sleep(10);
    }
    await page.waitFor(`document.querySelectorAll("#requests-chart path").length === 4`, 5_000);
    await page.waitFor(`document.getElementById("rps").textContent !== "0"`, 5_000);

    const shot = join(shots, "status-wide.png");
    await page.screenshot(shot);
    expect([...readFileSync(shot).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    keep(shot);
    expect(page.problems).toEqual([]);
  } finally {
    await page.close();
  }
}, 60_000);

test("an upstream that goes away shows its circuit open on the page, and closed again once it is back", async () => {
  const page = await browser.open(`${service.url}/status`, { width: 1280, height: 1000 });
  const circuit = (name: string) =>
    `document.querySelector('#upstreams tr[data-upstream="${name}"] td:nth-child(2)').textContent`;
  try {
    await page.waitFor(`${circuit("upstream-2")} === "closed"`, 10_000);
    proxy.stop();
    // Its head polls fail and its circuit opens; the other upstream keeps the service ok.
    await page.waitFor(`${circuit("upstream-2")} === "open"`, 20_000);
    expect(await page.evaluate<string>(circuit("upstream-1"))).toBe("closed");
    expect(await page.evaluate<string>(`document.getElementById("status").textContent`)).toBe("ok");
    expect((await json("/health")).upstream.upstreams[1].state).toBe("open");
    proxy.restart();
    await page.waitFor(`${circuit("upstream-2")} === "closed"`, 20_000);
    expect(page.problems).toEqual([]);
  } finally {
    proxy.restart();
    await page.close();
  }
}, 60_000);

test("on a phone-sized screen the page fits its width (tables scroll inside their cards)", async () => {
  const page = await browser.open(`${service.url}/status`, {
    width: 390,
    height: 844,
    deviceScaleFactor: 2,
    mobile: true,
  });
  try {
    await page.waitFor(`document.body.dataset.rendered !== undefined`, 10_000);
    expect(
      await page.evaluate<boolean>(
        `document.documentElement.scrollWidth <= document.documentElement.clientWidth`,
      ),
    ).toBe(true);
    const shot = join(shots, "status-phone.png");
    await page.screenshot(shot);
    keep(shot);
    expect(page.problems).toEqual([]);
  } finally {
    await page.close();
  }
}, 60_000);

/** STATUS_SCREENSHOT_DIR keeps the screenshots (the README's comes from here). */
function keep(file: string) {
  const dir = process.env.STATUS_SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  copyFileSync(file, join(dir, file.slice(file.lastIndexOf("/") + 1)));
}
