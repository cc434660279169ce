/**
 * The TRON family's index (BENCH_PHASES=tronindex): the service (CHAIN=NILE, INDEXER=on, a real PostgreSQL
 * with fsync on) in front of the test suite's stand-in java-tron (test/support/tronNode.ts, in the bench's
 * process), with blocks of ~300 transactions, TRX and TRC-20 transfers half and half (bench/tronBulkChain.ts:
 * unsigned, so made fast).
 *  - The backfill of BLOCKS such blocks (and the SOLIDIFY_DEPTH empty ones over them, so all are solidified),
 *    side by side with the stand-in's own rate of serving the same `/wallet/getblock {"id_or_num", "detail":
 *    true}` + `/wallet/gettransactioninfobyblocknum` pairs with the indexer's window in flight (before and
 *    after the backfill), and the CPU seconds of the service, PostgreSQL and the stand-in.
 *  - An address's first page of transfers (`watch_getTransfersByAddress`; TronGrid's
 *    `/v1/accounts/:a/transactions/trc20` where the checkout serves it) on an index of TRANSFERS transfers:
 *    the rows below the measured blocks are written before the service starts by the index's own writer
 *    (createTronIndexWriter: the same statements), from the measured blocks decoded (decodeTronBlock) and
 *    set at the numbers, ids and times of the stand-in's empty blocks there, each transaction id made new.
 *    Backfilling them from the stand-in would take ~TRANSFERS / 300 blocks at the rate above, and the
 *    stand-in would hold them all in memory.
 *  - `/watch_filters/check` of the last full block against FILTERS filters of one key.
 * Targets (reported, not asserted): the page's p50 < 20 ms, the check's p50 < 50 ms.
 *
 * Environment: BENCH_TRON_INDEX_BLOCKS (default 300: 90,000 transactions), BENCH_TRON_INDEX_TRANSFERS
 * (default 1,000,000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { tronAddresses } from "../src/families/tron/addresses";
import { type DecodedTronBlock, decodeTronBlock } from "../src/families/tron/decode";
import { createTronIndexWriter } from "../src/families/tron/indexWriter";
import { WINDOW_BLOCKS } from "../src/indexer/window";
import { startPostgres } from "../test/support/postgres";
import { teardownAll } from "../test/support/shared";
import type { TronBlockJson } from "../test/support/tron/scenario";
import { startTronNode, type TronNode } from "../test/support/tronNode";
import {
  cpuSeconds,
  fmt,
  latencies,
  median,
  SECONDS,
  startService,
  sumMetric,
  THREADS,
  treeCpuSeconds,
  WARMUP_S,
  waitUntil,
} from "./support";
import { fundSenders, HOT, HOT_EVERY, mineBulkBlock, TRANSFERS_OF_EACH } from "./tronBulkChain";
import { type WrkResult, wrk } from "./wrk";

const BLOCKS = Number(process.env.BENCH_TRON_INDEX_BLOCKS ?? 300);
const TRANSFERS = Number(process.env.BENCH_TRON_INDEX_TRANSFERS ?? 1_000_000);
const SOLIDIFY_DEPTH = 19;
const BLOCK_TRANSACTIONS = 2 * TRANSFERS_OF_EACH;
/** The writer's groups while loading: about the indexer's (window.ts closes a group at 5,000 transfers). */
const LOAD_GROUP_BLOCKS = 16;
const PAGE = 50;
const PAGE_TARGET_MS = 20;
const FILTERS = 100_000;
const CHECK_TARGET_MS = 50;

type Service = Awaited<ReturnType<typeof startService>>;

/**
 * Blocks a second the stand-in serves the indexer's pair of calls for each of `numbers` at, WINDOW_BLOCKS
 * blocks in flight (as the indexer reads: its window, both calls of a block at once); and MB/s.
 */
