import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDeliveryClient, type ResolvedAddress, type ResolveHost } from "./deliveryClient";

/** A resolver answering from a table, counting what it is asked. */
function tableLookup(table: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup: ResolveHost = async (hostname) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { lookup, asked };
}

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
const seen: Seen[] = [];
const receiver: Bun.Server<undefined> = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request): Promise<Response> {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
    });
    if (url.pathname === "/ok") return new Response("accepted");
    if (url.pathname === "/no-content") return new Response(null, { status: 204 });
    if (url.pathname === "/busy") return new Response("busy\r\n\u0000try  later", { status: 503 });
    if (url.pathname === "/long") return new Response(`${"e".repeat(5000)}`, { status: 400 });
    if (url.pathname === "/moved") return Response.redirect(`http://127.0.0.1:${receiver.port}/ok`, 301);
    return new Response("not here", { status: 404 });
  },
});
const clients: { close(): void }[] = [];
afterAll(() => {
  for (const client of clients) client.close();
  receiver.stop(true);
});
const base = `http://127.0.0.1:${receiver.port}`;
function client(options: Parameters<typeof createDeliveryClient>[0]) {
  const made = createDeliveryClient(options);
  clients.push(made);
  return made;
}

test("urlProblem: https to a public host is accepted; the rest named, without sending anything", async () => {
  const { lookup, asked } = tableLookup({
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "inside.example.com": ["10.1.2.3"],
    "mixed.example.com": ["93.184.215.14", "192.168.1.20"],
    "v6.example.com": ["fd00::1"],
    "empty.example.com": [],
  });
  const strict = client({ allowPrivate: false, timeoutMs: 1000, lookup });
  expect(await strict.urlProblem("https://hooks.example.com/deposits?x=1")).toBeUndefined();
  expect(await strict.urlProblem("https://93.184.215.14:8443/in")).toBeUndefined();
  expect(await strict.urlProblem("https://[2606:4700:4700::1111]/in")).toBeUndefined();
  const problems: [string, string][] = [
    ["hooks.example.com/x", "the url is not an absolute URL"],
    [
      "http://hooks.example.com/x",
      "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
    ],
    [
      "ftp://hooks.example.com/x",
      "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
    ],
    [
      "https://user:pw@hooks.example.com/",
      "the url must not hold credentials (user:password@): verify deliveries by their signature",
    ],
    [
      "https://token@hooks.example.com/",
      "the url must not hold credentials (user:password@): verify deliveries by their signature",
    ],
    [`https://hooks.example.com/${"a".repeat(2048)}`, "the url is longer than 2048 characters"],
    ["https://localhost/x", "the url's host localhost is this machine"],
    ["https://api.LOCALHOST./x", "the url's host api.localhost. is this machine"],
    ["https://127.0.0.1/x", "the url's address 127.0.0.1 is private, loopback or reserved"],
    ["https://2130706433/x", "the url's address 127.0.0.1 is private, loopback or reserved"],
    ["https://[::1]/x", "the url's address ::1 is private, loopback or reserved"],
    ["https://[::ffff:127.0.0.1]/x", "the url's address ::ffff:7f00:1 is private, loopback or reserved"],
    [
      "https://169.254.169.254/latest/meta-data",
      "the url's address 169.254.169.254 is private, loopback or reserved",
    ],
    [
      "https://inside.example.com/x",
      "the url's host inside.example.com resolves to 10.1.2.3, a private, loopback or reserved address",
    ],
    [
      "https://mixed.example.com/x",
      "the url's host mixed.example.com resolves to 192.168.1.20, a private, loopback or reserved address",
    ],
    [
      "https://v6.example.com/x",
      "the url's host v6.example.com resolves to fd00::1, a private, loopback or reserved address",
    ],
    ["https://empty.example.com/x", "the url's host empty.example.com does not resolve (ENOTFOUND)"],
    ["https://nowhere.example.com/x", "the url's host nowhere.example.com does not resolve (ENOTFOUND)"],
  ];
  for (const [url, problem] of problems) expect([url, await strict.urlProblem(url)]).toEqual([url, problem]);
  // Names were resolved only where the URL was otherwise fine and the host not a literal address.
  expect(asked).toEqual([
    "hooks.example.com",
    "inside.example.com",
    "mixed.example.com",
    "v6.example.com",
    "empty.example.com",
    "nowhere.example.com",
  ]);
});

test("urlProblem: a resolver that never answers is given up on after the timeout", async () => {
  const started = performance.now();
  const hanging = client({ allowPrivate: false, timeoutMs: 300, lookup: () => new Promise(() => {}) });
  expect(await hanging.urlProblem("https://slow.example.com/")).toBe(
    "the url's host slow.example.com does not resolve (timed out)",
  );
  expect(performance.now() - started).toBeLessThan(2000);
});

