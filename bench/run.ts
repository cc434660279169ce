/**
 * The bench suite (npm run bench): side by side in one run on loopback, with wrk, over BENCH_ROUNDS rounds
 * whose ratios are taken within each round (the tables show medians) —
 *  - the limit: a raw Bun.serve answering the same bytes as the service, the request unread;
 *  - the reading limit: the same, reading and parsing the request first;
 *  - the service (a cache hit), with the CPU time each process spends per request;
 *  - the node itself (anvil, the real binary), once;
 * for a small answer (~3 KB) and a large one (a block with 150 full transactions); then a bot-like mixed
 * workload (p50, p99, p99.9, upstream calls per client call, beside the reading limit under the same
 * connections), the service's resident memory at rest and after the loads, and its garbage collections
 * under the small hit and the mixed workload (an instance of its own with JSC's GC log on). Figures are ratios within this
 * run: the machine is shared and noisy, so absolute numbers from different runs do not compare.
 *
 * Then the disk tier: 10,000 distinct blocks of receipts (more than the memory tier holds) read through
 * ext_getBlockReceipts, through the stream endpoint and as JSON-RPC batches of 100 blocks, beside a raw
 * Bun.serve streaming the same NDJSON bytes (passes alternating, with each server's CPU per line) and the
 * raw read speed of the store.
 *
 * Then the indexer (bench/indexerPhase.ts): backfill rates into PostgreSQL and a deep page of transfers;
 * the watch filters (bench/watchPhase.ts): a block's check against 100,000 filters, DEFAULT_TOKENS; and
 * real time (bench/realtimePhase.ts): a bot storm on a live chain, how far the head trails the node's, and
 * newHeads notification latency; and the workers (bench/workersPhase.ts): the small hit with WORKERS=1 and 2;
 * and the Bitcoin family (bench/utxoPhase.ts): a regtest litecoind's block of ~500 transactions and
 * getblockcount as cache hits beside the raw limit and the node, and the head's latency after a block; and
 * its index (bench/utxoIndexPhase.ts): the backfill of a chain of 100,000 transactions beside the node's own
 * getblock rate, and an address's page of transfers on it; and its Esplora API at mainnet scale
 * (bench/utxoScalePhase.ts): a mempool of 20,000 transactions and an address of 100,000, the mempool view's
 * catch-up and memory, each route's p50/p99, CPU and node calls; and the TRON family (bench/tronPhase.ts): a
 * solidified block of ~300 transactions in the test suite's stand-in java-tron, as cache hits of
 * /wallet/getblockbynum and eth_getBlockByNumber beside the raw limit and the stand-in; and its index
 * (bench/tronIndexPhase.ts): the backfill of blocks of ~300 transactions beside the stand-in's own rate of
 * serving them, and an address's first page on an index of a million transfers.
 *
 * Environment: BENCH_SECONDS (per measurement, default 5), BENCH_CONNECTIONS (default 64), BENCH_ROUNDS
 * (default 3), BENCH_DISK_BLOCKS (default 10000), BENCH_REALTIME_SECONDS (default 20), BENCH_PHASES
 * (default "engine,disk,indexer,watch,realtime,workers,utxo,utxoindex,utxoscale,tron,tronindex,webhooks"), BENCH_UTXO_HEAD_BLOCKS
 * (default 30), BENCH_UTXO_INDEX_BLOCKS (default 1000), BENCH_UTXO_SCALE_MEMPOOL (default 20000),
 * BENCH_BASE (another checkout's root: its service's cache hits measured beside this one's, in the engine
 * phase's rounds),
 * BENCH_UTXO_SCALE_ADDRESS_TXS (default 100000), BENCH_UTXO_SCALE_BURST (default 2000),
 * BENCH_UTXO_SCALE_READS (default 200), BENCH_TRON_INDEX_BLOCKS (default 300), BENCH_TRON_INDEX_TRANSFERS
 * (default 1000000).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider } from "ethers";
import { startAnvil } from "../src/families/evm/devChain";
import { anvilWallets, calldata, deployContract, rpc, rpcBatch, waitForReceipt } from "../test/support/chain";
import { indexerPhase } from "./indexerPhase";
import { realtimePhase } from "./realtimePhase";
import {
  CONNECTIONS,
  cpuSeconds,
  fmt,
  kb,
  measure,
  measureCpu,
  median,
  ROUNDS,
  rssMb,
  SECONDS,
  settle,
  startRaw,
  startRawProcess,
  startService,
  sumMatching,
  sumMetric,
  THREADS,
  WARMUP_S,
} from "./support";
import { tronIndexPhase } from "./tronIndexPhase";
import { tronPhase } from "./tronPhase";
import { utxoIndexPhase } from "./utxoIndexPhase";
import { utxoPhase } from "./utxoPhase";
import { utxoScalePhase } from "./utxoScalePhase";
import { watchPhase } from "./watchPhase";
import { webhookPhase } from "./webhookPhase";
import { workersPhase } from "./workersPhase";
import { ensureWrk, wrk } from "./wrk";

const DISK_BLOCKS = Number(process.env.BENCH_DISK_BLOCKS ?? 10_000);
/** Another checkout (its root directory) whose engine is measured beside this one's: the engine phase only. */
const BASE = process.env.BENCH_BASE;
const PHASES = (
  process.env.BENCH_PHASES ??
  "engine,disk,indexer,watch,realtime,workers,utxo,utxoindex,utxoscale,tron,tronindex,webhooks"
).split(",");
/** anvil's finalized block is head - 64: mining this many more makes the measured blocks final. */
const FINALITY_BLOCKS = 100;
/** A JSON-RPC batch of the bulk phase: this many blocks' receipts; sent on this many connections. */
const BATCH_CALLS = 100;
const BATCH_CONNECTIONS = 8;
/** Each round streams the range this many times from each server, alternating which goes first: one pass is ~0.1 s. */
const STREAM_PASSES = 3;
/** The bot-like mixed workload's clients. */
const MIXED_CONNECTIONS = 256;
/** How long the service rests after its start before its resident memory is read. */
const IDLE_SETTLE_MS = 5_000;
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

