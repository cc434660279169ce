/**
 * The webhook endpoints' API (docs/interface.md §18.1) over real HTTP against a real PostgreSQL: every route's
 * exact answer, the secret shown only where it is made and sealed in the table, the bound per key under
 * concurrent creations, another key's endpoints as absent as unknown ones, open mode, and bad input refused
 * naming the field. Two instances: one with keys, taking public https:// endpoints only (its secrets' key in a
 * file it makes), one open that takes private ones (WEBHOOK_ALLOW_PRIVATE=1, its key in WEBHOOK_SECRETS_KEY),
 * where the README's commands run and its receiver verifies deliveries signed as the sender signs them.
 * Neither sends (WEBHOOK_SENDERS=0) nor indexes: what a sender would have written of an attempt is written in
 * SQL. A third, in front of litecoind, takes `"pending": true` (the Bitcoin family matches the mempool).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createSecretBox, loadSecretsKey, newSecret } from "../src/webhooks/secrets";
import { signDelivery } from "../src/webhooks/signature";
import { startLitecoind } from "./support/litecoind";
import { codeBlocks, curlCommands, readmeSection, runCurl } from "./support/readme";
import { freePort, post, startTestService, type TestService } from "./support/service";
import { fixtureChain } from "./support/shared";
import { until } from "./support/until";

const KEY_A = "key-alpha";
const KEY_B = "key-beta";
const KEY_C = "key-gamma";
const MAX = 3;
const OPEN_SECRETS_KEY = "6a".repeat(32);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DELIVERY_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
/** A public address: taken without WEBHOOK_ALLOW_PRIVATE; nothing is sent to it (WEBHOOK_SENDERS=0). */
const RECEIVER = "https://1.1.1.1/hooks/deposits";
const DAY_MS = 24 * 60 * 60 * 1000;
/** How far the service's clock (PostgreSQL's now()) may be from this process's, and a request take. */
const SLACK_MS = 60_000;

let keyed: TestService;
let open: TestService;
let keyedSql: postgres.Sql;
let openSql: postgres.Sql;
let chain: string;

beforeAll(async () => {
  const { anvil } = await fixtureChain();
  const common = { WEBHOOK_SENDERS: "0", MAX_WEBHOOKS_PER_KEY: String(MAX) };
  [keyed, open] = await Promise.all([
    startTestService({
      upstreamUrls: [anvil.url],
      env: { ...common, API_KEYS: `${KEY_A},${KEY_B},${KEY_C}` },
    }),
    startTestService({
      upstreamUrls: [anvil.url],
      env: { ...common, WEBHOOK_SECRETS_KEY: OPEN_SECRETS_KEY, WEBHOOK_ALLOW_PRIVATE: "1" },
    }),
  ]);
  keyedSql = postgres(keyed.databaseUrl, { max: 2 });
  openSql = postgres(open.databaseUrl, { max: 1 });
  chain = ((await (await fetch(`${keyed.url}/health`)).json()) as { chain: string }).chain;
}, 120_000);

afterAll(async () => {
  await keyedSql?.end();
  await openSql?.end();
});

const headers = (key: string | undefined): Record<string, string> => (key ? { "x-api-key": key } : {});
function call(service: TestService, method: string, path: string, key?: string, body?: unknown) {
  return post(`${service.url}${path}`, body, { method, headers: headers(key) });
}
const as = (key: string | undefined) => ({
  create: (body: unknown) => call(keyed, "POST", "/webhooks", key, body),
  list: () => call(keyed, "GET", "/webhooks", key),
  get: (id: string) => call(keyed, "GET", `/webhooks/${id}`, key),
  remove: (id: string) => call(keyed, "DELETE", `/webhooks/${id}`, key),
  rotate: (id: string) => call(keyed, "POST", `/webhooks/${id}/rotate`, key),
  test: (id: string) => call(keyed, "POST", `/webhooks/${id}/test`, key),
  deliveries: (id: string, query = "") => call(keyed, "GET", `/webhooks/${id}/deliveries${query}`, key),
  redeliver: (id: string, delivery: string) =>
    call(keyed, "POST", `/webhooks/${id}/deliveries/${delivery}/redeliver`, key),
});
const alpha = as(KEY_A);
const beta = as(KEY_B);

