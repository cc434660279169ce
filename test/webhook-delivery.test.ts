/**
 * Webhook deliveries on the EVM family (anvil, PostgreSQL, CONFIRMATIONS=2), received by Bun.serve receivers
 * on 127.0.0.1 that verify every delivery with the `standardwebhooks` package and the endpoint's secret:
 * - each endpoint gets, for every block processed after it exists, exactly what check (v1) or check_v2 (v2)
 *   gives its key for that block, one delivery per block with results, in block order; none for a block
 *   without its results, none of another key's;
 * - a receiver answering 500 gets the same delivery again (same webhook-id, same body, a fresh timestamp),
 *   and once it answered 2xx, never again;
 * - a receiver down for a while gets its backlog in order when it returns, each delivery once;
 * - a reorg deeper than CONFIRMATIONS (anvil_reorg): the dropped blocks' deliveries sent again as
 *   `block.removed` (their results each with `"removed": true`, lowest block first) after them, then the new
 *   branch's blocks;
 * - an endpoint whose head delivery has failed for a day is marked failing (a day's passing written into
 *   its row: the one fake here), still tried, and cleared by a success; /metrics and /status.json say so;
 * - past WEBHOOK_MAX_BACKLOG (10 here) pending deliveries, the oldest are dropped and counted;
 * - a block with more than 1,000 results for an endpoint comes as several deliveries, in order, with
 *   `part` and `parts`;
 * - on the embedded database (PGlite) as on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { rpc } from "./support/chain";
import { fillTokenBlocks } from "./support/movements";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";
import {
  createEndpoint,
  deliveriesOf,
  type Received,
  type Receiver,
  startReceiver,
  WEBHOOK_ENV,
} from "./support/webhooks";

const KEY_A = "webhook-key-a";
const KEY_B = "webhook-key-b";
/** The backlog's key: its payee is paid in that test only, so no other endpoint's backlog grows. */
const KEY_C = "webhook-key-c";
/** The parts' key: two filters on the payer of a block of 600 token transfers. */
const KEY_D = "webhook-key-d";
const DEPTH = 2;
const BACKLOG = 10;
const ENV = {
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  CONFIRMATIONS: String(DEPTH),
  API_KEYS: `${KEY_A},${KEY_B},${KEY_C},${KEY_D}`,
  WEBHOOK_MAX_BACKLOG: String(BACKLOG),
  ...WEBHOOK_ENV,
};
/** How long deliveries may take to arrive (a block is processed and sent well within a second here). */
const ARRIVE_MS = 20_000;

let anvilUrl: string;
let service: TestService;
let db: postgres.Sql;
let node: ReturnType<typeof rpc>;
let alice: string;
let bob: string;
let carol: string;
let erin: string;
let dave: string;

const as = (key: string) => ({ headers: { "x-api-key": key } });
const watch = (path: string, body: unknown, key: string, method = "POST") =>
  post(`${service.url}/watch_filters/${path}`, body, { ...as(key), method });

/**
 * A payment in a block of its own: anvil answers eth_sendTransaction before it mines, so the next payment
 * waits for this one's receipt (else two may share a block; CI saw bob's two in one).
 */
async function pay(to: string, value = 1_000n) {
  const hash = await node<string>("eth_sendTransaction", [
    { from: alice, to, value: `0x${value.toString(16)}` },
  ]);
  await until("the payment mined", async () =>
    (await node<object | null>("eth_getTransactionReceipt", [hash])) ? true : undefined,
  );
  return hash;
}
const headNumber = async () => Number(await node<string>("eth_blockNumber"));
const lastMade = async () => {
  const [row] = await db`select last_block::int as n from webhook_progress`;
  return row?.n as number | undefined;
};

/** Mines CONFIRMATIONS empty blocks and waits until everything mined before is processed and made. */
async function settle(): Promise<number> {
  for (let i = 0; i < DEPTH; i++) await node("evm_mine", []);
  const processed = (await headNumber()) - DEPTH;
  await until("the blocks to be processed and made", async () => {
    const last = (await watch("lastBlockNumber", undefined, KEY_A, "GET")).json.block_number;
    return last === processed && (await lastMade()) === processed ? true : undefined;
  });
  return processed;
}