async function standInRate(node: TronNode, numbers: number[]) {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${node.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (response.status !== 200)
      throw new Error(`the stand-in answered ${path} with HTTP ${response.status}`);
    return (await response.text()).length;
  };
  const started = performance.now();
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: Number(WINDOW_BLOCKS) }, async () => {
      while (next < numbers.length) {
        const n = numbers[next++]!;
        const sizes = await Promise.all([
          post("/wallet/getblock", { detail: true, id_or_num: String(n) }),
          post("/wallet/gettransactioninfobyblocknum", { num: n }),
        ]);
        bytes += sizes[0] + sizes[1];
      }
    }),
  );
  node.calls.length = 0;
  const seconds = (performance.now() - started) / 1000;
  return { seconds, blocksPerSecond: numbers.length / seconds, mbPerSecond: bytes / seconds / 1e6 };
}

/** The chain: `padding` empty blocks (where the loaded rows go), then BLOCKS full ones, then SOLIDIFY_DEPTH empty. */
function buildChain(node: TronNode, padding: number) {
  const started = performance.now();
  const chain = node.chain;
  const padFirst = chain.headNumber() + 1;
  node.mine(padding);
  fundSenders(chain);
  const first = chain.headNumber() + 1;
  for (let b = 0; b < BLOCKS; b++) mineBulkBlock(chain, b * BLOCK_TRANSACTIONS);
  const last = chain.headNumber();
  node.mine(SOLIDIFY_DEPTH);
  node.calls.length = 0;
  return {
    padFirst,
    first,
    last,
    head: chain.headNumber(),
    seconds: (performance.now() - started) / 1000,
  };
}

/** Decoded block `template` made block `at` (number, ids, time of the stand-in's block there), its txIDs new. */
function relabel(template: DecodedTronBlock, at: DecodedTronBlock): DecodedTronBlock {
  const prefix = at.number.toString(16).padStart(16, "0");
  const fresh = (hash: string) => prefix + hash.slice(16);
  return {
    ...template,
    number: at.number,
    hash: at.hash,
    parentHash: at.parentHash,
    timestampMs: at.timestampMs,
    witness: at.witness,
    transactions: template.transactions.map((t) => ({ ...t, hash: fresh(t.hash) })),
    transfers: template.transfers.map((t) => ({ ...t, transactionHash: fresh(t.transactionHash) })),
    approvals: template.approvals.map((a) => ({ ...a, transactionHash: fresh(a.transactionHash) })),
  };
}

/**
 * The rows of the padding blocks, written by the index's writer in groups as the indexer writes them (the
 * measured blocks decoded, cycled, relabelled); the index then ends at the last padding block.
 */
async function loadRows(databaseUrl: string, node: TronNode, chain: ReturnType<typeof buildChain>) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const started = performance.now();
  try {
    const decode = (n: number) =>
      decodeTronBlock(node.chain.block(n) as TronBlockJson, node.chain.infos(n) ?? []);
    const templates: DecodedTronBlock[] = [];
    for (let n = chain.first; n <= chain.last; n++) templates.push(decode(n));
    const writer = createTronIndexWriter(sql as never);
    let last = (await writer.start(BigInt(chain.padFirst))).lastBlock;
    let transfers = 0;
    for (let n = chain.padFirst; n < chain.first; n += LOAD_GROUP_BLOCKS) {
      const group: DecodedTronBlock[] = [];
      for (let m = n; m < Math.min(n + LOAD_GROUP_BLOCKS, chain.first); m++) {
        group.push(relabel(templates[(m - chain.padFirst) % templates.length]!, decode(m)));
      }
      await writer.write(group, last);
      last = group[group.length - 1]!.number;
      transfers += group.reduce((sum, b) => sum + b.transfers.length, 0);
    }
    return { transfers, seconds: (performance.now() - started) / 1000 };
  } finally {
    await sql.end();
  }
}

