/**
 * Webhook safety (docs/interface.md §18): what the delivery client refuses to reach (server-side request
 * forgery: loopback, private ranges, metadata, IPv6 loopback and unique local, a name resolving inside,
 * including a name that changes its answer after registration, a redirect inside), what a hostile receiver
 * can cost (never answering, 1 GB answers slow or fast, answering after 60 s, a header flood: each a bounded
 * outcome, memory bounded, the other receivers served meanwhile), and that what is sent verifies with the
 * `standardwebhooks` package, by either secret during a rotation.
 *
 * Every connection goes to 127.0.0.1: names are resolved by an injected lookup, and a refused address is
 * never connected to (the trap below counts every connection that reaches it).
 */
import { afterAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createDeliveryClient, type DeliveryClient, type ResolveHost } from "../src/webhooks/deliveryClient";
import { newSecret } from "../src/webhooks/secrets";
import { signDelivery } from "../src/webhooks/signature";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** The attempt's bound in these tests (WEBHOOK_TIMEOUT_MS), short so that they are. */
const TIMEOUT_MS = 1500;
/** How late past its bound an attempt may end on a busy machine. */
const SLACK_MS = 1000;

const stops: (() => void)[] = [];
afterAll(() => {
  for (const stop of stops.reverse()) stop();
});

/** A raw TCP listener on 127.0.0.1 counting every connection, answering 200 to whatever reaches it. */
const trapped = { connections: 0 };
const trap = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open() {
      trapped.connections++;
    },
    data(socket) {
      socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    },
  },
});
stops.push(() => trap.stop(true));

