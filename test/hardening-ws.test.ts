/**
 * Hardening of the client WebSocket (README "Hardening: the rules"): a socket keeps its caller's identity
 * (its IP's connection count and rate bucket, shared with its HTTP calls, seen from two loopback source
 * addresses), subscription limits and groups hold under concurrent calls, a subscription never outlives its
 * socket, a revoked key or a changed rate reaches the sockets already open, and a socket's batches and
 * messages in flight are bounded. Real anvil, PostgreSQL and WebSocket clients; a proxy in front of the node
 * where its answers must be held or counted.
 */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createApiKeyStore, hashKey } from "../src/db/apiKeys";
import { STREAMED_BATCH_WINDOW } from "../src/http/jsonrpc";
import { MAX_IN_FLIGHT } from "../src/http/websocket";
import { rpc, rpcBatch, sendAndWait } from "./support/chain";
import { metric } from "./support/metrics";
import { startProxy } from "./support/proxy";
import { post, postFrom, startTestService } from "./support/service";
import { fixtureChain, newAnvil } from "./support/shared";
import { until } from "./support/until";
import { connectSocket, rawClient, rawUpgrade, wsUrl } from "./support/ws";

const ALICE = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const BOB = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const call = (id: number, method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id, method, params });
/** A distinct address per index: calls about them are distinct misses. */
const address = (i: number) => `0x${(0xa11ce0000 + i).toString(16).padStart(40, "0")}`;

const metrics = async (url: string) => (await fetch(`${url}/metrics`)).text();

describe("a socket is its caller's", () => {
  test("open mode: sockets are counted per IP and counted down when they close; a caller's HTTP and WebSocket calls share its bucket", async () => {
    const { anvil } = await fixtureChain();
    const { url } = await startTestService({
      upstreamUrls: [anvil.url],
      // One token every 5 s: no refill between the calls below changes what they get.
      env: { WS_MAX_CONNECTIONS: "2", RATE_LIMIT: "0.2/10" },
    });
    const upgrade = (from: string) => rawUpgrade(url, "/node/jsonrpc", {}, from);

    // Two sockets from 127.0.0.1 and no third; 127.0.0.2 has a count of its own.
    const first = [await upgrade("127.0.0.1"), await upgrade("127.0.0.1")];
    expect(first.map((s) => s.status)).toEqual([101, 101]);
    const third = await upgrade("127.0.0.1");
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toEqual({
      detail: "this key holds 2 WebSockets, the most it may (WS_MAX_CONNECTIONS)",
    });
    expect((await upgrade("127.0.0.2")).status).toBe(101);
    // Closed, they count no more: the same IP opens two again.
    for (const s of first) s.socket.end();
    await Promise.all(first.map((s) => s.ended));
    await until("the closed sockets to leave the count", async () =>
      metric(await metrics(url), "gateway_ws_connections") === 1 ? true : undefined,
    );
    const again = [await upgrade("127.0.0.1"), await upgrade("127.0.0.1")];
    expect(again.map((s) => s.status)).toEqual([101, 101]);
    expect((await upgrade("127.0.0.1")).status).toBe(429);

    // 127.0.0.3 spends its burst of 10 over HTTP: its socket's call is refused, from the same bucket.
    const calls = (from: string, count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          postFrom(from, `${url}/node/jsonrpc`, call(i, "eth_chainId")),
        ),
      );
    expect((await calls("127.0.0.3", 10)).map((a) => a.status)).toEqual(Array(10).fill(200));
    const three = rawClient(await upgrade("127.0.0.3"));
    three.send(call(1, "eth_chainId"));
    expect(await three.next()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32005, message: "rate limit exceeded: 0.2 calls per second, bursts of 10" },
    });
    // 127.0.0.4 spends its own over its socket (none of 127.0.0.3's), then its HTTP call is refused.
    const four = rawClient(await upgrade("127.0.0.4"));
    for (let i = 0; i < 10; i++) four.send(call(i, "eth_chainId"));
    const answers = await Promise.all(Array.from({ length: 10 }, () => four.next()));
    expect(answers.map((a) => a.result)).toEqual(Array(10).fill("0x7a69"));
    const refused = await postFrom("127.0.0.4", `${url}/node/jsonrpc`, call(11, "eth_chainId"));
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe(-32005);
  }, 30_000);
});

