/**
 * Real time on a live chain: anvil mining a block every second with transfers in it, and a bot storm of
 * 256 connections cycling the questions bots ask about `latest` (eth_blockNumber, the latest block, a
 * balance, an eth_call, the latest block's logs). Side by side in one run:
 *  - the storm's req/s and p50/p99/p99.9;
 *  - upstream HTTP requests per new block (from /metrics);
 *  - how many blocks the service's head trails the node's, sampled while the storm runs (a sample counts
 *    only when the node's head stood still across it);
 *  - newHeads notification latency, from the node's announcement (a client subscribed to the node) to the
 *    service's notification (a client subscribed to the service), during the storm and on a quiet chain
 *    mining a block every 20 ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Contract } from "ethers";
import { startAnvil } from "../src/families/evm/devChain";
import { deployContract, rpc } from "../test/support/chain";
import { compileContracts } from "../test/support/solc";
import { fmt, startService, sumMetric, THREADS } from "./support";
import { wrk } from "./wrk";

const STORM_SECONDS = Number(process.env.BENCH_REALTIME_SECONDS ?? 20);
const STORM_CONNECTIONS = 256;
/** Transfers sent between blocks, and how often. */
const TRAFFIC_EVERY_MS = 250;
/** Head samples: one every this many ms while the storm runs. */
const SAMPLE_EVERY_MS = 10;
/** Quiet-chain notification latency: blocks mined one at a time, this far apart. */
const QUIET_BLOCKS = 200;
const QUIET_EVERY_MS = 20;

const ALICE = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const BOB = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const CAROL = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";

/** Arrival times of newHeads notifications, by block number, on one socket. */
async function headArrivals(url: string): Promise<{ times: Map<number, number>; close(): void }> {
  const ws = new WebSocket(url);
  const times = new Map<number, number>();
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`${url} did not open`));
  });
  ws.onmessage = (event) => {
    const at = performance.now();
    const message = JSON.parse(String(event.data));
    if (message.method === "eth_subscription") times.set(Number(message.params.result.number), at);
  };
  ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
  await Bun.sleep(200);
  return { times, close: () => ws.close() };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function latencies(node: Map<number, number>, service: Map<number, number>, from: number, to: number) {
  const out: number[] = [];
  for (const [n, at] of node) if (n >= from && n <= to && service.has(n)) out.push(service.get(n)! - at);
  return out.sort((a, b) => a - b);
}

