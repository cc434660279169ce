/**
 * Hardening of what callers send and what operators read (docs/interface.md §6, §7; the README's "Hardening:
 * the rules"): the fast path reads only JSON; a refusal echoes the id without parsing the body; names a
 * plain object inherits (`__proto__`, `constructor`) are unknown paths and methods, never a 500; two
 * different keys in one request, in a repeated query parameter or header, are a 401; and a fresh instance
 * exports at 0 every series the dashboard and the alert rules read. Real parts, over HTTP on loopback.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { metric } from "./support/metrics";
import { startRedis } from "./support/redis";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";
import { connectSocket, rawUpgrade, wsUrl } from "./support/ws";

let node: string;
beforeAll(async () => {
  node = (await fixtureChain()).anvil.url;
});

/** The 422 the full path gives a body JSON.parse refuses (http/answer.ts, parseBody). */
function decodeError(text: string) {
  let message = "";
  try {
    JSON.parse(text);
  } catch (error) {
    message = (error as Error).message.replace(/^JSON Parse error: /, "");
  }
  return { detail: [{ loc: ["body"], msg: `JSON decode error: ${message}`, type: "json_invalid" }] };
}

const MISSING_KEY = "missing API key: pass it as the api_key query parameter or the x-api-key header";
const TWO_KEYS = "the request carries two different API keys; send one";
const NOT_FOUND = { detail: "Not Found" };