describe("subscriptions under concurrent calls", () => {
  test("a batch of 150 subscriptions is granted WS_MAX_SUBSCRIPTIONS (100), for every kind that waits", async () => {
    const { anvil } = await fixtureChain();
    const { url } = await startTestService({ upstreamUrls: [anvil.url], env: { API_KEYS: "k" } });
    for (const params of [["watch_filters", { version: "v1" }], ["newPendingTransactions"], ["newHeads"]]) {
      const socket = await connectSocket(wsUrl(url, "k"));
      socket.send(Array.from({ length: 150 }, (_, i) => call(i, "eth_subscribe", params)));
      const answers: any[] = await socket.next((m) => Array.isArray(m), 10_000);
      expect(answers).toHaveLength(150);
      const granted = answers.filter((a) => typeof a.result === "string");
      const refused = answers.filter((a) => a.error);
      expect(granted).toHaveLength(100);
      expect(new Set(refused.map((a) => JSON.stringify(a.error)))).toEqual(
        new Set([
          JSON.stringify({
            code: -32005,
            message: "this socket holds 100 subscriptions, the most it may (WS_MAX_SUBSCRIPTIONS)",
          }),
        ]),
      );
      expect(metric(await metrics(url), "gateway_ws_subscriptions", { kind: params[0] as string })).toBe(100);
      socket.close();
      await socket.closed;
      await until("the socket's subscriptions to end", async () =>
        metric(await metrics(url), "gateway_ws_subscriptions", { kind: params[0] as string }) === 0
          ? true
          : undefined,
      );
    }
  }, 30_000);

  test("watch_filters subscribed twice at once: both are notified, and either leaving keeps the other's", async () => {
    const anvil = await newAnvil();
    const KEY = "watcher";
    const { url } = await startTestService({
      upstreamUrls: [anvil.url],
      env: { API_KEYS: KEY, INDEXER: "on", HEAD_POLL_MS: "50" },
    });
    const as = { headers: { "x-api-key": KEY } };
    const last = async () =>
      (await post(`${url}/watch_filters/lastBlockNumber`, undefined, { ...as, method: "GET" })).json
        .block_number as number;
    await until("the index at the head", async () =>
      (await last()) === Number(await rpc(anvil.url)("eth_blockNumber")) ? true : undefined,
    );
    expect((await post(`${url}/watch_filters/add`, { address: BOB }, as)).status).toBe(200);
    const socket = await connectSocket(wsUrl(url, KEY));
    // Two first subscriptions of one key, run at once.
    socket.send([call(1, "eth_subscribe", ["watch_filters"]), call(2, "eth_subscribe", ["watch_filters"])]);
    const [a, b] = ((await socket.next((m) => Array.isArray(m))) as any[]).map((m) => m.result as string) as [
      string,
      string,
    ];
    expect(a).toStartWith("0x");
    expect(b).toStartWith("0x");

    /** A payment to BOB, processed, and what check returns for its block. */
    const payment = async (value: string) => {
      const receipt = await sendAndWait(anvil.url, { from: ALICE, to: BOB, value });
      const block = Number(receipt.blockNumber);
      await until("the block to be processed", async () => ((await last()) >= block ? true : undefined));
      return (await post(`${url}/watch_filters/check`, { block_number: block }, as)).json.filters;
    };
    const firstResults = await payment("0x10");
    expect(firstResults).toHaveLength(1);
    expect(await socket.waitFor(a, 1)).toEqual(firstResults);
    expect(await socket.waitFor(b, 1)).toEqual(firstResults);

    expect((await socket.request("eth_unsubscribe", [a])).result).toBe(true);
    const secondResults = await payment("0x20");
    expect(await socket.waitFor(b, 2)).toEqual([...firstResults, ...secondResults]);
    expect(socket.notifications(a)).toEqual(firstResults);
    socket.close();
  }, 60_000);

  test("a socket closed while its subscription is being set up leaves nothing running: no watch group, no node subscription", async () => {
    const { anvil } = await fixtureChain();
    const proxy = startProxy(anvil.url);
    const service = await startTestService({ upstreamUrls: [proxy.url], env: { API_KEYS: "k" } });
    const { url } = service;
    const subscribed = (kind: string) => async () =>
      metric(await metrics(url), "gateway_ws_subscriptions", { kind });
    const socketsOpen = async () => metric(await metrics(url), "gateway_ws_connections");

    // watch_filters waits for the index's progress: held by a lock on its table.
    const sql = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holding = sql.begin(async (tx) => {
        await tx`lock table indexer_state in access exclusive mode`;
        locked();
        await released;
      });
      await isLocked;
      const socket = await connectSocket(wsUrl(url, "k"));
      socket.send(call(1, "eth_subscribe", ["watch_filters"]));
      // Not answered while the index's progress cannot be read.
      expect(await socket.next(() => true, 300).catch((error: Error) => error.message)).toBe(
        "timed out waiting for a message",
      );
      socket.close();
      await until("the socket to close", async () => ((await socketsOpen()) === 0 ? true : undefined));
      release();
      await holding;
      await Bun.sleep(300);
      expect(await subscribed("watch_filters")()).toBe(0);
    } finally {
      await sql.end();
    }

    // newPendingTransactions waits for the node to accept the subscription: held by the proxy.
    let accept!: () => void;
    const accepted = new Promise<void>((resolve) => {
      accept = resolve;
    });
    const isPending = (c: any) => c?.method === "eth_subscribe" && c.params?.[0] === "newPendingTransactions";
    proxy.holdSocketMessage = (message) => (isPending(message) ? accepted : undefined);
    const socket = await connectSocket(wsUrl(url, "k"));
    socket.send(call(1, "eth_subscribe", ["newPendingTransactions"]));
    await until("the node to be asked", async () => (proxy.calls.some(isPending) ? true : undefined));
    socket.close();
    await until("the socket to close", async () => ((await socketsOpen()) === 0 ? true : undefined));
    accept();
    // The node's subscription, accepted after the socket went, is ended on the node.
    await until("the node's subscription to be ended", async () =>
      proxy.callsOf("eth_unsubscribe").length === 1 ? true : undefined,
    );
    expect(await subscribed("newPendingTransactions")()).toBe(0);
  }, 30_000);
});

