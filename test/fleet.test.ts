/**
 * A fleet: three instances (separate processes) on one PostgreSQL and one Redis, in front of one node
 * (behind a proxy that counts its calls). What one fetched the others read from Redis; a key's rate holds
 * for the three together; heads reach an instance whose own node pushes nothing; Redis stopped, every
 * instance answers alone; Redis back, sharing resumes; the indexing leader killed, another takes over.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { type NodeProxy, startProxy } from "./support/proxy";
import { type RedisServer, startRedis } from "./support/redis";
import { post, type ServiceProcess, startServiceProcess } from "./support/service";
import { newAnvil, postgresServer } from "./support/shared";
import { until } from "./support/until";

const RATE = { perSecond: 50, burst: 10 };
const KEYS = { "x-api-key": "free" };
const hex = (n: number) => `0x${n.toString(16)}`;

let node: ReturnType<typeof rpc>;
let proxy: NodeProxy;
let redis: RedisServer;
let databaseUrl: string;
let fleet: ServiceProcess[];

const getBlock = (url: string, n: number, headers: Record<string, string> = KEYS) =>
  fetch(`${url}/node/jsonrpc`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: [hex(n), false] }),
  });
const nodeCallsFor = (n: number) =>
  proxy.callsOf("eth_getBlockByNumber").filter((c) => c.params[0] === hex(n)).length;
const metricsOf = async (s: ServiceProcess) => (await fetch(`${s.url}/metrics`)).text();
const redisUp = async (s: ServiceProcess) => metric(await metricsOf(s), "gateway_redis_up");
const storedShared = async (s: ServiceProcess) =>
  metric(await metricsOf(s), "gateway_cache_stored_total", { tier: "shared" }) ?? 0;
/** Block n read through each instance in turn, once the first has put it in Redis (written after it answers). */
async function readThroughFleet(n: number) {
  const answers = [];
  for (const [i, s] of fleet.entries()) {
    const before = i === 0 ? await storedShared(s) : 0;
    const response = await getBlock(s.url, n);
    answers.push({
      status: response.status,
      cache: response.headers.get("x-cache"),
      body: await response.json(),
    });
    if (i === 0)
      await until("the answer shared", async () => ((await storedShared(s)) > before ? true : undefined));
  }
  return answers;
}
const health = async (s: ServiceProcess) => (await fetch(`${s.url}/health`)).json() as Promise<any>;

beforeAll(async () => {
  const anvil = await newAnvil();
  node = rpc(anvil.url);
  // Blocks up to head - 64 are final on anvil: these make the first ones final.
  await node("anvil_mine", ["0x80"]);
  proxy = startProxy(anvil.url);
  redis = await startRedis();
  databaseUrl = await (await postgresServer()).createDatabase();
  const start = () =>
    startServiceProcess({
      upstreamUrls: [proxy.url],
      databaseUrl,
      env: {
        REDIS_URL: redis.url,
        INDEXER: "on",
        API_KEYS: "free,limited",
        RATE_LIMITS: `limited=${RATE.perSecond}/${RATE.burst}`,
      },
    });
  fleet = [await start(), await start(), await start()];
  await until("every instance connected to Redis", async () =>
    (await Promise.all(fleet.map(redisUp))).every((up) => up === 1) ? true : undefined,
  );
}, 120_000);