/** The service with the index on; the seconds from its /health until its index reaches the head. */
async function backfill(node: TronNode, dataDir: string, databaseUrl: string, head: number) {
  const service = await startService(node.url, dataDir, {
    CHAIN: "NILE",
    DATABASE_URL: databaseUrl,
    INDEXER: "on",
    CONFIRMATIONS: String(SOLIDIFY_DEPTH),
    HEAD_POLL_MS: "100",
  });
  const indexed = async () =>
    ((await (await fetch(`${service.url}/health`)).json()) as any).indexer?.lastBlockNumber as number;
  const seconds = await waitUntil(`the index to reach block ${head}`, async () => (await indexed()) === head);
  return { service, seconds };
}

/**
 * GETs of a TronGrid page (PAGE rows in `data`) alone and among 16 clients (wrk, after its warm-up); undefined
 * where the checkout does not serve it.
 */
async function getLatencies(base: string, path: string) {
  const response = await fetch(`${base}${path}`);
  if (response.status !== 200) return undefined;
  const answer = (await response.json()) as { data?: unknown[] };
  if (answer.data?.length !== PAGE)
    throw new Error(`${path} answered ${JSON.stringify(answer).slice(0, 200)}`);
  const run = async (connections: number) => {
    const threads = Math.min(THREADS, connections);
    await wrk({ url: base, paths: [path], connections, threads, durationS: WARMUP_S });
    return wrk({ url: base, paths: [path], connections, threads, durationS: SECONDS });
  };
  return { single: await run(1), busy: await run(16) };
}

/** An address's first page: watch_getTransfersByAddress over REST, and TronGrid's v1 trc20 page where served. */
async function addressPages(service: Service, hot: string) {
  const url = `${service.url}/node/rest/watch_getTransfersByAddress`;
  const body = JSON.stringify({ addresses: [hot], limit: PAGE });
  const page = (await (
    await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
  ).json()) as unknown[];
  if (!Array.isArray(page) || page.length !== PAGE) {
    throw new Error(
      `the hot address's first page is not ${PAGE} rows: ${JSON.stringify(page).slice(0, 200)}`,
    );
  }
  const rest = await latencies(url, body);
  const v1 = await getLatencies(service.url, `/v1/accounts/${hot}/transactions/trc20?limit=${PAGE}`);
  return { rest, v1 };
}

/**
 * /watch_filters/check of block `number` (open mode: the key is the empty one) against FILTERS filters:
 * every address the block touches, the rest on addresses that never move.
 */
async function filterCheck(service: Service, sql: postgres.Sql, node: TronNode, number: number) {
  const block = decodeTronBlock(node.chain.block(number) as TronBlockJson, node.chain.infos(number) ?? []);
  await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
    select '\\x'::bytea, decode(a, 'hex'), null, false from unnest(${block.addresses}::text[]) a`;
  await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
    select '\\x'::bytea, decode('41' || lpad(to_hex(x), 40, '0'), 'hex'), null, false
    from generate_series(1, ${FILTERS - block.addresses.length}::integer) x`;
  await sql`analyze watch_filters`;
  const url = `${service.url}/watch_filters/check`;
  const body = JSON.stringify({ block_number: number });
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const answer = (await response.json()) as { filters?: unknown[] };
  if (response.status !== 200 || !Array.isArray(answer.filters) || answer.filters.length === 0) {
    throw new Error(
      `/watch_filters/check answered ${response.status}: ${JSON.stringify(answer).slice(0, 200)}`,
    );
  }
  const measured = await latencies(url, body);
  return {
    transactions: block.transactions.length,
    participants: block.addresses.length,
    results: answer.filters.length,
    ...measured,
  };
}