describe("keys reach open sockets", () => {
  test("a revoked key's sockets are closed; a changed rate applies to them; an open service that closes closes its keyless sockets", async () => {
    const { anvil } = await fixtureChain();
    const service = await startTestService({
      upstreamUrls: [anvil.url],
      env: { API_KEYS: "static", KEYS_REFRESH_MS: "200" },
    });
    const { url } = service;
    const sql = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const keys = createApiKeyStore(sql);
      await keys.add(hashKey("revokee"), "revokee");
      await keys.add(hashKey("rated"), "rated", { perSecond: 1000, burst: 1000 });
      await until("the keys to be read", async () =>
        (await post(`${url}/node/rest/eth_blockNumber?api_key=rated`, undefined)).status === 200
          ? true
          : undefined,
      );
      const revokee = await connectSocket(wsUrl(url, "revokee"));
      const { result: heads } = await revokee.request("eth_subscribe", ["newHeads"]);
      expect(heads).toStartWith("0x");
      const rated = await connectSocket(wsUrl(url, "rated"));
      expect((await rated.request("eth_chainId")).result).toBe("0x7a69");

      await keys.revoke(hashKey("revokee"));
      expect(await revokee.closed).toEqual({ code: 1008, reason: "the API key was revoked" });
      expect((await post(`${url}/node/rest/eth_blockNumber?api_key=revokee`, undefined)).status).toBe(401);
      expect(metric(await metrics(url), "gateway_ws_subscriptions", { kind: "newHeads" })).toBe(0);

      // A burst of 2: a batch of 5 calls is more than the key may make at once, on every transport.
      await sql`update api_keys set rate_per_second = 0.1, burst = 2
        where key_hash = decode(${hashKey("rated")}, 'hex')`;
      const batch = Array.from({ length: 5 }, (_, i) => call(i, "eth_chainId"));
      const tooMany = "rate limit: this request counts as 5 calls, more than this key may make at once (2)";
      await until("the new rate to be read", async () => {
        const answer = await post(`${url}/node/jsonrpc?api_key=rated`, batch);
        return answer.status === 429 && answer.json.error.message === tooMany ? true : undefined;
      });
      rated.send(batch);
      expect(await rated.next()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32005, message: tooMany },
      });
      rated.close();
    } finally {
      await sql.end();
    }
  }, 30_000);

  test("sockets opened while the service ran open are closed once a key makes it require keys", async () => {
    const { anvil } = await fixtureChain();
    const service = await startTestService({ upstreamUrls: [anvil.url], env: { KEYS_REFRESH_MS: "200" } });
    const { url } = service;
    const socket = await connectSocket(wsUrl(url));
    expect((await socket.request("eth_chainId")).result).toBe("0x7a69");
    const sql = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await createApiKeyStore(sql).add(hashKey("first"), "first");
    } finally {
      await sql.end();
    }
    expect(await socket.closed).toEqual({ code: 1008, reason: "the service now requires an API key" });
    expect((await post(`${url}/node/rest/eth_blockNumber`, undefined)).status).toBe(401);
    expect((await post(`${url}/node/rest/eth_blockNumber?api_key=first`, undefined)).status).toBe(200);
  }, 30_000);
});

