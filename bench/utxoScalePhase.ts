/**
 * The Bitcoin family's Esplora API at mainnet scale (BENCH_PHASES=utxoscale): a regtest Litecoin Core with a
 * mempool of MEMPOOL transactions and an address with ADDRESS_TXS confirmed ones, indexed by the service
 * (CHAIN=LTC, INDEXER=on, a real PostgreSQL). The data is made fast (bench/utxoBulkChain.ts: transactions
 * signed here, blocks mined with `generateblock`): the bulk chain's hot address is paid by each of its
 * transactions; a fan-out block makes one confirmed output per mempool transaction (the node keeps at most
 * 25 unconfirmed descendants of an output), spent by transactions sent in batches; one in HOT_EVERY of them
 * pays the hot address too, one in CHILD_EVERY has a child in the mempool.
 *
 * Measured from outside only (what the routes answer, /health, /proc, and the node calls a proxy in front of
 * the node counts), so the phase runs on the code before and after the changes it measures:
 *  - the mempool view's catch-up: a full mempool sent while the service runs, a burst of BURST new
 *    transactions, and a restart with the mempool full, each until `/esplora/mempool`'s count and the hot
 *    address's `mempool_stats.tx_count` (the view's own) are the node's (a 503 while catching up is counted
 *    and waited for);
 *  - its memory: the service's resident memory and JavaScript heap (its /metrics, read only there: it walks
 *    the heap) at /health after the restart and once caught up, and whatever the service says of its
 *    mempool in /metrics and /health;
 *  - each Esplora route on that data: READS reads one after another, of distinct paths where the route has
 *    them (p50, p99, the node calls each caused, the long-poll left out), then wrk with CONCURRENT
 *    connections over the same paths (p50, p99, the service's and the node's CPU seconds per 1,000
 *    requests, node calls per request).
 * Targets (reported, not asserted): every route's p99 < 50 ms, the view's memory within its bound, no request
 * causing more than NODE_CALLS_TARGET node calls.
 *
 * Environment: BENCH_UTXO_SCALE_MEMPOOL (default 20000), BENCH_UTXO_SCALE_ADDRESS_TXS (default 100000, made
 * in blocks of 100), BENCH_UTXO_SCALE_BURST (default 2000), BENCH_UTXO_SCALE_READS (default 200); BENCH_SECONDS
 * for each wrk run. The service's own settings (MEMPOOL_MAX_MB, UTXO_MAX, ...) pass through from the
 * environment.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LitecoinNode, startLitecoind } from "../test/support/litecoind";
import { type PgServer, startPostgres } from "../test/support/postgres";
import { keyOf, sha256 } from "../test/support/rawTransactions";
import { teardownAll } from "../test/support/shared";
import { type CountingProxy, startCountingProxy } from "./countingProxy";
import {
  cpuSeconds,
  fmt,
  rssMb,
  SECONDS,
  settle,
  startService,
  THREADS,
  WARMUP_S,
  waitUntil,
} from "./support";
import { buildBulkChain, fanOut, HOT_SEED, LANES, mempoolTransactions, sendToMempool } from "./utxoBulkChain";
import { wrk } from "./wrk";

const MEMPOOL = Number(process.env.BENCH_UTXO_SCALE_MEMPOOL ?? 20_000);
const ADDRESS_TXS = Number(process.env.BENCH_UTXO_SCALE_ADDRESS_TXS ?? 100_000);
const BURST = Number(process.env.BENCH_UTXO_SCALE_BURST ?? 2_000);
/** Reads of each route, one after another (its paths cycled when it has fewer). */
const READS = Number(process.env.BENCH_UTXO_SCALE_READS ?? 200);
/** A route's reads one after another stop after this long (a slow route reads fewer). */
const READS_MS = 60_000;
/** wrk's connections for each route, and how long it waits for an answer before counting a timeout. */
const CONCURRENT = 16;
const WRK_TIMEOUT_S = 30;
/** A slow route's wrk run lasts for this many answers a connection (at its p50 alone), at most LOADED_MAX_S. */
const LOADED_ROUNDS = 5;
const LOADED_MAX_S = 60;
/** One mempool transaction in HOT_EVERY pays the hot address; one in CHILD_EVERY has a child. */
const HOT_EVERY = 10;
const CHILD_EVERY = 50;
/**
 * The node's limits, raised: its HTTP queue (16 would refuse the indexer's window and wrk's connections)
 * and its mempool (300 MB by default; a full one would refuse low fees).
 */
