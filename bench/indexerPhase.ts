/**
 * The indexer phase: a local chain of dense blocks (150 token transfers each, 100 of them to one "hot"
 * address) indexed into a real PostgreSQL server with its durable defaults (fsync on), first from the
 * node, then again into fresh databases from the disk cache, with the transfers tables in one partition and
 * in partitions of 100 blocks, side by side; then a page deep in the hot address's history (50,000 rows in,
 * asked `after` the row before it) read over HTTP from both, with the plan PostgreSQL chose for it on many
 * partitions.
 *
 * Environment: BENCH_INDEX_BLOCKS (default 1000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startAnvil } from "../src/families/evm/devChain";
import { createEvmTransferQueries } from "../src/families/evm/transferQueries";
import { rpc } from "../test/support/chain";
import { fillTokenBlocks } from "../test/support/movements";
import { startPostgres } from "../test/support/postgres";
import { fmt, latencies, startService, sumMetric, transfersAfter, waitUntil } from "./support";
import type { WrkResult } from "./wrk";

const BLOCKS = Number(process.env.BENCH_INDEX_BLOCKS ?? 1_000);
const HOT_PER_BLOCK = 100;
const OTHERS_PER_BLOCK = 50;
/** Half-way through the hot address's history (50,000 at the default 1000 blocks). */
const DEEP_OFFSET = (BLOCKS * HOT_PER_BLOCK) / 2;
const PAGE = 50;
/** INDEX_PARTITION_BLOCKS: the default (the whole index in one partition) and a narrow width (many). */
const DEFAULT_PARTITION_BLOCKS = 100_000;
const NARROW_PARTITION_BLOCKS = 100;
/** anvil's finalized block is head - 64: these many more blocks make the indexed ones final (cacheable). */
const FINALITY_BLOCKS = 100;

const HOT = "0x00000000000000000000000000000000000c0ffe";
const other = (n: number) => `0x${(0xa000000 + n).toString(16).padStart(40, "0")}`;