/** Every result of a block for a key, check's (or check_v2's) pages. */
async function checkAll(key: string, block: number, path: string): Promise<any[]> {
  const all: any[] = [];
  for (let offset = 0; ; offset += 1_000) {
    const answer = await watch(path, { block_number: block, offset }, key);
    expect(answer.status).toBe(200);
    all.push(...answer.json.filters);
    if (answer.json.filters.length < 1_000) return all;
  }
}

/** The bodies an endpoint of `key` must get for the blocks from..to: one per block with results. */
async function expectedBodies(key: string, from: number, to: number, path = "check") {
  const bodies: unknown[] = [];
  for (let n = from; n <= to; n++) {
    const results = await checkAll(key, n, path);
    const block = { number: n, hash: results[0]?.block.hash };
    // Past check's page, in parts of 1,000 saying which of how many.
    const parts = Math.ceil(results.length / 1_000);
    for (let i = 0; i < parts; i++) {
      const page = results.slice(i * 1_000, (i + 1) * 1_000);
      const body = { type: "block", chain: "ETH", block, results: page };
      bodies.push(parts > 1 ? { ...body, part: i + 1, parts } : body);
    }
  }
  return bodies;
}

/** gateway_webhook_deliveries_total{outcome="dropped"} now. */
async function droppedCount(): Promise<number> {
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  return Number(/^gateway_webhook_deliveries_total\{outcome="dropped"\} (\d+)/m.exec(metrics)![1]);
}

/** Waits until a receiver has accepted `count` deliveries; they, in order. */
const accepted = (receiver: Receiver, count: number) =>
  until(
    `${count} deliveries accepted`,
    async () => (receiver.accepted().length >= count ? receiver.accepted() : undefined),
    ARRIVE_MS,
  );

/** A new endpoint of a key, with its receiver, and the first block it gets deliveries of. */
async function endpointWith(
  key: string,
  options: { version?: "v1" | "v2"; answer?: Parameters<typeof startReceiver>[0] } = {},
) {
  const receiver = startReceiver(options.answer);
  const endpoint = await createEndpoint(service.url, { key, receiver, version: options.version });
  // The chain is quiet here: the endpoint gets the blocks after the last one made.
  return { endpoint, receiver, from: (await lastMade())! + 1 };
}

beforeAll(async () => {
  const anvil = await newAnvil();
  anvilUrl = anvil.url;
  node = rpc(anvil.url);
  [alice, bob, carol, erin, dave] = (await node<string[]>("eth_accounts")).map((a) => a.toLowerCase()) as [
    string,
    string,
    string,
    string,
    string,
  ];
  service = await startTestService({ upstreamUrls: [anvil.url], env: ENV });
  db = postgres(service.databaseUrl, { max: 2, onnotice: () => {} });
  expect((await watch("add", { address: bob }, KEY_A)).status).toBe(200);
  expect((await watch("add", { address: erin }, KEY_B)).status).toBe(200);
  expect((await watch("add", { address: dave }, KEY_C)).status).toBe(200);
  await settle();
}, 60_000);

afterAll(async () => {
  await db?.end();
});

const noneForged = (...receivers: Receiver[]) => {
  for (const r of receivers) expect(r.forged).toEqual([]);
};

