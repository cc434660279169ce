/**
 * The bench suite (npm run bench): side by side in one run on loopback, with wrk —
 *  - the limit: a raw Bun.serve answering the same bytes as the service;
 *  - the service;
 *  - the node itself (anvil, the real binary);
 * for a small answer (~3 KB) and a large one (a block with 150 full transactions); then a bot-like mixed
 * workload that reports upstream calls per client call. Figures are ratios within this run: the machine is
 * shared and noisy, so absolute numbers from different runs do not compare.
 *
 * Environment: BENCH_SECONDS (per measurement, default 5), BENCH_CONNECTIONS (default 64).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider } from "ethers";
import { startAnvil } from "../src/upstream/devChain";
import { anvilWallets, rpc, waitForReceipt } from "../test/support/chain";
import { ensureWrk, type WrkResult, wrk } from "./wrk";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const THREADS = 2;
const WARMUP_S = 1;
const ROOT = join(import.meta.dir, "..");

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

async function waitFor(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** Blocks whose answers are the bench's small and large bodies: 20 and 150 transactions with calldata. */
async function buildChain(url: string): Promise<{ small: number; large: number }> {
  const provider = new JsonRpcProvider(url, 31337, { staticNetwork: true });
  const wallets = anvilWallets(provider);
  const call = rpc(url);
  const nonces = await Promise.all(wallets.map((w) => provider.getTransactionCount(w.address)));
  async function block(count: number): Promise<number> {
    await call("evm_setAutomine", [false]);
    const hashes: string[] = [];
    for (let i = 0; i < count; i++) {
      const w = i % wallets.length;
      const tx = await wallets[w]!.sendTransaction({
        to: `0x${(i + 1).toString(16).padStart(40, "0")}`,
        value: 1n,
        data: `0x${"ab".repeat(120)}`,
        nonce: nonces[w]!++,
        gasLimit: 30_000,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      hashes.push(tx.hash);
    }
    await call("evm_mine", []);
    await call("evm_setAutomine", [true]);
    await waitForReceipt(url, hashes.at(-1)!);
    return Number(await call("eth_blockNumber"));
  }
  const small = await block(20);
  const large = await block(150);
  provider.destroy();
  return { small, large };
}

async function startService(upstream: string, dataDir: string) {
  const port = freePort();
  const child = Bun.spawn([process.execPath, join(ROOT, "src", "main.ts")], {
    env: {
      ...process.env,
      PORT: String(port),
      UPSTREAM_URLS: upstream,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
    },
    stdout: "inherit",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`);
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

async function startRaw(body: string) {
  const dir = mkdtempSync(join(tmpdir(), "cg-raw-"));
  writeFileSync(join(dir, "body.json"), body);
  const port = freePort();
  const child = Bun.spawn(
    [process.execPath, join(import.meta.dir, "rawServer.ts"), String(port), join(dir, "body.json")],
    {
      stdout: "ignore",
      stderr: "inherit",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await fetch(url, { method: "POST", body: "{}" });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error("raw server did not start");
      await Bun.sleep(50);
    }
  }
  return {
    url,
    async stop() {
      child.kill();
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function measure(url: string, bodies: string[], connections = CONNECTIONS): Promise<WrkResult> {
  await wrk({ url, bodies, connections, threads: THREADS, durationS: WARMUP_S });
  return wrk({ url, bodies, connections, threads: THREADS, durationS: SECONDS });
}

function sumMetric(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;

async function main() {
  ensureWrk();
  const anvil = await startAnvil();
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-"));
  const rows: Record<string, unknown>[] = [];
  const lines: string[] = [];
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const { small, large } = await buildChain(anvil.url);
    service = await startService(anvil.url, dataDir);
    lines.push(
      `wrk: ${THREADS} threads, ${CONNECTIONS} connections, ${SECONDS} s per measurement after ${WARMUP_S} s of warm-up; ${new Date().toISOString()}`,
      "",
      "| answer | target | req/s | p50 | p99 | service/limit | service/node |",
      "|---|---|---:|---:|---:|---:|---:|",
    );
    for (const [name, number, full] of [
      ["small", small, false],
      ["large", large, true],
    ] as const) {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_getBlockByNumber",
        params: [`0x${number.toString(16)}`, full],
      });
      const serviceBytes = await (
        await fetch(`${service.url}/node/jsonrpc`, { method: "POST", body })
      ).text();
      const nodeBytes = await (
        await fetch(anvil.url, { method: "POST", body, headers: { "content-type": "application/json" } })
      ).text();
      if (JSON.stringify(JSON.parse(serviceBytes)) !== JSON.stringify(JSON.parse(nodeBytes))) {
        throw new Error(`the service's ${name} answer differs from the node's`);
      }
      const raw = await startRaw(serviceBytes);
      const limit = await measure(raw.url, [body]);
      await raw.stop();
      const viaService = await measure(`${service.url}/node/jsonrpc`, [body]);
      const direct = await measure(anvil.url, [body]);
      const label = `${name} (${kb(serviceBytes.length)}, eth_getBlockByNumber ${full ? "150 full txs" : "20 tx hashes"})`;
      for (const [target, r] of [
        ["limit: raw Bun.serve", limit],
        ["service", viaService],
        ["node: anvil", direct],
      ] as const) {
        const ratios =
          target === "service"
            ? `| ${fmt(r.requestsPerSecond / limit.requestsPerSecond, 2)} | ${fmt(r.requestsPerSecond / direct.requestsPerSecond, 1)} |`
            : "| | |";
        lines.push(
          `| ${label} | ${target} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 2)} ms | ${fmt(r.p99Ms, 2)} ms ${ratios}`,
        );
        rows.push({ answer: name, bytes: serviceBytes.length, target, ...r });
        if (r.errors > 0) lines.push(`|  | (${r.errors} errors or non-2xx answers) | | | | | |`);
      }
    }

    // Bots: many clients repeating the same few questions about the head.
    const wallets = anvilWallets(new JsonRpcProvider(anvil.url, 31337, { staticNetwork: true }));
    const account = wallets[1]!.address;
    const bodies = [
      { method: "eth_blockNumber", params: [] },
      { method: "eth_getBlockByNumber", params: ["latest", false] },
      { method: "eth_call", params: [{ to: account, data: "0x70a08231" }, "latest"] },
      { method: "eth_getBalance", params: [account, "latest"] },
    ].map((c, i) => JSON.stringify({ jsonrpc: "2.0", id: i, ...c }));
    const before = await (await fetch(`${service.url}/metrics`)).text();
    const mixed = await wrk({
      url: `${service.url}/node/jsonrpc`,
      bodies,
      connections: 256,
      threads: THREADS,
      durationS: SECONDS,
    });
    const after = await (await fetch(`${service.url}/metrics`)).text();
    const clientCalls =
      sumMetric(after, "gateway_requests_total") - sumMetric(before, "gateway_requests_total");
    const upstreamCalls =
      sumMetric(after, "gateway_upstream_calls_total") - sumMetric(before, "gateway_upstream_calls_total");
    const upstreamHttp =
      sumMetric(after, "gateway_upstream_http_requests_total") -
      sumMetric(before, "gateway_upstream_http_requests_total");
    lines.push(
      "",
      "Bot-like mixed workload (256 connections cycling eth_blockNumber, eth_getBlockByNumber latest, eth_call, eth_getBalance):",
      "",
      "| req/s | p50 | p99 | client calls | upstream calls | upstream calls per client call | upstream HTTP requests |",
      "|---:|---:|---:|---:|---:|---:|---:|",
      `| ${fmt(mixed.requestsPerSecond)} | ${fmt(mixed.p50Ms, 2)} ms | ${fmt(mixed.p99Ms, 2)} ms | ${fmt(clientCalls)} | ${fmt(upstreamCalls)} | ${fmt(upstreamCalls / clientCalls, 4)} | ${fmt(upstreamHttp)} |`,
    );
    rows.push({ workload: "mixed", ...mixed, clientCalls, upstreamCalls, upstreamHttp });
  } finally {
    await service?.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const report = lines.join("\n");
  console.log(`\n${report}\n`);
  mkdirSync(join(import.meta.dir, "results"), { recursive: true });
  writeFileSync(join(import.meta.dir, "results", "latest.json"), JSON.stringify(rows, null, 2));
  writeFileSync(join(import.meta.dir, "results", "latest.md"), `${report}\n`);
}

await main();
process.exit(0);
