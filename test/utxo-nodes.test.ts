/**
 * Talking to Bitcoin Core-style nodes, against real Litecoin Core nodes in regtest (test/support/litecoind.ts):
 * their identity (`getblockchaininfo.chain` and block 0's hash) checked on every upstream, credentials
 * from the URL sent and never shown, their errors (HTTP 500/404 with a JSON body) passed through, -28 and a
 * stopped node failed over, the head pushed by a `waitfornewblock` long-poll. Ground truth is each node's
 * own answer. Faults a node cannot make on demand (another chain's name, -28 for as long as a test needs)
 * come from a proxy in front of it (test/support/proxy.ts).
 */
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";
import { NodeError, UpstreamUnavailableError } from "../src/errors";
import { utxoNodeProtocol } from "../src/families/utxo/nodeProtocol";
import { createLogger } from "../src/log";
import { redactUrl } from "../src/upstream/http";
import { createUpstreamPool, type PoolOptions, type UpstreamPool } from "../src/upstream/pool";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { type NodeProxy, type ProxyMode, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { until } from "./support/until";

const GENESIS = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";
const IDENTITY = `regtest:${GENESIS}`;
/** The head must follow the node within this, as a median of HEAD_SAMPLES blocks. */
const HEAD_WITHIN_MS = 500;
const HEAD_SAMPLES = 10;
/** How long a test holds a node's RPC threads busy (`waitfornewblock` with this timeout). */
const HOLD_MS = 1_500;

let first: LitecoinNode;
let second: LitecoinNode;
/** Every log line of the pools made here. */
const logLines: string[] = [];
const pools: UpstreamPool[] = [];

/** A pool of the Bitcoin family's protocol over `urls`; stopped after the test. */
function poolOf(urls: string[], options: Partial<PoolOptions> = {}): UpstreamPool {
  const pool = createUpstreamPool({
    urls,
    protocol: utxoNodeProtocol,
    timeoutMs: 2_000,
    deadlineMs: 4_000,
    batchWindowMs: 2,
    batchMaxSize: 50,
    maxInFlight: 4,
    headPollMs: 10_000,
    cooldownMs: 100,
    maxResponseBytes: 64 * 1024 * 1024,
    log: createLogger({ level: "debug", write: (line) => void logLines.push(line) }),
    ...options,
  });
  pools.push(pool);
  return pool;
}

/** Both nodes at the same best block (the second follows the first over P2P). */
async function synced(): Promise<string> {
  const best = await first.rpc<string>("getbestblockhash");
  await until("the second node to have the first's best block", async () =>
    (await second.rpc<string>("getbestblockhash")) === best ? true : undefined,
  );
  return best;
}

/** A proxy mode: the calls `which` picks answered by the node, then their answers rewritten. */
function rewriting(target: LitecoinNode, which: string, rewrite: (result: any) => unknown): ProxyMode {
  return (body, parsed) => {
    if ([parsed].flat().every((c: any) => c?.method !== which)) return undefined;
    return target.post(body).then(({ status, text }) => {
      const answers = [JSON.parse(text)]
        .flat()
        .map((a: any, i: number) =>
          [parsed].flat()[i]?.method === which ? { ...a, result: rewrite(a.result) } : a,
        );
      return Response.json(Array.isArray(parsed) ? answers : answers[0], { status });
    });
  };
}

/** A proxy mode answering every call -28, as a node loading its block index does (HTTP 500, JSON body). */
const warmingUp: ProxyMode = (_body, parsed) => {
  const error = (c: any) => ({
    result: null,
    error: { code: -28, message: "Loading block index..." },
    id: c?.id,
  });
  return Array.isArray(parsed)
    ? Response.json(parsed.map(error))
    : Response.json(error(parsed), { status: 500 });
};

beforeAll(async () => {
  first = await startLitecoind();
  second = await startLitecoind({ connect: first });
  await first.mine(3);
  await synced();
}, 60_000);

/** What a test started beside its pools (services, proxies): stopped after it, before a node is halted again. */
const started: (() => unknown)[] = [];

afterEach(async () => {
  for (const pool of pools.splice(0)) pool.stop();
  for (const stop of started.splice(0).reverse()) await stop();
});

/** A proxy in front of `target`, stopped after the test. */
function proxyOf(target: LitecoinNode): NodeProxy {
  const proxy = startProxy(target.url);
  started.push(() => proxy.stop());
  return proxy;
}

describe("identity", () => {
  test("two nodes of one chain: both named `<chain>:<genesis>`, both used", async () => {
    const pool = poolOf([first.url, second.url]);
    const { identity, upstream } = await pool.readIdentity();
    expect([identity, upstream.name]).toEqual([IDENTITY, "upstream-1"]);
    expect(await pool.upstreams[1]!.readIdentity()).toBe(IDENTITY);
    await pool.expectChain(identity);
    expect(pool.upstreams.map((u) => [u.name, u.state, u.usable])).toEqual([
      ["upstream-1", "closed", true],
      ["upstream-2", "closed", true],
    ]);
  });

  test("a node naming another chain stays out of rotation; the other answers", async () => {
    const proxy = proxyOf(second);
    proxy.mode = rewriting(second, "getblockchaininfo", (info) => ({ ...info, chain: "main" }));
    const pool = poolOf([first.url, proxy.url]);
    expect(await pool.upstreams[1]!.readIdentity()).toBe(`main:${GENESIS}`);
    logLines.length = 0;
    await pool.expectChain(IDENTITY);
    expect(pool.upstreams.map((u) => [u.state, u.usable])).toEqual([
      ["closed", true],
      ["open", false],
    ]);
    const circuit = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "upstream circuit");
    expect(circuit).toMatchObject({
      upstream: "upstream-2",
      state: "open",
      reason: `serves chain main:${GENESIS}, not ${IDENTITY}`,
    });
    // Nothing goes to it: every call is the first node's.
    proxy.calls.length = 0;
    const height = await first.rpc<number>("getblockcount");
    for (let n = 0; n <= height; n++) {
      const answer = await pool.call("getblockhash", [n]);
      expect([answer.upstream, JSON.parse(answer.raw)]).toEqual([
        "upstream-1",
        await first.rpc("getblockhash", [n]),
      ]);
    }
    // Its background probe asks its identity again, and it stays out. Besides, only its long-poll, held open
    // since before its circuit opened, may answer and have its block's header read.
    await Bun.sleep(300);
    const probes = new Set(["getblockchaininfo", "getblockhash", "waitfornewblock", "getblockheader"]);
    expect(proxy.calls.map((c) => c.method).filter((m) => !probes.has(m))).toEqual([]);
    expect(pool.upstreams[1]!.state).toBe("open");
  });

  test("checked again after a failure: a node that comes back serving another chain stays out", async () => {
    const proxy = proxyOf(second);
    const pool = poolOf([proxy.url, first.url], { headPollMs: 50 });
    await pool.expectChain(IDENTITY);
    expect(pool.upstreams[0]!.usable).toBe(true);
    // Down (refused: its circuit opens at once), then back as a node of another chain.
    proxy.stop();
    await until("upstream-1 out of rotation", async () =>
      pool.upstreams[0]!.state === "open" ? true : undefined,
    );
    proxy.mode = rewriting(second, "getblockhash", (hash) => (hash === GENESIS ? "00".repeat(32) : hash));
    proxy.restart();
    await until("upstream-1 asked its identity again", async () =>
      proxy.calls.some((c) => c.method === "getblockchaininfo") ? true : undefined,
    );
    await Bun.sleep(200);
    expect([pool.upstreams[0]!.state, pool.upstreams[0]!.usable]).toEqual(["open", false]);
    // Back as the right chain: used again.
    proxy.mode = undefined;
    await until(
      "upstream-1 back in rotation",
      async () => (pool.upstreams[0]!.state === "closed" && pool.upstreams[0]!.usable ? true : undefined),
      5_000,
    );
  });
});