/** An RFC 3339 time (whole seconds, `Z`) within SLACK_MS of `ms`. */
function near(text: string, ms = Date.now()) {
  expect(text).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(Math.abs(Date.parse(text) - ms)).toBeLessThan(SLACK_MS);
}
const rfc3339 = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, "Z");
const notFound = (id: string) => ({ detail: `no webhook ${id} for this API key` });

/** Makes an endpoint of KEY_A and checks the answer is exactly what was asked, with a new secret. */
async function made(body: Record<string, unknown> = { url: RECEIVER }) {
  const answer = await alpha.create(body);
  expect(answer.status).toBe(201);
  const { id, created_at, secret, ...rest } = answer.json;
  expect(id).toMatch(UUID);
  near(created_at);
  expect(secret).toMatch(SECRET);
  expect(rest).toEqual({
    url: body.url,
    description: body.description ?? "",
    version: body.version ?? "v1",
    pending: false,
    status: "active",
    failing_since: null,
  });
  return answer.json as Record<string, unknown> & { id: string; secret: string };
}

async function stored(sql: postgres.Sql, id: string) {
  const [row] = await sql`select secret, previous_secret, previous_until, next_at from webhook_endpoints
    where endpoint_id = ${id}::uuid`;
  return row as {
    secret: Uint8Array;
    previous_secret: Uint8Array | null;
    previous_until: Date | null;
    next_at: Date;
  };
}

/** The sealed bytes hold neither the secret's text nor its bytes. */
function sealedApart(sealed: Uint8Array, secret: string) {
  const bytes = Buffer.from(sealed);
  expect(bytes.includes(Buffer.from(secret))).toBe(false);
  expect(bytes.includes(Buffer.from(secret.slice("whsec_".length), "base64"))).toBe(false);
  // AES-256-GCM: a 12-byte nonce, the ciphertext as long as the text, a 16-byte tag.
  expect(bytes.length).toBe(12 + Buffer.byteLength(secret) + 16);
}

