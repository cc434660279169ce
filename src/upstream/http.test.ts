import { afterAll, expect, test } from "bun:test";
import { UpstreamUnavailableError } from "../errors";
import { createNodeHttp, redactUrl, splitCredentials } from "./http";

/**
 * A loopback server answering what it is told, as litecoind 0.21.2.1 answered in regtest (recorded in
 * src/families/utxo/fixtures/nodeProtocolAnswers.json), and keeping what it was sent.
 */
const answers: Record<string, { status: number; body: string }> = {
  "/error": { status: 500, body: '{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}\n' },
  "/unknown": {
    status: 404,
    body: '{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":1}\n',
  },
  "/unauthorized": { status: 401, body: "" },
  "/proxy-error": { status: 502, body: "<html>bad gateway</html>" },
  "/ok": { status: 200, body: '{"result":0,"error":null,"id":1}\n' },
  // Its refusal of a request past its RPC threads and work queue (seen through test/support/proxy.ts).
  "/busy": { status: 500, body: "Work queue depth exceeded" },
};
const seen: { url: string; authorization: string | null }[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    seen.push({ url: request.url, authorization: request.headers.get("authorization") });
    const answer = answers[new URL(request.url).pathname]!;
    return new Response(answer.body, { status: answer.status });
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}`;
const PASSWORD = "pw-3f@:x";
const withCredentials = (path: string) =>
  `http://gateway:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}${path}`;

test("credentials in the URL go as HTTP Basic auth, decoded, and never in the URL sent or shown", async () => {
  expect(splitCredentials(withCredentials("/ok"))).toEqual({
    url: `${base}/ok`,
    authorization: `Basic ${Buffer.from(`gateway:${PASSWORD}`).toString("base64")}`,
  });
  expect(splitCredentials(`${base}/ok`)).toEqual({ url: `${base}/ok` });
  const http = createNodeHttp({ url: withCredentials("/ok"), maxResponseBytes: 1 << 20 });
  seen.length = 0;
  expect(await http.post("{}", 1_000)).toBe(answers["/ok"]!.body);
  expect(seen).toEqual([{ url: `${base}/ok`, authorization: `Basic ${btoa(`gateway:${PASSWORD}`)}` }]);
  expect(http.redactedUrl).toBe(`${base}/…`);
  expect(redactUrl(withCredentials(""))).toBe(base);
});

test("a node answering errors with HTTP statuses: a JSON-RPC body is its answer, passed on", async () => {
  for (const path of ["/error", "/unknown"]) {
    const http = createNodeHttp({
      url: `${base}${path}`,
      maxResponseBytes: 1 << 20,
      errorsWithHttpStatus: true,
    });
    expect(await http.post("{}", 1_000)).toBe(answers[path]!.body);
  }
  // A body that is no JSON-RPC (a proxy in front of the node) is still the transport's failure.
  const proxied = createNodeHttp({
    url: `${base}/proxy-error`,
    maxResponseBytes: 1 << 20,
    errorsWithHttpStatus: true,
  });
  const error = await proxied.post("{}", 1_000).catch((e) => e);
  expect(error).toBeInstanceOf(UpstreamUnavailableError);
  expect(error.message).toBe(`upstream ${base}/… answered HTTP 502`);
});

test("a node refusing a request with its work queue full is busy (saturated), not failing, where its family says so", async () => {
  const busy = { url: `${base}/busy`, maxResponseBytes: 1 << 20, errorsWithHttpStatus: true };
  const saturated = await createNodeHttp({ ...busy, busyAnswer: /^Work queue depth exceeded/ })
    .post("{}", 1_000)
    .catch((e) => e);
  expect(saturated).toBeInstanceOf(UpstreamUnavailableError);
  expect([saturated.reason, saturated.message]).toEqual([
    "saturated",
    `upstream ${base}/… is busy: Work queue depth exceeded`,
  ]);
  const failed = await createNodeHttp(busy)
    .post("{}", 1_000)
    .catch((e) => e);
  expect([failed.reason, failed.message]).toEqual(["http", `upstream ${base}/… answered HTTP 500`]);
});

test("EVM nodes as before: a 5xx is the node's trouble whatever its body; a 4xx with JSON is its answer", async () => {
  const error = await createNodeHttp({ url: `${base}/error`, maxResponseBytes: 1 << 20 })
    .post("{}", 1_000)
    .catch((e) => e);
  expect(error).toBeInstanceOf(UpstreamUnavailableError);
  expect([error.reason, error.message]).toEqual(["http", `upstream ${base}/… answered HTTP 500`]);
  expect(await createNodeHttp({ url: `${base}/unknown`, maxResponseBytes: 1 << 20 }).post("{}", 1_000)).toBe(
    answers["/unknown"]!.body,
  );
});

test("refused credentials and unreachable nodes: messages that name the upstream, never its credentials", async () => {
  const refused = await createNodeHttp({
    url: withCredentials("/unauthorized"),
    maxResponseBytes: 1 << 20,
    errorsWithHttpStatus: true,
  })
    .post("{}", 1_000)
    .catch((e) => e);
  expect(refused.message).toBe(
    `upstream ${base}/… answered HTTP 401: check the credentials of this upstream in UPSTREAM_URLS`,
  );
  const down = `http://gateway:${encodeURIComponent(PASSWORD)}@127.0.0.1:1`;
  const unreachable = await createNodeHttp({ url: down, maxResponseBytes: 1 << 20 })
    .post("{}", 1_000)
    .catch((e) => e);
  expect(unreachable.reason).toBe("unreachable");
  expect(unreachable.message).toBe("upstream http://127.0.0.1:1 unreachable (ECONNREFUSED)");
  // Nothing of the error, its cause included, holds the password or the user.
  const text =
    JSON.stringify(unreachable, Object.getOwnPropertyNames(unreachable)) + String(unreachable.cause?.path);
  expect(text).not.toContain("gateway");
  expect(text).not.toContain("pw-3f");
});
