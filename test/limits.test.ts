/**
 * Per-key rate limits, request size and batch length limits, eth_sendRawTransaction semantics, and
 * upstreams that refuse or cap batches.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { JsonRpcProvider } from "ethers";
import { anvilWallets, type ChainFixture, rpc } from "./support/chain";
import { metric } from "./support/metrics";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { fixtureChain, newAnvil } from "./support/shared";

let chain: ChainFixture;
let node: string;

beforeAll(async () => {
  const fixture = await fixtureChain();
  chain = fixture.chain;
  node = fixture.anvil.url;
});

const call = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });

describe("rate limits", () => {
  let service: string;
  beforeAll(async () => {
    service = (
      await startTestService({
        upstreamUrls: [node],
        // A token a second: five calls in a row finish well within it, however loaded the machine.
        env: { API_KEYS: "slow-key,fast-key", RATE_LIMITS: "slow-key=1/5", RATE_LIMIT: "1000/1000" },
      })
    ).url;
  });

  test("a key over its rate gets 429 with Retry-After; another key is unaffected; it recovers", async () => {
    const slow = { headers: { "x-api-key": "slow-key" } };
    for (let i = 0; i < 5; i++) {
      expect((await post(`${service}/node/jsonrpc`, call(i), slow)).status).toBe(200);
    }
    const limited = await post(`${service}/node/jsonrpc`, call(6), slow);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.json).toEqual({
      jsonrpc: "2.0",
      id: 6,
      error: { code: -32005, message: "rate limit exceeded: 1 call per second, bursts of 5" },
    });
    const rest = await post(`${service}/node/rest/eth_blockNumber?api_key=slow-key`, undefined);
    expect(rest.status).toBe(429);
    expect(rest.json).toEqual({ detail: "rate limit exceeded: 1 call per second, bursts of 5" });
    expect(rest.headers.get("retry-after")).toBe("1");

    for (let i = 0; i < 20; i++) {
      expect(
        (await post(`${service}/node/jsonrpc`, call(i), { headers: { "x-api-key": "fast-key" } })).status,
      ).toBe(200);
    }

    await Bun.sleep(1_100);
    expect((await post(`${service}/node/jsonrpc`, call(7), slow)).status).toBe(200);
  });

  test("a batch takes one token per call", async () => {
    await Bun.sleep(5_100); // a full bucket: 5 tokens
    const slow = { headers: { "x-api-key": "slow-key" } };
    expect((await post(`${service}/node/jsonrpc`, [call(1), call(2), call(3)], slow)).status).toBe(200);
    const refused = await post(`${service}/node/jsonrpc`, [call(4), call(5), call(6)], slow);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe(-32005);
    const tooBig = await post(
      `${service}/node/jsonrpc`,
      Array.from({ length: 6 }, (_, i) => call(i)),
      slow,
    );
    expect(tooBig.status).toBe(429);
    expect(tooBig.json.error.message).toBe(
      "rate limit: this request counts as 6 calls, more than this key may make at once (5)",
    );
  }, 15_000);

  test("/metrics counts the refused calls", async () => {
    const text = await (await fetch(`${service}/metrics`)).text();
    expect(metric(text, "gateway_rate_limited_total", { scope: "key" })).toBe(1 + 1 + 3 + 6);
    expect(metric(text, "gateway_http_requests_total", { route: "/node/jsonrpc", status: "429" })).toBe(3);
    expect(
      metric(text, "gateway_http_requests_total", { route: "/node/rest/eth_blockNumber", status: "429" }),
    ).toBe(1);
  });
});

describe("request limits", () => {
  let service: string;
  beforeAll(async () => {
    service = (
      await startTestService({ upstreamUrls: [node], env: { MAX_BODY_BYTES: "2048", MAX_BATCH_LENGTH: "5" } })
    ).url;
  });

  test("a body over MAX_BODY_BYTES: 413 with a clear error", async () => {
    const big = {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBalance",
      params: [`0x${"1".repeat(40)}`, "latest"],
      pad: "x".repeat(3000),
    };
    const answer = await post(`${service}/node/jsonrpc`, big);
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "request body exceeds the limit of 2048 bytes (MAX_BODY_BYTES)" },
    });
    const rest = await post(`${service}/node/rest/eth_getLogs`, {
      address: Array.from({ length: 60 }, () => `0x${"1".repeat(40)}`),
    });
    expect(rest.status).toBe(413);
    expect(rest.json).toEqual({ detail: "request body exceeds the limit of 2048 bytes (MAX_BODY_BYTES)" });
  });

  test("a batch over MAX_BATCH_LENGTH: 413 naming the limit", async () => {
    const answer = await post(
      `${service}/node/jsonrpc`,
      Array.from({ length: 6 }, (_, i) => call(i)),
    );
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "a batch of 6 calls exceeds the limit of 5 (MAX_BATCH_LENGTH)" },
    });
    expect(
      (
        await post(
          `${service}/node/jsonrpc`,
          Array.from({ length: 5 }, (_, i) => call(i)),
        )
      ).status,
    ).toBe(200);
  });
});

describe("eth_sendRawTransaction", () => {
  test("a transaction sent twice succeeds twice with its hash; different bodies are never coalesced", async () => {
    const anvil = await newAnvil(["--no-mining"]);
    const proxy = startProxy(anvil.url);
    const service = (await startTestService({ upstreamUrls: [proxy.url] })).url;
    const provider = new JsonRpcProvider(anvil.url, 31337, { staticNetwork: true });
    const [alice, bob] = anvilWallets(provider);
    const sign = (nonce: number) =>
      alice!.signTransaction({
        to: bob!.address,
        value: 1000n + BigInt(nonce),
        nonce,
        gasLimit: 21_000,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
        chainId: 31337,
        type: 2,
      });
    const [tx0, tx1] = await Promise.all([sign(0), sign(1)]);
    const send = (raw: string, id: number) =>
      post(`${service}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id,
        method: "eth_sendRawTransaction",
        params: [raw],
      });
    proxy.delayMs = 100;
    const [a, b] = await Promise.all([send(tx0, 1), send(tx1, 2)]);
    proxy.delayMs = 0;
    expect(proxy.callsOf("eth_sendRawTransaction")).toHaveLength(2);
    const again = await send(tx0, 3);
    expect(again.json).toEqual({ jsonrpc: "2.0", id: 3, result: a.json.result });
    // The node said it already holds it; the service says success.
    expect(proxy.callsOf("eth_sendRawTransaction")).toHaveLength(3);
    const pool = await rpc(anvil.url)("txpool_content");
    const pending = Object.values(pool.pending as Record<string, Record<string, { hash: string }>>).flatMap(
      (byNonce) => Object.values(byNonce).map((t) => t.hash),
    );
    expect(pending.sort()).toEqual([a.json.result, b.json.result].sort());
    provider.destroy();
  });
});

describe("upstreams that refuse or cap batches", () => {
  const balances = async (service: string, count: number) => {
    const addresses = Array.from({ length: count }, (_, i) => `0x${(i + 7).toString(16).padStart(40, "0")}`);
    addresses[0] = chain.accounts[1]!;
    const expected = await Promise.all(addresses.map((a) => rpc(node)("eth_getBalance", [a, "0x3"])));
    const answers = await Promise.all(
      addresses.map((a, i) =>
        post(`${service}/node/jsonrpc`, {
          jsonrpc: "2.0",
          id: i,
          method: "eth_getBalance",
          params: [a, "0x3"],
        }),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.json).toEqual({ jsonrpc: "2.0", id: i, result: expected[i] });
    }
  };
  const health = async (service: string) =>
    ((await (await fetch(`${service}/health`)).json()) as any).upstream.upstreams[0];

  test("an upstream that refuses batches is sent single calls", async () => {
    const proxy: NodeProxy = startProxy(node);
    proxy.mode = (_, parsed) =>
      Array.isArray(parsed)
        ? Response.json({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32600, message: "batch requests are not supported" },
          })
        : undefined;
    const service = (await startTestService({ upstreamUrls: [proxy.url] })).url;
    await balances(service, 40);
    expect((await health(service)).batchLimit).toBe(1);
    const text = await (await fetch(`${service}/metrics`)).text();
    expect(metric(text, "gateway_upstream_batch_limit", { upstream: "upstream-1" })).toBe(1);
  });

  test("an upstream that answers only the first 10 calls of a batch is sent batches of 10", async () => {
    const proxy: NodeProxy = startProxy(node);
    proxy.mode = (_, parsed) => {
      if (!Array.isArray(parsed) || parsed.length <= 10) return undefined;
      return fetch(node, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(parsed.slice(0, 10)),
      }).then(async (r) => new Response(await r.text(), { headers: { "content-type": "application/json" } }));
    };
    const service = (await startTestService({ upstreamUrls: [proxy.url] })).url;
    await balances(service, 60);
    expect((await health(service)).batchLimit).toBe(10);
  });

  test("an upstream that refuses large batches with an error is sent smaller ones", async () => {
    const proxy: NodeProxy = startProxy(node);
    proxy.mode = (_, parsed) =>
      Array.isArray(parsed) && parsed.length > 8
        ? Response.json({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32600, message: "batch size too large" },
          })
        : undefined;
    const service = (await startTestService({ upstreamUrls: [proxy.url] })).url;
    await balances(service, 50);
    expect((await health(service)).batchLimit).toBeLessThanOrEqual(8);
  });
});
