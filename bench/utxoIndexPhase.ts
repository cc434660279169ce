/**
 * The Bitcoin family's index (BENCH_PHASES=utxoindex): a regtest Litecoin Core chain of BLOCKS blocks of
 * 100 transactions (11 outputs each; bench/utxoBulkChain.ts makes it, once per run) indexed by the service
 * (CHAIN=LTC, INDEXER=on) into a real PostgreSQL with fsync on, side by side with the node's own
 * `getblock <hash> 2` rate over the same blocks with the same parallelism (the indexer's window: it cannot
 * be faster than the node serves them), measured before and after the backfill, and where the backfill's
 * time went (each process's CPU seconds; each statement's execution time from pg_stat_statements); then an
 * address's page of transfers (`watch_getTransfersByAddress`: the first page, one 50,000 deep by `after`,
 * the deepest `offset` served, its sending side, and Esplora's `/esplora/address/:a/txs` where the instance
 * serves it) on the index of more than a million outputs this makes.
 * Targets (reported, not asserted): the backfill at >= 0.7 of the node's rate; the page's p50 < 20 ms.
 *
 * Environment: BENCH_UTXO_INDEX_BLOCKS (default 1000: 100,000 transactions, 1.1 million outputs).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createUtxoTransferQueries } from "../src/families/utxo/transferQueries";
import { WINDOW_BLOCKS } from "../src/indexer/window";
import { MAX_TRANSFER_OFFSET } from "../src/schemas";
import { type LitecoinNode, startLitecoind } from "../test/support/litecoind";
import { startPostgres } from "../test/support/postgres";
import { teardownAll } from "../test/support/shared";
import {
  cpuSeconds,
  fmt,
  latencies,
  median,
  startService,
  sumMetric,
  transfersAfter,
  treeCpuSeconds,
  waitUntil,
} from "./support";
import { buildBulkChain } from "./utxoBulkChain";

const BLOCKS = Number(process.env.BENCH_UTXO_INDEX_BLOCKS ?? 1_000);
/** The node's HTTP server queues this many requests (its default, 16, would refuse a window's reads). */
const NODE_WORK_QUEUE = 1024;
/** A page this deep in the hot address's history (half of it at the default size). */
const DEEP_OFFSET = Math.min(50_000, BLOCKS * 50);
const PAGE = 50;
/** Esplora's pages are read one after another this many times (wrk sends POSTs only). */
const ESPLORA_READS = 200;
const NODE_RATE_TARGET = 0.7;
const PAGE_TARGET_MS = 20;
/** The last block's transactions (a multiple of the bulk chain's 100 lanes), checked against FILTERS. */
const BIG_BLOCK_TRANSACTIONS = 2_000;
const FILTERS = 100_000;
const CHECK_TARGET_MS = 50;