const NODE_ARGS = ["-rpcworkqueue=1024", "-maxmempool=2000"];
/** The head moves only by the long-poll (no block is mined while measuring): no head polls in the counts. */
const HEAD_POLL_MS = 60_000;
/** The long-poll's calls are the head's, not a request's. */
const BACKGROUND_METHODS = new Set(["waitfornewblock"]);
/** Catch-up polls: this often, for at most this long, or until the counts stand still this long. */
const POLL_MS = 100;
const CATCH_UP_MS = 10 * 60_000;
const STALL_MS = 15_000;
/** A 503 is read again after its Retry-After (at most RETRY_AFTER_MAX_S), at most RETRIES_503 times. */
const RETRY_AFTER_MAX_S = 5;
const RETRIES_503 = 60;
/** Node calls of the service while idle are counted over this long. */
const IDLE_MS = 5_000;
const P99_TARGET_MS = 50;
/** The view's bound when MEMPOOL_MAX_MB is not set (the service's default). */
const DEFAULT_MEMPOOL_MAX_MB = 256;
/** A request's node calls, at most: a page's 25 transactions, their parents and a few more. */
const NODE_CALLS_TARGET = 100;

/** The node calls the service made so far (counted by the proxy in front of the node), by method. */
function callsNow(proxy: CountingProxy): Map<string, number> {
  return new Map(proxy.calls);
}