describe("a socket's work is bounded", () => {
  /** A proxy that counts the eth_getBalance calls it holds at once (each held 30 ms before it goes on). */
  function countingProxy(node: string) {
    const proxy = startProxy(node);
    const counts = { now: 0, most: 0 };
    proxy.mode = (body, parsed) => {
      const held = [parsed].flat().filter((c) => c?.method === "eth_getBalance").length;
      if (held === 0) return undefined;
      return (async () => {
        counts.now += held;
        counts.most = Math.max(counts.most, counts.now);
        await Bun.sleep(30);
        const answer = await fetch(node, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        const text = await answer.text();
        counts.now -= held;
        return new Response(text, { headers: { "content-type": "application/json" } });
      })();
    };
    return { proxy, counts };
  }

  test("a batch runs STREAMED_BATCH_WINDOW calls at once and a socket MAX_IN_FLIGHT messages; every answer right, in order", async () => {
    const { anvil, chain } = await fixtureChain();
    const { proxy, counts } = countingProxy(anvil.url);
    const { url } = await startTestService({
      upstreamUrls: [proxy.url],
      env: { CACHE_MEMORY_MB: "0", WS_MAX_BUFFER_BYTES: "200000" },
    });
    const socket = await connectSocket(wsUrl(url));
    const balances = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => call(from + i, "eth_getBalance", [address(from + i), "0x1"]));
    const expected = async (calls: ReturnType<typeof balances>) =>
      (
        await rpcBatch(
          anvil.url,
          calls.map((c) => ({ method: c.method, params: c.params })),
        )
      ).map((result: unknown, i: number) => ({ jsonrpc: "2.0", id: calls[i]!.id, result }));

    // One batch of 1,000 misses: never more than the window at the node.
    const batch = balances(0, 1_000);
    socket.send(batch);
    expect(await socket.next((m) => Array.isArray(m), 20_000)).toEqual(await expected(batch));
    expect(counts.most).toBe(STREAMED_BATCH_WINDOW);

    // 200 single misses sent at once on one socket: at most MAX_IN_FLIGHT at a time, every one answered.
    counts.most = 0;
    const singles = balances(1_000, 200);
    for (const single of singles) socket.send(single);
    const answers = await Promise.all(singles.map((c) => socket.next((m) => m.id === c.id, 20_000)));
    expect(answers).toEqual(await expected(singles));
    expect(counts.most).toBeGreaterThan(1);
    expect(counts.most).toBeLessThanOrEqual(MAX_IN_FLIGHT);

    // A batch whose answer is larger than WS_MAX_BUFFER_BYTES: refused, the socket open.
    const blocks = Array.from({ length: 20 }, (_, i) =>
      call(i, "eth_getBlockByNumber", [`0x${chain.bigBlock.toString(16)}`, true]),
    );
    socket.send(blocks);
    expect(await socket.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message:
          "the batches answered on this socket would hold more than 200000 bytes (WS_MAX_BUFFER_BYTES): send smaller batches",
      },
    });
    expect((await socket.request("eth_chainId")).result).toBe("0x7a69");
    socket.close();
  }, 60_000);
});
