/**
 * Hardening (docs/interface.md §7, §8, §9 and the README's decisions): no fault of a node, the database or a
 * client may open the service, make published results go backwards, keep a bad answer, cut a request off
 * or answer 500. Real parts everywhere; a fault-injecting proxy in front of a real anvil where a node
 * cannot be made to misbehave on demand, and a real PostgreSQL held, locked or stopped.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createApiKeyStore, hashKey } from "../src/db/apiKeys";
import type { Sql } from "../src/db/database";
import { rpc } from "./support/chain";
import { faults, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { fixtureChain, newAnvil, onTeardown, postgresServer } from "./support/shared";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

let node: string;
beforeAll(async () => {
  node = (await fixtureChain()).anvil.url;
});

describe("time", () => {
  test("a hung node: the caller gets a 504 and a stream its error line, not a connection cut at 10 s", async () => {
    const proxy = startProxy(node);
    const { url } = await startTestService({
      upstreamUrls: [proxy.url],
      env: { UPSTREAM_TIMEOUT_MS: "11000", UPSTREAM_DEADLINE_MS: "11500", CACHE_MEMORY_MB: "0" },
    });
    proxy.mode = faults.hang();
    const started = performance.now();
    const [rest, stream] = await Promise.all([
      post(`${url}/node/rest/eth_getBlockByNumber`, { number: 1, is_full_trx: false }),
      fetch(`${url}/node/stream/ext_getBlockReceipts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ fromBlock: 1, toBlock: 2 }),
      }).then(async (r) => ({ status: r.status, text: await r.text() })),
    ]);
    expect(performance.now() - started).toBeGreaterThan(11_000);
    expect(rest.status).toBe(504);
    expect(rest.json.detail).toContain("did not answer within");
    expect(stream.status).toBe(200);
    const line = JSON.parse(stream.text.trim());
    expect(line).toEqual({
      number: 1,
      error: { code: -32002, message: expect.stringContaining("did not answer") },
    });
  }, 30_000);
});

describe("published results never go backwards", () => {
  /** A second node with the same chain as `source`, mined `extra` blocks further. */
  async function twin(source: string, extra: number) {
    const copy = await newAnvil();
    await rpc(copy.url)("anvil_loadState", [await rpc(source)("anvil_dumpState")]);
    if (extra > 0) await rpc(copy.url)("anvil_mine", [hex(extra)]);
    return copy;
  }

  test("failover to a lagging upstream is lag, not a reorg: lastBlockNumber stays and check answers", async () => {
    const lagging = await newAnvil();
    await rpc(lagging.url)("anvil_mine", ["0x5"]);
    const leading = await twin(lagging.url, 5);
    const proxy = startProxy(leading.url);
    const { url } = await startTestService({
      upstreamUrls: [proxy.url, lagging.url],
      env: { INDEXER: "on", HEAD_POLL_MS: "50", UPSTREAM_COOLDOWN_MS: "5000" },
    });
    const head = Number(await rpc(leading.url)("eth_blockNumber"));
    const last = async () =>
      (await post(`${url}/watch_filters/lastBlockNumber`, undefined, { method: "GET" })).json.block_number;
    await until("the index at the leading head", async () => ((await last()) === head ? true : undefined));
    const published = await post(`${url}/watch_filters/check`, { block_number: head });
    expect(published.status).toBe(200);

    proxy.stop();
    await until("the leading upstream out of rotation", async () => {
      const health = (await (await fetch(`${url}/health`)).json()) as any;
      return health.upstream.upstreams[0].state === "open" ? true : undefined;
    });
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      seen.push(await last());
      await Bun.sleep(50);
    }
    expect(seen.every((n) => n === head)).toBe(true);
    const again = await post(`${url}/watch_filters/check`, { block_number: head });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(published.json);
  }, 30_000);

  test("a stale head does not let lastBlockNumber skip the confirmation depth", async () => {
    const anvil = await newAnvil();
    await rpc(anvil.url)("anvil_mine", ["0x8"]);
    const proxy = startProxy(anvil.url);
    const { url } = await startTestService({
      upstreamUrls: [proxy.url],
      env: { INDEXER: "on", HEAD_POLL_MS: "50", CONFIRMATIONS: "3" },
    });
    const head = Number(await rpc(anvil.url)("eth_blockNumber"));
    const last = async () =>
      (await post(`${url}/watch_filters/lastBlockNumber`, undefined, { method: "GET" })).json.block_number;
    await until("the index at the head", async () => ((await last()) === head - 3 ? true : undefined));
    // No upstream answers: the head goes stale (three polls and a second), the index stays at the head.
    proxy.stop();
    await Bun.sleep(1_500);
    expect(await last()).toBe(head - 3);
    const check = await post(`${url}/watch_filters/check`, { block_number: head - 1 });
    expect(check.status).toBe(404);
  }, 30_000);
});

