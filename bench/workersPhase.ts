/**
 * The workers phase: the same cache hits (a final block of 20 transaction hashes, and a batch of 10 such
 * blocks) answered by the service with WORKERS=1 and with WORKERS=2, both on one PostgreSQL server, side by
 * side over BENCH_ROUNDS rounds: requests a second, latency, and the CPU time all of the service's
 * processes spend per request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAnvil } from "../src/families/evm/devChain";
import { rpc, rpcBatch } from "../test/support/chain";
import { startPostgres } from "../test/support/postgres";
import {
  CONNECTIONS,
  cpuSeconds,
  fmt,
  median,
  ROUNDS,
  SECONDS,
  startService,
  THREADS,
  WARMUP_S,
} from "./support";
import { wrk } from "./wrk";

const TRANSACTIONS = 20;
/** anvil's finalized block is head - 64: mining this many more makes the measured block final. */
const FINALITY_BLOCKS = 100;
const COUNTS = [1, 2] as const;
/** Calls in the batch load. */
const BATCH = 10;

export async function workersPhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil();
  const pg = await startPostgres();
  const dirs: string[] = [];
  const services: Awaited<ReturnType<typeof startService>>[] = [];
  try {
    const call = rpc(anvil.url);
    const [sender] = (await call("eth_accounts")) as string[];
    const nonce = Number(await call("eth_getTransactionCount", [sender, "latest"]));
    await call("evm_setAutomine", [false]);
    await rpcBatch(anvil.url, [
      ...Array.from({ length: TRANSACTIONS }, (_, i) => ({
        method: "eth_sendTransaction",
        params: [
          {
            from: sender,
            to: `0x${(i + 1).toString(16).padStart(40, "0")}`,
            value: "0x1",
            nonce: `0x${(nonce + i).toString(16)}`,
          },
        ],
      })),
      { method: "evm_mine", params: [] },
    ]);
    await call("evm_setAutomine", [true]);
    const block = Number(await call("eth_blockNumber"));
    await call("anvil_mine", [`0x${FINALITY_BLOCKS.toString(16)}`]);
    const call1 = (id: number, n: number) => ({
      jsonrpc: "2.0",
      id,
      method: "eth_getBlockByNumber",
      params: [`0x${n.toString(16)}`, false],
    });
    // The small hit, and a batch of hits whose cost is mostly the service's own (wrk's is one request).
    const loads = [
      { name: "small hit", body: JSON.stringify(call1(1, block)) },
      {
        name: `batch of ${BATCH} hits`,
        body: JSON.stringify(Array.from({ length: BATCH }, (_, i) => call1(i, block + i))),
      },
    ];
    const databaseUrl = await pg.createDatabase("bench");
    for (const workers of COUNTS) {
      const dir = mkdtempSync(join(tmpdir(), "cg-bench-workers-"));
      dirs.push(dir);
      services.push(
        await startService(anvil.url, dir, {
          DATABASE_URL: databaseUrl,
          INDEXER: "off",
          WORKERS: String(workers),
        }),
      );
    }
    const url = (i: number) => `${services[i]!.url}/node/jsonrpc`;
    for (const { body } of loads) {
      const answers = await Promise.all(
        services.map((_, i) => fetch(url(i), { method: "POST", body }).then((r) => r.text())),
      );
      if (answers[0] !== answers[1] || !answers[0]!.includes(`"transactions":[`)) {
        throw new Error("the two services answered differently");
      }
    }
    /** The service's processes: the primary and its workers (from /health), or the one process. */
    const pids = async (i: number) => {
      const health = (await (await fetch(`${services[i]!.url}/health`)).json()) as {
        workers?: { pool: { pid: number }[] };
      };
      return [services[i]!.pid, ...(health.workers?.pool.map((w) => w.pid) ?? [])];
    };
    const processes = await Promise.all(services.map((_, i) => pids(i)));
    const cpu = (i: number) => processes[i]!.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    /** req/s, p50, p99 and CPU per request, a list of rounds per load and worker count. */
    const figures = loads.map(() =>
      COUNTS.map(() => ({
        rps: [] as number[],
        p50: [] as number[],
        p99: [] as number[],
        cpuUs: [] as number[],
      })),
    );
    const ratios: number[][] = loads.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [l, { body }] of loads.entries()) {
        for (let i = 0; i < COUNTS.length; i++) {
          const load = { url: url(i), bodies: [body], connections: CONNECTIONS, threads: THREADS };
          await wrk({ ...load, durationS: WARMUP_S });
          const before = cpu(i);
          const result = await wrk({ ...load, durationS: SECONDS });
          if (result.errors > 0) throw new Error(`${result.errors} errors with WORKERS=${COUNTS[i]}`);
          const f = figures[l]![i]!;
          f.rps.push(result.requestsPerSecond);
          f.p50.push(result.p50Ms);
          f.p99.push(result.p99Ms);
          f.cpuUs.push(((cpu(i) - before) * 1e6) / Math.max(1, result.requests));
        }
        ratios[l]!.push(figures[l]![1]!.rps.at(-1)! / figures[l]![0]!.rps.at(-1)!);
      }
    }
    lines.push(
      "",
      `Workers: cache hits with WORKERS=1 and WORKERS=2 on one PostgreSQL server, ${ROUNDS} rounds side by side (medians; the ratio taken within each round; CPU: all of the service's processes):`,
      "",
      "| load | WORKERS | req/s | p50 | p99 | CPU µs per request | req/s against WORKERS=1 |",
      "|---|---:|---:|---:|---:|---:|---:|",
      ...loads.flatMap((load, l) =>
        COUNTS.map((workers, i) => {
          const f = figures[l]![i]!;
          const ratio =
            i === 0
              ? ""
              : `${fmt(median(ratios[l]!), 2)} (rounds: ${ratios[l]!.map((r) => fmt(r, 2)).join(", ")})`;
          return `| ${load.name} | ${workers} | ${fmt(median(f.rps))} | ${fmt(median(f.p50), 2)} ms | ${fmt(median(f.p99), 2)} ms | ${fmt(median(f.cpuUs), 1)} | ${ratio} |`;
        }),
      ),
    );
    rows.push({ phase: "workers", loads: loads.map((l) => l.name), counts: COUNTS, figures, ratios });
  } finally {
    for (const service of services) await service.stop();
    await pg.stop();
    await anvil.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