describe("transport", () => {
  test("credentials in the URL are sent as HTTP Basic auth: without them the node refuses (401)", async () => {
    expect((await first.post('{"id":1,"method":"getblockcount","params":[]}')).status).toBe(200);
    const bare = await fetch(first.bareUrl, { method: "POST", body: '{"id":1,"method":"getblockcount"}' });
    expect(bare.status).toBe(401);
    const pool = poolOf([first.url]);
    const answer = await pool.call("getblockcount", []);
    expect(JSON.parse(answer.raw)).toBe(await first.rpc("getblockcount"));
    expect(pool.upstreams[0]!.redactedUrl).toBe(first.bareUrl);
  });

  test("wrong credentials: a failure naming the upstream and UPSTREAM_URLS, not the credentials", async () => {
    const wrong = first.url.replace(encodeURIComponent(first.password), "wrong");
    // litecoind answers a wrong password after 250 ms (against guessing): room for the retries.
    const pool = poolOf([wrong]);
    const error = await pool.call("getblockcount", []).catch((e) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toBe(
      `no upstream could answer: upstream ${first.bareUrl} answered HTTP 401: check the credentials of this upstream in UPSTREAM_URLS`,
    );
  });

  test("node errors pass through with their code and message: HTTP 500 and 404 with a JSON body", async () => {
    const pool = poolOf([first.url]);
    // getblock of a hash the node has not got: -5 over HTTP 500.
    const unknown = "00".repeat(32);
    const direct = await first.post(JSON.stringify({ id: 1, method: "getblock", params: [unknown] }));
    expect(direct).toEqual({
      status: 500,
      text: '{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}\n',
    });
    const error = await pool.call("getblock", [unknown]).catch((e) => e);
    expect(error).toBeInstanceOf(NodeError);
    expect([error.code, error.message, error.rpcErrorJson()]).toEqual([
      -5,
      "Block not found",
      '{"code":-5,"message":"Block not found"}',
    ]);
    // An unknown method: -32601 over HTTP 404.
    expect((await first.post('{"id":1,"method":"nosuchmethod","params":[]}')).status).toBe(404);
    const missing = await pool.call("nosuchmethod", []).catch((e) => e);
    expect([missing.code, missing.message, missing.rpcErrorJson()]).toEqual([
      -32601,
      "Method not found",
      '{"code":-32601,"message":"Method not found"}',
    ]);
    // A bad parameter: -8, the caller's, final.
    const bad = await pool.call("getblockheader", ["zz"]).catch((e) => e);
    expect([bad.code, bad.message, bad.retryable]).toEqual([
      -8,
      "hash must be of length 64 (not 2, for 'zz')",
      false,
    ]);
  });

  test("batches: calls made together go as one JSON array, each answered (or failed) as the node does", async () => {
    const proxy = proxyOf(first);
    const pool = poolOf([proxy.url], { batchWindowMs: 20 });
    const height = await first.rpc<number>("getblockcount");
    const calls: [string, unknown[]][] = [
      ["getblockcount", []],
      ["getblockhash", [0]],
      ["getblockhash", [height]],
      ["getblockhash", [height + 1_000]],
      ["getbestblockhash", []],
    ];
    proxy.requests.length = 0;
    const answers = await Promise.all(
      calls.map(([method, params]) =>
        pool.call(method, params).then(
          (a) => ({ result: JSON.parse(a.raw) }),
          (e: NodeError) => ({ error: { code: e.code, message: e.message } }),
        ),
      ),
    );
    // One JSON array holding them all (the other requests are the long-poll's and the reads it makes).
    const batches = proxy.requests.filter((r) => Array.isArray(r));
    expect(batches.map((b) => b.map((c: any) => [c.method, c.params]))).toEqual([calls]);
    const singles = proxy.requests.filter((r) => !Array.isArray(r)).map((r) => r.method);
    expect(
      singles.filter((m) => !["waitfornewblock", "getbestblockhash", "getblockheader"].includes(m)),
    ).toEqual([]);
    const expected = [];
    for (const [method, params] of calls) {
      try {
        expected.push({ result: await first.rpc(method, params) });
      } catch (e) {
        expected.push({ error: { code: (e as NodeError).code, message: (e as Error).message } });
      }
    }
    expect(answers).toEqual(expected);
    expect(answers[3]).toEqual({ error: { code: -8, message: "Block height out of range" } });
  });
});

describe("failover", () => {
  test("an upstream answering -28 (warming up): the call goes to the second node", async () => {
    const best = await synced();
    const proxy = proxyOf(first);
    const pool = poolOf([proxy.url, second.url]);
    await pool.expectChain(IDENTITY);
    // Its long-poll has answered and the head it named was read: what the proxy sees next is the call's.
    await until("upstream-1's head", async () => (pool.upstreams[0]!.head !== null ? true : undefined));
    proxy.mode = warmingUp;
    proxy.calls.length = 0;
    const answer = await pool.call("getbestblockhash", []);
    expect([answer.upstream, JSON.parse(answer.raw)]).toEqual(["upstream-2", best]);
    expect(proxy.callsOf("getbestblockhash").length).toBe(1);
    // Every call while it warms up: the second node's answers, the node's own.
    const height = await second.rpc<number>("getblockcount");
    for (let n = 0; n <= height; n++) {
      const a = await pool.call("getblockhash", [n]);
      expect([a.upstream, JSON.parse(a.raw)]).toEqual(["upstream-2", await second.rpc("getblockhash", [n])]);
    }
    // Warmed up: the first node is used again once its circuit closes.
    proxy.mode = undefined;
    await until("upstream-1 in rotation", async () => {
      await pool.pollNow();
      const a = await pool.call("getblockcount", []);
      return a.upstream === "upstream-1" ? true : undefined;
    });
  });

  test("a stopped node: the call goes to the second node, and the first is used when it is back", async () => {
    await first.mine(2);
    const best = await synced();
    const pool = poolOf([first.url, second.url], { headPollMs: 100 });
    await pool.expectChain(IDENTITY);
    await first.halt();
    try {
      const answer = await pool.call("getbestblockhash", []);
      expect([answer.upstream, JSON.parse(answer.raw)]).toEqual(["upstream-2", best]);
      expect(pool.upstreams[0]!.state).toBe("open");
      const header = await pool.call("getblockheader", [best]);
      expect(JSON.parse(header.raw)).toEqual(await second.rpc("getblockheader", [best]));
    } finally {
      await first.resume();
    }
    await until(
      "upstream-1 back in rotation",
      async () => (pool.upstreams[0]!.state === "closed" ? true : undefined),
      15_000,
    );
    expect((await pool.call("getbestblockhash", [])).upstream).toBe("upstream-1");
  }, 60_000);
});

describe("head", () => {
  test(`pushed by the long-poll: the head is the node's within ${HEAD_WITHIN_MS} ms of a block (median of ${HEAD_SAMPLES}), polls 10 s apart`, async () => {
    const pool = poolOf([first.url], { headPollMs: 10_000 });
    await pool.expectChain(IDENTITY);
    const seen = new Map<string, number>();
    pool.onHead((header) => {
      if (!seen.has(header.hash)) seen.set(header.hash, performance.now());
    });
    await until("the long-poll live", async () => (pool.pushing() ? true : undefined));
    expect(pool.upstreams[0]!.pushing).toBe(true);
    const delays: number[] = [];
    for (let i = 0; i < HEAD_SAMPLES; i++) {
      const [hash] = await first.mine(1);
      const mined = performance.now();
      await until("the block as the head", async () => (seen.has(hash!) ? true : undefined), 5_000);
      delays.push(Math.max(0, seen.get(hash!)! - mined));
      expect(pool.upstreams[0]!.head).toBe(BigInt(await first.rpc("getblockcount")));
    }
    delays.sort((a, b) => a - b);
    const median = delays[Math.floor(HEAD_SAMPLES / 2)]!;
    expect(median).toBeLessThan(HEAD_WITHIN_MS);
  }, 60_000);

  test("several blocks at once: the head reaches the last of them, not only the first", async () => {
    const pool = poolOf([first.url], { headPollMs: 10_000 });
    await pool.expectChain(IDENTITY);
    await until("the long-poll live", async () => (pool.pushing() ? true : undefined));
    for (let round = 0; round < 3; round++) {
      const hashes = await first.mine(5);
      const top = BigInt(await first.rpc("getblockcount"));
      await until(
        `head ${top}`,
        async () => (pool.upstreams[0]!.head === top ? true : undefined),
        HEAD_WITHIN_MS * 2,
      );
      expect(hashes.length).toBe(5);
    }
  }, 30_000);

  test("a node without waitfornewblock: said once, not pushing, its head polled", async () => {
    const proxy = proxyOf(first);
    // Asked under a name it does not know, the node answers 404 -32601, as one without the method would.
    proxy.mode = (body, parsed) =>
      parsed?.method === "waitfornewblock"
        ? first
            .post(body.replace('"waitfornewblock"', '"waitfornewblock_unknown"'))
            .then(({ status, text }) => new Response(text, { status }))
        : undefined;
    logLines.length = 0;
    const pool = poolOf([proxy.url], { headPollMs: 100 });
    await Bun.sleep(500);
    expect(pool.pushing()).toBe(false);
    expect(proxy.callsOf("waitfornewblock").length).toBe(1);
    const warned = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg.includes("long-poll"));
    expect(warned.map((l) => [l.level, l.msg, l.upstream, l.method])).toEqual([
      [
        "warn",
        "upstream has no long-poll method: its heads are polled only",
        "upstream-1",
        "waitfornewblock",
      ],
    ]);
    const [hash] = await first.mine(1);
    const top = BigInt(await first.rpc("getblockcount"));
    await until("the head polled", async () => (pool.upstreams[0]!.head === top ? true : undefined), 2_000);
    expect(hash).toBe(await first.rpc("getbestblockhash"));
  });

  test("a stopped node is not pushing; its long-poll comes back with it", async () => {
    const pool = poolOf([second.url], { headPollMs: 10_000 });
    await until("the long-poll live", async () => (pool.pushing() ? true : undefined));
    await second.halt();
    await until("the long-poll down", async () => (pool.pushing() ? undefined : true), 10_000);
    // Its circuit opens (a refused connection), and the background probe is 10 s away.
    await pool.pollNow();
    expect(pool.upstreams[0]!.state).toBe("open");
    await second.resume();
    await until("the long-poll back", async () => (pool.pushing() ? true : undefined), 15_000);
    // And it pushes: a block mined on the first node reaches the second (P2P), and the head with it.
    const [hash] = await first.mine(1);
    await until("the block on the second node", async () =>
      (await second.rpc("getbestblockhash")) === hash ? true : undefined,
    );
    // Pushed: well within the polls' 10 s (its circuit, opened while the node was down, closed by the read).
    await until(
      "the block pushed",
      async () => (pool.upstreams[0]!.head === BigInt(await second.rpc("getblockcount")) ? true : undefined),
      HEAD_WITHIN_MS * 2,
    );
    expect(pool.upstreams[0]!.state).toBe("closed");
  }, 60_000);
});