export async function tronIndexPhase(lines: string[], rows: Record<string, unknown>[]) {
  const node = await startTronNode({ network: "NILE", solidifyDepth: SOLIDIFY_DEPTH });
  const pg = await startPostgres({ durable: true });
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-tronindex-"));
  let service: Service | undefined;
  try {
    const measuredTransfers = BLOCKS * BLOCK_TRANSACTIONS;
    const padding = Math.max(0, Math.ceil((TRANSFERS - measuredTransfers) / BLOCK_TRANSACTIONS));
    const chain = buildChain(node, padding);
    console.error(
      `built ${fmt(padding)} empty blocks and ${fmt(BLOCKS)} of ${BLOCK_TRANSACTIONS} transactions in ${fmt(chain.seconds, 1)} s`,
    );
    const numbers = Array.from({ length: chain.head - chain.first + 1 }, (_, i) => chain.first + i);
    // Warmed first (its code compiled), as the backfill finds it.
    await standInRate(node, numbers.slice(0, 2 * Number(WINDOW_BLOCKS)));
    const standInCpu = cpuSeconds(process.pid);
    const before = await standInRate(node, numbers);
    const standInAlone = cpuSeconds(process.pid) - standInCpu;

    const databaseUrl = await pg.createDatabase("bench");
    // Its schema and tables, made by the service as it starts (the index off: nothing is written).
    await (
      await startService(node.url, dataDir, { CHAIN: "NILE", DATABASE_URL: databaseUrl, INDEXER: "off" })
    ).stop();
    const loaded = await loadRows(databaseUrl, node, chain);
    console.error(`loaded ${fmt(loaded.transfers)} transfers in ${fmt(loaded.seconds, 1)} s`);

    const cpuAtStart = { db: treeCpuSeconds(pg.pid()), standIn: cpuSeconds(process.pid) };
    const run = await backfill(node, dataDir, databaseUrl, chain.head);
    service = run.service;
    const cpu = {
      service: cpuSeconds(service.pid),
      db: treeCpuSeconds(pg.pid()) - cpuAtStart.db,
      standIn: cpuSeconds(process.pid) - cpuAtStart.standIn,
    };
    const writeSeconds = sumMetric(
      await (await fetch(`${service.url}/metrics`)).text(),
      "gateway_indexer_write_seconds_total",
    );
    const after = await standInRate(node, numbers);
    const standInBlocks = median([before.blocksPerSecond, after.blocksPerSecond]);
    const blocksPerSecond = numbers.length / run.seconds;
    const ratio = blocksPerSecond / standInBlocks;

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const hotBytes = Buffer.from(HOT, "hex");
    const [counts] = await sql`select (select count(*) from transfers)::int as transfers,
      (select count(*) from transfer_addresses where address = ${hotBytes})::int as hot`;
    const transfers = loaded.transfers + measuredTransfers;
    if (counts!.transfers !== transfers) {
      throw new Error(`the index holds ${counts!.transfers} transfers, not ${transfers}`);
    }
    // The upkeep the service runs once a backfill is done (vacuum analyze), run again here (it is cheap
    // then): a short backfill is not one to the indexer, and the loaded rows were never counted by it.
    await createTronIndexWriter(sql as never).maintain();
    const txs = (rate: number) => fmt((rate * measuredTransfers) / numbers.length);
    const backfillLines = [
      "",
      `The TRON family's index: the test suite's stand-in java-tron (in the bench's process) with ${fmt(BLOCKS)} blocks of ${BLOCK_TRANSACTIONS} transactions (TRX and TRC-20 transfers half and half, unsigned: bench/tronBulkChain.ts) and ${SOLIDIFY_DEPTH} empty blocks over them, indexed by the service (CHAIN=NILE, CONFIRMATIONS=${SOLIDIFY_DEPTH}) into PostgreSQL with fsync on, onto an index already holding ${fmt(loaded.transfers)} transfers (written by the index's writer before the service started); the stand-in's \`/wallet/getblock\` + \`/wallet/gettransactioninfobyblocknum\` over the same blocks with ${WINDOW_BLOCKS} blocks in flight (the indexer's window), before and after the backfill; ${new Date().toISOString()}`,
      "",
      "| | seconds | blocks/s | transactions/s | MB/s of answers |",
      "|---|---:|---:|---:|---:|",
      `| stand-in: the pair of calls, before | ${fmt(before.seconds, 1)} | ${fmt(before.blocksPerSecond)} | ${txs(before.blocksPerSecond)} | ${fmt(before.mbPerSecond, 1)} |`,
      `| stand-in: the pair of calls, after | ${fmt(after.seconds, 1)} | ${fmt(after.blocksPerSecond)} | ${txs(after.blocksPerSecond)} | ${fmt(after.mbPerSecond, 1)} |`,
      `| the index's backfill (from the stand-in) | ${fmt(run.seconds, 1)} | ${fmt(blocksPerSecond)} | ${txs(blocksPerSecond)} | |`,
      `| its write transactions alone | ${fmt(writeSeconds, 1)} | ${fmt(numbers.length / writeSeconds)} | ${txs(numbers.length / writeSeconds)} | |`,
      ...(padding > 0
        ? [
            `| loading ${fmt(padding)} blocks' rows by the writer (no reads) | ${fmt(loaded.seconds, 1)} | ${fmt(padding / loaded.seconds)} | ${fmt(loaded.transfers / loaded.seconds)} | |`,
          ]
        : []),
      "",
      `Backfill / stand-in: ${fmt(ratio, 2)}. CPU seconds over the backfill: the service ${fmt(cpu.service, 1)} (its start included), PostgreSQL (its server and backends) ${fmt(cpu.db, 1)}, the stand-in ${fmt(cpu.standIn, 1)} (the bench's process; serving the same blocks alone, before: ${fmt(standInAlone, 1)} in ${fmt(before.seconds, 1)} s), on a machine of ${navigator.hardwareConcurrency} cores.`,
    ];
    lines.push(...backfillLines);
    // Shown now too: the measurements below take a while more.
    console.error(backfillLines.join("\n"));
    rows.push({
      phase: "tronindex",
      chain,
      loaded,
      before,
      after,
      run: run.seconds,
      writeSeconds,
      ratio,
      cpu,
      standInAlone,
    });

    const hot = tronAddresses.fromBytes(hotBytes);
    const pages = await addressPages(service, hot);
    const worst = Math.max(pages.rest.single.p50Ms, pages.v1?.single.p50Ms ?? 0);
    const row = (name: string, connections: number, r: WrkResult) =>
      `| ${name} | ${connections} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 2)} ms | ${fmt(r.p99Ms, 2)} ms |`;
    const v1Name = "`/v1/accounts/:a/transactions/trc20` (TronGrid's v1), first page";
    lines.push(
      "",
      `An address's first page (${PAGE} rows) on that index (${fmt(counts!.transfers)} transfers): the hot address, paid by one transfer in ${HOT_EVERY} (${fmt(counts!.hot)} transfers of its own):`,
      "",
      "| request | connections | req/s | p50 | p99 |",
      "|---|---:|---:|---:|---:|",
      row("`watch_getTransfersByAddress` (REST), first page", 1, pages.rest.single),
      row("`watch_getTransfersByAddress` (REST), first page", 16, pages.rest.busy),
      ...(pages.v1
        ? [row(v1Name, 1, pages.v1.single), row(v1Name, 16, pages.v1.busy)]
        : [`| ${v1Name}: not served by this checkout, not measured | | | | |`]),
      "",
      `Worst p50 of the first page on one connection: ${fmt(worst, 2)} ms (< ${PAGE_TARGET_MS} ms aimed at: ${worst < PAGE_TARGET_MS ? "met" : "**missed**"}).`,
    );
    rows.push({ phase: "tronindex", page: "first", ...pages });

    const check = await filterCheck(service, sql, node, chain.last);
    const p50 = check.single.p50Ms;
    lines.push(
      "",
      `/watch_filters/check of a block of ${fmt(check.transactions)} transactions against ${fmt(FILTERS)} filters of one key, ${fmt(check.participants)} of them on the block's addresses (its first page: ${fmt(check.results)} results):`,
      "",
      ...check.table,
      "",
      `p50 on one connection: ${fmt(p50, 2)} ms (< ${CHECK_TARGET_MS} ms aimed at: ${p50 < CHECK_TARGET_MS ? "met" : "**missed**"}).`,
    );
    rows.push({ phase: "tronindex", check: check.transactions, filters: FILTERS, ...check });
    await sql.end();
  } finally {
    await service?.stop();
    await node.stop();
    await pg.stop();
    await teardownAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
