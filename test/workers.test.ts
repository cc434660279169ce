/**
 * WORKERS=2 (cluster/primary.ts): two worker processes share the port, a killed one is replaced while the
 * other answers, /health and /metrics show the pool, and a SIGTERM to the primary stops every worker.
 * Real anvil, real PostgreSQL, the service as its own processes on loopback.
 */
import { expect, test } from "bun:test";
import { rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { startProxy } from "./support/proxy";
import { concurrently, startServiceProcess } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

const BLOCKS = 20;
/** anvil's first funded account. */
const WALLET = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

interface Slot {
  index: number;
  pid: number | null;
  state: string;
  restarts: number;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("WORKERS=2: both workers answer 1,000 concurrent requests exactly, a worker killed with SIGKILL is replaced while requests keep succeeding, SIGTERM stops them all", async () => {
  const anvil = await newAnvil();
  const node = rpc(anvil.url);
  await node("anvil_mine", [`0x${BLOCKS.toString(16)}`]);
  const expected = await Promise.all(
    Array.from({ length: BLOCKS }, (_, i) =>
      node("eth_getBlockByNumber", [`0x${(i + 1).toString(16)}`, false]),
    ),
  );
  const proxy = startProxy(anvil.url);
  const service = await startServiceProcess({
    upstreamUrls: [proxy.url],
    env: { WORKERS: "2", INDEXER: "on" },
  });
  const pool = async () =>
    ((await (await fetch(`${service.url}/health`)).json()) as { workers: { self: number; pool: Slot[] } })
      .workers;
  const upPids = async () => {
    const slots = (await pool()).pool;
    return slots.every((s) => s.state === "up") ? slots.map((s) => s.pid!) : undefined;
  };
  const pids = await until("both workers up", upPids, 30_000);
  expect(pids).toHaveLength(2);
  expect(new Set(pids).size).toBe(2);
  expect(pids).not.toContain(service.pid);

  const call = (i: number) => ({
    url: `${service.url}/node/jsonrpc`,
    body: {
      jsonrpc: "2.0",
      id: i,
      method: "eth_getBlockByNumber",
      params: [`0x${((i % BLOCKS) + 1).toString(16)}`, false],
    },
  });
  const answers = await concurrently(Array.from({ length: 1_000 }, (_, i) => call(i)));
  for (const [i, answer] of answers.entries()) {
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ jsonrpc: "2.0", id: i, result: expected[i % BLOCKS] });
  }
  // Both processes served (each counts its own), and /metrics shows every worker's series.
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  const served = [0, 1].map(
    (w) =>
      metric(metrics, "gateway_http_requests_total", {
        route: "/node/jsonrpc",
        status: "200",
        worker: String(w),
      }) ?? 0,
  );
  expect(served[0]! + served[1]!).toBe(1_000);
  expect(Math.min(...served)).toBeGreaterThan(0);
  expect(metric(metrics, "gateway_workers_up")).toBe(2);
  expect(metric(metrics, "gateway_worker_restarts_total")).toBe(0);
  // One indexer for the pool: the advisory lock lets one worker lead.
  const leading = [0, 1].map((w) => metric(metrics, "gateway_indexer_leading", { worker: String(w) }));
  expect(leading.sort()).toEqual([0, 1]);

  // Kill one worker while 1,000 requests are in flight: an answer is exact or, for a connection the dead
  // process held, a transport error; never a wrong answer or a 5xx.
  const victim = pids[0]!;
  let resets = 0;
  const during = concurrently(Array.from({ length: 1_000 }, (_, i) => call(i)));
  await Bun.sleep(20);
  process.kill(victim, "SIGKILL");
  for (const [i, answer] of (await during).entries()) {
    if (answer.status === 0) {
      resets++;
      continue;
    }
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ jsonrpc: "2.0", id: i, result: expected[i % BLOCKS] });
  }
  // The survivor answered its share while the victim's connections were cut.
  expect(resets).toBeLessThan(1_000);
  await until("the killed worker gone", async () => (alive(victim) ? undefined : true));
  // Every request sent once it is gone is answered, by the survivor or the replacement, until the slot is
  // up again with a new process.
  const killedAt = Date.now();
  let sent = 0;
  let replaced: Slot[] | undefined;
  while (Date.now() - killedAt < 10_000) {
    const answer = await fetch(`${service.url}/node/jsonrpc`, {
      method: "POST",
      body: JSON.stringify(call(sent).body),
      keepalive: false,
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: sent, result: expected[sent % BLOCKS] });
    sent++;
    const slots = (await pool()).pool;
    if (slots.every((s) => s.state === "up") && !slots.some((s) => s.pid === victim)) {
      replaced = slots;
      break;
    }
  }
  expect(replaced).toBeDefined();
  expect(replaced!.map((s) => s.restarts).sort()).toEqual([0, 1]);
  expect(sent).toBeGreaterThan(0);
  const after = await (await fetch(`${service.url}/metrics`)).text();
  expect(metric(after, "gateway_worker_restarts_total")).toBe(1);

  // A SIGTERM to the primary drains every worker: a call in flight (a slow node) is still answered.
  const workers = replaced!.map((s) => s.pid!);
  const balance = await node("eth_getBalance", [WALLET, "0x5"]);
  proxy.delayMs = 1_500;
  const slow = fetch(`${service.url}/node/jsonrpc`, {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", id: "slow", method: "eth_getBalance", params: [WALLET, "0x5"] }),
  });
  await until("the slow call at the node", async () =>
    proxy.callsOf("eth_getBalance").length > 0 ? true : undefined,
  );
  const stopped = service.stop();
  const answer = await slow;
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: "slow", result: balance });
  await stopped;
  await until("every worker stopped", async () => (workers.some(alive) ? undefined : true), 15_000);
}, 120_000);
