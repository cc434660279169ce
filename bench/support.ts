/** What the bench phases share: the service as a process, wrk measurements, metric sums, number formats. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TransferQueries, TransferQuery } from "../src/operations/transferQueries";
import { type WrkResult, wrk } from "./wrk";

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
export const THREADS = 2;
export const WARMUP_S = 1;
export const ROOT = join(import.meta.dir, "..");
/** Measurements side by side are repeated this many times; the tables show medians. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** A process's CPU time so far (user + system), in seconds (Linux clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The CPU time (seconds) of a process and its children: its own and its reaped children's, plus each live
 * child's (a PostgreSQL server's backends are its postmaster's children).
 */
export function treeCpuSeconds(pid: number): number {
  const stat = (p: string) => readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
  const root = stat(String(pid));
  let total = (Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14])) / 100;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = stat(entry);
      if (Number(fields[1]) === pid) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Gone since the listing.
    }
  }
  return total;
}

/** A process's resident memory, in MB. */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/**
 * Waits until the process `pid` is nearly idle (under a tenth of a core over 250 ms), at most `timeoutMs`:
 * a node left with a backlog of answers by a measurement keeps a core busy after its clients are gone, and
 * would slow whatever is measured next.
 */
export async function settle(pid: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = cpuSeconds(pid);
    await Bun.sleep(250);
    if (cpuSeconds(pid) - before < 0.025 || Date.now() > deadline) return;
  }
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

export async function waitFor(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** How long a stopped service may take to exit before it is killed. */
const STOP_MS = 15_000;

/** What JSC's GC log (BUN_JSC_logGC) says of the collections so far. */
export interface GcTotals {
  /** Eden (young) and full collections started. */
  eden: number;
  full: number;
  /** Sum and longest of the stop-the-world pauses (JSC's `p=`, one a collection step), in ms. */
  pauseMs: number;
  maxPauseMs: number;
}

/**
 * The service as a process (killed if it does not answer /health, or does not exit on SIGTERM within
 * STOP_MS). With `gcLog`, it runs with JSC's GC log on (one stderr line a collection,
 * parsed here, not shown): for a measurement of its own, as the log costs a little.
 */
export async function startService(
  upstream: string,
  dataDir: string,
  env: Record<string, string> = {},
  /** `root`: the checkout whose service runs (BENCH_BASE's, for a side-by-side; this one's by default). */
  options: { gcLog?: boolean; root?: string } = {},
) {
  const port = freePort();
  const child = Bun.spawn([process.execPath, join(options.root ?? ROOT, "src", "main.ts")], {
    env: {
      ...process.env,
      PORT: String(port),
      UPSTREAM_URLS: upstream,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
      ...(options.gcLog ? { BUN_JSC_logGC: "1" } : {}),
      ...env,
    },
    stdout: "inherit",
    stderr: options.gcLog ? "pipe" : "inherit",
  });
  const totals: GcTotals = { eden: 0, full: 0, pauseMs: 0, maxPauseMs: 0 };
  if (options.gcLog) void readGcLog(child.stderr as ReadableStream<Uint8Array>, totals);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(STOP_MS).then(() => false)]);
    if (!exited) {
      child.kill("SIGKILL");
      await child.exited;
    }
  };
  try {
    await waitFor(`${url}/health`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    pid: child.pid,
    /** The GC totals so far; `restart` starts the longest pause over (for a window's own). */
    gc(restart = false): GcTotals {
      const copy = { ...totals };
      if (restart) totals.maxPauseMs = 0;
      return copy;
    },
    stop,
  };
}

async function readGcLog(stream: ReadableStream<Uint8Array>, totals: GcTotals) {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith("[GC<") && !line.startsWith("GC END") && !line.startsWith("Requesting GC")) {
        process.stderr.write(`${line}\n`);
        continue;
      }
      if (line.includes("=> EdenCollection")) totals.eden++;
      if (line.includes("=> FullCollection")) totals.full++;
      const pause = /\bp=([\d.]+)ms/.exec(line);
      if (pause) {
        totals.pauseMs += Number(pause[1]);
        totals.maxPauseMs = Math.max(totals.maxPauseMs, Number(pause[1]));
      }
    }
  }
}