/** Names as a resolver would answer them now; a test changes an answer as a hostile DNS server would. */
const dns: Record<string, string[]> = {
  "hooks.example.com": ["93.184.215.14"],
  "loopback.example.com": ["127.0.0.1"],
  "inside.example.com": ["10.20.30.40"],
  "half.example.com": ["93.184.215.14", "127.0.0.1"],
  "v6-loopback.example.com": ["::1"],
  "receiver.test": ["127.0.0.1"],
  "other-receiver.test": ["127.0.0.1"],
};
const lookups: string[] = [];
const lookup: ResolveHost = async (hostname) => {
  lookups.push(hostname);
  const addresses = dns[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

function client(allowPrivate: boolean): DeliveryClient {
  const made = createDeliveryClient({ allowPrivate, timeoutMs: TIMEOUT_MS, lookup });
  stops.push(() => made.close());
  return made;
}
const strict = client(false);
const open = client(true);
const send = (sender: DeliveryClient, url: string) =>
  sender.send({ url, headers: {}, body: '{"type":"webhook.test"}' });

test("the trap counts a connection that reaches it (what the refusals below are measured by)", async () => {
  const before = trapped.connections;
  expect(await send(open, `http://127.0.0.1:${trap.port}/`)).toMatchObject({ ok: true, status: 200 });
  expect(await send(open, `http://loopback.example.com:${trap.port}/`)).toMatchObject({
    ok: true,
    status: 200,
  });
  expect(trapped.connections).toBe(before + 2);
});

test("SSRF: loopback, private ranges, metadata, IPv6 loopback, unique local and mapped: refused at registration and at sending", async () => {
  const port = trap.port;
  const refused: [string, string][] = [
    [`https://127.0.0.1:${port}/`, "the url's address 127.0.0.1 is private, loopback or reserved"],
    [`https://127.9.9.9:${port}/`, "the url's address 127.9.9.9 is private, loopback or reserved"],
    [`https://0x7f.1:${port}/`, "the url's address 127.0.0.1 is private, loopback or reserved"],
    [`https://0.0.0.0:${port}/`, "the url's address 0.0.0.0 is private, loopback or reserved"],
    [`https://10.0.0.1:${port}/`, "the url's address 10.0.0.1 is private, loopback or reserved"],
    [`https://172.16.0.1:${port}/`, "the url's address 172.16.0.1 is private, loopback or reserved"],
    [`https://172.31.255.254:${port}/`, "the url's address 172.31.255.254 is private, loopback or reserved"],
    [`https://192.168.1.1:${port}/`, "the url's address 192.168.1.1 is private, loopback or reserved"],
    [
      "https://169.254.169.254/latest/meta-data/",
      "the url's address 169.254.169.254 is private, loopback or reserved",
    ],
    [`https://[::1]:${port}/`, "the url's address ::1 is private, loopback or reserved"],
    [`https://[fc00::1]:${port}/`, "the url's address fc00::1 is private, loopback or reserved"],
    [
      "https://[fd00:ec2::254]/latest/meta-data/",
      "the url's address fd00:ec2::254 is private, loopback or reserved",
    ],
    [
      `https://[::ffff:127.0.0.1]:${port}/`,
      "the url's address ::ffff:7f00:1 is private, loopback or reserved",
    ],
    [`https://localhost:${port}/`, "the url's host localhost is this machine"],
    [
      `https://loopback.example.com:${port}/`,
      "the url's host loopback.example.com resolves to 127.0.0.1, a private, loopback or reserved address",
    ],
    [
      `https://inside.example.com:${port}/`,
      "the url's host inside.example.com resolves to 10.20.30.40, a private, loopback or reserved address",
    ],
    [
      `https://half.example.com:${port}/`,
      "the url's host half.example.com resolves to 127.0.0.1, a private, loopback or reserved address",
    ],
    [
      `https://v6-loopback.example.com:${port}/`,
      "the url's host v6-loopback.example.com resolves to ::1, a private, loopback or reserved address",
    ],
    [
      `http://hooks.example.com:${port}/`,
      "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
    ],
  ];
  const before = trapped.connections;
  for (const [url, problem] of refused) {
    expect([url, await strict.urlProblem(url)]).toEqual([url, problem]);
    const outcome = await send(strict, url);
    // At sending, a name's refusal comes from the lookup made for the connection, worded by it.
    const error = problem.includes(" resolves to ") ? problem.replace("the url's host ", "") : problem;
    expect([url, { ...outcome, ms: 0 }]).toEqual([url, { ok: false, result: "refused", error, ms: 0 }]);
  }
  expect(trapped.connections).toBe(before);
});

test("SSRF: a name public at registration and 127.0.0.1 at sending (DNS rebinding) is refused at the connection", async () => {
  dns["rebinding.example.com"] = ["93.184.215.14"];
  const url = `https://rebinding.example.com:${trap.port}/hook`;
  expect(await strict.urlProblem(url)).toBeUndefined();
  const before = trapped.connections;
  const asked = lookups.length;
  for (const inside of [["127.0.0.1"], ["93.184.215.14", "127.0.0.1"], ["::ffff:127.0.0.1"]]) {
    dns["rebinding.example.com"] = inside;
    const outcome = await send(strict, url);
    expect({ ...outcome, ms: 0 }).toEqual({
      ok: false,
      result: "refused",
      error: `rebinding.example.com resolves to ${inside.at(-1)}, a private, loopback or reserved address`,
      ms: 0,
    });
  }
  // Each attempt asked the resolver (at its connection), and none reached the address.
  expect(lookups.slice(asked)).toEqual(Array(3).fill("rebinding.example.com"));
  expect(trapped.connections).toBe(before);
});

test("a redirect, to a private address or anywhere, is not followed", async () => {
  const redirector = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const status = Number(new URL(request.url).pathname.slice(1));
      return new Response(null, { status, headers: { location: `http://127.0.0.1:${trap.port}/internal` } });
    },
  });
  stops.push(() => redirector.stop(true));
  const before = trapped.connections;
  for (const status of [301, 302, 303, 307, 308]) {
    const outcome = await send(open, `http://receiver.test:${redirector.port}/${status}`);
    expect({ ...outcome, ms: 0 }).toEqual({
      ok: false,
      status,
      result: "http_error",
      error: `HTTP ${status} (redirects are not followed)`,
      ms: 0,
    });
  }
  expect(trapped.connections).toBe(before);
});