describe("an endpoint's life", () => {
  let endpoint: Record<string, unknown> & { id: string; secret: string };

  test("POST /webhooks answers 201 with the endpoint and its secret; GET shows it without the secret", async () => {
    endpoint = await made({ url: RECEIVER, description: "deposits", version: "v2" });
    const { secret, ...shown } = endpoint;
    expect((await alpha.get(endpoint.id)).json).toEqual(shown);
    const list = await alpha.list();
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ webhooks: [shown] });
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain("secret");
    // Upper-case ids are the same endpoint.
    expect((await alpha.get(endpoint.id.toUpperCase())).json).toEqual(shown);
  });

  test("the secret is sealed in the table under the key file the instance made (0600)", async () => {
    const row = await stored(keyedSql, endpoint.id);
    sealedApart(row.secret, endpoint.secret);
    expect(row.previous_secret).toBeNull();
    const file = join(keyed.dataDir, "webhook-secrets.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const box = createSecretBox(loadSecretsKey({ configured: undefined, dataDir: keyed.dataDir }));
    expect(box.open(row.secret)).toBe(endpoint.secret);
  });

  test("rotate answers a new secret; the old one is kept sealed, signing for 24 hours", async () => {
    const before = await stored(keyedSql, endpoint.id);
    const answer = await alpha.rotate(endpoint.id);
    expect(answer.status).toBe(200);
    const { secret, ...rest } = answer.json;
    expect(secret).toMatch(SECRET);
    expect(secret).not.toBe(endpoint.secret);
    const { secret: _old, ...unchanged } = endpoint;
    expect(rest).toEqual(unchanged);
    const after = await stored(keyedSql, endpoint.id);
    sealedApart(after.secret, secret);
    const box = createSecretBox(loadSecretsKey({ configured: undefined, dataDir: keyed.dataDir }));
    expect(box.open(after.secret)).toBe(secret);
    expect(Buffer.from(after.previous_secret!)).toEqual(Buffer.from(before.secret));
    expect(box.open(after.previous_secret!)).toBe(endpoint.secret);
    expect(Math.abs(after.previous_until!.getTime() - (Date.now() + DAY_MS))).toBeLessThan(SLACK_MS);
    expect((await alpha.list()).text).not.toContain(secret);
    endpoint = { ...endpoint, secret };
  });

  test("test queues a webhook.test delivery (202), its body the chain's with no block and no results", async () => {
    const answer = await alpha.test(endpoint.id);
    expect(answer.status).toBe(202);
    const { delivery } = answer.json;
    const { next_at } = await stored(keyedSql, endpoint.id);
    expect(delivery.id).toMatch(DELIVERY_ID);
    near(delivery.created_at);
    expect(delivery).toEqual({
      id: delivery.id,
      type: "webhook.test",
      block_number: null,
      state: "pending",
      attempts: 0,
      last_status: null,
      last_error: null,
      last_attempt_at: null,
      // The head of its queue: tried at the endpoint's next try.
      next_attempt_at: rfc3339(next_at),
      created_at: delivery.created_at,
      delivered_at: null,
    });
    const [row] = await keyedSql`select kind, body, block_number, block_hash from webhook_deliveries
      where delivery_id = ${delivery.id}`;
    expect(row).toEqual({ kind: "test", body: expect.any(String), block_number: null, block_hash: null });
    expect(JSON.parse(row!.body)).toEqual({ type: "webhook.test", chain, block: null, results: [] });
    expect(row!.body).toBe(`{"type":"webhook.test","chain":"${chain}","block":null,"results":[]}`);
  });

  test("deliveries: newest first, paged by limit and before; only the queue's head has a next try", async () => {
    const ids = [(await alpha.deliveries(endpoint.id)).json.deliveries[0].id as string];
    for (let i = 0; i < 4; i++) ids.push((await alpha.test(endpoint.id)).json.delivery.id);
    expect(new Set(ids).size).toBe(5);
    const all = await alpha.deliveries(endpoint.id);
    expect(all.status).toBe(200);
    const newestFirst = [...ids].reverse();
    expect(all.json.deliveries.map((d: { id: string }) => d.id)).toEqual(newestFirst);
    expect(
      all.json.deliveries.map((d: { next_attempt_at: string | null }) => d.next_attempt_at !== null),
    ).toEqual([false, false, false, false, true]);
    const page = async (query: string) =>
      (await alpha.deliveries(endpoint.id, query)).json.deliveries.map((d: { id: string }) => d.id);
    expect(await page("?limit=2")).toEqual(newestFirst.slice(0, 2));
    expect(await page(`?limit=2&before=${newestFirst[1]}`)).toEqual(newestFirst.slice(2, 4));
    expect(await page(`?before=${newestFirst[3]}`)).toEqual(newestFirst.slice(4));
    expect(await page(`?before=${newestFirst[4]}`)).toEqual([]);
    // The key in the query, as every route takes it, is not one of the route's params.
    const byQuery = await call(keyed, "GET", `/webhooks/${endpoint.id}/deliveries?api_key=${KEY_A}&limit=1`);
    expect(byQuery.json.deliveries.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(0, 1));
  });

  test("deliveries refuse a limit out of 1..100 or not an integer, and a before that is none of its deliveries", async () => {
    for (const limit of ["0", "101", "x", "1.5"]) {
      const answer = await alpha.deliveries(endpoint.id, `?limit=${limit}`);
      expect(answer.status).toBe(422);
      expect(answer.json.detail.map((i: { loc: unknown }) => i.loc)).toEqual([["query", "limit"]]);
    }
    const other = await made();
    const theirs = (await alpha.test(other.id)).json.delivery.id;
    for (const before of [theirs, "msg_nothing"]) {
      const answer = await alpha.deliveries(endpoint.id, `?before=${before}`);
      expect(answer.status).toBe(422);
      expect(answer.json).toEqual({
        detail: [
          {
            loc: ["query", "before"],
            msg: `no delivery ${before} of webhook ${endpoint.id}`,
            type: "value_error",
          },
        ],
      });
    }
    expect((await alpha.remove(other.id)).status).toBe(200);
  });

  test("redeliver sets a delivered delivery pending again, same id, its endpoint due now", async () => {
    const [oldest] = (await alpha.deliveries(endpoint.id, `?limit=100`)).json.deliveries.slice(-1);
    // What a sender writes of a delivery accepted, and of an endpoint held off after failures.
    await keyedSql`update webhook_deliveries set state = 'delivered', attempts = 2, last_status = 200,
      last_error = null, last_at = now(), delivered_at = now() where delivery_id = ${oldest.id}`;
    await keyedSql`update webhook_endpoints set next_at = now() + interval '1 hour'
      where endpoint_id = ${endpoint.id}::uuid`;
    const delivered = (await alpha.deliveries(endpoint.id, "?limit=100")).json.deliveries.at(-1);
    expect(delivered.state).toBe("delivered");
    near(delivered.delivered_at);
    const answer = await alpha.redeliver(endpoint.id, oldest.id);
    expect(answer.status).toBe(202);
    const { next_at } = await stored(keyedSql, endpoint.id);
    expect(next_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(answer.json).toEqual({
      delivery: {
        ...delivered,
        state: "pending",
        delivered_at: null,
        // The oldest pending again: the head of the queue, due now.
        next_attempt_at: rfc3339(next_at),
      },
    });
    const missing = await alpha.redeliver(endpoint.id, "msg_01JDQ3W5M8K2N7P4R6T9V0X1YZ");
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      detail: `no delivery msg_01JDQ3W5M8K2N7P4R6T9V0X1YZ of webhook ${endpoint.id} for this API key`,
    });
  });

  test("another key can neither list, read, test, see the deliveries of, redeliver, rotate nor delete it", async () => {
    const [delivery] = (await alpha.deliveries(endpoint.id, "?limit=1")).json.deliveries;
    const before = await stored(keyedSql, endpoint.id);
    const count = async () =>
      (await keyedSql`select count(*)::int as n from webhook_deliveries`)[0]!.n as number;
    const deliveries = await count();
    expect((await beta.list()).json).toEqual({ webhooks: [] });
    const unknown = crypto.randomUUID();
    for (const id of [endpoint.id, unknown]) {
      for (const answer of [
        await beta.get(id),
        await beta.test(id),
        await beta.deliveries(id),
        await beta.rotate(id),
        await beta.remove(id),
      ]) {
        expect(answer.status).toBe(404);
        expect(answer.json).toEqual(notFound(id));
      }
      const again = await beta.redeliver(id, delivery.id);
      expect(again.status).toBe(404);
      expect(again.json).toEqual({ detail: `no delivery ${delivery.id} of webhook ${id} for this API key` });
    }
    // A malformed id is as unknown.
    for (const id of ["nope", "1234", `${endpoint.id}0`]) {
      expect((await alpha.get(id)).json).toEqual(notFound(id));
      expect((await alpha.remove(id)).status).toBe(404);
    }
    const after = await stored(keyedSql, endpoint.id);
    expect(Buffer.from(after.secret)).toEqual(Buffer.from(before.secret));
    expect(after.next_at).toEqual(before.next_at);
    expect(await count()).toBe(deliveries);
    expect((await alpha.get(endpoint.id)).status).toBe(200);
    // Without a key: 401.
    expect((await as(undefined).list()).status).toBe(401);
  });

  test("DELETE removes it with its deliveries; it is then unknown", async () => {
    const answer = await alpha.remove(endpoint.id);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ detail: "webhook removed", id: endpoint.id });
    const [row] = await keyedSql`select count(*)::int as n from webhook_deliveries
      where endpoint_id = ${endpoint.id}::uuid`;
    expect(row!.n).toBe(0);
    expect((await alpha.get(endpoint.id)).json).toEqual(notFound(endpoint.id));
    expect((await alpha.remove(endpoint.id)).status).toBe(404);
    expect((await alpha.list()).json).toEqual({ webhooks: [] });
  });
});