describe("credentials never shown", () => {
  test("no log line and no error of a failing upstream holds the user or the password", async () => {
    logLines.length = 0;
    const pool = poolOf([first.url, second.url], { headPollMs: 50, deadlineMs: 1_000 });
    await pool.expectChain(IDENTITY);
    await pool.call("getblockcount", []);
    await second.halt();
    const errors: string[] = [];
    try {
      await first.halt();
      try {
        const failure = await pool.call("getblockcount", []).catch((e) => e);
        errors.push(failure.message, JSON.stringify(failure), String(failure.cause ?? ""));
        await Bun.sleep(300);
      } finally {
        await first.resume();
      }
    } finally {
      await second.resume();
    }
    expect(errors[0]).toStartWith("no upstream");
    expect(logLines.length).toBeGreaterThan(0);
    for (const node of [first, second]) {
      for (const secret of [node.user, node.password, encodeURIComponent(node.password)]) {
        for (const text of [...logLines, ...errors]) expect(text).not.toContain(secret);
      }
    }
    // The upstreams are named by host and port only.
    expect(pool.upstreams.map((u) => u.redactedUrl)).toEqual([first.bareUrl, second.bareUrl]);
  }, 60_000);
});

/** A JSON-RPC call through the service; the whole answer. */
async function ask(service: string, method: string, params: unknown[] = [], id = 1) {
  return (await post(`${service}/node/jsonrpc`, { jsonrpc: "2.0", id, method, params })).json;
}

