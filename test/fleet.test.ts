/**
 * A fleet: three instances (separate processes) on one PostgreSQL and one Redis, in front of one node
 * (behind a proxy that counts its calls). What one fetched the others read from Redis; a key's rate holds
 * for the three together; heads reach an instance whose own node pushes nothing; Redis stopped, every
 * instance answers alone; Redis back, sharing resumes; the indexing leader killed, another takes over.
 * Whoever reaches Redis without the fleet's secret (REDIS_SECRET) changes no answer and no head: forged,
 * oversized or wrong values are misses, forged heads are ignored, and without the secret nothing but rate
 * limits is shared.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import postgres from "postgres";
import { fleetPrefix } from "../src/fleet/redis";
import { cacheSigner, MAX_VALUE_BYTES, sealValue, sharedKey } from "../src/fleet/sharedCache";
import { HEAD_MAX_AGE_MS, headsChannel, headsSigner, sealHead } from "../src/fleet/sharedHeads";
import { rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { type NodeProxy, startProxy } from "./support/proxy";
import { type RedisServer, startRedis } from "./support/redis";
import { post, type ServiceProcess, startServiceProcess, startTestService } from "./support/service";
import { newAnvil, postgresServer } from "./support/shared";
import { until } from "./support/until";

const RATE = { perSecond: 50, burst: 10 };
const KEYS = { "x-api-key": "free" };
const SECRET = "the fleet's secret, 32 characters or more";
const OTHER_SECRET = "not the fleet's secret, as long as it";
const hex = (n: number) => `0x${n.toString(16)}`;
const encoder = new TextEncoder();

let node: ReturnType<typeof rpc>;
let proxy: NodeProxy;
let redis: RedisServer;
let databaseUrl: string;
let fleet: ServiceProcess[];
/** What the chain's Redis keys and channels start with. */
let prefix: string;

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
const badValues = async (s: { url: string }) =>
  metric(await (await fetch(`${s.url}/metrics`)).text(), "gateway_shared_cache_bad_values_total") ?? 0;