/** Hostile receivers on Bun.serve, each noting when the service gave up on it. */
const hostile = { aborted: 0, bytesSent: 0, streamsCancelled: 0 };
function stream(status: number, chunkBytes: number, everyMs: number, totalBytes: number): Response {
  const chunk = new Uint8Array(chunkBytes).fill(0x61);
  let sent = 0;
  const body = new ReadableStream({
    async pull(controller) {
      if (everyMs > 0) await Bun.sleep(everyMs);
      if (sent >= totalBytes) return controller.close();
      sent += chunk.length;
      hostile.bytesSent += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      hostile.streamsCancelled++;
    },
  });
  return new Response(body, { status });
}
const hostileServer = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 0,
  fetch(request) {
    request.signal.addEventListener("abort", () => hostile.aborted++);
    switch (new URL(request.url).pathname) {
      case "/never":
        return new Promise<Response>(() => {});
      case "/after-60s":
        return new Promise<Response>((resolve) => {
          const timer = setTimeout(() => resolve(new Response("late")), 60_000);
          request.signal.addEventListener("abort", () => clearTimeout(timer));
        });
      case "/1gb-slow":
        return stream(200, 100, 100, GiB);
      case "/1gb-fast":
        return stream(500, 64 * 1024, 0, GiB);
      default:
        return new Response("ok");
    }
  },
});
stops.push(() => hostileServer.stop(true));
const hostileUrl = (path: string) => `http://receiver.test:${hostileServer.port}${path}`;

/** Waits, at most a few seconds, for `probe` to hold. */
async function eventually(probe: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !probe(); i++) await Bun.sleep(30);
  return probe();
}

test("a receiver that never answers: a timeout at the bound, its connection closed", async () => {
  const aborted = hostile.aborted;
  const outcome = await send(open, hostileUrl("/never"));
  expect({ ...outcome, ms: 0 }).toEqual({
    ok: false,
    result: "timeout",
    error: `no answer within ${TIMEOUT_MS} ms`,
    ms: 0,
  });
  expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(outcome.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  expect(await eventually(() => hostile.aborted === aborted + 1)).toBe(true);
});

test("a receiver answering after 60 s: a timeout at the bound, not a wait of 60 s", async () => {
  const started = performance.now();
  const outcome = await send(open, hostileUrl("/after-60s"));
  expect(outcome).toMatchObject({ ok: false, result: "timeout", error: `no answer within ${TIMEOUT_MS} ms` });
  expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + SLACK_MS);
});

test("a receiver answering 1 GB slowly: the answer read to the bound, the connection closed at the deadline", async () => {
  const [sent, cancelled] = [hostile.bytesSent, hostile.streamsCancelled];
  const outcome = await send(open, hostileUrl("/1gb-slow"));
  // Its 200 came in time: the delivery was accepted; the rest of its body was not waited for.
  expect({ ...outcome, ms: 0 }).toEqual({ ok: true, status: 200, result: "success", ms: 0 });
  expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(outcome.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  expect(await eventually(() => hostile.streamsCancelled === cancelled + 1)).toBe(true);
  expect(hostile.bytesSent - sent).toBeLessThan(4096);
});

test("a receiver answering 1 GB as fast as it can: 4 KiB read, the socket destroyed, memory bounded", async () => {
  Bun.gc(true);
  const [rss, sent, cancelled] = [process.memoryUsage().rss, hostile.bytesSent, hostile.streamsCancelled];
  const outcome = await send(open, hostileUrl("/1gb-fast"));
  expect({ ...outcome, ms: 0 }).toEqual({
    ok: false,
    status: 500,
    result: "http_error",
    error: `HTTP 500: ${"a".repeat(200)}... (answer cut at 4096 bytes)`,
    ms: 0,
  });
  expect(outcome.ms).toBeLessThan(SLACK_MS);
  expect(await eventually(() => hostile.streamsCancelled === cancelled + 1)).toBe(true);
  // What the receiver got out before it saw the connection closed: socket buffers, not the gigabyte.
  expect(hostile.bytesSent - sent).toBeLessThan(64 * MiB);
  expect(process.memoryUsage().rss - rss).toBeLessThan(128 * MiB);
});

test("a receiver flooding headers: refused by the parser, at once", async () => {
  const line = Buffer.from(`X-Flood: ${"f".repeat(1000)}\r\n`.repeat(64));
  let written = 0;
  const flood = Bun.listen<{ timer?: ReturnType<typeof setInterval> }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.write("HTTP/1.1 200 OK\r\n");
        // At most 1 GB, then it stops of itself; the client closing the socket stops it first.
        socket.data = {
          timer: setInterval(() => {
            if (written >= GiB) return clearInterval(socket.data.timer);
            written += Math.max(0, socket.write(line));
          }, 1),
        };
      },
      close(socket) {
        clearInterval(socket.data?.timer);
      },
    },
  });
  stops.push(() => flood.stop(true));
  try {
    const outcome = await send(open, `http://receiver.test:${flood.port}/`);
    expect(outcome).toMatchObject({ ok: false, result: "network" });
    expect(outcome.error).toStartWith("HPE_HEADER_OVERFLOW");
    expect(outcome.ms).toBeLessThan(SLACK_MS);
    expect(written).toBeLessThan(16 * MiB);
  } finally {
    flood.stop(true);
  }
});