describe("deliveries", () => {
  test("each endpoint gets exactly check's (v1) or check_v2's (v2) results of each block, in order, signed", async () => {
    const a = await endpointWith(KEY_A);
    const b = await endpointWith(KEY_B, { version: "v2" });
    for (const to of [bob, bob, carol, erin, bob, erin, carol]) await pay(to);
    const last = await settle();
    const wantA = await expectedBodies(KEY_A, a.from, last);
    const wantB = await expectedBodies(KEY_B, b.from, last, "check_v2");
    // Three blocks pay bob, two erin; carol's and the empty blocks give nothing.
    expect([wantA.length, wantB.length]).toEqual([3, 2]);
    const gotA = await accepted(a.receiver, wantA.length);
    const gotB = await accepted(b.receiver, wantB.length);
    expect(gotA.map((d) => d.body)).toEqual(wantA);
    expect(gotB.map((d) => d.body)).toEqual(wantB);
    // Each once (no attempt failed), each id the outbox's, each signed when sent.
    // The last 2xx is written just after it was answered.
    const rows = await until("every delivery written as delivered", async () => {
      const all = await deliveriesOf(service.databaseUrl, a.endpoint.id);
      return all.every((r) => r.state === "delivered") ? all : undefined;
    });
    expect(a.receiver.got.map((d) => d.id)).toEqual(rows.map((r) => r.id));
    expect(rows.map((r) => [r.kind, r.state, r.attempts])).toEqual(
      wantA.map(() => ["block", "delivered", 1]),
    );
    expect(a.receiver.got.map((d) => d.text)).toEqual(rows.map((r) => r.body));
    for (const d of [...gotA, ...gotB]) expect(Math.abs(d.timestamp - Date.now() / 1000)).toBeLessThan(30);
    expect(new Set([...gotA, ...gotB].map((d) => d.id)).size).toBe(5);
    noneForged(a.receiver, b.receiver);
  }, 60_000);

  test("a 500 brings the same delivery again (same webhook-id and body); once accepted it is not sent again", async () => {
    const { endpoint, receiver, from } = await endpointWith(KEY_A, {
      answer: (_, seen) => (seen === 1 ? 500 : 200),
    });
    await pay(bob);
    await pay(bob);
    const last = await settle();
    const want = await expectedBodies(KEY_A, from, last);
    expect(want.length).toBe(2);
    await accepted(receiver, 2);
    const [first, again, second, secondAgain] = receiver.got as [Received, Received, Received, Received];
    expect(receiver.got.map((d) => [d.id, d.status])).toEqual([
      [first.id, 500],
      [first.id, 200],
      [second.id, 500],
      [second.id, 200],
    ]);
    expect(first.id).not.toBe(second.id);
    expect([again.text, secondAgain.text]).toEqual([first.text, second.text]);
    expect(receiver.accepted().map((d) => d.body)).toEqual(want);
    // The retry came after the schedule's first delay (1 s), signed anew.
    expect(again.timestamp).toBeGreaterThanOrEqual(first.timestamp);
    await Bun.sleep(3_000);
    expect(receiver.got.length).toBe(4);
    const rows = await deliveriesOf(service.databaseUrl, endpoint.id);
    expect(rows.map((r) => [r.id, r.state, r.attempts])).toEqual([
      [first.id, "delivered", 2],
      [second.id, "delivered", 2],
    ]);
    noneForged(receiver);
  }, 60_000);

  test("a receiver down for a while gets its backlog in order when it returns, each delivery once", async () => {
    const { endpoint, receiver, from } = await endpointWith(KEY_A);
    receiver.down();
    for (let i = 0; i < 3; i++) await pay(bob, BigInt(100 + i));
    const last = await settle();
    const want = await expectedBodies(KEY_A, from, last);
    expect(want.length).toBe(3);
    // Refused twice at the head of the queue; the others wait behind it, untried.
    await until(
      "the head delivery to fail twice",
      async () => {
        const rows = await deliveriesOf(service.databaseUrl, endpoint.id);
        return rows.length === 3 && rows[0]!.attempts >= 2 ? rows : undefined;
      },
      ARRIVE_MS,
    );
    const waiting = await deliveriesOf(service.databaseUrl, endpoint.id);
    expect(waiting.map((r) => [r.state, r.attempts > 0])).toEqual([
      ["pending", true],
      ["pending", false],
      ["pending", false],
    ]);
    expect(receiver.got).toEqual([]);
    receiver.resume();
    const got = await accepted(receiver, 3);
    expect(got.map((d) => d.body)).toEqual(want);
    expect(receiver.got.map((d) => d.id)).toEqual(waiting.map((r) => r.id));
    noneForged(receiver);
  }, 60_000);

  test("a reorg deeper than CONFIRMATIONS: the dropped blocks' results as block.removed, lowest first, then the new branch's", async () => {
    const a = await endpointWith(KEY_A);
    const b = await endpointWith(KEY_B);
    for (let i = 0; i < 4; i++) await pay(bob, BigInt(200 + i));
    const before = await settle();
    const sent = await expectedBodies(KEY_A, a.from, before);
    expect(sent.length).toBe(4);
    await accepted(a.receiver, 4);
    // The last 4 blocks go (the last two paying bob, processed and sent, and the two mined over them);
    // the new branch pays erin in its first block.
    const reorgDepth = DEPTH + 2;
    await node("anvil_reorg", [reorgDepth, [[{ from: alice, to: erin, value: "0x309" }, 0]]]);
    await node("evm_mine", []);
    const fork = before + DEPTH - reorgDepth + 1;
    const after = await settle();
    const removed = (sent as any[])
      .filter((body) => body.block.number >= fork)
      .map((body) => ({
        ...body,
        type: "block.removed",
        results: body.results.map((r: object) => ({ ...r, removed: true })),
      }));
    expect(removed.map((r) => r.block.number)).toEqual([fork, fork + 1]);
    const gotA = await accepted(a.receiver, 4 + 2);
    expect(gotA.map((d) => d.body)).toEqual([...sent, ...removed]);
    // Nothing else for bob's key: the new branch pays erin, whose key's endpoint gets it as check gives it.
    const wantB = await expectedBodies(KEY_B, b.from, after);
    expect(wantB.map((body: any) => body.block.number)).toEqual([fork]);
    expect((await accepted(b.receiver, 1)).map((d) => d.body)).toEqual(wantB);
    await Bun.sleep(1_500);
    expect(a.receiver.got.length).toBe(6);
    expect(b.receiver.got.length).toBe(1);
    noneForged(a.receiver, b.receiver);
  }, 90_000);

  test("a day of failures marks the endpoint failing, still tried; a success clears it; the operator sees both", async () => {
    let answer = 503;
    const { endpoint, receiver } = await endpointWith(KEY_A, { answer: () => answer });
    const failing = async () =>
      (
        await db`select failing_from, failing_since from webhook_endpoints where endpoint_id = ${endpoint.id}::uuid`
      )[0]!;
    await pay(bob);
    await settle();
    // The first failure is written once the 503 is read.
    const first = await until(
      "a failed attempt written",
      async () => {
        const row = await failing();
        return receiver.got.length > 0 && row.failing_from ? row : undefined;
      },
      ARRIVE_MS,
    );
    expect(first.failing_from).toBeInstanceOf(Date);
    expect(first.failing_since).toBeNull();
    // A day passes failing, and it is tried again now.
    await db`update webhook_endpoints set failing_from = now() - interval '25 hours', next_at = now()
      where endpoint_id = ${endpoint.id}::uuid`;
    const tried = receiver.got.length;
    await until("another attempt", async () => (receiver.got.length > tried ? true : undefined), ARRIVE_MS);
    await until("the endpoint marked failing", async () =>
      (await failing()).failing_since ? true : undefined,
    );
    const seen = async (failingEndpoints: number) =>
      until(
        `${failingEndpoints} failing endpoints in /metrics and /status.json`,
        async () => {
          const metrics = await (await fetch(`${service.url}/metrics`)).text();
          const gauge = Number(/^gateway_webhook_endpoints_failing (\d+)/m.exec(metrics)?.[1]);
          const status = ((await (await fetch(`${service.url}/status.json`)).json()) as any).webhooks;
          return gauge === failingEndpoints && status.failingEndpoints === failingEndpoints
            ? status
            : undefined;
        },
        ARRIVE_MS,
      );
    const marked = await seen(1);
    expect(marked.pending).toBeGreaterThanOrEqual(1);
    expect(marked.oldestPendingSeconds).toBeGreaterThanOrEqual(0);
    expect(marked.lastMinute.failedAttempts).toBeGreaterThanOrEqual(2);
    answer = 200;
    await db`update webhook_endpoints set next_at = now() where endpoint_id = ${endpoint.id}::uuid`;
    await accepted(receiver, 1);
    await until("the mark cleared", async () =>
      (await failing()).failing_since === null ? true : undefined,
    );
    expect((await failing()).failing_from).toBeNull();
    await seen(0);
    noneForged(receiver);
  }, 60_000);

  test("past WEBHOOK_MAX_BACKLOG pending deliveries the oldest are dropped, counted; the rest arrive in order", async () => {
    const { endpoint, receiver, from } = await endpointWith(KEY_C);
    const droppedBefore = await droppedCount();
    receiver.down();
    // After anvil_reorg, anvil now and then mines two of these in one block: each block with results counts.
    for (let i = 0; i < 14; i++) await pay(dave, BigInt(300 + i));
    const last = await settle();
    const want = await expectedBodies(KEY_C, from, last);
    const over = want.length - BACKLOG;
    expect(over).toBeGreaterThanOrEqual(2);
    const rows = await until(
      "the oldest dropped",
      async () => {
        const all = await deliveriesOf(service.databaseUrl, endpoint.id);
        return all.filter((r) => r.state === "dropped").length === over ? all : undefined;
      },
      ARRIVE_MS,
    );
    expect(rows.map((r) => r.state)).toEqual([
      ...Array(over).fill("dropped"),
      ...Array(BACKLOG).fill("pending"),
    ]);
    expect((await droppedCount()) - droppedBefore).toBe(over);
    receiver.resume();
    // Not waiting out the schedule's delay after the failures while it was down.
    await db`update webhook_endpoints set next_at = now() where endpoint_id = ${endpoint.id}::uuid`;
    const got = await accepted(receiver, BACKLOG);
    expect(got.map((d) => d.body)).toEqual(want.slice(over));
    expect(receiver.got.map((d) => d.id)).toEqual(rows.slice(over).map((r) => r.id));
    noneForged(receiver);
  }, 60_000);
  test("a block of more than 1,000 results for an endpoint comes in parts of 1,000, in order", async () => {
    for (const body of [{ address: alice }, { address: alice, with_approval: true }])
      expect((await watch("add", body, KEY_D)).status).toBe(200);
    const { receiver, from } = await endpointWith(KEY_D);
    const filled = await fillTokenBlocks(anvilUrl, { blocks: 1, transfersPerBlock: 600 });
    const last = await settle();
    const want = (await expectedBodies(KEY_D, from, last)) as any[];
    const crowd = want.filter((body) => body.block.number === filled.head);
    // 600 transfers from alice, each a result of both filters, and bob's payment to her.
    expect(crowd.map((body) => [body.part, body.parts, body.results.length])).toEqual([
      [1, 2, 1_000],
      [2, 2, 202],
    ]);
    const got = await accepted(receiver, want.length);
    expect(got.map((d) => d.body)).toEqual(want);
    noneForged(receiver);
  }, 90_000);
});