test("urlProblem with WEBHOOK_ALLOW_PRIVATE: http and private addresses pass, credentials and schemes do not", async () => {
  const { lookup, asked } = tableLookup({});
  const open = client({ allowPrivate: true, timeoutMs: 1000, lookup });
  expect(await open.urlProblem("http://127.0.0.1:8080/hook")).toBeUndefined();
  expect(await open.urlProblem("http://localhost/hook")).toBeUndefined();
  expect(await open.urlProblem("https://receiver.internal/hook")).toBeUndefined();
  expect(await open.urlProblem("ws://127.0.0.1/")).toBe("the url's scheme must be https or http");
  expect(await open.urlProblem("http://a:b@127.0.0.1/")).toBe(
    "the url must not hold credentials (user:password@): verify deliveries by their signature",
  );
  expect(asked).toEqual([]);
});

test("send: one POST with the body and headers given, answered 2xx: success, the connection kept", async () => {
  const { lookup, asked } = tableLookup({ "receiver.test": ["127.0.0.1"] });
  const sender = client({ allowPrivate: true, timeoutMs: 2000, lookup });
  const before = seen.length;
  const body = '{"type":"webhook.test","chain":"ETHEREUM","block":null,"results":[]}';
  const headers = {
    "webhook-id": "msg_1",
    "webhook-timestamp": "1700000000",
    "webhook-signature": "v1,abc=",
  };
  const first = await sender.send({
    url: `http://receiver.test:${receiver.port}/ok?endpoint=7`,
    headers,
    body,
  });
  expect({ ...first, ms: 0 }).toEqual({ ok: true, status: 200, result: "success", ms: 0 });
  expect(first.ms).toBeGreaterThanOrEqual(0);
  const second = await sender.send({
    url: `http://receiver.test:${receiver.port}/no-content`,
    headers,
    body: "{}",
  });
  expect({ ...second, ms: 0 }).toEqual({ ok: true, status: 204, result: "success", ms: 0 });
  const got = seen.slice(before);
  expect(got.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
    { method: "POST", path: "/ok?endpoint=7", body },
    { method: "POST", path: "/no-content", body: "{}" },
  ]);
  expect(got[0]!.headers).toMatchObject({
    ...headers,
    "content-type": "application/json",
    "content-length": String(body.length),
    "user-agent": "chain-gateway-webhooks/1",
    host: `receiver.test:${receiver.port}`,
  });
  // The second attempt went over the first's connection: the name was resolved once.
  expect(asked).toEqual(["receiver.test"]);
});

test("send: a non-2xx is an http_error quoting the answer's text, at most 200 characters of it", async () => {
  const sender = client({ allowPrivate: true, timeoutMs: 2000 });
  const busy = await sender.send({ url: `${base}/busy`, headers: {}, body: "{}" });
  expect({ ...busy, ms: 0 }).toEqual({
    ok: false,
    status: 503,
    result: "http_error",
    error: "HTTP 503: busy try  later",
    ms: 0,
  });
  const long = await sender.send({ url: `${base}/long`, headers: {}, body: "{}" });
  expect({ ...long, ms: 0 }).toEqual({
    ok: false,
    status: 400,
    result: "http_error",
    error: `HTTP 400: ${"e".repeat(200)}... (answer cut at 4096 bytes)`,
    ms: 0,
  });
  const missing = await sender.send({ url: `${base}/missing`, headers: {}, body: "{}" });
  expect(missing.error).toBe("HTTP 404: not here");
});

test("send: a redirect is a failure, not followed", async () => {
  const sender = client({ allowPrivate: true, timeoutMs: 2000 });
  const before = seen.length;
  const moved = await sender.send({ url: `${base}/moved`, headers: {}, body: "{}" });
  expect({ ...moved, ms: 0 }).toEqual({
    ok: false,
    status: 301,
    result: "http_error",
    error: "HTTP 301 (redirects are not followed)",
    ms: 0,
  });
  expect(seen.slice(before).map((s) => s.path)).toEqual(["/moved"]);
});