/** Blocks a second the node serves `getblock <hash> 2` at, WINDOW_BLOCKS calls in flight; and MB/s. */
async function nodeRate(node: LitecoinNode, hashes: string[]) {
  const started = performance.now();
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: Number(WINDOW_BLOCKS) }, async () => {
      while (next < hashes.length) {
        const hash = hashes[next++]!;
        const { status, text } = await node.post(
          JSON.stringify({ jsonrpc: "1.0", id: 1, method: "getblock", params: [hash, 2] }),
        );
        if (status !== 200) throw new Error(`the node answered getblock with HTTP ${status}`);
        bytes += text.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { blocksPerSecond: hashes.length / seconds, mbPerSecond: bytes / seconds / 1e6 };
}

/** Statements that took this share of the database's execution time or more are listed. */
const STATEMENT_SHARE = 0.01;

/**
 * The index's statements by execution time (pg_stat_statements, over the database of `url`): what each
 * wrote or read (its verb and table), calls, rows and seconds. The upkeep after the backfill is left out.
 */
async function statementTimes(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists pg_stat_statements`;
    const all = await sql`select query, calls::int as calls, rows::bigint::text as rows,
        total_exec_time / 1000 as seconds
      from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = current_database() and query !~* '^[[:space:]]*(vacuum|create|analyze)'
      order by total_exec_time desc`;
    const total = all.reduce((sum, r) => sum + (r.seconds as number), 0);
    return all
      .filter((r) => (r.seconds as number) >= total * STATEMENT_SHARE)
      .map((r) => {
        const query = (r.query as string).replace(/\s+/g, " ").trim();
        const table =
          [...query.matchAll(/\b(?:into|update|from|join)\s+"?(\w+)"?/gi)]
            .map((m) => m[1]!)
            .find((t) => t.toLowerCase() !== "unnest") ?? "?";
        // A `with` statement is named by what it does first (an insert whose rows update another table);
        // the rows PostgreSQL counts for it are its last part's, so none are shown.
        const verb = (/\b(insert|update|select|delete)\b/i.exec(query)?.[1] ?? "?").toLowerCase();
        return {
          what: `${verb} ${table}`,
          calls: r.calls as number,
          rows: /^with\b/i.test(query) ? undefined : Number(r.rows),
          seconds: r.seconds as number,
        };
      });
  } finally {
    await sql.end();
  }
}

/** p50 and p99 of `n` GETs one after another (ms); undefined when the route does not answer 200. */
async function sequentialGets(url: string, n: number) {
  if ((await fetch(url)).status !== 200) return undefined;
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n / 2)]!, p99: times[Math.min(n - 1, Math.ceil(n * 0.99) - 1)]! };
}

export async function utxoIndexPhase(lines: string[], rows: Record<string, unknown>[]) {
  const node = await startLitecoind({ args: [`-rpcworkqueue=${NODE_WORK_QUEUE}`] });
  // pg_stat_statements: the backfill's time in the database, statement by statement.
  const pg = await startPostgres({ durable: true, preload: ["pg_stat_statements"] });
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-utxoindex-"));
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const chain = await buildBulkChain(node, BLOCKS, (line) => console.error(line), {
      lastBlockTransactions: BIG_BLOCK_TRANSACTIONS,
    });
    console.error(
      `built ${fmt(BLOCKS)} blocks, ${fmt(chain.transactions)} transactions, ${fmt(chain.outputs)} outputs in ${fmt(chain.seconds, 1)} s`,
    );
    const hashes: string[] = [];
    for (let h = chain.first; h <= chain.head; h++) hashes.push(await node.rpc<string>("getblockhash", [h]));
    const nodeCpuBefore = cpuSeconds(node.pid()!);
    const before = await nodeRate(node, hashes);
    const nodeAlone = cpuSeconds(node.pid()!) - nodeCpuBefore;

    const databaseUrl = await pg.createDatabase("bench");
    const cpuAtStart = { node: cpuSeconds(node.pid()!), db: treeCpuSeconds(pg.pid()) };
    service = await startService(node.url, dataDir, {
      DATABASE_URL: databaseUrl,
      CHAIN: "LTC",
      INDEXER: "on",
      INDEX_FROM_BLOCK: String(chain.first),
      HEAD_POLL_MS: "100",
      // The last block is the one /watch_filters/check reads: processed at once (regtest's default is 1).
      CONFIRMATIONS: "0",
    });
    const health = async () => ((await (await fetch(`${service!.url}/health`)).json()) as any).indexer;
    const seconds = await waitUntil(
      `the index to reach block ${chain.head}`,
      async () => (await health())?.lastBlockNumber === chain.head,
    );
    const cpu = {
      db: treeCpuSeconds(pg.pid()) - cpuAtStart.db,
      service: cpuSeconds(service.pid),
      node: cpuSeconds(node.pid()!) - cpuAtStart.node,
    };
    const statements = await statementTimes(databaseUrl);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    const writeSeconds = sumMetric(metrics, "gateway_indexer_write_seconds_total");
    const after = await nodeRate(node, hashes);
    const nodeBlocks = median([before.blocksPerSecond, after.blocksPerSecond]);
    const blocksPerSecond = hashes.length / seconds;

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const [counts] = await sql`select (select count(*) from transactions)::int as transactions,
      (select count(*) from outputs)::int as outputs,
      (select count(*) from address_transactions where address = ${chain.hot})::int as hot`;
    // Each block's coinbase adds a transaction and two outputs (its reward and the witness commitment).
    const transactions = chain.transactions + hashes.length;
    const outputs = chain.outputs + 2 * hashes.length;
    if (counts!.transactions !== transactions || counts!.outputs !== outputs) {
      throw new Error(`indexed ${counts!.transactions} transactions and ${counts!.outputs} outputs`);
    }
    // The pages are read as the index stands once its post-backfill VACUUM (ANALYZE) is done.
    await waitUntil(
      "the index's upkeep",
      async () =>
        sumMetric(
          await (await fetch(`${service!.url}/metrics`)).text(),
          "gateway_indexer_maintenance_total",
        ) > 0,
    );
    const ratio = blocksPerSecond / nodeBlocks;
    lines.push(
      "",
      `The Bitcoin family's index: a regtest Litecoin Core 0.21 chain of ${fmt(hashes.length)} blocks, ${fmt(chain.transactions)} transactions, ${fmt(chain.outputs)} outputs (100 transactions of one or two inputs and 11 outputs a block; built in ${fmt(chain.seconds)} s), indexed into PostgreSQL with fsync on (the index's write transactions commit without waiting for their WAL flush: it is made again from the node); the node's \`getblock <hash> 2\` over the same blocks with ${WINDOW_BLOCKS} calls in flight (the indexer's window), before and after the backfill; ${new Date().toISOString()}`,
      "",
      "| | seconds | blocks/s | transactions/s | outputs/s | MB/s of getblock answers |",
      "|---|---:|---:|---:|---:|---:|",
      `| node: \`getblock <hash> 2\`, before | ${fmt(hashes.length / before.blocksPerSecond, 1)} | ${fmt(before.blocksPerSecond)} | ${fmt((before.blocksPerSecond * chain.transactions) / hashes.length)} | ${fmt((before.blocksPerSecond * chain.outputs) / hashes.length)} | ${fmt(before.mbPerSecond, 1)} |`,
      `| node: \`getblock <hash> 2\`, after | ${fmt(hashes.length / after.blocksPerSecond, 1)} | ${fmt(after.blocksPerSecond)} | ${fmt((after.blocksPerSecond * chain.transactions) / hashes.length)} | ${fmt((after.blocksPerSecond * chain.outputs) / hashes.length)} | ${fmt(after.mbPerSecond, 1)} |`,
      `| the index's backfill (from the node) | ${fmt(seconds, 1)} | ${fmt(blocksPerSecond)} | ${fmt(chain.transactions / seconds)} | ${fmt(chain.outputs / seconds)} | |`,
      `| its write transactions alone | ${fmt(writeSeconds, 1)} | ${fmt(hashes.length / writeSeconds)} | ${fmt(chain.transactions / writeSeconds)} | ${fmt(chain.outputs / writeSeconds)} | |`,
      "",
      `Backfill / node: ${fmt(ratio, 2)} (>= ${NODE_RATE_TARGET} aimed at: ${ratio >= NODE_RATE_TARGET ? "met" : "**missed**"}).`,
    );
    lines.push(
      "",
      `Where the backfill's time went: CPU seconds over it, PostgreSQL (its server and backends) ${fmt(cpu.db, 1)}, the service ${fmt(cpu.service, 1)}, the node ${fmt(cpu.node, 1)} (serving the same blocks alone, before: ${fmt(nodeAlone, 1)} in ${fmt(hashes.length / before.blocksPerSecond, 1)} s, on a machine of ${navigator.hardwareConcurrency} cores). The writing statements' execution in PostgreSQL (\`pg_stat_statements\`, one backend):`,
      "",
      "| statement | calls | rows | seconds | µs per row |",
      "|---|---:|---:|---:|---:|",
      ...statements.map(
        (st) =>
          `| ${st.what} | ${fmt(st.calls)} | ${st.rows === undefined ? "" : fmt(st.rows)} | ${fmt(st.seconds, 1)} | ${st.rows ? fmt((st.seconds * 1e6) / st.rows, 1) : ""} |`,
      ),
    );
    rows.push({
      phase: "utxoindex",
      chain,
      before,
      after,
      seconds,
      writeSeconds,
      blocksPerSecond,
      ratio,
      cpu,
      nodeAlone,
      statements,
    });

    const url = `${service.url}/node/rest/watch_getTransfersByAddress`;
    const queries = createUtxoTransferQueries(sql as never);
    const whole = { addresses: [chain.hot], fromBlock: 0n, toBlock: 2n ** 63n - 1n, offset: 0, limit: PAGE };
    const deep = await transfersAfter(queries, whole, DEEP_OFFSET);
    const pages = [
      { name: "first page", body: { addresses: chain.hot, limit: PAGE } },
      {
        name: `${fmt(DEEP_OFFSET)} deep, \`after\` the row before`,
        body: { addresses: chain.hot, after: deep.after, limit: PAGE },
      },
      {
        name: `${fmt(MAX_TRANSFER_OFFSET)} deep by \`offset\` (the deepest served)`,
        body: { addresses: chain.hot, offset: MAX_TRANSFER_OFFSET, limit: PAGE },
        // What offset paging costs (it reads the rows it skips): beside the target, not under it.
        deep: true,
      },
      {
        name: "sending side, first page",
        body: { addresses: chain.hot, transferDirection: "from", limit: PAGE },
      },
    ];
    lines.push(
      "",
      `An address's page on that index (${fmt(counts!.outputs)} outputs): the hot address, paid by every transaction and spending in one of five (${fmt(counts!.hot)} transactions of its own):`,
      "",
      "| request | connections | req/s | p50 | p99 |",
      "|---|---:|---:|---:|---:|",
    );
    let worst = 0;
    for (const page of pages) {
      const body = JSON.stringify(page.body);
      const check = (await (
        await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
      ).json()) as unknown[];
      if (check.length !== PAGE) throw new Error(`the ${page.name} holds ${check.length} rows`);
      const measured = await latencies(url, body);
      if (!page.deep) worst = Math.max(worst, measured.single.p50Ms);
      for (const [connections, r] of [
        [1, measured.single],
        [16, measured.busy],
      ] as const) {
        lines.push(
          `| \`watch_getTransfersByAddress\`, ${page.name} | ${connections} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 2)} ms | ${fmt(r.p99Ms, 2)} ms |`,
        );
      }
      rows.push({ phase: "utxoindex", page: page.name, ...measured });
    }
    const esplora = await sequentialGets(`${service.url}/esplora/address/${chain.hot}/txs`, ESPLORA_READS);
    if (esplora) {
      worst = Math.max(worst, esplora.p50);
      lines.push(
        `| \`/esplora/address/:a/txs\` (${ESPLORA_READS} GETs one after another) | 1 | | ${fmt(esplora.p50, 2)} ms | ${fmt(esplora.p99, 2)} ms |`,
      );
      rows.push({ phase: "utxoindex", page: "esplora txs", ...esplora });
    }
    lines.push(
      "",
      `Worst p50 of an address's page on one connection (all but the one by \`offset\`, which shows what an offset costs): ${fmt(worst, 2)} ms (< ${PAGE_TARGET_MS} ms aimed at: ${worst < PAGE_TARGET_MS ? "met" : "**missed**"}).`,
      "",
      "The deep page's key query (EXPLAIN ANALYZE):",
      "",
      "```",
      await queries.explain(deep.query),
      "```",
    );
    await filterCheck(lines, rows, { service, sql, node, head: chain.head });
    await sql.end();
  } finally {
    await service?.stop();
    await pg.stop();
    await teardownAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** /watch_filters/check of the last block against FILTERS filters (open mode: the key is the empty one). */
async function filterCheck(
  lines: string[],
  rows: Record<string, unknown>[],
  at: { service: { url: string }; sql: postgres.Sql; node: LitecoinNode; head: number },
) {
  const block = await at.node.rpc("getblock", [await at.node.rpc("getblockhash", [at.head]), 2]);
  const addresses = new Set<string>();
  for (const tx of block.tx as { vout: { scriptPubKey: { address?: string; addresses?: string[] } }[] }[]) {
    for (const out of tx.vout) {
      for (const a of out.scriptPubKey.addresses ?? [out.scriptPubKey.address ?? []].flat()) addresses.add(a);
    }
  }
  const participants = [...addresses];
  await at.sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
    select '\\x'::bytea, convert_to(a, 'UTF8'), null, false from unnest(${participants}::text[]) a`;
  await at.sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
    select '\\x'::bytea, convert_to('never-moves-' || x, 'UTF8'), null, false
    from generate_series(1, ${FILTERS - participants.length}::integer) x`;
  await at.sql`analyze watch_filters`;
  const url = `${at.service.url}/watch_filters/check`;
  const body = JSON.stringify({ block_number: at.head });
  const answer = (await (
    await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
  ).json()) as { filters: unknown[] };
  const measured = await latencies(url, body);
  const p50 = measured.single.p50Ms;
  lines.push(
    "",
    `/watch_filters/check of a block of ${fmt(block.tx.length)} transactions (the coinbase included) against ${fmt(FILTERS)} filters of one key, ${fmt(participants.length)} of them on the block's addresses (its first page: ${fmt(answer.filters.length)} results):`,
    "",
    ...measured.table,
    "",
    `p50 on one connection: ${fmt(p50, 2)} ms (< ${CHECK_TARGET_MS} ms aimed at: ${p50 < CHECK_TARGET_MS ? "met" : "**missed**"}).`,
  );
  rows.push({ phase: "utxoindex", check: block.tx.length, filters: FILTERS, ...measured });
}