/** Streams a range from `url` (the service's stream route, or the raw streaming server); bytes and seconds. */
async function streamRange(
  url: string,
  from: number,
  to: number,
  keep?: Uint8Array[],
): Promise<{ bytes: number; seconds: number; lines: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ fromBlock: from, toBlock: to }),
  });
  let bytes = 0;
  let lines = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    keep?.push(value);
    for (let at = value.indexOf(10); at >= 0; at = value.indexOf(10, at + 1)) lines++;
  }
  return { bytes, seconds: (performance.now() - started) / 1000, lines };
}

async function diskPhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil();
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-disk-"));
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  let rawStream: Awaited<ReturnType<typeof startRawProcess>> | undefined;
  try {
    const call = rpc(anvil.url);
    const blob = await deployContract(anvil.url, "Blob");
    const [sender] = (await call("eth_accounts")) as string[];
    await call("evm_setAutomine", [false]);
    const first = Number(await call("eth_blockNumber")) + 1;
    const data = await Promise.all([0, 1].map((seed) => calldata("Blob", "emitBlob", [seed, 1024])));
    const built = performance.now();
    for (let b = 0; b < DISK_BLOCKS; b++) {
      await rpcBatch(anvil.url, [
        ...data.map((d) => ({
          method: "eth_sendTransaction",
          params: [{ from: sender, to: blob, data: d, gas: "0x100000" }],
        })),
        { method: "evm_mine", params: [] },
      ]);
    }
    await call("evm_setAutomine", [true]);
    await call("anvil_mine", [`0x${FINALITY_BLOCKS.toString(16)}`]);
    const last = first + DISK_BLOCKS - 1;
    console.error(`built ${DISK_BLOCKS} blocks in ${((performance.now() - built) / 1000).toFixed(0)} s`);

    // A memory tier far smaller than the range: most hits come from disk.
    service = await startService(anvil.url, dataDir, {
      INDEXER: "off",
      CACHE_MEMORY_MB: "16",
      CACHE_DISK_MB: "2048",
      STREAM_PREFETCH: "32",
    });
    const streamUrl = `${service.url}/node/stream/ext_getBlockReceipts`;
    const cold = await streamRange(streamUrl, first, last);
    const sent: Uint8Array[] = [];
    await streamRange(streamUrl, first, last, sent);
    const ndjson = join(dataDir, "stream.ndjson");
    writeFileSync(ndjson, Buffer.concat(sent));
    rawStream = await startRawProcess("rawStream.ts", [ndjson]);
    // JSON-RPC batches of 100 blocks' receipts, the range cycled: what an indexer sends without the stream.
    const batches = Array.from({ length: Math.ceil(DISK_BLOCKS / BATCH_CALLS) }, (_, b) =>
      JSON.stringify(
        Array.from({ length: Math.min(BATCH_CALLS, DISK_BLOCKS - b * BATCH_CALLS) }, (_, i) => ({
          jsonrpc: "2.0",
          id: i,
          method: "ext_getBlockReceipts",
          params: [`0x${(first + b * BATCH_CALLS + i).toString(16)}`],
        })),
      ),
    );
    /** MB/s over STREAM_PASSES passes, and the server's CPU microseconds per line. */
    const passes = async (url: string, pid: number) => {
      const cpu = cpuSeconds(pid);
      let bytes = 0;
      let seconds = 0;
      let count = 0;
      for (let pass = 0; pass < STREAM_PASSES; pass++) {
        const one = await streamRange(url, first, last);
        if (one.bytes !== cold.bytes) throw new Error(`${url} sent ${one.bytes} bytes, not ${cold.bytes}`);
        bytes += one.bytes;
        seconds += one.seconds;
        count += one.lines;
      }
      return { mbps: bytes / 1e6 / seconds, cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / count };
    };
    const bulk: { stream: number; raw: number; batches: number; streamCpuUs: number; rawCpuUs: number }[] =
      [];
    for (let round = 0; round < ROUNDS; round++) {
      const [warm, raw] =
        round % 2 === 0
          ? [await passes(streamUrl, service.pid), await passes(rawStream.url, rawStream.pid)]
          : [await passes(rawStream.url, rawStream.pid), await passes(streamUrl, service.pid)].reverse();
      const batched = await measure(`${service.url}/node/jsonrpc`, batches, BATCH_CONNECTIONS);
      if (batched.errors > 0) throw new Error(`${batched.errors} batches failed`);
      bulk.push({
        stream: warm!.mbps,
        raw: raw!.mbps,
        batches: batched.bytesPerSecond / 1e6,
        streamCpuUs: warm!.cpuUs,
        rawCpuUs: raw!.cpuUs,
      });
    }
    const bodies = Array.from({ length: DISK_BLOCKS }, (_, i) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "ext_getBlockReceipts",
        params: [`0x${(first + i).toString(16)}`],
      }),
    );
    const before = await (await fetch(`${service.url}/metrics`)).text();
    const hits = await measure(`${service.url}/node/jsonrpc`, bodies);
    const after = await (await fetch(`${service.url}/metrics`)).text();
    const lookups = (tier: string, result: string, text: string) =>
      sumMatching(text, "gateway_cache_lookups_total", `tier="${tier}",result="${result}"`);
    const diskHits = lookups("disk", "hit", after) - lookups("disk", "hit", before);
    const memoryHits = lookups("memory", "hit", after) - lookups("memory", "hit", before);
    const health = (await (await fetch(`${service.url}/health`)).json()) as any;
    const cacheDir = join(
      dataDir,
      "cache",
      (await import("node:fs")).readdirSync(join(dataDir, "cache"))[0]!,
    );
    const raw = Bun.spawnSync([process.execPath, join(import.meta.dir, "storeRead.ts"), cacheDir]);
    const store = JSON.parse(raw.stdout.toString()) as {
      records: number;
      bytes: number;
      mbPerSecond: number;
    };
    const mbps = (bytes: number, seconds: number) => fmt(bytes / 1e6 / seconds, 1);
    const med = (f: (r: (typeof bulk)[number]) => number) => median(bulk.map(f));
    lines.push(
      "",
      `Disk tier: ${fmt(DISK_BLOCKS)} distinct final blocks of receipts (${kb(cold.bytes / DISK_BLOCKS)} a block, ${fmt(cold.bytes / 1e6, 1)} MB in all); memory tier 16 MB, so most hits come from disk (${fmt(health.cache.disk.entries)} records on disk):`,
      "",
      "| measurement | req/s | MB/s | p50 | p99 |",
      "|---|---:|---:|---:|---:|",
      `| ext_getBlockReceipts over JSON-RPC, ${fmt(DISK_BLOCKS)} blocks cycled (${fmt((100 * diskHits) / (diskHits + memoryHits), 0)}% disk hits) | ${fmt(hits.requestsPerSecond)} | ${fmt(hits.bytesPerSecond / 1e6, 1)} | ${fmt(hits.p50Ms, 2)} ms | ${fmt(hits.p99Ms, 2)} ms |`,
      `| stream endpoint, whole range, first time (from the node) | | ${mbps(cold.bytes, cold.seconds)} | | |`,
      `| raw store read (LMDB + msgpack + CRC, no HTTP): ${fmt(store.records)} records | | ${fmt(store.mbPerSecond, 1)} | | |`,
      "",
      `Bulk reads of the cached range, ${ROUNDS} rounds side by side, ${STREAM_PASSES} passes of each stream a round (medians; ratios taken within each round; CPU: the server process's user + system time per line):`,
      "",
      "| measurement | MB/s | ratio | server CPU a line |",
      "|---|---:|---:|---:|",
      `| raw Bun.serve streaming the same NDJSON bytes (256 KB a pull) | ${fmt(
        med((r) => r.raw),
        1,
      )} | | ${fmt(
        med((r) => r.rawCpuUs),
        1,
      )} µs |`,
      `| stream endpoint, whole range, from the cache | ${fmt(
        med((r) => r.stream),
        1,
      )} | ${fmt(
        med((r) => r.stream / r.raw),
        2,
      )} of the raw stream | ${fmt(
        med((r) => r.streamCpuUs),
        1,
      )} µs |`,
      `| JSON-RPC batches of ${BATCH_CALLS} ext_getBlockReceipts, ${BATCH_CONNECTIONS} connections | ${fmt(
        med((r) => r.batches),
        1,
      )} | ${fmt(
        med((r) => r.batches / r.stream),
        2,
      )} of the stream | |`,
      `| raw store read (above) | ${fmt(store.mbPerSecond, 1)} | stream: ${fmt(med((r) => r.stream) / store.mbPerSecond, 2)} of it | |`,
    );
    rows.push({ phase: "disk", blocks: DISK_BLOCKS, cold, bulk, hits, diskHits, memoryHits, store });
  } finally {
    await rawStream?.stop();
    await service?.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function engineAndCachePhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil();
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-"));
  const baseDir = mkdtempSync(join(tmpdir(), "cg-bench-base-"));
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  let base: Awaited<ReturnType<typeof startService>> | undefined;
  const raws: Awaited<ReturnType<typeof startRaw>>[] = [];
  try {
    const { small, large } = await buildChain(anvil.url);
    await rpc(anvil.url)("anvil_mine", [`0x${FINALITY_BLOCKS.toString(16)}`]);
    // The engine alone: an indexer reading the same node would take part of its time.
    service = await startService(anvil.url, dataDir, { INDEXER: "off" });
    // BENCH_BASE: another checkout's service (the code before a change), measured in the same rounds.
    if (BASE) base = await startService(anvil.url, baseDir, { INDEXER: "off" }, { root: BASE });
    await Bun.sleep(IDLE_SETTLE_MS);
    const idleRss = rssMb(service.pid);
    const sizes = [];
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
      const limit = await startRaw(serviceBytes, "static");
      const reading = await startRaw(serviceBytes, "read");
      raws.push(limit, reading);
      const label = `${name} (${kb(serviceBytes.length)}, eth_getBlockByNumber ${full ? "150 full txs" : "20 tx hashes"})`;
      sizes.push({ name, body, bytes: serviceBytes.length, label, limit, reading });
    }

    // Side by side, round after round: each round measures every target once, and the ratios are taken
    // within a round before their median, so that a slow moment of the machine weighs on both sides.
    type Measured = Awaited<ReturnType<typeof measureCpu>>;
    const runs = new Map<string, Measured[]>();
    const take = (key: string, r: Measured) => {
      runs.set(key, [...(runs.get(key) ?? []), r]);
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const size of sizes) {
        take(`${size.name}/limit`, await measureCpu(size.limit.url, [size.body], size.limit.pid));
        take(`${size.name}/reading`, await measureCpu(size.reading.url, [size.body], size.reading.pid));
        take(
          `${size.name}/service`,
          await measureCpu(`${service.url}/node/jsonrpc`, [size.body], service.pid),
        );
        if (base)
          take(`${size.name}/base`, await measureCpu(`${base.url}/node/jsonrpc`, [size.body], base.pid));
      }
      console.error(`engine round ${round + 1}/${ROUNDS} done`);
    }
    const anvilPid = anvil.pid;
    lines.push(
      `wrk: ${THREADS} threads, ${CONNECTIONS} connections, ${SECONDS} s per measurement after ${WARMUP_S} s of warm-up, ${ROUNDS} rounds side by side (medians); ${new Date().toISOString()}`,
      "",
      "| answer | target | req/s | p50 | p99 | CPU µs per request |",
      "|---|---|---:|---:|---:|---:|",
    );
    const ratioLines = [
      "",
      "| answer | service/limit | service/reading limit | service CPU per request / reading limit's | service/node |",
      "|---|---:|---:|---:|---:|",
    ];
    for (const size of sizes) {
      const direct = await measureCpu(anvil.url, [size.body], anvilPid);
      await settle(anvilPid);
      const of = (target: string) => runs.get(`${size.name}/${target}`)!;
      const med = (target: string, field: "requestsPerSecond" | "p50Ms" | "p99Ms" | "cpuUs") =>
        median(of(target).map((r) => r[field]));
      for (const [target, title] of [
        ["limit", "limit: raw Bun.serve, same bytes, request unread"],
        ["reading", "reading limit: raw Bun.serve, same bytes, request read and parsed"],
        ["service", "service (cache hit)"],
      ] as const) {
        lines.push(
          `| ${size.label} | ${title} | ${fmt(med(target, "requestsPerSecond"))} | ${fmt(med(target, "p50Ms"), 2)} ms | ${fmt(med(target, "p99Ms"), 2)} ms | ${fmt(med(target, "cpuUs"), 1)} |`,
        );
        rows.push({ answer: size.name, bytes: size.bytes, target, rounds: of(target) });
      }
      lines.push(
        `| ${size.label} | node: anvil | ${fmt(direct.requestsPerSecond)} | ${fmt(direct.p50Ms, 2)} ms | ${fmt(direct.p99Ms, 2)} ms | ${fmt(direct.cpuUs, 1)} |`,
      );
      rows.push({ answer: size.name, target: "node", ...direct });
      const perRound = (f: (i: number) => number) => fmt(median(of("service").map((_, i) => f(i))), 2);
      const rps = (target: string, i: number) => of(target)[i]!.requestsPerSecond;
      ratioLines.push(
        `| ${size.name} | ${perRound((i) => rps("service", i) / rps("limit", i))} | ${perRound((i) => rps("service", i) / rps("reading", i))} | ${perRound((i) => of("service")[i]!.cpuUs / of("reading")[i]!.cpuUs)} | ${fmt(med("service", "requestsPerSecond") / direct.requestsPerSecond, 0)} |`,
      );
    }
    lines.push(...ratioLines);
    if (base) {
      // Idle from here on: stopped, so that it takes nothing of the machine from the measurements below.
      await base.stop();
      lines.push(
        "",
        `This checkout against BENCH_BASE (${BASE}), the same hits in the same rounds (medians of the rounds' ratios):`,
        "",
        "| answer | req/s: this / base | CPU per request: this / base | p99: this / base |",
        "|---|---:|---:|---:|",
      );
      for (const size of sizes) {
        const ours = runs.get(`${size.name}/service`)!;
        const theirs = runs.get(`${size.name}/base`)!;
        const ratio = (f: (r: Measured) => number) =>
          fmt(median(ours.map((r, i) => f(r) / f(theirs[i]!))), 2);
        lines.push(
          `| ${size.name} | ${ratio((r) => r.requestsPerSecond)} | ${ratio((r) => r.cpuUs)} | ${ratio((r) => r.p99Ms)} |`,
        );
        rows.push({ answer: size.name, bytes: size.bytes, target: "base", rounds: theirs });
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
    // The floor of latency at this concurrency: the reading limit under the same 256 connections.
    const floor = await wrk({
      url: sizes[0]!.reading.url,
      bodies: [sizes[0]!.body],
      connections: MIXED_CONNECTIONS,
      threads: THREADS,
      durationS: SECONDS,
    });
    const before = await (await fetch(`${service.url}/metrics`)).text();
    const mixed = await wrk({
      url: `${service.url}/node/jsonrpc`,
      bodies,
      connections: MIXED_CONNECTIONS,
      threads: THREADS,
      durationS: SECONDS,
    });
    const loadedRss = rssMb(service.pid);
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
      "| target | req/s | p50 | p99 | p99.9 | client calls | upstream calls | upstream calls per client call | upstream HTTP requests |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      `| service | ${fmt(mixed.requestsPerSecond)} | ${fmt(mixed.p50Ms, 2)} ms | ${fmt(mixed.p99Ms, 2)} ms | ${fmt(mixed.p999Ms, 2)} ms | ${fmt(clientCalls)} | ${fmt(upstreamCalls)} | ${fmt(upstreamCalls / clientCalls, 4)} | ${fmt(upstreamHttp)} |`,
      `| reading limit (small answer), same connections | ${fmt(floor.requestsPerSecond)} | ${fmt(floor.p50Ms, 2)} ms | ${fmt(floor.p99Ms, 2)} ms | ${fmt(floor.p999Ms, 2)} ms | | | | |`,
      "",
      `Resident memory of the service (embedded PostgreSQL, indexer off): ${fmt(idleRss)} MB at rest after start, ${fmt(loadedRss)} MB after the loads above.`,
    );
    // GC, on an instance of its own with JSC's GC log on (the log costs a little): the small hit, then the
    // mixed workload, each measured after its warm-up.
    const gcDir = mkdtempSync(join(tmpdir(), "cg-bench-gc-"));
    const gcService = await startService(anvil.url, gcDir, { INDEXER: "off" }, { gcLog: true });
    try {
      const gcLines: string[] = [];
      for (const [name, url, gcBodies, connections] of [
        ["small hit", `${gcService.url}/node/jsonrpc`, [sizes[0]!.body], CONNECTIONS],
        ["mixed workload", `${gcService.url}/node/jsonrpc`, bodies, MIXED_CONNECTIONS],
      ] as const) {
        await wrk({ url, bodies: [...gcBodies], connections, threads: THREADS, durationS: WARMUP_S });
        const g0 = gcService.gc(true);
        const r = await wrk({
          url,
          bodies: [...gcBodies],
          connections,
          threads: THREADS,
          durationS: SECONDS,
        });
        const g1 = gcService.gc();
        const pauseMs = g1.pauseMs - g0.pauseMs;
        gcLines.push(
          `| ${name} | ${fmt(r.requestsPerSecond)} | ${fmt(g1.eden - g0.eden)} / ${fmt(g1.full - g0.full)} | ${fmt(pauseMs / SECONDS, 1)} ms (${fmt(pauseMs / SECONDS / 10, 1)}%) | ${fmt(g1.maxPauseMs, 1)} ms | ${fmt((pauseMs * 1000) / r.requests, 2)} µs |`,
        );
        rows.push({ workload: `gc/${name}`, requests: r.requests, seconds: SECONDS, g0, g1 });
      }
      lines.push(
        "",
        `Garbage collection (a separate instance with JSC's GC log on; ${SECONDS} s after ${WARMUP_S} s of warm-up):`,
        "",
        "| load | req/s | collections (eden / full) | pauses per second of load (share of wall time) | longest pause | pause per request |",
        "|---|---:|---:|---:|---:|---:|",
        ...gcLines,
      );
    } finally {
      await gcService.stop();
      rmSync(gcDir, { recursive: true, force: true });
    }
    rows.push({
      workload: "mixed",
      floor,
      ...mixed,
      clientCalls,
      upstreamCalls,
      upstreamHttp,
      idleRss,
      loadedRss,
    });
  } finally {
    for (const raw of raws) await raw.stop();
    await service?.stop();
    await base?.stop();
    await anvil.stop();
    rmSync(baseDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  ensureWrk();
  const rows: Record<string, unknown>[] = [];
  const lines: string[] = [];
  if (PHASES.includes("engine")) await engineAndCachePhase(lines, rows);
  if (PHASES.includes("disk")) await diskPhase(lines, rows);
  if (PHASES.includes("indexer")) await indexerPhase(lines, rows);
  if (PHASES.includes("watch")) await watchPhase(lines, rows);
  if (PHASES.includes("realtime")) await realtimePhase(lines, rows);
  if (PHASES.includes("workers")) await workersPhase(lines, rows);
  if (PHASES.includes("utxo")) await utxoPhase(lines, rows);
  if (PHASES.includes("utxoindex")) await utxoIndexPhase(lines, rows);
  if (PHASES.includes("utxoscale")) await utxoScalePhase(lines, rows);
  if (PHASES.includes("tron")) await tronPhase(lines, rows);
  if (PHASES.includes("tronindex")) await tronIndexPhase(lines, rows);
  if (PHASES.includes("webhooks")) await webhookPhase(lines, rows);
  const report = lines.join("\n");
  console.log(`\n${report}\n`);
  mkdirSync(join(import.meta.dir, "results"), { recursive: true });
  writeFileSync(join(import.meta.dir, "results", "latest.json"), JSON.stringify(rows, null, 2));
  writeFileSync(join(import.meta.dir, "results", "latest.md"), `${report}\n`);
}

await main();
process.exit(0);