const blockNumber = async (s: ServiceProcess) =>
  (
    await post(
      `${s.url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" },
      { headers: KEYS },
    )
  ).json.result as string;
/** The engine's cache key of eth_getBlockByNumber [n, false] (engine.ts keyOf: the method, NUL, the params). */
const blockKey = (n: number) => `eth_getBlockByNumber\u0000${JSON.stringify([hex(n), false])}`;
/** A value as instances wrote them before REDIS_SECRET: a CRC32 over the key and the answer, anyone can make it. */
function crc32Value(key: string, body: Uint8Array): Uint8Array {
  const keyBytes = encoder.encode(key);
  const value = new Uint8Array(8 + keyBytes.length + body.length);
  value.set(keyBytes, 8);
  value.set(body, 8 + keyBytes.length);
  const view = new DataView(value.buffer);
  view.setUint32(4, keyBytes.length);
  view.setUint32(0, Bun.hash.crc32(value.subarray(8)));
  return value;
}
/** A command connection to the test's Redis, as anyone who can reach it has. */
async function redisClient(): Promise<RedisClient> {
  const client = new RedisClient(redis.url);
  await client.connect();
  return client;
}

beforeAll(async () => {
  const anvil = await newAnvil();
  node = rpc(anvil.url);
  // Blocks up to head - 64 are final on anvil: these make the first ones final.
  await node("anvil_mine", ["0x80"]);
  const genesis = await node("eth_getBlockByNumber", ["0x0", false]);
  prefix = fleetPrefix(BigInt(await node("eth_chainId")), genesis.hash);
  proxy = startProxy(anvil.url);
  redis = await startRedis();
  databaseUrl = await (await postgresServer()).createDatabase();
  const start = () =>
    startServiceProcess({
      upstreamUrls: [proxy.url],
      databaseUrl,
      env: {
        REDIS_URL: redis.url,
        REDIS_SECRET: SECRET,
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

  test("a forged value (a CRC32 anyone can compute, or a MAC under another secret) is never given: the node's answer is, and it is counted", async () => {
    const client = await redisClient();
    const s = fleet[2]!;
    try {
      for (const [n, seal] of [
        [7, crc32Value],
        [8, (key: string, body: Uint8Array) => sealValue(cacheSigner(OTHER_SECRET, prefix), key, body)],
      ] as const) {
        const block = await node("eth_getBlockByNumber", [hex(n), false]);
        // Well formed and about the block asked: only the MAC tells it from the node's answer.
        const forged = encoder.encode(JSON.stringify({ ...block, miner: `0x${"ee".repeat(20)}` }));
        await client.set(sharedKey(prefix, blockKey(n)), seal(blockKey(n), forged));
        const bad = await badValues(s);
        const response = await getBlock(s.url, n);
        expect([response.headers.get("x-cache"), ((await response.json()) as any).result]).toEqual([
          "miss",
          block,
        ]);
        expect(await badValues(s)).toBe(bad + 1);
      }
    } finally {
      client.close();
    }
  });

  test("a value signed with the secret but about another block is refused by the block check: never given nor kept", async () => {
    const client = await redisClient();
    const s = fleet[2]!;
    try {
      const [five, six] = [
        await node("eth_getBlockByNumber", [hex(5), false]),
        await node("eth_getBlockByNumber", [hex(6), false]),
      ];
      const signed = sealValue(cacheSigner(SECRET, prefix), blockKey(5), encoder.encode(JSON.stringify(six)));
      await client.set(sharedKey(prefix, blockKey(5)), signed);
      const bad = await badValues(s);
      const first = await getBlock(s.url, 5);
      expect([first.headers.get("x-cache"), ((await first.json()) as any).result]).toEqual(["miss", five]);
      expect(await badValues(s)).toBe(bad + 1);
      // What the instance kept is the node's answer, not the value it refused.
      const second = await getBlock(s.url, 5);
      expect([second.headers.get("x-cache"), ((await second.json()) as any).result]).toEqual([
        "memory",
        five,
      ]);
    } finally {
      client.close();
    }
  });

  test("a value over the size cap is a miss, and Redis sends no more of it than the cap", async () => {
    const client = await redisClient();
    const s = fleet[1]!;
    try {
      const block = await node("eth_getBlockByNumber", [hex(9), false]);
      // Signed and about the right block, but padded (valid JSON) past the cap: only the cap refuses it.
      const text = JSON.stringify(block);
      const padded = encoder.encode(text.padEnd(MAX_VALUE_BYTES + 4 * 1024 * 1024, " "));
      await client.set(
        sharedKey(prefix, blockKey(9)),
        sealValue(cacheSigner(SECRET, prefix), blockKey(9), padded),
      );
      const sentByRedis = async () =>
        Number(/total_net_output_bytes:(\d+)/.exec(await redis.cli("info", "stats"))![1]);
      const [sentBefore, bad] = [await sentByRedis(), await badValues(s)];
      const response = await getBlock(s.url, 9);
      expect([response.headers.get("x-cache"), ((await response.json()) as any).result]).toEqual([
        "miss",
        block,
      ]);
      expect(await badValues(s)).toBe(bad + 1);
      // The cap, and the few bytes of the other commands meanwhile: not the 12 MiB of the value.
      expect((await sentByRedis()) - sentBefore).toBeLessThan(MAX_VALUE_BYTES + 64 * 1024);
    } finally {
      client.close();
    }
  });

  test("a head published without the secret's MAC is ignored by every instance, and counted", async () => {
    const client = await redisClient();
    try {
      const latest = await node("eth_getBlockByNumber", ["latest", false]);
      // It extends the head: an instance that trusted it would adopt it at once.
      const forged = JSON.stringify({
        ...latest,
        number: hex(Number(latest.number) + 1),
        parentHash: latest.hash,
        hash: `0x${"ab".repeat(32)}`,
      });
      const badHeads = async (s: ServiceProcess) =>
        metric(await metricsOf(s), "gateway_shared_heads_bad_messages_total") ?? 0;
      const before = await Promise.all(fleet.map(badHeads));
      await client.publish(headsChannel(prefix), forged);
      await client.publish(headsChannel(prefix), sealHead(headsSigner(OTHER_SECRET, prefix), forged));
      // Signed with the secret, but sent long ago: a replay.
      const old = Date.now() - HEAD_MAX_AGE_MS - 1_000;
      await client.publish(headsChannel(prefix), sealHead(headsSigner(SECRET, prefix), forged, old));
      await until("the three messages counted by every instance", async () =>
        (await Promise.all(fleet.map(badHeads))).every((count, i) => count === before[i]! + 3)
          ? true
          : undefined,
      );
      expect(await Promise.all(fleet.map(blockNumber))).toEqual(fleet.map(() => latest.number));
    } finally {
      client.close();
    }
  });

  test("without REDIS_SECRET only rate limits are shared: the fleet's answers are not read, and the start says why", async () => {
    const warnings: string[] = [];
    const alone = await startTestService({
      upstreamUrls: [proxy.url],
      databaseUrl,
      env: { REDIS_URL: redis.url, API_KEYS: "free", LOG_LEVEL: "warn" },
      logWrite: (line) => warnings.push(JSON.parse(line).msg),
    });
    try {
      await until("the instance connected to Redis", async () =>
        metric(await (await fetch(`${alone.url}/metrics`)).text(), "gateway_redis_up") === 1
          ? true
          : undefined,
      );
      // Block 12 is in Redis, shared by an instance that has the secret.
      const stored = await storedShared(fleet[0]!);
      expect((await getBlock(fleet[0]!.url, 12)).headers.get("x-cache")).toBe("miss");
      await until("the answer shared", async () =>
        (await storedShared(fleet[0]!)) > stored ? true : undefined,
      );
      const response = await getBlock(alone.url, 12);
      expect([response.headers.get("x-cache"), ((await response.json()) as any).result]).toEqual([
        "miss",
        await node("eth_getBlockByNumber", [hex(12), false]),
      ]);
      expect(warnings).toContain(
        "REDIS_SECRET is unset: only rate limits are shared through Redis, not answers nor heads (anyone who can reach Redis could forge them); set REDIS_SECRET, at least 32 characters and the same on every instance, to share them",
      );
    } finally {
      await alone.stop();
    }
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
      env: {
        REDIS_URL: redis.url,
        REDIS_SECRET: SECRET,
        INDEXER: "off",
        API_KEYS: "free",
        HEAD_POLL_MS: "60000",
      },
    });
    try {
      await until("the instance connected to Redis", async () =>
        (await redisUp(lagging)) === 1 ? true : undefined,
      );
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