describe("rate limits", () => {
  test("a key's bucket survives key reloads: an unknown key does not buy a fresh burst", async () => {
    const database = await (await postgresServer()).createDatabase();
    await (await startTestService({ upstreamUrls: [node], databaseUrl: database })).stop();
    const sql = postgres(database, { max: 1, onnotice: () => {} }) as unknown as Sql;
    onTeardown(() => sql.end());
    // Three calls, then one a minute.
    await createApiKeyStore(sql).add(hashKey("slow-db-key"), "slow", { perSecond: 1 / 60, burst: 3 });
    const { url } = await startTestService({ upstreamUrls: [node], databaseUrl: database });
    const call = () => post(`${url}/node/rest/eth_blockNumber?api_key=slow-db-key`, undefined);
    for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(429);
    await Bun.sleep(2_100); // past the unknown-key reload interval
    expect((await post(`${url}/node/rest/eth_blockNumber?api_key=unknown`, undefined)).status).toBe(401);
    expect((await call()).status).toBe(429);
  });

  test("a call costs what it asks: a token per contract, per 1,000 blocks of logs, per call of a batch", async () => {
    const { url } = await startTestService({
      upstreamUrls: [node],
      env: { API_KEYS: "costly", RATE_LIMITS: "costly=1/5" },
    });
    const key = { headers: { "x-api-key": "costly" } };
    const contracts = Array.from({ length: 6 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const balances = await post(
      `${url}/node/rest/get_token_balances`,
      { address: contracts[0], list_contract_address: contracts },
      key,
    );
    expect(balances.status).toBe(429);
    expect(balances.json.detail).toBe(
      "rate limit: this request counts as 6 calls, more than this key may make at once (5)",
    );
    const logs = await post(
      `${url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: hex(5_500) }] },
      key,
    );
    expect(logs.status).toBe(429);
    expect(logs.json.error.message).toBe(
      "rate limit: this request counts as 6 calls, more than this key may make at once (5)",
    );
    // Within the burst: 4 contracts and a range of 1,000 blocks.
    const within = await post(
      `${url}/node/jsonrpc`,
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "watch_getTokenBalances",
          params: [contracts[0], contracts.slice(0, 4)],
        },
        { jsonrpc: "2.0", id: 2, method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: hex(999) }] },
      ],
      key,
    );
    expect(within.status).toBe(200);
    // The bucket is empty now.
    expect((await post(`${url}/node/rest/eth_blockNumber`, undefined, key)).status).toBe(429);
  });
});

describe("hostile bodies", () => {
  const deepId = `${"[".repeat(100_000)}1${"]".repeat(100_000)}`;
  const deepDetail = {
    detail: [{ loc: ["body"], msg: "JSON nested deeper than 64 levels is refused", type: "json_too_deep" }],
  };

  test("JSON nested 100,000 deep: a 422 (or -32600) before any work, in singles, batches and refusals", async () => {
    const { url } = await startTestService({
      upstreamUrls: [node],
      env: { API_KEYS: "deep-key,limited-deep", RATE_LIMITS: "limited-deep=0.01/1" },
    });
    const single = `{"jsonrpc":"2.0","id":${deepId},"method":"eth_chainId","params":[]}`;
    const batch = `[${single}]`;
    const params = `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[${deepId}]}`;
    for (const body of [single, batch, params]) {
      const answer = await post(`${url}/node/jsonrpc?api_key=deep-key`, body, { raw: true });
      expect(answer.status).toBe(422);
      expect(answer.json).toEqual(deepDetail);
    }
    const rest = await post(
      `${url}/node/rest/eth_getBlockByNumber?api_key=deep-key`,
      `{"number":${deepId}}`,
      {
        raw: true,
      },
    );
    expect(rest.status).toBe(422);
    expect(rest.json).toEqual(deepDetail);
    // Refusals made before parsing echo no id rather than fail on it.
    const unauthorized = await post(`${url}/node/jsonrpc`, single, { raw: true });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32001, message: expect.stringContaining("missing API key") },
    });
    expect(
      (await post(`${url}/node/jsonrpc?api_key=limited-deep`, { id: 1, method: "eth_chainId" })).status,
    ).toBe(200);
    const limited = await post(`${url}/node/jsonrpc?api_key=limited-deep`, single, { raw: true });
    expect(limited.status).toBe(429);
    expect(limited.json.id).toBeNull();
    // Over a WebSocket: an invalid request, and the socket stays open.
    const socket = await connectSocket(wsUrl(url, "deep-key"));
    socket.send(single);
    expect(await socket.next()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "body: JSON nested deeper than 64 levels is refused" },
    });
    expect((await socket.request("eth_chainId")).result).toBe("0x7a69");
    socket.close();
  });
});