export async function realtimePhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil({ args: ["--block-time", "1"] });
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-rt-"));
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  let trafficOn = true;
  try {
    const node = rpc(anvil.url);
    const token = await deployContract(anvil.url, "TestToken", ["Token", "TOK", 18]);
    const tokenCall = new Contract(token, (await compileContracts()).TestToken!.abi).interface;
    await node("eth_sendTransaction", [
      { from: ALICE, to: token, data: tokenCall.encodeFunctionData("mint", [ALICE, 10n ** 24n]) },
    ]);
    service = await startService(anvil.url, dataDir, { INDEXER: "off" });
    const serviceUrl = service.url;
    const serviceRpc = rpc(`${serviceUrl}/node/jsonrpc`);

    // Transfers in every block: native ones and a token transfer (a log).
    const traffic = (async () => {
      for (let i = 0; trafficOn && i < 100_000; i++) {
        await Promise.all([
          node("eth_sendTransaction", [{ from: BOB, to: CAROL, value: "0x1" }]),
          node("eth_sendTransaction", [{ from: CAROL, to: BOB, value: "0x1" }]),
          node("eth_sendTransaction", [
            { from: ALICE, to: token, data: tokenCall.encodeFunctionData("transfer", [BOB, 1n]) },
          ]),
        ]).catch(() => {});
        await Bun.sleep(TRAFFIC_EVERY_MS);
      }
    })();

    const nodeHeads = await headArrivals(anvil.url.replace(/^http/, "ws"));
    const serviceHeads = await headArrivals(`${serviceUrl.replace(/^http/, "ws")}/node/jsonrpc`);

    const bodies = [
      { method: "eth_blockNumber", params: [] },
      { method: "eth_getBlockByNumber", params: ["latest", false] },
      { method: "eth_getBalance", params: [BOB, "latest"] },
      {
        method: "eth_call",
        params: [{ to: token, data: tokenCall.encodeFunctionData("balanceOf", [BOB]) }, "latest"],
      },
      { method: "eth_getLogs", params: [{ fromBlock: "latest", toBlock: "latest" }] },
    ].map((c, i) => JSON.stringify({ jsonrpc: "2.0", id: i, ...c }));

    // The head sampler runs beside the storm.
    let sampling = true;
    const trailing = new Map<number, number>();
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const before = Number(await node("eth_blockNumber"));
        const seen = Number(await serviceRpc("eth_blockNumber"));
        const after = Number(await node("eth_blockNumber"));
        if (before === after) {
          samples++;
          trailing.set(before - seen, (trailing.get(before - seen) ?? 0) + 1);
        }
        await Bun.sleep(SAMPLE_EVERY_MS);
      }
    })();

    const metricsBefore = await (await fetch(`${serviceUrl}/metrics`)).text();
    const headBefore = Number(await node("eth_blockNumber"));
    const storm = await wrk({
      url: `${serviceUrl}/node/jsonrpc`,
      bodies,
      connections: STORM_CONNECTIONS,
      threads: THREADS,
      durationS: STORM_SECONDS,
    });
    const headAfter = Number(await node("eth_blockNumber"));
    const metricsAfter = await (await fetch(`${serviceUrl}/metrics`)).text();
    sampling = false;
    await sampler;
    const blocks = headAfter - headBefore;
    const upstreamHttp =
      sumMetric(metricsAfter, "gateway_upstream_http_requests_total") -
      sumMetric(metricsBefore, "gateway_upstream_http_requests_total");
    await Bun.sleep(300);
    const stormLatency = latencies(nodeHeads.times, serviceHeads.times, headBefore + 1, headAfter);

    // A quiet chain mining fast: notification latency alone.
    trafficOn = false;
    await traffic;
    const quietFrom = Number(await node("eth_blockNumber")) + 1;
    for (let i = 0; i < QUIET_BLOCKS; i++) {
      await node("evm_mine", []);
      await Bun.sleep(QUIET_EVERY_MS);
    }
    const quietTo = Number(await node("eth_blockNumber"));
    await Bun.sleep(300);
    const quietLatency = latencies(nodeHeads.times, serviceHeads.times, quietFrom, quietTo);
    nodeHeads.close();
    serviceHeads.close();

    const exact = trailing.get(0) ?? 0;
    const behind = [...trailing].filter(([d]) => d > 0).reduce((n, [, c]) => n + c, 0);
    const requestsPerBlock = upstreamHttp / Math.max(blocks, 1);
    const ms = (x: number) => `${fmt(x, 2)} ms`;
    const met = (ok: boolean) => (ok ? "met" : "**missed**");
    lines.push(
      "",
      `Live chain (anvil, a block every second with 3 transfers in it), bot storm of ${STORM_CONNECTIONS} connections for ${STORM_SECONDS} s cycling eth_blockNumber, eth_getBlockByNumber latest, eth_getBalance latest, eth_call latest and eth_getLogs of the latest block; the service follows the node's pushed heads (HEAD_POLL_MS 1000 as the check):`,
      "",
      "| measure | value | target | |",
      "|---|---:|---:|---|",
      `| storm req/s | ${fmt(storm.requestsPerSecond)} | | |`,
      `| storm p50 / p99 / p99.9 | ${ms(storm.p50Ms)} / ${ms(storm.p99Ms)} / ${ms(storm.p999Ms)} | p99 < 10 ms | ${met(storm.p99Ms < 10)} |`,
      `| upstream HTTP requests per new block | ${fmt(requestsPerBlock, 2)} (${fmt(upstreamHttp)} over ${blocks} blocks) | <= 5 | ${met(requestsPerBlock <= 5)} |`,
      `| head samples with the service at the node's block | ${fmt((100 * exact) / Math.max(samples, 1), 2)}% of ${fmt(samples)} (${behind} behind) | >= 99% | ${met(exact >= 0.99 * samples)} |`,
      `| newHeads notification, node -> client, during the storm: p50 / p99 (${stormLatency.length} blocks) | ${ms(percentile(stormLatency, 50))} / ${ms(percentile(stormLatency, 99))} | p99 < 20 ms | ${met(percentile(stormLatency, 99) < 20)} |`,
      `| newHeads notification, quiet chain, a block every ${QUIET_EVERY_MS} ms: p50 / p99 / max (${quietLatency.length} blocks) | ${ms(percentile(quietLatency, 50))} / ${ms(percentile(quietLatency, 99))} / ${ms(quietLatency.at(-1) ?? Number.NaN)} | p99 < 20 ms | ${met(percentile(quietLatency, 99) < 20)} |`,
    );
    rows.push({
      phase: "realtime",
      storm,
      blocks,
      upstreamHttp,
      requestsPerBlock,
      samples,
      trailing: Object.fromEntries(trailing),
      stormLatencyMs: stormLatency,
      quietLatencyMs: quietLatency,
    });
  } finally {
    trafficOn = false;
    await service?.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