describe("three instances on one PostgreSQL and one Redis", () => {
  test("a final block fetched through one is a hit on the other two, with no node call", async () => {
    const expected = await node("eth_getBlockByNumber", [hex(10), false]);
    const before = nodeCallsFor(10);
    const answers = await readThroughFleet(10);
    expect(answers.map((a) => [a.status, a.cache])).toEqual([
      [200, "miss"],
      [200, "shared"],
      [200, "shared"],
    ]);
    for (const a of answers) expect(a.body).toEqual({ jsonrpc: "2.0", id: 1, result: expected });
    expect(nodeCallsFor(10) - before).toBe(1);
    // Read from Redis once, an instance keeps it: the next read is its own.
    expect((await getBlock(fleet[1]!.url, 10)).headers.get("x-cache")).toBe("memory");
    const shared = await Promise.all(
      fleet.map(
        async (s) =>
          metric(await metricsOf(s), "gateway_cache_lookups_total", { tier: "shared", result: "hit" }) ?? 0,
      ),
    );
    expect(shared).toEqual([0, 1, 1]);
  });

  test("a shared value that does not verify is a miss: the node answers, and it is counted", async () => {
    const keys = async () => new Set((await redis.cli("--scan")).split("\n"));
    const before = await keys();
    const stored = await storedShared(fleet[0]!);
    expect((await getBlock(fleet[0]!.url, 40)).headers.get("x-cache")).toBe("miss");
    await until("the answer shared", async () =>
      (await storedShared(fleet[0]!)) > stored ? true : undefined,
    );
    const added = [...(await keys())].filter((k) => !before.has(k));
    expect(added).toHaveLength(1);
    // One byte of the answer changed in Redis.
    expect(await redis.cli("setrange", added[0]!, "200", "X")).toMatch(/^\d+$/);
    const response = await getBlock(fleet[1]!.url, 40);
    expect(response.headers.get("x-cache")).toBe("miss");
    expect(((await response.json()) as { result: unknown }).result).toEqual(
      await node("eth_getBlockByNumber", [hex(40), false]),
    );
    expect(metric(await metricsOf(fleet[1]!), "gateway_shared_cache_bad_values_total")).toBe(1);
  });

  test("a key's rate holds for the three together: rate + burst over the window, within 10%", async () => {
    let ok = 0;
    let limited = 0;
    const started = performance.now();
    let first = 0;
    let last = 0;
    // Four clients, each cycling over the three instances, for 2 s: far more than the rate asks for.
    await Promise.all(
      Array.from({ length: 4 }, async (_, client) => {
        for (let i = client; performance.now() - started < 2_000; i++) {
          const sent = performance.now();
          const response = await fetch(`${fleet[i % 3]!.url}/node/jsonrpc`, {
            method: "POST",
            headers: { "x-api-key": "limited" },
            body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
          });
          await response.text();
          if (response.status === 200) {
            ok++;
            if (first === 0) first = sent;
            last = performance.now();
          } else {
            expect(response.status).toBe(429);
            expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
            limited++;
          }
        }
      }),
    );
    const allowed = RATE.burst + (RATE.perSecond * (last - first)) / 1000;
    expect(limited).toBeGreaterThan(ok);
    expect(Math.abs(ok - allowed) / allowed).toBeLessThanOrEqual(0.1);
  });

  test("an instance whose node pushes no heads and is polled once a minute follows the fleet's head", async () => {
    const quiet = startProxy(proxy.url);
    quiet.refuseSockets = true;
    const lagging = await startServiceProcess({
      upstreamUrls: [quiet.url],
      databaseUrl,
      env: { REDIS_URL: redis.url, INDEXER: "off", API_KEYS: "free", HEAD_POLL_MS: "60000" },
    });
    try {
      await until("the instance connected to Redis", async () =>
        (await redisUp(lagging)) === 1 ? true : undefined,
      );
      const blockNumber = async (s: ServiceProcess) =>
        (
          await post(
            `${s.url}/node/jsonrpc`,
            { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" },
            { headers: KEYS },
          )
        ).json.result as string;
      const head = Number(await node("eth_blockNumber"));
      await until("the instance at the node's head", async () =>
        (await blockNumber(lagging)) === hex(head) ? true : undefined,
      );
      await node("evm_mine");
      await until(
        "the instance at the new head",
        async () => ((await blockNumber(lagging)) === hex(head + 1) ? true : undefined),
        5_000,
      );
      // It learnt the block from the fleet: its own node was never asked for it.
      expect(quiet.callsOf("eth_getBlockByNumber").filter((c) => c.params[0] === hex(head + 1))).toEqual([]);
      expect(quiet.callsOf("eth_blockNumber")).toEqual([]);
    } finally {
      await lagging.stop();
    }
  });

  test("Redis hanging: no request waits more than Redis's deadline, and the instances go on alone", async () => {
    redis.freeze();
    try {
      for (const [i, s] of fleet.entries()) {
        for (const n of [10, 50 + i]) {
          const sent = performance.now();
          const response = await getBlock(s.url, n, { "x-api-key": "limited" });
          expect(response.status).toBe(200);
          // REDIS_TIMEOUT_MS (250 ms) at most once, for the request that finds Redis silent.
          expect(performance.now() - sent).toBeLessThan(1_000);
        }
      }
      await until("every instance to give up on the silent Redis", async () =>
        (await Promise.all(fleet.map(redisUp))).every((up) => up === 0) ? true : undefined,
      );
      // Each found Redis silent once (the limited key's charge), and counted it.
      for (const s of fleet) {
        expect(metric(await metricsOf(s), "gateway_redis_errors_total", { use: "rate_limit" })).toBe(1);
      }
    } finally {
      redis.thaw();
    }
    await until(
      "every instance back on Redis",
      async () => ((await Promise.all(fleet.map(redisUp))).every((up) => up === 1) ? true : undefined),
      10_000,
    );
  });

  test("Redis stopped: every instance keeps answering 200 on its own within a second; back: sharing resumes", async () => {
    await redis.halt();
    const stoppedAt = performance.now();
    for (const [i, s] of fleet.entries()) {
      const hit = await getBlock(s.url, 10);
      expect(hit.status).toBe(200);
      // A block no instance has read: each asks the node (nothing is shared while Redis is away).
      const fresh = await getBlock(s.url, 20);
      expect([fresh.status, fresh.headers.get("x-cache")]).toEqual([200, "miss"]);
      const limited = await getBlock(s.url, 10, { "x-api-key": "limited" });
      expect(limited.status).toBe(200);
      expect(i).toBeLessThan(3);
    }
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);
    await until("every instance to see Redis down", async () =>
      (await Promise.all(fleet.map(redisUp))).every((up) => up === 0) ? true : undefined,
    );

    await redis.resume();
    await until(
      "every instance back on Redis",
      async () => ((await Promise.all(fleet.map(redisUp))).every((up) => up === 1) ? true : undefined),
      10_000,
    );
    expect((await readThroughFleet(30)).map((a) => a.cache)).toEqual(["miss", "shared", "shared"]);
  });

  test("the indexing leader killed with SIGKILL: another leads within 15 s, with no gap and no duplicate", async () => {
    const head = Number(await node("eth_blockNumber"));
    await until(
      "the index at the head",
      async () => ((await health(fleet[0]!)).indexer.lastBlockNumber >= head ? true : undefined),
      30_000,
    );
    const roles = await Promise.all(fleet.map(async (s) => (await health(s)).indexer.leading as boolean));
    expect(roles.filter(Boolean)).toHaveLength(1);
    const leader = fleet[roles.indexOf(true)]!;
    const others = fleet.filter((s) => s !== leader);
    await leader.kill("SIGKILL");
    await node("anvil_mine", ["0x3"]);
    const newHead = head + 3;
    const killedAt = Date.now();
    await until(
      "another instance leading, at the new head",
      async () => {
        const reports = await Promise.all(others.map(health));
        return reports.some((r) => r.indexer.leading && r.indexer.lastBlockNumber === newHead)
          ? true
          : undefined;
      },
      15_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    const sql = postgres(databaseUrl, { max: 1 });
    try {
      const [blocks] =
        await sql`select count(*)::int as n, count(distinct number)::int as d, min(number)::int as lo, max(number)::int as hi from blocks`;
      expect(blocks).toEqual({ n: newHead + 1, d: newHead + 1, lo: 0, hi: newHead });
    } finally {
      await sql.end();
    }
  }, 60_000);
});