export async function indexerPhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil();
  const pg = await startPostgres({ durable: true });
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-index-"));
  const services: { stop(): Promise<void> }[] = [];
  try {
    const built = performance.now();
    const { head: filled, transfers } = await fillTokenBlocks(anvil.url, {
      blocks: BLOCKS,
      recipients: (b) => [
        ...Array.from({ length: HOT_PER_BLOCK }, () => HOT),
        ...Array.from({ length: OTHERS_PER_BLOCK }, (_, k) => other(b * OTHERS_PER_BLOCK + k)),
      ],
    });
    await rpc(anvil.url)("anvil_mine", [`0x${FINALITY_BLOCKS.toString(16)}`]);
    const head = filled + FINALITY_BLOCKS;
    console.error(
      `built ${BLOCKS} blocks (${fmt(transfers)} transfers) in ${fmt((performance.now() - built) / 1000)} s`,
    );

    const runs: {
      label: string;
      partitions: number;
      seconds: number;
      writeSeconds: number;
      url: string;
      databaseUrl: string;
    }[] = [];
    // The transfers tables are partitioned by block range: the default width holds this whole index in one
    // partition, the narrow one spreads it over many, side by side from the same disk cache.
    const sources = [
      { label: "from the node (anvil)", partitionBlocks: DEFAULT_PARTITION_BLOCKS },
      { label: "from the disk cache, into a fresh database", partitionBlocks: DEFAULT_PARTITION_BLOCKS },
      { label: "from the disk cache, into a fresh database", partitionBlocks: NARROW_PARTITION_BLOCKS },
    ];
    for (const { label, partitionBlocks } of sources) {
      const databaseUrl = await pg.createDatabase("bench");
      const service = await startService(anvil.url, dataDir, {
        DATABASE_URL: databaseUrl,
        INDEXER: "on",
        HEAD_POLL_MS: "100",
        INDEX_PARTITION_BLOCKS: String(partitionBlocks),
      });
      services.push(service);
      const seconds = await waitUntil(
        `the index to reach block ${head}`,
        async () =>
          ((await (await fetch(`${service.url}/health`)).json()) as any).indexer.lastBlockNumber === head,
      );
      // The page is read as the index stands once its post-backfill VACUUM (ANALYZE) is done.
      await waitUntil(
        "the index's upkeep",
        async () =>
          sumMetric(
            await (await fetch(`${service.url}/metrics`)).text(),
            "gateway_indexer_maintenance_total",
          ) > 0,
      );
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      const indexed = sumMetric(metrics, "gateway_indexer_transfers_total");
      if (indexed !== transfers) throw new Error(`indexed ${indexed} transfers, expected ${transfers}`);
      runs.push({
        label,
        partitions: Math.floor(head / partitionBlocks) + 1,
        seconds,
        writeSeconds: sumMetric(metrics, "gateway_indexer_write_seconds_total"),
        url: service.url,
        databaseUrl,
      });
      // The first index is only timed; the others serve the deep page.
      if (runs.length === 1) await services.pop()!.stop();
    }

    lines.push(
      "",
      `Indexer backfill: ${fmt(head + 1)} blocks, ${fmt(BLOCKS)} of them dense (${HOT_PER_BLOCK + OTHERS_PER_BLOCK} token transfers each), ${fmt(transfers)} transfers; PostgreSQL ${"with fsync and synchronous commit on"}:`,
      "",
      "| source | partitions holding the index | seconds | blocks/s | transfers/s | transfers/s inside the write transactions |",
      "|---|---:|---:|---:|---:|---:|",
      ...runs.map(
        (r) =>
          `| ${r.label} | ${r.partitions} | ${fmt(r.seconds, 1)} | ${fmt((head + 1) / r.seconds)} | ${fmt(transfers / r.seconds)} | ${fmt(transfers / r.writeSeconds)} |`,
      ),
    );
    for (const r of runs) rows.push({ phase: "indexer", source: r.label, blocks: head + 1, transfers, ...r });

    // A page deep in the hot address's history, on one partition and on many, side by side.
    const served = runs.slice(1);
    const sql = postgres(served.at(-1)!.databaseUrl, { max: 1, onnotice: () => {} });
    const queries = createEvmTransferQueries(sql as never);
    const whole = { addresses: [HOT], fromBlock: 0n, toBlock: 2n ** 63n - 1n, offset: 0, limit: PAGE };
    const deep = await transfersAfter(queries, whole, DEEP_OFFSET);
    const body = JSON.stringify({ addresses: HOT, after: deep.after, limit: PAGE });
    const pages = [];
    for (const run of served) {
      const url = `${run.url}/node/rest/watch_getTransfersByAddress`;
      const check = (await (
        await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
      ).json()) as any[];
      if (check.length !== PAGE || check[0].to !== HOT)
        throw new Error("the deep page is not what was indexed");
      pages.push({ run, page: JSON.stringify(check), ...(await latencies(url, body)) });
    }
    if (pages[0]!.page !== pages[1]!.page) throw new Error("the deep page differs between the partitionings");
    const plan = await queries.explain(deep.query);
    const [count] = await sql`select count(*)::int as n from transfer_addresses
      where address = decode(${HOT.slice(2)}, 'hex')`;
    await sql.end();
    const row = (partitions: number, connections: number, r: WrkResult) =>
      `| ${partitions} | ${connections} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 2)} ms | ${fmt(r.p99Ms, 2)} ms |`;
    lines.push(
      "",
      `watch_getTransfersByAddress for an address with ${fmt(count!.n)} transfers, ${fmt(DEEP_OFFSET)} rows in (\`after\` the row before), limit ${PAGE} (the same page from both indexes):`,
      "",
      "| partitions | connections | req/s | p50 | p99 |",
      "|---:|---:|---:|---:|---:|",
      ...pages.flatMap((p) => [row(p.run.partitions, 1, p.single), row(p.run.partitions, 16, p.busy)]),
      "",
      `The page's plan on ${served.at(-1)!.partitions} partitions (EXPLAIN ANALYZE of the key query):`,
      "",
      "```",
      plan,
      "```",
    );
    for (const p of pages) {
      rows.push({
        phase: "indexer",
        query: "deep page",
        partitions: p.run.partitions,
        transfersOfAddress: count!.n,
        single: p.single,
        busy: p.busy,
      });
    }
    rows.push({ phase: "indexer", query: "deep page plan", plan });
  } finally {
    for (const service of services) await service.stop();
    await pg.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