/** Starts one of the bench's raw servers (`script` in bench/) on a free port; returns once it answers. */
export async function startRawProcess(script: string, args: string[], cleanup?: () => void) {
  const port = freePort();
  const child = Bun.spawn([process.execPath, join(import.meta.dir, script), String(port), ...args], {
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await (await fetch(url, { method: "POST", body: "{}" })).arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${script} did not start`);
      await Bun.sleep(50);
    }
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill();
      await child.exited;
      cleanup?.();
    },
  };
}

/** A raw Bun.serve answering every request with `body` (bench/rawServer.ts). */
export function startRaw(body: string, mode: "static" | "read") {
  const dir = mkdtempSync(join(tmpdir(), "cg-raw-"));
  writeFileSync(join(dir, "body.json"), body);
  return startRawProcess("rawServer.ts", [join(dir, "body.json"), mode], () =>
    rmSync(dir, { recursive: true, force: true }),
  );
}

export async function measure(
  url: string,
  bodies: string[],
  connections = CONNECTIONS,
  headers?: Record<string, string>,
): Promise<WrkResult> {
  const threads = Math.min(THREADS, connections);
  await wrk({ url, bodies, connections, threads, durationS: WARMUP_S, headers });
  return wrk({ url, bodies, connections, threads, durationS: SECONDS, headers });
}

/** `measure`, with the CPU time the process `pid` spent per request, in microseconds. */
export async function measureCpu(
  url: string,
  bodies: string[],
  pid: number,
  connections = CONNECTIONS,
): Promise<WrkResult & { cpuUs: number }> {
  const threads = Math.min(THREADS, connections);
  await wrk({ url, bodies, connections, threads, durationS: WARMUP_S });
  const before = cpuSeconds(pid);
  const result = await wrk({ url, bodies, connections, threads, durationS: SECONDS });
  return { ...result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / Math.max(1, result.requests) };
}

export function sumMetric(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;

export function sumMatching(text: string, name: string, labels: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) && line.includes(labels))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** Polls `done` every 100 ms until it holds, for at most `timeoutMs`; returns the seconds it took. */
export async function waitUntil(what: string, done: () => Promise<boolean>, timeoutMs = 15 * 60_000) {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
  return (performance.now() - started) / 1000;
}

/** One request's latency alone and among 16 clients, and the table that shows both. */
export async function latencies(url: string, body: string) {
  const single = await measure(url, [body], 1);
  const busy = await measure(url, [body], 16);
  const row = (connections: number, r: WrkResult) =>
    `| ${connections} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 2)} ms | ${fmt(r.p99Ms, 2)} ms |`;
  return {
    single,
    busy,
    table: ["| connections | req/s | p50 | p99 |", "|---:|---:|---:|---:|", row(1, single), row(16, busy)],
  };
}

/**
 * The transfers page `offset` rows into a query's answer, asked `after` the row before it (an HTTP request
 * refuses an offset past MAX_TRANSFER_OFFSET: deeper pages go by `after`): that row, read straight from the
 * index, as a body's `after`, and the page's query as the operation makes it.
 */
export async function transfersAfter(queries: TransferQueries, query: TransferQuery, offset: number) {
  const [row] = await queries.transfers({ ...query, offset: offset - 1, limit: 1 });
  if (!row) throw new Error(`the query has no row ${offset - 1}`);
  const blockNumber = BigInt(row.blockNumber);
  const { transactionIndex, logIndex } = row;
  return {
    after: { blockNumber: Number(blockNumber), transactionIndex, logIndex: logIndex < 0 ? null : logIndex },
    query: { ...query, fromBlock: blockNumber, after: { blockNumber, transactionIndex, logIndex } },
  };
}