/** The Bitcoin family's service in front of `urls`: LTC, heads polled 10 s apart unless told otherwise. */
async function service(urls: string[], env: Record<string, string> = {}, logWrite?: (line: string) => void) {
  const running = await startTestService({
    upstreamUrls: urls,
    env: { CHAIN: "LTC", HEAD_POLL_MS: "10000", UPSTREAM_COOLDOWN_MS: "100", ...env },
    logWrite,
  });
  started.push(() => running.stop());
  return running;
}

describe("the service", () => {
  test("at start, a node of another chain stops the start: which upstream serves what, what CHAIN takes", async () => {
    const proxy = proxyOf(first);
    const cases: [ProxyMode, string][] = [
      // Its chain named "main", block 0 the regtest one's.
      [rewriting(first, "getblockchaininfo", (info) => ({ ...info, chain: "main" })), `main:${GENESIS}`],
      // Block 0 Bitcoin's regtest one (a Bitcoin Core node in regtest).
      [
        rewriting(first, "getblockhash", (hash) =>
          hash === GENESIS ? "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206" : hash,
        ),
        "regtest:0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206",
      ],
    ];
    for (const [mode, identity] of cases) {
      proxy.mode = mode;
      const error = await service([proxy.url]).catch((e) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toStartWith(`upstream-1 serves chain ${identity}: CHAIN=LTC takes nodes of `);
      expect(error.message).toContain(`(regtest:${GENESIS})`);
    }
  });

  test("a second upstream of another chain: the start goes on, it stays out of rotation", async () => {
    const proxy = proxyOf(second);
    proxy.mode = rewriting(second, "getblockchaininfo", (info) => ({ ...info, chain: "main" }));
    const { url } = await service([first.url, proxy.url]);
    const health = (await (await fetch(`${url}/health`)).json()) as any;
    expect(health.chain).toBe("LTC");
    expect(health.upstream.upstreams.map((u: any) => [u.name, u.state])).toEqual([
      ["upstream-1", "closed"],
      ["upstream-2", "open"],
    ]);
    expect(health.upstream.upstreams[1].pushing).toBe(false);
    proxy.calls.length = 0;
    const height = await first.rpc<number>("getblockcount");
    expect((await ask(url, "getblockhash", [height])).result).toBe(await first.rpc("getblockhash", [height]));
    expect(proxy.callsOf("getblockhash").filter((c) => c.params[0] !== 0)).toEqual([]);
  });

  test(`the head is the node's within ${HEAD_WITHIN_MS} ms of generatetoaddress (median of ${HEAD_SAMPLES}), polls 10 s apart`, async () => {
    const { url } = await service([first.url]);
    await until("the long-poll live", async () => {
      const health = (await (await fetch(`${url}/health`)).json()) as any;
      return health.upstream.upstreams[0].pushing ? true : undefined;
    });
    const delays: number[] = [];
    for (let i = 0; i < HEAD_SAMPLES; i++) {
      const [hash] = await first.mine(1);
      const mined = performance.now();
      await until(
        "the service's head at the new block",
        async () => ((await ask(url, "getbestblockhash")).result === hash ? true : undefined),
        5_000,
      );
      delays.push(performance.now() - mined);
      expect((await ask(url, "getblockcount")).result).toBe(await first.rpc("getblockcount"));
    }
    delays.sort((a, b) => a - b);
    expect(delays[Math.floor(HEAD_SAMPLES / 2)]!).toBeLessThan(HEAD_WITHIN_MS);
  }, 60_000);

  test("a reorganization is followed by parent hash: the head is the new branch's", async () => {
    const { url } = await service([first.url], { CONFIRMATIONS: "6" });
    const old = await first.mine(2);
    await until("the old branch's head", async () =>
      (await ask(url, "getbestblockhash")).result === old[1] ? true : undefined,
    );
    // The last two blocks leave the main chain; three others replace them (at heights above the old head).
    await first.rpc("invalidateblock", [old[0]]);
    // Mined to another address: the same coinbase at the same second would make the invalidated block again.
    const elsewhere = await first.rpc<string>("getnewaddress");
    const replacement = await first.rpc<string[]>("generatetoaddress", [3, elsewhere]);
    await until(
      "the new branch's head",
      async () => ((await ask(url, "getbestblockhash")).result === replacement[2] ? true : undefined),
      HEAD_WITHIN_MS * 4,
    );
    expect((await ask(url, "getblockcount")).result).toBe(await first.rpc("getblockcount"));
    expect((await ask(url, "getblockhash", [await first.rpc("getblockcount")])).result).toBe(replacement[2]);
    // The second node follows the first's branch too (P2P), for the tests after this one.
    await synced();
  });

  test("node errors pass through with their code and message (HTTP 500, and 404 for a method it lacks)", async () => {
    const proxy = proxyOf(first);
    // The node lacks getblockfilter here: asked under a name it does not know, it answers 404 -32601.
    proxy.mode = (body, parsed) =>
      [parsed].flat().some((c: any) => c?.method === "getblockfilter")
        ? first
            .post(body.replaceAll('"getblockfilter"', '"getblockfilter_unknown"'))
            .then(
              ({ status, text }) =>
                new Response(text, { status, headers: { "content-type": "application/json" } }),
            )
        : undefined;
    const { url } = await service([proxy.url]);
    const unknown = "00".repeat(32);
    expect(await ask(url, "getblock", [unknown])).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -5, message: "Block not found" },
    });
    expect(await ask(url, "getblockheader", [unknown])).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -5, message: "Block not found" },
    });
    const lacked = (await post(`${proxy.url}`, {
      id: 1,
      method: "getblockfilter",
      params: [GENESIS],
    })) as any;
    expect([lacked.status, lacked.json.error]).toEqual([404, { code: -32601, message: "Method not found" }]);
    expect(await ask(url, "getblockfilter", [GENESIS])).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found" },
    });
  });

  test("an upstream answering -28, then one stopped: the second node answers", async () => {
    const best = await synced();
    const proxy = proxyOf(first);
    const { url } = await service([proxy.url, second.url]);
    proxy.mode = warmingUp;
    const height = await second.rpc<number>("getblockcount");
    for (let n = 0; n <= height; n++) {
      expect((await ask(url, "getblockhash", [n], n)).result).toBe(await second.rpc("getblockhash", [n]));
    }
    expect(proxy.callsOf("getblockhash").length).toBeGreaterThan(0);
    proxy.mode = undefined;
    proxy.stop();
    expect(await ask(url, "getblockheader", [best])).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: await second.rpc("getblockheader", [best]),
    });
  });

  test("credentials appear nowhere a caller or an operator can read", async () => {
    const lines: string[] = [];
    const { url } = await service(
      [first.url, second.url],
      { LOG_LEVEL: "debug", UPSTREAM_DEADLINE_MS: "1000", HEAD_POLL_MS: "100" },
      (line) => void lines.push(line),
    );
    const read = async () =>
      Promise.all(
        ["/health", "/status.json", "/status", "/metrics"].map(async (path) =>
          (await fetch(`${url}${path}`)).text(),
        ),
      );
    const texts = await read();
    const health = JSON.parse(texts[0]!);
    expect(health.upstream.upstreams.map((u: any) => u.url)).toEqual([first.bareUrl, second.bareUrl]);
    // Both nodes down, then back: the errors callers get, and every log line meanwhile.
    await first.halt();
    try {
      await second.halt();
      try {
        const failed = await ask(url, "getblockhash", [0]);
        expect(failed.error.code).toBe(-32002);
        texts.push(JSON.stringify(failed), ...(await read()));
      } finally {
        await second.resume();
      }
    } finally {
      await first.resume();
    }
    await until(
      "an upstream back",
      async () => ((await ask(url, "getblockhash", [0])).result ? true : undefined),
      20_000,
    );
    texts.push(...(await read()));
    expect(lines.length).toBeGreaterThan(0);
    for (const node of [first, second]) {
      for (const secret of [node.user, node.password, encodeURIComponent(node.password)]) {
        for (const text of [...texts, ...lines]) expect(text).not.toContain(secret);
      }
    }
  }, 90_000);

  test("a configuration error about UPSTREAM_URLS shows them without their credentials", () => {
    const error = (() => {
      try {
        loadConfig({ UPSTREAM_URLS: "http://user:s3cret@127.0.0.1:9332,ftp://admin:pw@x" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.message).toBe(
      'UPSTREAM_URLS: expected comma-separated http(s) URLs of JSON-RPC nodes, got "http://…@127.0.0.1:9332,ftp://…@x"',
    );
  });
});

describe("the node's RPC work queue, and blocks it has not made", () => {
  test("a client asking the next block again and again: the node's answer each time, asked once, the node kept in rotation", async () => {
    const proxy = proxyOf(first);
    const { url } = await service([proxy.url]);
    const tip = await first.rpc<number>("getblockcount");
    proxy.calls.length = 0;
    for (let i = 0; i < 6; i++) {
      expect((await ask(url, "getblockhash", [tip + 1], i)).error).toEqual({
        code: -8,
        message: "Block height out of range",
      });
    }
    expect(proxy.callsOf("getblockhash").filter((c) => c.params[0] === tip + 1)).toHaveLength(6);
    const health = (await (await fetch(`${url}/health`)).json()) as any;
    expect(health.upstream.upstreams.map((u: any) => [u.name, u.state])).toEqual([["upstream-1", "closed"]]);
    expect((await ask(url, "getblockhash", [tip])).result).toBe(await first.rpc("getblockhash", [tip]));
  });

  test("the service sends a Bitcoin-family node at most 8 HTTP requests at once, however many calls wait", async () => {
    const proxy = proxyOf(first);
    const { url } = await service([proxy.url]);
    const tip = await first.rpc<number>("getblockcount");
    // A slow node: the calls pile up in the service rather than in the node's queue.
    proxy.delayMs = 50;
    proxy.peakRequests.clear();
    const heights = Array.from({ length: 200 }, (_, i) => tip + 1 + i);
    const answers = await Promise.all(heights.map((h, i) => ask(url, "getblockhash", [h], i)));
    // Each call the node's own answer (an error: nothing is cached, so each reached the node).
    expect(answers.map((a) => [a.id, a.error])).toEqual(
      heights.map((_h, i) => [i, { code: -8, message: "Block height out of range" }]),
    );
    expect(proxy.callsOf("getblockhash").filter((c) => (c.params[0] as number) > tip)).toHaveLength(200);
    // The head's own reads (a header on each block pushed) do not wait behind the reads: not counted here.
    const peak = proxy.peakRequests.get("getblockhash")!;
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(8);
  });

  test("a node refusing calls with its work queue full: the calls fail as the upstream's being busy, its circuit stays closed", async () => {
    // Four RPC threads and a queue of one: the pool's long-poll holds one, three calls held here the others.
    const busy = await startLitecoind({ args: ["-rpcthreads=4", "-rpcworkqueue=1"] });
    const pool = poolOf([busy.url], { maxInFlight: 16, batchMaxSize: 1 });
    await until("the long-poll held open", async () => (pool.pushing() ? true : undefined));
    const outOfRange = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        pool.call("getblockhash", [1_000 + i]).then(
          () => "answered",
          (e: Error) =>
            e instanceof NodeError ? `${e.code} ${e.message}` : `${e.constructor.name}: ${e.message}`,
        ),
      );
    // Each hold asked again while the node refuses it (the pool's own calls may hold the queue a moment).
    const hold = async () => {
      for (let tries = 0; tries < 50; tries++) {
        const { text } = await busy.post(
          JSON.stringify({ jsonrpc: "1.0", id: 1, method: "waitfornewblock", params: [HOLD_MS] }),
        );
        if (!text.startsWith("Work queue depth exceeded")) return;
        await Bun.sleep(10);
      }
      throw new Error("the node never took a held call");
    };
    const held = Array.from({ length: 3 }, hold);
    await Bun.sleep(HOLD_MS / 5);
    const during = await Promise.all(outOfRange(12));
    await Promise.all(held);
    const refused = during.filter((d) => d !== "-8 Block height out of range");
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(
      new Set([
        `UpstreamUnavailableError: no upstream could answer: upstream ${redactUrl(busy.url)} is busy: Work queue depth exceeded`,
      ]),
    );
    // The node was never failing: its circuit stays closed, and the same calls are answered once it has room.
    expect(pool.upstreams.map((u) => u.state)).toEqual(["closed"]);
    expect(await Promise.all(outOfRange(12))).toEqual(Array(12).fill("-8 Block height out of range"));
  }, 30_000);
});