test("a key holds at most MAX_WEBHOOKS_PER_KEY, also when it asks for more at once; other keys are apart", async () => {
  const gamma = as(KEY_C);
  const answers = await Promise.all(
    Array.from({ length: MAX + 3 }, (_, i) => gamma.create({ url: `${RECEIVER}/${i}` })),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([...Array(MAX).fill(201), ...Array(3).fill(429)]);
  const refusal = {
    detail: `this key holds ${MAX} webhooks, the most it may (MAX_WEBHOOKS_PER_KEY); remove some first`,
  };
  for (const a of answers.filter((a) => a.status === 429)) expect(a.json).toEqual(refusal);
  const list = (await gamma.list()).json.webhooks;
  expect(list.map((w: { id: string }) => w.id).sort()).toEqual(
    answers
      .filter((a) => a.status === 201)
      .map((a) => a.json.id)
      .sort(),
  );
  // Another key still makes its own; a removal makes room.
  const theirs = await made();
  expect((await gamma.create({ url: RECEIVER })).json).toEqual(refusal);
  expect((await gamma.remove(list[0].id)).status).toBe(200);
  expect((await gamma.create({ url: RECEIVER })).status).toBe(201);
  await alpha.remove(theirs.id);
});

describe("bad input is a 422 naming the field, and makes nothing", () => {
  const cases: [string, unknown, string, string, string][] = [
    ["no url", {}, "url", "Field required", "missing"],
    ["an empty url", { url: "" }, "url", "String should have at least 1 characters", "string_too_short"],
    [
      "a url of 2049 characters",
      { url: `https://1.1.1.1/${"a".repeat(2033)}` },
      "url",
      "String should have at most 2048 characters",
      "string_too_long",
    ],
    ["a url not a string", { url: 5 }, "url", "Input should be a valid string", "string_type"],
    [
      "a version not v1 nor v2",
      { url: RECEIVER, version: "v3" },
      "version",
      "Input should be v1 (the results check gives) or v2 (check_v2's)",
      "enum",
    ],
    [
      "pending not a boolean",
      { url: RECEIVER, pending: "yes" },
      "pending",
      "Input should be a valid boolean",
      "bool_type",
    ],
    [
      "a description of 257 characters",
      { url: RECEIVER, description: "d".repeat(257) },
      "description",
      "String should have at most 256 characters",
      "string_too_long",
    ],
  ];
  for (const [what, body, field, msg, type] of cases) {
    test(what, async () => {
      const answer = await alpha.create(body);
      expect(answer.status).toBe(422);
      expect(answer.json).toEqual({ detail: [{ loc: ["body", field], msg, type }] });
    });
  }

  test("a body that is not JSON", async () => {
    const answer = await post(`${keyed.url}/webhooks`, "{url:", { raw: true, headers: headers(KEY_A) });
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual({
      detail: [{ loc: ["body"], msg: "JSON decode error: Expected '}'", type: "json_invalid" }],
    });
  });

  test("pending results on a chain whose family does not match the mempool", async () => {
    const answer = await alpha.create({ url: RECEIVER, pending: true });
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual({
      detail: [
        {
          loc: ["body", "pending"],
          msg: `pending results are not served on ${chain}: its watch filters match blocks only, not the nodes' mempool`,
          type: "value_error",
        },
      ],
    });
  });

  test("a url must be https:// to a public address, with no credentials", async () => {
    const refused = (address: string) => `the url's address ${address} is private, loopback or reserved`;
    for (const [url, msg] of [
      [
        "http://1.1.1.1/hooks",
        "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
      ],
      ["https://127.0.0.1/hooks", refused("127.0.0.1")],
      ["https://10.1.2.3/hooks", refused("10.1.2.3")],
      ["https://172.16.0.1/hooks", refused("172.16.0.1")],
      ["https://192.168.1.1/hooks", refused("192.168.1.1")],
      ["https://169.254.169.254/latest/meta-data", refused("169.254.169.254")],
      ["https://[::1]/hooks", refused("::1")],
      ["https://[fc00::1]/hooks", refused("fc00::1")],
      ["https://[::ffff:127.0.0.1]/hooks", refused("::ffff:7f00:1")],
      ["https://localhost/hooks", "the url's host localhost is this machine"],
      [
        "https://user:pass@1.1.1.1/hooks",
        "the url must not hold credentials (user:password@): verify deliveries by their signature",
      ],
      ["not a url", "the url is not an absolute URL"],
    ] as const) {
      const answer = await alpha.create({ url });
      expect({ url, status: answer.status, body: answer.json }).toEqual({
        url,
        status: 422,
        body: { detail: [{ loc: ["body", "url"], msg, type: "value_error" }] },
      });
    }
  });

  test("none of them made an endpoint", async () => {
    expect((await alpha.list()).json).toEqual({ webhooks: [] });
  });
});

describe("open mode, and the README's commands and receiver", () => {
  const anyone = (key?: string) => ({
    create: (body: unknown) => call(open, "POST", "/webhooks", key, body),
    list: () => call(open, "GET", "/webhooks", key),
    remove: (id: string) => call(open, "DELETE", `/webhooks/${id}`, key),
  });

  test("without a key, endpoints are everyone's; the secret is sealed under WEBHOOK_SECRETS_KEY", async () => {
    const answer = await anyone().create({ url: "https://1.1.1.1/hooks" });
    expect(answer.status).toBe(201);
    const { secret, ...shown } = answer.json;
    expect((await anyone().list()).json).toEqual({ webhooks: [shown] });
    // A key sent to an open service changes nothing.
    expect((await anyone("whatever").list()).json).toEqual({ webhooks: [shown] });
    const row = await stored(openSql, shown.id);
    sealedApart(row.secret, secret);
    expect(createSecretBox(Buffer.from(OPEN_SECRETS_KEY, "hex")).open(row.secret)).toBe(secret);
    expect(() => statSync(join(open.dataDir, "webhook-secrets.key"))).toThrow();
    expect((await anyone().remove(shown.id)).json).toEqual({ detail: "webhook removed", id: shown.id });
    expect((await anyone().list()).json).toEqual({ webhooks: [] });
  });

  test("the README's commands make an endpoint, queue a test delivery and list it", async () => {
    const commands = curlCommands(codeBlocks(readmeSection("## Webhooks"), "sh")[0]!);
    expect(commands).toHaveLength(3);
    const made = await runCurl(commands[0]!, open.url, undefined);
    const { id, created_at, secret } = made;
    expect(made).toEqual({
      id,
      url: "http://127.0.0.1:8080/hooks",
      description: "deposits",
      version: "v1",
      pending: false,
      created_at,
      status: "active",
      failing_since: null,
      secret,
    });
    const queued = await runCurl(commands[1]!.replace("<id>", id), open.url, undefined);
    expect(queued.delivery.type).toBe("webhook.test");
    const listed = await runCurl(commands[2]!.replace("<id>", id), open.url, undefined);
    expect(listed).toEqual({ deliveries: [queued.delivery] });
    expect((await anyone().remove(id)).status).toBe(200);
  });

  test("the README's receiver takes a signed delivery once, both signatures of a rotation, and refuses the rest", async () => {
    const [receiver] = codeBlocks(readmeSection("## Webhooks"), "ts");
    const dir = mkdtempSync(join(tmpdir(), "cg-receiver-"));
    // Its import of standardwebhooks resolves as the reader's would, from their project's node_modules.
    symlinkSync(join(import.meta.dir, "..", "node_modules"), join(dir, "node_modules"));
    const port = freePort();
    writeFileSync(join(dir, "receiver.ts"), receiver!.replace("port: 8080", `port: ${port}`));
    const secret = newSecret();
    const child = Bun.spawn([process.execPath, join(dir, "receiver.ts")], {
      env: { ...process.env, WEBHOOK_SECRET: secret },
      stdout: "pipe",
    });
    try {
      const url = `http://127.0.0.1:${port}/hooks`;
      await until(
        "the receiver to listen",
        async () => (await fetch(url).catch(() => undefined)) ?? undefined,
        10_000,
      );
      const body = `{"type":"webhook.test","chain":"${chain}","block":null,"results":[]}`;
      const send = (headers: Record<string, string>, text = body) =>
        fetch(url, { method: "POST", headers, body: text }).then((r) => r.status);
      const signed = (id: string, secrets: string[], at = new Date()) =>
        signDelivery({ id, timestamp: at, body, secrets });
      const first = signed("msg_01JDQ3W5M8K2N7P4R6T9V0X1YA", [secret]);
      expect(await send(first)).toBe(204);
      expect(await send(first)).toBe(204);
      // A rotation: the new secret's signature first, the receiver's (now the previous) beside it.
      expect(await send(signed("msg_01JDQ3W5M8K2N7P4R6T9V0X1YB", [newSecret(), secret]))).toBe(204);
      expect(await send(first, `${body} `)).toBe(401);
      expect(await send(signed("msg_01JDQ3W5M8K2N7P4R6T9V0X1YC", [newSecret()]))).toBe(401);
      const stale = new Date(Date.now() - 10 * 60 * 1000);
      expect(await send(signed("msg_01JDQ3W5M8K2N7P4R6T9V0X1YD", [secret], stale))).toBe(401);
      const { "webhook-signature": _, ...unsigned } = first;
      expect(await send(unsigned)).toBe(401);
    } finally {
      child.kill();
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
    // Each delivery it took, once: the one sent twice is printed once.
    expect((await new Response(child.stdout).text()).trim().split("\n")).toEqual([
      `msg_01JDQ3W5M8K2N7P4R6T9V0X1YA ${`{"type":"webhook.test","chain":"${chain}","block":null,"results":[]}`}`,
      `msg_01JDQ3W5M8K2N7P4R6T9V0X1YB ${`{"type":"webhook.test","chain":"${chain}","block":null,"results":[]}`}`,
    ]);
  });
});

test("on the Bitcoin family an endpoint may ask for pending results", async () => {
  const node = await startLitecoind();
  const ltc = await startTestService({
    upstreamUrls: [node.url],
    env: { CHAIN: "LTC", WEBHOOK_SENDERS: "0" },
  });
  const answer = await call(ltc, "POST", "/webhooks", undefined, { url: RECEIVER, pending: true });
  expect(answer.status).toBe(201);
  const { secret, ...shown } = answer.json;
  expect(secret).toMatch(SECRET);
  expect(shown).toEqual({
    id: shown.id,
    url: RECEIVER,
    description: "",
    version: "v1",
    pending: true,
    created_at: shown.created_at,
    status: "active",
    failing_since: null,
  });
  expect((await call(ltc, "GET", `/webhooks/${shown.id}`)).json).toEqual(shown);
  const test = await call(ltc, "POST", `/webhooks/${shown.id}/test`);
  expect(test.status).toBe(202);
  const sql = postgres(ltc.databaseUrl, { max: 1 });
  try {
    const [row] = await sql`select body from webhook_deliveries where delivery_id = ${test.json.delivery.id}`;
    expect(row!.body).toBe('{"type":"webhook.test","chain":"LTC","block":null,"results":[]}');
  } finally {
    await sql.end();
  }
}, 120_000);