test("receivers that never answer hold their own connections only: another receiver is answered at once", async () => {
  const slots = Array.from({ length: 20 }, () => send(open, hostileUrl("/never")));
  await Bun.sleep(100);
  const started = performance.now();
  const other = await send(open, `http://other-receiver.test:${hostileServer.port}/ok`);
  expect({ ...other, ms: 0 }).toEqual({ ok: true, status: 200, result: "success", ms: 0 });
  expect(performance.now() - started).toBeLessThan(500);
  const stuck = await Promise.all(slots);
  // 16 connections to the hostile host at most; the ones waiting for a connection end at the bound too.
  expect(stuck.map((outcome) => outcome.result)).toEqual(Array(20).fill("timeout"));
  for (const outcome of stuck) expect(outcome.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
});

test("what is sent verifies with the standardwebhooks package; during a rotation, by either secret", async () => {
  const [current, previous] = [newSecret(), newSecret()];
  const received: { secret: string; verified: unknown }[] = [];
  const verifier = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const secret = decodeURIComponent(new URL(request.url).pathname.slice(1));
      const body = await request.text();
      try {
        received.push({
          secret,
          verified: new Webhook(secret).verify(body, Object.fromEntries(request.headers)),
        });
        return new Response(null, { status: 204 });
      } catch (error) {
        return new Response(String(error), { status: 401 });
      }
    },
  });
  stops.push(() => verifier.stop(true));
  const body = JSON.stringify({
    type: "block",
    chain: "ETHEREUM",
    block: { number: 12, hash: `0x${"ab".repeat(32)}` },
    results: [{ filter_id: "f", tx_hash: `0x${"cd".repeat(32)}`, amount: "1000000000000000000" }],
  });
  const deliver = (receiverSecret: string, secrets: string[]) =>
    open.send({
      url: `http://receiver.test:${verifier.port}/${encodeURIComponent(receiverSecret)}`,
      headers: signDelivery({ id: "msg_01JQ4ZB7M3Y8X2K5N6P9R0S1T2", timestamp: new Date(), body, secrets }),
      body,
    });
  expect(await deliver(current, [current])).toMatchObject({ ok: true, status: 204 });
  expect(await deliver(current, [current, previous])).toMatchObject({ ok: true, status: 204 });
  expect(await deliver(previous, [current, previous])).toMatchObject({ ok: true, status: 204 });
  expect(received).toEqual([
    { secret: current, verified: JSON.parse(body) },
    { secret: current, verified: JSON.parse(body) },
    { secret: previous, verified: JSON.parse(body) },
  ]);
  // A receiver whose secret signs nothing here refuses it.
  const stranger = await deliver(newSecret(), [current, previous]);
  expect({ ...stranger, ms: 0 }).toEqual({
    ok: false,
    status: 401,
    result: "http_error",
    error: "HTTP 401: WebhookVerificationError: No matching signature found",
    ms: 0,
  });
  expect(received.length).toBe(3);
});