describe("on the embedded database (no DATABASE_URL)", () => {
  test("a block's results are delivered, a 500 retried, as on PostgreSQL", async () => {
    const anvil = await newAnvil();
    const chain = rpc(anvil.url);
    const [from, to] = (await chain<string[]>("eth_accounts")).map((a) => a.toLowerCase()) as [
      string,
      string,
    ];
    const embedded = await startTestService({
      upstreamUrls: [anvil.url],
      databaseUrl: null,
      env: { INDEXER: "on", HEAD_POLL_MS: "50", API_KEYS: KEY_A, ...WEBHOOK_ENV },
    });
    const add = await post(
      `${embedded.url}/watch_filters/add`,
      { address: to },
      { headers: { "x-api-key": KEY_A } },
    );
    expect(add.status).toBe(200);
    const receiver = startReceiver((_, seen) => (seen === 1 ? 500 : 200));
    await createEndpoint(embedded.url, { key: KEY_A, receiver });
    // Made once the producer has started (its first pass after the first processed block): paid again
    // until one is.
    let paid = 0;
    const got = await until(
      "a delivery accepted",
      async () => {
        if (receiver.got.length === 0 && paid < 5) {
          await chain("eth_sendTransaction", [{ from, to, value: "0x1" }]);
          paid++;
          await Bun.sleep(1_000);
        }
        return receiver.accepted()[0];
      },
      ARRIVE_MS,
    );
    const n = got.body.block.number;
    const check = await post(
      `${embedded.url}/watch_filters/check`,
      { block_number: n },
      { headers: { "x-api-key": KEY_A } },
    );
    expect(got.body).toEqual({
      type: "block",
      chain: "ETH",
      block: { number: n, hash: check.json.filters[0].block.hash },
      results: check.json.filters,
    });
    expect(receiver.got.filter((d) => d.id === got.id).map((d) => d.status)).toEqual([500, 200]);
    expect(receiver.forged).toEqual([]);
    await embedded.stop();
  }, 90_000);
});