describe("hostile input and missing series", () => {
  test("the fast path reads only JSON: a method or jsonrpc without its opening quote is the full path's 422", async () => {
    const { url } = await startTestService({ upstreamUrls: [node] });
    const rpc = (text: string) => post(`${url}/node/jsonrpc`, text, { raw: true });
    const malformed = [
      '{"jsonrpc":"2.0","id":1,"method":Xeth_chainId","params":[]}',
      '{"jsonrpc":[1,{2:3}]","id":1,"method":"eth_chainId","params":[]}',
    ];
    // Before any well-formed request the memo knows no params: these take the full path.
    const full = [];
    for (const text of malformed) full.push(await rpc(text));
    const good = await rpc('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
    expect([good.status, good.text]).toEqual([200, '{"jsonrpc":"2.0","id":1,"result":"0x7a69"}']);
    // Now eth_chainId with [] is known: the same texts must still get the full path's answer.
    for (const [i, text] of malformed.entries()) {
      const answer = await rpc(text);
      expect({ text, status: answer.status, body: answer.json }).toEqual({
        text,
        status: 422,
        body: decodeError(text),
      });
      expect(answer.text).toBe(full[i]!.text);
    }
  }, 30_000);

  test("a refusal echoes the id of a single request without parsing the body, and null for a batch", async () => {
    const { url } = await startTestService({
      upstreamUrls: [node],
      env: { API_KEYS: "input-key", MAX_BODY_BYTES: String(8 * 1024 * 1024) },
    });
    const FIVE_MB = 5 * 1024 * 1024;
    const call = (id: string, params: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"eth_getBalance","params":${params}}`;
    const manyParams = `[${Array.from({ length: FIVE_MB / 44 }, () => '"0x00000000000000000000000000000000000000aa"').join(",")}]`;
    const single = call('"req-7"', '["0x00000000000000000000000000000000000000aa","latest"]');
    const batch = `[${Array.from({ length: Math.ceil(FIVE_MB / single.length) }, () => single).join(",")}]`;
    expect(batch.length).toBeGreaterThan(FIVE_MB);
    const refusal = (id: string) =>
      `{"jsonrpc":"2.0","id":${id},"error":{"code":-32001,"message":${JSON.stringify(MISSING_KEY)}}}`;
    // Each body and the id its refusal echoes, as JSON text (JSON.parse would round the big one).
    const cases: [string, string][] = [
      [batch, "null"],
      [single, '"req-7"'],
      [call("12345678901234567890123", manyParams), "12345678901234567890123"],
      // Broken past the id: not JSON, so no id, as when the body was parsed.
      [call("7", '["0x00000000000000000000000000000000000000aa",]'), "null"],
    ];
    // Every text parsed in this process while the refusals are made (the service runs here too).
    const largeParses: number[] = [];
    const parse = JSON.parse;
    JSON.parse = ((text: string, reviver?: never) => {
      if (text.length > 1024 * 1024) largeParses.push(text.length);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      for (const [text, id] of cases) {
        const answer = await post(`${url}/node/jsonrpc`, text, { raw: true });
        expect([answer.status, answer.text]).toEqual([401, refusal(id)]);
      }
    } finally {
      JSON.parse = parse;
    }
    expect(largeParses).toEqual([]);
  }, 60_000);

  test("names a plain object inherits are unknown paths (404) and unknown methods, nothing logged", async () => {
    const lines: string[] = [];
    const { url } = await startTestService({ upstreamUrls: [node], logWrite: (line) => lines.push(line) });
    const paths = [
      "/swagger/assets/constructor",
      "/swagger/assets/__proto__",
      "/swagger/assets/toString",
      "/__proto__",
      "/toString",
      "/constructor",
      "/hasOwnProperty",
      "/node/rest/__proto__",
      "/node/rest/constructor",
      "/node/stream/__proto__",
    ];
    const requests = paths.flatMap((path) =>
      (path.startsWith("/node/") ? ["GET", "POST"] : ["GET"]).map((method) => ({ method, path })),
    );
    const answers = [];
    for (const { method, path } of requests) {
      const response = await fetch(`${url}${path}`, { method, body: method === "POST" ? "{}" : undefined });
      answers.push({ method, path, status: response.status, body: await response.json() });
    }
    expect(answers).toEqual(requests.map((r) => ({ ...r, status: 404, body: NOT_FOUND })));
    // As JSON-RPC methods: unknown, alone, in a batch and over the WebSocket (200, -32601).
    const socket = await connectSocket(wsUrl(url));
    for (const method of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      const unknown = { code: -32601, message: `the method ${method} does not exist or is not available` };
      const single = await post(`${url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params: [] });
      expect([single.status, single.json]).toEqual([200, { jsonrpc: "2.0", id: 1, error: unknown }]);
      const batch = await post(`${url}/node/jsonrpc`, [{ jsonrpc: "2.0", id: 2, method, params: [] }]);
      expect([batch.status, batch.json]).toEqual([200, [{ jsonrpc: "2.0", id: 2, error: unknown }]]);
      expect(await socket.request(method)).toEqual({
        jsonrpc: "2.0",
        id: expect.any(Number),
        error: unknown,
      });
    }
    socket.close();
    expect(lines.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  }, 30_000);

  test("two different keys in one request, in a repeated query parameter or header, are a 401; one key twice is one key", async () => {
    const { url } = await startTestService({ upstreamUrls: [node], env: { API_KEYS: "key-a,key-b" } });
    const rest = (query: string, headers: [string, string][] = []) =>
      fetch(`${url}/node/rest/eth_blockNumber${query}`, {
        method: "POST",
        headers: new Headers([["content-type", "application/json"], ...headers]),
        body: "{}",
      });
    const rpc = (query: string, headers: [string, string][] = []) =>
      fetch(`${url}/node/jsonrpc${query}`, {
        method: "POST",
        headers: new Headers([["content-type", "application/json"], ...headers]),
        body: '{"jsonrpc":"2.0","id":9,"method":"eth_chainId","params":[]}',
      });
    const refused = {
      rest: { detail: TWO_KEYS },
      rpc: { jsonrpc: "2.0", id: 9, error: { code: -32001, message: TWO_KEYS } },
    };
    const differing: [string, [string, string][]][] = [
      ["?api_key=key-a&api_key=key-b", []],
      ["?api_key=key-b&api_key=key-a&api_key=key-b", []],
      [
        "",
        [
          ["x-api-key", "key-a"],
          ["x-api-key", "key-b"],
        ],
      ],
      [
        "",
        [
          ["api_key", "key-a"],
          ["api_key", "key-b"],
        ],
      ],
      [
        "?api_key=key-a",
        [
          ["x-api-key", "key-a"],
          ["x-api-key", "key-b"],
        ],
      ],
    ];
    for (const [query, headers] of differing) {
      const r = await rest(query, headers);
      expect([query, headers, r.status, await r.json()]).toEqual([query, headers, 401, refused.rest]);
      const j = await rpc(query, headers);
      expect([query, headers, j.status, await j.json()]).toEqual([query, headers, 401, refused.rpc]);
    }
    const same: [string, [string, string][]][] = [
      ["?api_key=key-a&api_key=key-a", []],
      ["?api_key=key-a&api_key=", []],
      [
        "",
        [
          ["x-api-key", "key-b"],
          ["x-api-key", "key-b"],
        ],
      ],
      [
        "?api_key=key-b",
        [
          ["x-api-key", "key-b"],
          ["api_key", "key-b"],
        ],
      ],
    ];
    for (const [query, headers] of same) {
      const r = await rest(query, headers);
      expect([query, r.status]).toEqual([query, 200]);
      await r.text();
      const j = await rpc(query, headers);
      expect([query, j.status, await j.json()]).toEqual([
        query,
        200,
        { jsonrpc: "2.0", id: 9, result: "0x7a69" },
      ]);
    }
    // The WebSocket upgrade is refused before it happens, with the HTTP answer a REST route gives.
    const upgrade = await rawUpgrade(url, "/node/jsonrpc?api_key=key-a&api_key=key-b");
    expect([upgrade.status, JSON.parse(upgrade.body)]).toEqual([401, refused.rest]);
    const upgradeHeaders = await rawUpgrade(url, "/node/jsonrpc", { "x-api-key": "key-a, key-b" });
    expect([upgradeHeaders.status, JSON.parse(upgradeHeaders.body)]).toEqual([401, refused.rest]);
    expect((await rawUpgrade(url, "/node/jsonrpc?api_key=key-a&api_key=key-a")).status).toBe(101);
  }, 30_000);

  test("a fresh instance exports every series the dashboard and the alert rules read, counters at 0", async () => {
    const redis = await startRedis();
    const { url } = await startTestService({
      // Two upstreams, the fleet's Redis (with its secret: a shared tier) and a disk tier: every series the
      // monitoring files read can exist.
      upstreamUrls: [node, node],
      // No call waits long enough at start to be hedged, so the hedge counter is 0 whatever the load.
      env: {
        REDIS_URL: redis.url,
        REDIS_SECRET: "a fleet secret of thirty-two characters",
        HEDGE_AFTER_MS: "240000",
      },
    });
    const text = await (await fetch(`${url}/metrics`)).text();
    const samples = new Set(
      text
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]),
    );
    const monitoring = join(import.meta.dir, "..", "monitoring");
    const named = new Set(
      [
        readFileSync(join(monitoring, "grafana-dashboard.json"), "utf8"),
        readFileSync(join(monitoring, "alerts.yml"), "utf8"),
      ].flatMap((file) => file.match(/\bgateway_[a-z0-9_]+\b/g) ?? []),
    );
    expect(named.size).toBeGreaterThan(40);
    expect([...named].filter((name) => !samples.has(name))).toEqual([]);
    // The counters of the issue, and every other one whose label values are known, exist at 0.
    const zeros: [string, Record<string, string>][] = [
      ["gateway_requests_total", { operation: "eth_chainId", transport: "jsonrpc", outcome: "ok" }],
      ["gateway_requests_total", { operation: "eth_chainId", transport: "ws", outcome: "ok" }],
      ["gateway_requests_total", { operation: "eth_getBlockByNumber", transport: "rest", outcome: "ok" }],
      ["gateway_requests_total", { operation: "watch_getTokenBalances", transport: "rest", outcome: "ok" }],
      ["gateway_http_requests_total", { route: "/node/jsonrpc", status: "200" }],
      ["gateway_http_requests_total", { route: "/watch_filters/add", status: "200" }],
      ...["too_large", "malformed", "too_deep", "invalid"].map(
        (reason) => ["gateway_refused_bodies_total", { reason }] as [string, Record<string, string>],
      ),
      ["gateway_upstream_hedged_calls_total", { upstream: "upstream-1" }],
      ["gateway_upstream_hedged_calls_total", { upstream: "upstream-2" }],
      ...["newHeads", "logs", "newPendingTransactions", "watch_filters"].map(
        (kind) => ["gateway_ws_notifications_total", { kind }] as [string, Record<string, string>],
      ),
      ["gateway_ws_subscriptions", { kind: "logs" }],
      ["gateway_rate_limited_total", { scope: "key" }],
      ["gateway_rate_limited_total", { scope: "ip" }],
      ["gateway_cache_evictions_total", { tier: "memory" }],
      ["gateway_cache_evictions_total", { tier: "disk" }],
      ["gateway_cache_lookups_total", { tier: "shared", result: "hit" }],
      ["gateway_cache_stored_total", { tier: "disk" }],
    ];
    expect(zeros.map(([name, labels]) => [name, labels, metric(text, name, labels)])).toEqual(
      zeros.map(([name, labels]) => [name, labels, 0]),
    );
    // What was counted before the series were made (each upstream is asked its chain id) is kept.
    for (const upstream of ["upstream-1", "upstream-2"]) {
      expect(
        metric(text, "gateway_upstream_http_requests_total", { upstream, outcome: "ok" }),
      ).toBeGreaterThan(0);
      expect(metric(text, "gateway_upstream_latency_seconds_count", { upstream })).toBeGreaterThan(0);
    }
  }, 60_000);
});
