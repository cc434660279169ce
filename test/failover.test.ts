/**
 * Two real upstreams holding the same chain (the second loaded from the first's state). The first fails in
 * every way a node can (refused connections, HTTP 500, garbage, hangs): callers still get right answers
 * from the second, the first is used again when it recovers, and with every upstream down callers get
 * -32002/502 within the deadline and the service recovers by itself.
 */
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { DevChain } from "../src/families/evm/devChain";
import { type ChainFixture, rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { faults, type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { fixtureChain, newAnvil } from "./support/shared";
import { until } from "./support/until";

const hex = (n: number) => `0x${n.toString(16)}`;

/** A second node with the same chain as `source`, optionally mined further. */
async function twin(source: string, extraBlocks = 0): Promise<DevChain> {
  const copy = await newAnvil();
  await rpc(copy.url)("anvil_loadState", [await rpc(source)("anvil_dumpState")]);
  if (extraBlocks > 0) await rpc(copy.url)("anvil_mine", [hex(extraBlocks)]);
  return copy;
}

let chain: ChainFixture;
let node: string;

beforeAll(async () => {
  const fixture = await fixtureChain();
  chain = fixture.chain;
  node = fixture.anvil.url;
});

describe("failover between two upstreams", () => {
  let first: NodeProxy;
  let second: NodeProxy;
  let service: string;
  let expected: Map<number, unknown>;
  const TIMEOUT_MS = 300;
  const DEADLINE_MS = 2_000;

  beforeAll(async () => {
    const copy = await twin(node);
    first = startProxy(node);
    second = startProxy(copy.url);
    service = (
      await startTestService({
        upstreamUrls: [first.url, second.url],
        env: {
          CACHE_MEMORY_MB: "0",
          UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
          UPSTREAM_DEADLINE_MS: String(DEADLINE_MS),
          UPSTREAM_COOLDOWN_MS: "100",
          HEAD_POLL_MS: "50",
        },
      })
    ).url;
    expected = new Map();
    for (let n = 0; n <= chain.head; n++)
      expected.set(n, await rpc(node)("eth_getBlockByNumber", [hex(n), true]));
  });

  afterEach(() => {
    first.mode = undefined;
    first.restart();
    second.mode = undefined;
    second.restart();
  });

  /** Asks for every block of the chain, over JSON-RPC and REST, and checks each answer. */
  async function askAll(): Promise<Set<string>> {
    const upstreams = new Set<string>();
    await Promise.all(
      [...expected.keys()].map(async (n) => {
        const a = await post(`${service}/node/jsonrpc`, {
          jsonrpc: "2.0",
          id: n,
          method: "eth_getBlockByNumber",
          params: [hex(n), true],
        });
        expect(a.json).toEqual({ jsonrpc: "2.0", id: n, result: expected.get(n) });
        const r = await post(`${service}/node/rest/eth_getBlockByNumber`, { number: n, is_full_trx: true });
        expect(r.status).toBe(200);
        expect(r.json).toEqual(expected.get(n));
        upstreams.add(a.headers.get("x-upstream")!);
        upstreams.add(r.headers.get("x-upstream")!);
      }),
    );
    return upstreams;
  }

  async function usedAgain() {
    await until("the first upstream to be used again", async () => {
      const a = await post(`${service}/node/jsonrpc`, {
        id: 1,
        method: "eth_getBlockByNumber",
        params: ["0x1", false],
      });
      return a.headers.get("x-upstream") === "upstream-1" ? true : undefined;
    });
  }

  const bothInRotation = () =>
    until("both upstreams back in rotation", async () => {
      const health = (await (await fetch(`${service}/health`)).json()) as any;
      return health.upstream.upstreams.every((u: { state: string }) => u.state === "closed")
        ? true
        : undefined;
    });

  test("healthy: the first upstream answers", async () => {
    expect(await askAll()).toEqual(new Set(["upstream-1"]));
  });

  for (const [name, inject] of [
    ["refuses connections", () => first.stop()],
    ["answers HTTP 500", () => (first.mode = faults.http500())],
    ["answers garbage", () => (first.mode = faults.garbage())],
    ["hangs", () => (first.mode = faults.hang())],
  ] as const) {
    test(`the first ${name}: right answers from the second, then the first again once it recovers`, async () => {
      inject();
      const started = performance.now();
      const upstreams = await askAll();
      expect(upstreams.has("upstream-2")).toBe(true);
      // Each caller waited at most the deadline, whatever the first did.
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 1_000);
      // Hedged calls may have been answered before the first's attempts timed out: its circuit opens then.
      await until("the first upstream out of rotation", async () => {
        const health = (await (await fetch(`${service}/health`)).json()) as any;
        return health.upstream.upstreams[0].state === "open" ? health : undefined;
      });
      const health = (await (await fetch(`${service}/health`)).json()) as any;
      expect(health.status).toBe("ok");
      first.mode = undefined;
      first.restart();
      await usedAgain();
    }, 30_000);
  }

  test("every upstream down: -32002 and 502 within the deadline; recovery by itself", async () => {
    first.stop();
    second.stop();
    const started = performance.now();
    const rpcAnswer = await post(`${service}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 5,
      method: "eth_getBlockByNumber",
      params: ["0x2", false],
    });
    const restAnswer = await post(`${service}/node/rest/eth_getBlockByNumber`, {
      number: 2,
      is_full_trx: false,
    });
    expect(performance.now() - started).toBeLessThan(2 * DEADLINE_MS + 500);
    expect(rpcAnswer.status).toBe(200);
    expect(rpcAnswer.json.id).toBe(5);
    expect(rpcAnswer.json.error.code).toBe(-32002);
    expect(restAnswer.status).toBe(502);
    expect(restAnswer.json.detail).toStartWith("no upstream");
    const health = (await (await fetch(`${service}/health`)).json()) as any;
    expect(health.status).toBe("degraded");
    expect(health.upstream.status).toBe("down");

    first.restart();
    second.restart();
    await until("the service to recover", async () => {
      const a = await post(`${service}/node/rest/eth_getBlockByNumber`, { number: 2, is_full_trx: true });
      return a.status === 200 ? a : undefined;
    });
    await usedAgain();
    expect(await askAll()).toContain("upstream-1");
  }, 30_000);

  test("hangs bounded by the deadline when both hang: 504 over REST", async () => {
    // Both in rotation first: a circuit the previous test left open would make this "no upstream" (502).
    await bothInRotation();
    first.mode = faults.hang();
    second.mode = faults.hang();
    const started = performance.now();
    const rest = await post(`${service}/node/rest/eth_getBlockByNumber`, { number: 3, is_full_trx: false });
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 500);
    expect(rest.status).toBe(504);
  }, 30_000);

  test("/metrics counts the failures and the upstreams' state", async () => {
    // The previous test left both circuits open; the probes close them.
    await bothInRotation();
    const text = await (await fetch(`${service}/metrics`)).text();
    expect(
      metric(text, "gateway_upstream_http_requests_total", { upstream: "upstream-1", outcome: "error" }),
    ).toBeGreaterThan(0);
    expect(
      metric(text, "gateway_upstream_http_requests_total", { upstream: "upstream-1", outcome: "timeout" }),
    ).toBeGreaterThan(0);
    expect(
      metric(text, "gateway_upstream_calls_total", {
        upstream: "upstream-2",
        method: "eth_getBlockByNumber",
        outcome: "ok",
      }),
    ).toBeGreaterThan(0);
    expect(
      metric(text, "gateway_requests_total", {
        operation: "eth_getBlockByNumber",
        transport: "rest",
        outcome: "unavailable",
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metric(text, "gateway_requests_total", {
        operation: "eth_getBlockByNumber",
        transport: "rest",
        outcome: "timeout",
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(metric(text, "gateway_upstream_up", { upstream: "upstream-1" })).toBe(1);
    expect(metric(text, "gateway_upstream_up", { upstream: "upstream-2" })).toBe(1);
  });
});

describe("what a call that failed everywhere is answered", () => {
  test("a timeout anywhere makes it a 504, even when another upstream failed last in another way", async () => {
    // A block read by number (not the tags that follow the head).
    const asksBlock = (c: any) => c?.method === "eth_getBlockByNumber" && c.params?.[0]?.startsWith?.("0x");
    const silent = startProxy(node);
    const failing = startProxy(node);
    const TIMEOUT_MS = 300;
    const service = (
      await startTestService({
        upstreamUrls: [silent.url, failing.url],
        env: {
          CACHE_MEMORY_MB: "0",
          UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
          UPSTREAM_DEADLINE_MS: "10000",
          // The hedge goes out well before the first attempt times out, whatever latency startup measured.
          HEDGE_AFTER_MS: "50",
          // No poll in the test's time: the circuits move only with the call's own attempts.
          HEAD_POLL_MS: "60000",
        },
      })
    ).url;
    const before = new Map([silent, failing].map((p) => [p, p.calls.length]));
    // The first hangs twice, then answers HTTP 500 too: the call's last failure is not a timeout.
    let hangs = 2;
    silent.mode = faults.forCalls(asksBlock, (body, parsed) =>
      (hangs-- > 0 ? faults.hang() : faults.http500())(body, parsed),
    );
    failing.mode = faults.forCalls(asksBlock, faults.http500());
    // A call's retries go round the upstreams (the one it asked least recently next): the first (timeout),
    // the second by the hedge (HTTP 500), the first (timeout), the second (HTTP 500), the first (HTTP 500).
    const rest = await post(`${service}/node/rest/eth_getBlockByNumber`, { number: 2, is_full_trx: false });
    expect(rest.json).toEqual({ detail: `upstream-1 did not answer within ${TIMEOUT_MS} ms` });
    expect(rest.status).toBe(504);
    const asked = (proxy: NodeProxy) =>
      proxy.calls.slice(before.get(proxy)).filter((c) => c.params[0] === "0x2");
    expect(asked(silent)).toHaveLength(3);
    expect(asked(failing)).toHaveLength(2);
    const health = (await (await fetch(`${service}/health`)).json()) as any;
    // One call's failures count once against each upstream's circuit: neither opens.
    expect(health.upstream.upstreams.map((u: { state: string }) => u.state)).toEqual(["closed", "closed"]);
  }, 30_000);
});

describe("head tracking", () => {
  test("a call about a block the preferred upstream has not reached goes to one that has", async () => {
    const behind = await twin(node);
    const ahead = await twin(node, 5);
    const service = (
      await startTestService({
        upstreamUrls: [behind.url, ahead.url],
        env: { HEAD_POLL_MS: "50", CACHE_MEMORY_MB: "0" },
      })
    ).url;
    const target = hex(chain.head + 3);
    const expected = await rpc(ahead.url)("eth_getBlockByNumber", [target, false]);
    expect(expected).not.toBeNull();
    expect(await rpc(behind.url)("eth_getBlockByNumber", [target, false])).toBeNull();
    const answer = await post(`${service}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBlockByNumber",
      params: [target, false],
    });
    expect(answer.json.result).toEqual(expected);
    expect(answer.headers.get("x-upstream")).toBe("upstream-2");
    // latest is the highest head of the healthy upstreams.
    const latest = await post(`${service}/node/rest/eth_getBlockByNumber`, {
      number: "latest",
      is_full_trx: false,
    });
    expect(latest.json.number).toBe(hex(chain.head + 5));
    // What both have comes from the preferred one.
    const old = await post(`${service}/node/jsonrpc`, {
      id: 2,
      method: "eth_getBlockByNumber",
      params: ["0x2", false],
    });
    expect(old.headers.get("x-upstream")).toBe("upstream-1");
  });
});