test("send: nothing listening is a network failure; a name that does not resolve too", async () => {
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = closed.port;
  closed.stop(true);
  const { lookup } = tableLookup({});
  const sender = client({ allowPrivate: true, timeoutMs: 2000, lookup });
  const refused = await sender.send({ url: `http://127.0.0.1:${port}/`, headers: {}, body: "{}" });
  expect(refused).toMatchObject({ ok: false, result: "network" });
  expect(refused.error).toStartWith("ECONNREFUSED");
  expect(refused.status).toBeUndefined();
  const unknown = await sender.send({ url: "http://nowhere.test/", headers: {}, body: "{}" });
  expect({ ...unknown, ms: 0 }).toEqual({
    ok: false,
    result: "network",
    error: "ENOTFOUND: getaddrinfo ENOTFOUND nowhere.test",
    ms: 0,
  });
});

test("send: a resolver that never answers ends as a timeout within the attempt's time", async () => {
  const sender = client({ allowPrivate: true, timeoutMs: 300, lookup: () => new Promise(() => {}) });
  const outcome = await sender.send({ url: "http://slow.test/", headers: {}, body: "{}" });
  expect({ ...outcome, ms: 0 }).toEqual({
    ok: false,
    result: "timeout",
    error: "no answer within 300 ms",
    ms: 0,
  });
  expect(outcome.ms).toBeGreaterThanOrEqual(295);
  expect(outcome.ms).toBeLessThan(1500);
});

test("send refuses what urlProblem refuses, before any connection", async () => {
  const sender = client({ allowPrivate: false, timeoutMs: 2000 });
  const before = seen.length;
  for (const [url, error] of [
    [
      `http://127.0.0.1:${receiver.port}/ok`,
      "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
    ],
    [`https://127.0.0.1:${receiver.port}/ok`, "the url's address 127.0.0.1 is private, loopback or reserved"],
    [
      "https://u:p@example.com/",
      "the url must not hold credentials (user:password@): verify deliveries by their signature",
    ],
  ] as const) {
    const outcome = await sender.send({ url, headers: {}, body: "{}" });
    expect({ ...outcome, ms: 0 }).toEqual({ ok: false, result: "refused", error, ms: 0 });
  }
  expect(seen.length).toBe(before);
});

/**
 * A receiver on https with a certificate for receiver.test (test/fixtures/webhook-tls: self-signed, valid
 * 2020-2120, made with `openssl ca -selfsign`), trusted only where NODE_EXTRA_CA_CERTS names it.
 */
const TLS_DIR = join(import.meta.dir, "../../test/fixtures/webhook-tls");
const tlsReceiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: {
    cert: readFileSync(join(TLS_DIR, "receiver.cert.pem"), "utf8"),
    key: readFileSync(join(TLS_DIR, "receiver.key.pem"), "utf8"),
  },
  fetch: async (request) => new Response(`tls ${await request.text()}`),
});
afterAll(() => tlsReceiver.stop(true));

test("https: the certificate is verified, against the URL's name, not the address connected to", async () => {
  const { lookup } = tableLookup({ "receiver.test": ["127.0.0.1"] });
  const sender = client({ allowPrivate: true, timeoutMs: 2000, lookup });
  const untrusted = await sender.send({
    url: `https://receiver.test:${tlsReceiver.port}/`,
    headers: {},
    body: "{}",
  });
  expect({ ...untrusted, ms: 0 }).toEqual({
    ok: false,
    result: "network",
    error: "DEPTH_ZERO_SELF_SIGNED_CERT: self signed certificate",
    ms: 0,
  });
  // Where the certificate is trusted: accepted for its name, refused for another name at the same address.
  const script = `
    import { createDeliveryClient } from ${JSON.stringify(join(import.meta.dir, "deliveryClient.ts"))};
    const lookup = async () => [{ address: "127.0.0.1", family: 4 }];
    const sender = createDeliveryClient({ allowPrivate: true, timeoutMs: 2000, lookup });
    const outcomes = [];
    for (const host of ["receiver.test", "other.test", "127.0.0.1"]) {
      const { ms, ...outcome } = await sender.send({ url: "https://" + host + ":" + process.env.PORT + "/", headers: {}, body: "{}" });
      outcomes.push(outcome);
    }
    sender.close();
    process.stdout.write(JSON.stringify(outcomes));`;
  const child = Bun.spawn([process.execPath, "-e", script], {
    env: {
      ...process.env,
      PORT: String(tlsReceiver.port),
      NODE_EXTRA_CA_CERTS: join(TLS_DIR, "receiver.cert.pem"),
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    expect(JSON.parse(await new Response(child.stdout).text())).toEqual([
      { ok: true, status: 200, result: "success" },
      {
        ok: false,
        result: "network",
        error:
          "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: Host: other.test. is not in the cert's altnames: DNS:receiver.test",
      },
      {
        ok: false,
        result: "network",
        error:
          "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
      },
    ]);
    expect(await child.exited).toBe(0);
  } finally {
    child.kill();
  }
});