/** Node calls made since `before`, by method (the background methods left out), most first. */
function callsSince(proxy: CountingProxy, before: ReadonlyMap<string, number>): [string, number][] {
  return [...proxy.calls]
    .filter(([method]) => !BACKGROUND_METHODS.has(method))
    .map(([method, n]): [string, number] => [method, n - (before.get(method) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
}

const sumCalls = (calls: [string, number][]) => calls.reduce((n, [, c]) => n + c, 0);
const callsText = (calls: [string, number][]) => calls.map(([m, n]) => `${fmt(n)} \`${m}\``).join(", ");

/** A sample's value in /metrics text (the first series of that name), or undefined. */
function sample(metrics: string, name: string): number | undefined {
  const line = metrics.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** What the service says of its mempool: /metrics series named so, /health members named so. */
async function mempoolAccounting(url: string): Promise<string[]> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const series = metrics
    .split("\n")
    .filter((l) => !l.startsWith("#") && /mempool/i.test(l.split(/[{ ]/)[0]!));
  const found: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (value === null || typeof value !== "object") return;
    for (const [key, member] of Object.entries(value)) {
      if (/mempool/i.test(key)) found.push(`/health ${path}${key}: ${JSON.stringify(member)}`);
      else walk(member, `${path}${key}.`);
    }
  };
  walk(await (await fetch(`${url}/health`)).json(), "");
  return [...series, ...found];
}

type Service = Awaited<ReturnType<typeof startService>>;

/**
 * The service's resident memory (MB, /proc) and JavaScript heap in use (MB, its /metrics; undefined without),
 * and how long its /metrics took to answer.
 */
async function memoryOf(service: Service) {
  const started = performance.now();
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  const metricsMs = performance.now() - started;
  const heap = sample(metrics, "gateway_nodejs_heap_size_used_bytes");
  return { rssMb: rssMb(service.pid), heapMb: heap === undefined ? undefined : heap / 2 ** 20, metricsMs };
}

/** One GET: its status, body and time; a 503 is read again after its Retry-After (the waits are counted). */
async function get(url: string) {
  for (let unavailable = 0; ; unavailable++) {
    const started = performance.now();
    const response = await fetch(url);
    const body = await response.text();
    const ms = performance.now() - started;
    if (response.status !== 503 || unavailable >= RETRIES_503) {
      return { status: response.status, body, ms, unavailable };
    }
    const after = Number(response.headers.get("retry-after")) || 1;
    await Bun.sleep(Math.min(RETRY_AFTER_MAX_S, after) * 1000);
  }
}

/** What catching up waits for: the node's mempool count, and the hot address's mempool transactions. */
interface Expected {
  count: number;
  hot: number;
}

/**
 * Seconds until `/esplora/mempool` answers `want.count` and the hot address's mempool_stats.tx_count
 * `want.hot` (each on its own), polled every POLL_MS, 503s counted. Given up after CATCH_UP_MS, or once both
 * answer the same short counts for STALL_MS (a view bounded below the mempool's size stops there): then
 * the counts it stopped at are returned.
 */
async function catchUp(url: string, hot: string, want: Expected) {
  const started = performance.now();
  const deadline = Date.now() + CATCH_UP_MS;
  let mempoolS: number | undefined;
  let hotS: number | undefined;
  let unavailable = 0;
  let polls = 0;
  let last = "";
  let changedAt = performance.now();
  const read = async (path: string) => {
    const response = await fetch(`${url}/esplora${path}`);
    const body = await response.text();
    if (response.status === 503) unavailable++;
    return response.status === 200 ? JSON.parse(body) : undefined;
  };
  const seen = { count: undefined as number | undefined, hot: undefined as number | undefined };
  while ((mempoolS === undefined || hotS === undefined) && Date.now() < deadline) {
    polls++;
    const [pool, address] = await Promise.all([read("/mempool"), read(`/address/${hot}`)]);
    const at = (performance.now() - started) / 1000;
    seen.count = pool?.count;
    seen.hot = address?.mempool_stats?.tx_count;
    if (mempoolS === undefined && seen.count === want.count) mempoolS = at;
    if (hotS === undefined && seen.hot === want.hot) hotS = at;
    const now = JSON.stringify(seen);
    if (now !== last) [last, changedAt] = [now, performance.now()];
    else if (seen.count !== undefined && seen.hot !== undefined && performance.now() - changedAt > STALL_MS)
      break;
    await Bun.sleep(POLL_MS);
  }
  return { mempoolS, hotS, unavailable, polls, seen };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** A route measured: its pattern, what its paths are, and the paths (under /esplora) its reads cycle through. */
interface RouteCase {
  route: string;
  note?: string;
  paths: string[];
}

/** What an answer holds: its status, size and, for a JSON array, its length. */
function answerShape(answer: { status: number; body: string }) {
  let items: number | undefined;
  try {
    const parsed = JSON.parse(answer.body);
    items = Array.isArray(parsed) ? parsed.length : undefined;
  } catch {
    // Text (an error's words): no items.
  }
  return { status: answer.status, bytes: Buffer.byteLength(answer.body), items };
}

/**
 * A route's reads one after another: READS GETs cycling through its paths (each a first read where it has
 * READS of them), for at most READS_MS, each with the node calls it caused (the service's counters read
 * before and after it); p50 and p99 of their times.
 */
async function sequentialReads(service: Service, proxy: CountingProxy, route: RouteCase) {
  const deadline = Date.now() + READS_MS;
  const times: number[] = [];
  const statuses: Record<number, number> = {};
  let unavailable = 0;
  let most: [string, number][] = [];
  let calls = 0;
  let first: ReturnType<typeof answerShape> | undefined;
  for (let i = 0; i < READS && Date.now() < deadline; i++) {
    const before = callsNow(proxy);
    const answer = await get(`${service.url}/esplora${route.paths[i % route.paths.length]}`);
    const caused = callsSince(proxy, before);
    if (sumCalls(caused) > sumCalls(most)) most = caused;
    calls += sumCalls(caused);
    times.push(answer.ms);
    unavailable += answer.unavailable;
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    first ??= answerShape(answer);
  }
  times.sort((x, y) => x - y);
  return {
    reads: times.length,
    first: first!,
    statuses,
    unavailable,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxCalls: sumCalls(most),
    mostCalls: most,
    meanCalls: calls / times.length,
  };
}

/**
 * wrk over a route's paths with CONCURRENT connections: its figures, CPU and node calls per request. It runs
 * BENCH_SECONDS, or longer for a slow route (LOADED_ROUNDS answers a connection at its one-connection p50,
 * at most LOADED_MAX_S); what the warm-up left in flight is done before it starts.
 */
async function loadedRun(
  at: { service: Service; node: LitecoinNode; proxy: CountingProxy },
  route: RouteCase,
  p50Ms: number,
) {
  const { service, node, proxy } = at;
  const run = (durationS: number) =>
    wrk({
      url: service.url,
      paths: route.paths.map((p) => `/esplora${p}`),
      connections: CONCURRENT,
      threads: THREADS,
      durationS,
      timeoutS: WRK_TIMEOUT_S,
    });
  await run(WARMUP_S);
  await settle(service.pid, LOADED_MAX_S * 1000);
  const durationS = Math.min(
    LOADED_MAX_S,
    Math.max(SECONDS, Math.ceil((LOADED_ROUNDS * CONCURRENT * p50Ms) / 1000)),
  );
  const cpu = { service: cpuSeconds(service.pid), node: cpuSeconds(node.pid()!) };
  const callsBefore = callsNow(proxy);
  const loaded = await run(durationS);
  const loadedCalls = sumCalls(callsSince(proxy, callsBefore));
  const requests = Math.max(1, loaded.requests);
  return {
    loaded,
    durationS,
    serviceCpuPer1000: ((cpuSeconds(service.pid) - cpu.service) * 1000) / requests,
    nodeCpuPer1000: ((cpuSeconds(node.pid()!) - cpu.node) * 1000) / requests,
    loadedCallsPerRequest: loadedCalls / requests,
  };
}

/** A route measured: its reads one after another, then wrk's run. */
async function measureRoute(
  at: { service: Service; node: LitecoinNode; proxy: CountingProxy },
  route: RouteCase,
) {
  const sequential = await sequentialReads(at.service, at.proxy, route);
  const loaded = await loadedRun(at, route, sequential.p50Ms);
  return { route: route.route, note: route.note, ...sequential, ...loaded };
}

/** The data: the bulk chain (the hot address's history), the fan-out block, the mempool's transactions. */
async function buildData(node: LitecoinNode, log: (line: string) => void) {
  const blocks = Math.ceil(ADDRESS_TXS / LANES);
  const chain = await buildBulkChain(node, blocks, log);
  log(`built ${fmt(blocks)} blocks, ${fmt(chain.transactions)} transactions in ${fmt(chain.seconds, 1)} s`);
  const started = performance.now();
  const coins = await fanOut(node, MEMPOOL + BURST);
  const pool = mempoolTransactions(coins.slice(0, MEMPOOL), MEMPOOL, {
    hotEvery: HOT_EVERY,
    childEvery: CHILD_EVERY,
    tag: "pool",
  });
  const burst = mempoolTransactions(coins.slice(MEMPOOL), BURST, { hotEvery: HOT_EVERY, tag: "burst" });
  const signedS = (performance.now() - started) / 1000;
  log(
    `fanned out ${fmt(coins.length)} outputs and signed ${fmt(MEMPOOL + BURST)} transactions in ${fmt(signedS, 1)} s`,
  );
  return { chain, pool, burst, signedS, head: await node.rpc<number>("getblockcount") };
}

/** `count` txids of the hot address's history from the bulk blocks `from` to `to`, spread evenly over them. */
async function historyTxids(node: LitecoinNode, from: number, to: number, count: number) {
  const blocks = to - from + 1;
  const spread = Math.min(count, blocks);
  const txids: string[] = [];
  for (let k = 0; k < spread; k++) {
    const height = from + Math.floor((k * blocks) / spread);
    const block = await node.rpc<{ tx: string[] }>("getblock", [await node.rpc("getblockhash", [height]), 1]);
    // Every bulk transaction pays the hot address; the coinbase (0) does not.
    txids.push(block.tx[1 + (k % LANES)]!);
  }
  return txids;
}

/** Share of the history, its oldest, the deep pages' last_seen txids come from. */
const DEEP_SHARE = 0.1;

/**
 * Paths of each route on that data: last_seen txids spread over the hot address's whole history (its first
 * bulk block left out: a page there may end early) and over its oldest DEEP_SHARE; mempool transactions, half
 * of them with a child spending an output.
 */
async function routeCases(node: LitecoinNode, data: Awaited<ReturnType<typeof buildData>>) {
  const { first, head } = data.chain;
  const spread = await historyTxids(node, first + 1, head, READS);
  const deep = await historyTxids(
    node,
    first + 1,
    first + 1 + Math.floor((head - first) * DEEP_SHARE),
    READS,
  );
  const parents = data.pool.filter((t) => t.spentInMempool).slice(0, Math.ceil(READS / 2));
  const others = data.pool.filter((t) => !t.spentInMempool && !t.child);
  const wanted = READS - parents.length;
  const stride = Math.max(1, Math.floor(others.length / Math.max(1, wanted)));
  const pending = [...parents, ...others.filter((_, i) => i % stride === 0).slice(0, wanted)].map(
    (t) => t.id,
  );
  const scripthash = sha256(keyOf(HOT_SEED).script).toString("hex");
  const address = `/address/${data.chain.hot}`;
  return [
    { route: "/address/:a", paths: [address] },
    { route: "/address/:a/txs", paths: [`${address}/txs`] },
    {
      route: "/address/:a/txs/chain/:last_seen",
      note: `deep: ${fmt(deep.length)} positions in the oldest ${DEEP_SHARE * 100}%`,
      paths: deep.map((txid) => `${address}/txs/chain/${txid}`),
    },
    {
      route: "/address/:a/txs/chain/:last_seen",
      note: `${fmt(spread.length)} positions, newest to oldest`,
      paths: spread.map((txid) => `${address}/txs/chain/${txid}`),
    },
    { route: "/address/:a/txs/mempool", paths: [`${address}/txs/mempool`] },
    { route: "/address/:a/utxo", note: "past UTXO_MAX", paths: [`${address}/utxo`] },
    { route: "/scripthash/:h/txs", paths: [`/scripthash/${scripthash}/txs`] },
    {
      route: "/tx/:txid",
      note: `${fmt(pending.length)} mempool transactions`,
      paths: pending.map((t) => `/tx/${t}`),
    },
    {
      route: "/tx/:txid/outspends",
      note: `the same; ${fmt(parents.length)} spent in the mempool`,
      paths: pending.map((t) => `/tx/${t}/outspends`),
    },
    { route: "/blocks", paths: ["/blocks"] },
    { route: "/mempool", paths: ["/mempool"] },
    { route: "/mempool/txids", paths: ["/mempool/txids"] },
  ] satisfies RouteCase[];
}

/** What the phase runs on: the node, the proxy that counts its calls (the service's upstream), PostgreSQL. */
interface Parts {
  node: LitecoinNode;
  proxy: CountingProxy;
  pg: PgServer;
  dataDir: string;
}

/** The node, its chain and mempool built, the index backfilled by a first service (left running). */
async function setUp(parts: Parts, log: (line: string) => void) {
  const { node, pg, proxy, dataDir } = parts;
  const built = performance.now();
  const data = await buildData(node, log);
  const env = {
    DATABASE_URL: await pg.createDatabase("scale"),
    CHAIN: "LTC",
    INDEXER: "on",
    INDEX_FROM_BLOCK: "0",
    HEAD_POLL_MS: String(HEAD_POLL_MS),
  };
  const service = await startService(proxy.url, dataDir, env);
  try {
    const indexed = async () =>
      ((await (await fetch(`${service.url}/health`)).json()) as any).indexer?.lastBlockNumber === data.head;
    const backfillS = await waitUntil(`the index to reach block ${data.head}`, indexed);
    log(`indexed ${fmt(data.head + 1)} blocks in ${fmt(backfillS, 1)} s`);
    const filling = performance.now();
    await sendToMempool(node, data.pool);
    const fillS = (performance.now() - filling) / 1000;
    const size = (await node.rpc<{ size: number }>("getmempoolinfo")).size;
    if (size !== MEMPOOL) throw new Error(`the node's mempool holds ${size} transactions, not ${MEMPOOL}`);
    const buildS = (performance.now() - built) / 1000;
    log(
      `the mempool's ${fmt(MEMPOOL)} transactions sent in ${fmt(fillS, 1)} s; all built in ${fmt(buildS)} s`,
    );
    return { data, env, service, backfillS, fillS, buildS };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

type Caught = Awaited<ReturnType<typeof catchUp>>;

/** A row of the catch-up table; `offset` seconds are added to its times (a burst's sending). */
function catchUpRow(when: string, caught: Caught, want: Expected, offset = 0) {
  const cell = (seconds: number | undefined, seen: number | undefined, of: number) =>
    seconds !== undefined
      ? `${fmt(seconds + offset, 1)} s`
      : seen === undefined
        ? `**not within ${CATCH_UP_MS / 1000} s**`
        : `**stopped at ${fmt(seen)} of ${fmt(of)}**`;
  return `| ${when} | ${cell(caught.mempoolS, caught.seen.count, want.count)} | ${cell(caught.hotS, caught.seen.hot, want.hot)} | ${fmt(caught.unavailable)} | ${fmt(caught.polls)} |`;
}

const memoryText = (m: { rssMb: number; heapMb?: number }) =>
  `${fmt(m.rssMb)} MB resident, ${m.heapMb === undefined ? "heap not reported" : `${fmt(m.heapMb)} MB of heap in use`}`;

/** The routes' table and the targets' verdicts. */
function routeLines(measured: Awaited<ReturnType<typeof measureRoute>>[]) {
  const name = (m: { route: string; note?: string }) => `\`${m.route}\`${m.note ? ` (${m.note})` : ""}`;
  const missed = (p99: (m: (typeof measured)[number]) => number) => [
    ...new Set(measured.filter((m) => !(p99(m) < P99_TARGET_MS)).map((m) => `\`${m.route}\``)),
  ];
  /** wrk's p99, unknown where no answer came within its run. */
  const loadedP99 = (m: (typeof measured)[number]) => (m.loaded.requests === 0 ? Number.NaN : m.loaded.p99Ms);
  const verdict = (names: string[]) => (names.length === 0 ? "met" : `**missed** by ${names.join(", ")}`);
  const worst = measured.reduce((w, m) => (m.maxCalls > w.maxCalls ? m : w));
  return [
    `Each route on that data: ${fmt(READS)} reads one after another (cycling through the route's paths: where it has ${fmt(READS)}, each is a first read; node calls counted by a proxy in front of the node, the long-poll left out), then wrk with ${CONCURRENT} connections over the same paths, ${SECONDS} s (longer for a slow route: ${LOADED_ROUNDS} answers a connection at its p50 alone, at most ${LOADED_MAX_S} s) after ${WARMUP_S} s of warm-up and what it left in flight (CPU: user + system seconds per 1,000 requests):`,
    "",
    `| route | answer | 1 connection p50 | p99 | node calls a request (max / mean) | ${CONCURRENT} connections req/s | p50 | p99 | non-2xx | service CPU s per 1,000 | node CPU s per 1,000 | node calls a request |`,
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...measured.map((m) => {
      const size = m.first.bytes < 1024 ? `${m.first.bytes} B` : `${fmt(m.first.bytes / 1024, 1)} KB`;
      const items = m.first.items === undefined ? "" : `, ${fmt(m.first.items)} items`;
      const waits = m.unavailable > 0 ? `, ${fmt(m.unavailable)} 503s waited out` : "";
      const reads = m.reads < READS ? `, ${fmt(m.reads)} reads in ${READS_MS / 1000} s` : "";
      const sequential = `${fmt(m.p50Ms, 2)} ms | ${fmt(m.p99Ms, 2)} ms | ${fmt(m.maxCalls)} / ${fmt(m.meanCalls, 2)}`;
      const longer = m.durationS > SECONDS ? ` (${m.durationS} s)` : "";
      const loaded =
        m.loaded.requests === 0
          ? `no answer in ${m.durationS} s | | | ${fmt(m.loaded.errors)} | | |`
          : `${fmt(m.loaded.requestsPerSecond)}${longer} | ${fmt(m.loaded.p50Ms, 2)} ms | ${fmt(m.loaded.p99Ms, 2)} ms | ${fmt(m.loaded.errors)} | ${fmt(m.serviceCpuPer1000, 2)} | ${fmt(m.nodeCpuPer1000, 2)} | ${fmt(m.loadedCallsPerRequest, 3)}`;
      return `| ${name(m)} | ${m.first.status} (${size}${items}${waits}${reads}) | ${sequential} | ${loaded} |`;
    }),
    "",
    `p99 < ${P99_TARGET_MS} ms on one connection: ${verdict(missed((m) => m.p99Ms))}; on ${CONCURRENT} connections: ${verdict(missed(loadedP99))}.`,
    `Node calls of one request: at most ${fmt(worst.maxCalls)} (${name(worst)}: ${callsText(worst.mostCalls)}; <= ${NODE_CALLS_TARGET} aimed at: ${worst.maxCalls <= NODE_CALLS_TARGET ? "met" : "**missed**"}).`,
  ];
}

/** The service that runs now (the finally of the phase stops it). */
interface Running {
  service?: Service;
}

/**
 * The mempool view catching up: on the running service, the full mempool (sent while it ran), then a
 * burst; then a restart with the mempool full (from /health), with its memory, CPU and node calls.
 */
async function catchUps(parts: Parts, ready: Awaited<ReturnType<typeof setUp>>, running: Running) {
  const { node, proxy } = parts;
  const { data } = ready;
  const hot = data.chain.hot;
  const full: Expected = { count: MEMPOOL, hot: data.pool.filter((t) => t.paysHot).length };
  const all: Expected = {
    count: MEMPOOL + BURST,
    hot: full.hot + data.burst.filter((t) => t.paysHot).length,
  };
  const firstRead = await catchUp(ready.service.url, hot, full);
  const bursting = performance.now();
  await sendToMempool(node, data.burst);
  const burstSendS = (performance.now() - bursting) / 1000;
  const burstRead = await catchUp(ready.service.url, hot, all);
  await ready.service.stop();
  running.service = undefined;

  const beforeStart = callsNow(proxy);
  const restarting = performance.now();
  const service = await startService(proxy.url, parts.dataDir, ready.env);
  running.service = service;
  const healthS = (performance.now() - restarting) / 1000;
  const atHealth = await memoryOf(service);
  const restart = await catchUp(service.url, hot, all);
  const cpuS = cpuSeconds(service.pid);
  const calls = callsSince(proxy, beforeStart);
  const beforeIdle = callsNow(proxy);
  await Bun.sleep(IDLE_MS);
  const idleCalls = sumCalls(callsSince(proxy, beforeIdle));
  const caughtUp = await memoryOf(service);
  const accounting = await mempoolAccounting(service.url);
  const table = [
    "| when | `/esplora/mempool` | hot address | 503 answers | polls |",
    "|---|---:|---:|---:|---:|",
    catchUpRow(
      `the full mempool (${fmt(MEMPOOL)}, sent while the service ran), after the last send`,
      firstRead,
      full,
    ),
    catchUpRow(
      `a burst of ${fmt(BURST)} (sent in ${fmt(burstSendS, 1)} s), from the burst's start`,
      burstRead,
      all,
      burstSendS,
    ),
    catchUpRow(
      `a restart with ${fmt(MEMPOOL + BURST)} in the mempool, from its /health (${fmt(healthS, 1)} s after its start)`,
      restart,
      all,
    ),
  ];
  const delta = caughtUp.rssMb - atHealth.rssMb;
  const boundMb = Number(process.env.MEMPOOL_MAX_MB ?? DEFAULT_MEMPOOL_MAX_MB);
  const heapMb = (caughtUp.heapMb ?? Number.NaN) - (atHealth.heapMb ?? Number.NaN);
  const memory = [
    `Memory of the restarted service: at /health ${memoryText(atHealth)}; caught up and ${IDLE_MS / 1000} s idle ${memoryText(caughtUp)} (${fmt(delta)} MB more resident, ${fmt((delta * 2 ** 20) / (MEMPOOL + BURST))} bytes a mempool transaction). From its start until caught up: ${fmt(cpuS, 1)} CPU seconds, ${fmt(sumCalls(calls))} node calls (${callsText(calls)}); idle afterwards, ${fmt(idleCalls)} node calls in ${IDLE_MS / 1000} s (the long-poll left out). Its /metrics answered in ${fmt(caughtUp.metricsMs)} ms then (${fmt(atHealth.metricsMs)} ms at /health; a scrape that walked the JavaScript heap, as the heap-space series did, would block the service that long).`,
    "",
    accounting.length === 0
      ? "The service reports nothing of its mempool view (no /metrics series or /health member named mempool)."
      : `What the service reports of its mempool: ${accounting.map((a) => `\`${a}\``).join("; ")}.`,
    `Its bound: MEMPOOL_MAX_MB ${fmt(boundMb)} (${process.env.MEMPOOL_MAX_MB === undefined ? "the service's default, on the code that has one" : "set"}); the heap grew ${fmt(heapMb)} MB as the view caught up: ${heapMb <= boundMb ? "within it" : "**past it**"}.`,
  ];
  const figures = {
    firstRead,
    burstSendS,
    burstRead,
    healthS,
    restart,
    atHealth,
    caughtUp,
    cpuS,
    calls,
    idleCalls,
    accounting,
  };
  return { service, table, memory, figures };
}

export async function utxoScalePhase(lines: string[], rows: Record<string, unknown>[]) {
  const log = (line: string) => console.error(line);
  const node = await startLitecoind({ args: NODE_ARGS });
  const proxy = startCountingProxy(node.url);
  let pg: PgServer | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-utxoscale-"));
  const running: Running = {};
  try {
    pg = await startPostgres();
    const parts: Parts = { node, proxy, pg, dataDir };
    const ready = await setUp(parts, log);
    running.service = ready.service;
    const { data } = ready;
    const caught = await catchUps(parts, ready, running);
    log("caught up after a restart; measuring the routes");
    const measured: Awaited<ReturnType<typeof measureRoute>>[] = [];
    const at = { service: caught.service, node, proxy };
    for (const route of await routeCases(node, data)) {
      measured.push(await measureRoute(at, route));
      log(`measured ${route.route} ${route.note ?? ""}`);
    }
    const afterRoutes = await memoryOf(caught.service);
    const stats = (await (
      await fetch(`${caught.service.url}/esplora/address/${data.chain.hot}`)
    ).json()) as any;
    lines.push(
      "",
      `The Bitcoin family's Esplora API at mainnet scale: a regtest Litecoin Core 0.21 with ${fmt(MEMPOOL + BURST)} transactions in its mempool (${fmt(MEMPOOL)}, then a burst of ${fmt(BURST)}; one in ${HOT_EVERY} pays the hot address, one in ${CHILD_EVERY} has a child in the mempool) and a hot address with ${fmt(stats.chain_stats?.tx_count ?? 0)} confirmed transactions (${fmt(stats.chain_stats?.funded_txo_count ?? 0)} outputs received, ${fmt(stats.chain_stats?.spent_txo_count ?? 0)} spent), indexed by the service (CHAIN=LTC, INDEXER=on, PostgreSQL); ${new Date().toISOString()}`,
      "",
      `Built in ${fmt(ready.buildS)} s: the chain of ${fmt(data.chain.head - data.chain.first + 1)} blocks in ${fmt(data.chain.seconds)} s, the fan-out and ${fmt(MEMPOOL + BURST)} signatures in ${fmt(data.signedS, 1)} s, the index's backfill in ${fmt(ready.backfillS)} s, the mempool sent in ${fmt(ready.fillS, 1)} s (${fmt(MEMPOOL / ready.fillS)} transactions/s).`,
      "",
      "The mempool view catching up (until `/esplora/mempool`'s count, and the hot address's `mempool_stats.tx_count`, are the node's):",
      "",
      ...caught.table,
      "",
      ...caught.memory,
      `After the routes below: ${memoryText(afterRoutes)}.`,
      "",
      ...routeLines(measured),
    );
    rows.push({
      phase: "utxoscale",
      mempool: MEMPOOL,
      burst: BURST,
      chain: data.chain,
      buildS: ready.buildS,
      signedS: data.signedS,
      backfillS: ready.backfillS,
      fillS: ready.fillS,
      ...caught.figures,
      afterRoutes,
      routes: measured,
    });
  } finally {
    await running.service?.stop();
    proxy.stop();
    await pg?.stop();
    await teardownAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
