/**
 * The outbox's durability, on anvil and a real PostgreSQL, with receivers verifying every delivery with
 * `standardwebhooks`. In each case every delivery the outbox holds arrives, in order per endpoint, and none
 * arrives twice except by a retry the outbox counted (its `attempts`):
 * - `kill -9` of the service process holding a claimed delivery (its attempt in flight, unanswered): the
 *   other instance on the database takes the delivery again once the lease runs out, and goes on producing;
 * - a PostgreSQL crash (immediate shutdown of a durable server) and restart while blocks are mined;
 * - two instances on one database sharing the sending (both make attempts).
 */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { rpc } from "./support/chain";
import { startPostgres } from "./support/postgres";
import { post, type ServiceProcess, startServiceProcess, startTestService } from "./support/service";
import { newAnvil, onTeardown, postgresServer } from "./support/shared";
import { until } from "./support/until";
import { createEndpoint, deliveriesOf, type Receiver, startReceiver, WEBHOOK_ENV } from "./support/webhooks";

const KEY = "webhook-durable-key";
const ENV = { INDEXER: "on", HEAD_POLL_MS: "50", API_KEYS: KEY, ...WEBHOOK_ENV };
const ARRIVE_MS = 40_000;

/** A chain to pay on: bob is watched (by KEY's filter, added through `url`). */
async function chainWithFilter() {
  const anvil = await newAnvil();
  const node = rpc(anvil.url);
  const [alice, bob] = (await node<string[]>("eth_accounts")).map((a) => a.toLowerCase()) as [string, string];
  const pay = (value: number) =>
    node<string>("eth_sendTransaction", [{ from: alice, to: bob, value: `0x${value.toString(16)}` }]);
  const addFilter = async (url: string) => {
    const added = await post(`${url}/watch_filters/add`, { address: bob }, { headers: { "x-api-key": KEY } });
    expect(added.status).toBe(200);
  };
  return { anvil, pay, addFilter };
}

/**
 * What the outbox holds for an endpoint against what its receiver got: every delivery delivered and
 * received, first accepted in the outbox's order, each id received more than once only where it was
 * attempted more than once. The ids received twice.
 */
async function expectAllDelivered(
  databaseUrl: string,
  endpointId: string,
  receiver: Receiver,
  blocks: number,
) {
  const rows = await until(
    "every delivery to be delivered",
    async () => {
      const all = await deliveriesOf(databaseUrl, endpointId);
      return all.length === blocks && all.every((r) => r.state === "delivered") ? all : undefined;
    },
    ARRIVE_MS,
  );
  const firstAccepted = [...new Map(receiver.accepted().map((d) => [d.id, d])).values()];
  expect(firstAccepted.map((d) => d.id)).toEqual(rows.map((r) => r.id));
  expect(firstAccepted.map((d) => d.text)).toEqual(rows.map((r) => r.body));
  const times = new Map<string, number>();
  for (const d of receiver.got) times.set(d.id, (times.get(d.id) ?? 0) + 1);
  for (const row of rows)
    expect({ id: row.id, attempts: row.attempts >= times.get(row.id)! }).toEqual({
      id: row.id,
      attempts: true,
    });
  // One block a payment: the block numbers go up, none twice.
  const numbers = rows.map((r) => JSON.parse(r.body).block.number as number);
  expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  expect(new Set(numbers).size).toBe(blocks);
  expect(receiver.forged).toEqual([]);
  return [...times].filter(([, n]) => n > 1).map(([id]) => id);
}

describe("durability", () => {
  test("kill -9 of the process holding a claimed delivery: the other instance sends it again, and goes on", async () => {
    const { anvil, pay, addFilter } = await chainWithFilter();
    const databaseUrl = await (await postgresServer()).createDatabase();
    const env = { ...ENV, WEBHOOK_TIMEOUT_MS: "3000", WEBHOOK_SENDERS: "2" };
    const instances: ServiceProcess[] = [];
    for (let i = 0; i < 2; i++)
      instances.push(await startServiceProcess({ upstreamUrls: [anvil.url], databaseUrl, env }));
    await addFilter(instances[0]!.url);
    // The first attempt of the first delivery is never answered: its sender is killed while it waits.
    let release: () => void = () => {};
    const held = new Promise<number>((resolve) => {
      release = () => resolve(200);
    });
    onTeardown(async () => release());
    const receiver = startReceiver((d, seen) => (seen === 1 && receiver.got[0] === d ? held : 200));
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await until("the producer to start", async () =>
        (await db`select 1 from webhook_progress`).length === 1 ? true : undefined,
      );
      const endpoint = await createEndpoint(instances[1]!.url, { key: KEY, receiver });
      for (let i = 0; i < 3; i++) await pay(100 + i);
      await until("the first attempt to arrive", async () => receiver.got[0], ARRIVE_MS);
      const [lease] =
        await db`select lease_owner from webhook_endpoints where endpoint_id = ${endpoint.id}::uuid`;
      const pid = Number(String(lease!.lease_owner).split(":")[1]);
      const holder = instances.find((p) => p.pid === pid)!;
      expect(holder).toBeDefined();
      await holder.kill("SIGKILL");
      // The survivor makes the blocks mined from now on too (it leads the index once the lock is gone).
      for (let i = 0; i < 2; i++) await pay(200 + i);
      const twice = await expectAllDelivered(databaseUrl, endpoint.id, receiver, 5);
      expect(twice).toEqual([receiver.got[0]!.id]);
      const rows = await deliveriesOf(databaseUrl, endpoint.id);
      expect(rows.map((r) => r.attempts)).toEqual([2, 1, 1, 1, 1]);
    } finally {
      release();
      await db.end();
    }
  }, 120_000);

  test("a PostgreSQL crash and restart while blocks are mined: nothing lost, nothing sent twice but by a retry", async () => {
    const { anvil, pay, addFilter } = await chainWithFilter();
    const pg = await startPostgres({ durable: true });
    onTeardown(() => pg.stop());
    const databaseUrl = await pg.createDatabase();
    const service = await startTestService({ upstreamUrls: [anvil.url], databaseUrl, env: ENV });
    await addFilter(service.url);
    const receiver = startReceiver();
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await until("the producer to start", async () =>
      (await db`select 1 from webhook_progress`).length === 1 ? true : undefined,
    );
    await db.end();
    const endpoint = await createEndpoint(service.url, { key: KEY, receiver });
    for (let i = 0; i < 2; i++) await pay(300 + i);
    await until(
      "the first deliveries",
      async () => (receiver.accepted().length >= 2 ? true : undefined),
      ARRIVE_MS,
    );
    await pay(302);
    await pg.crash();
    for (let i = 0; i < 3; i++) await pay(400 + i);
    await Bun.sleep(1_000);
    await pg.resume();
    await pay(500);
    await expectAllDelivered(databaseUrl, endpoint.id, receiver, 7);
    await service.stop();
  }, 120_000);

  test("two instances on one database: each delivery once, in order, the sending shared", async () => {
    const { anvil, pay, addFilter } = await chainWithFilter();
    const databaseUrl = await (await postgresServer()).createDatabase();
    const env = { ...ENV, WEBHOOK_SENDERS: "2" };
    const services = [
      await startTestService({ upstreamUrls: [anvil.url], databaseUrl, env }),
      await startTestService({ upstreamUrls: [anvil.url], databaseUrl, env }),
    ];
    await addFilter(services[0]!.url);
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await until("the producer to start", async () =>
      (await db`select 1 from webhook_progress`).length === 1 ? true : undefined,
    );
    await db.end();
    // Slow receivers (300 ms an answer), more endpoints than one instance's senders: both send. One receiver
    // answers 500 to the first attempt of its 2nd and 5th deliveries: those come twice, counted.
    const firstSeen: string[] = [];
    const receivers = Array.from({ length: 6 }, (_, i) =>
      startReceiver(async (d, seen) => {
        await Bun.sleep(300);
        if (i !== 0 || seen !== 1) return 200;
        firstSeen.push(d.id);
        return firstSeen.length % 3 === 2 ? 500 : 200;
      }),
    );
    const endpoints = [];
    for (const [i, r] of receivers.entries())
      endpoints.push(await createEndpoint(services[i % 2]!.url, { key: KEY, receiver: r }));
    for (let i = 0; i < 6; i++) await pay(600 + i);
    for (const [i, r] of receivers.entries()) {
      const twice = await expectAllDelivered(databaseUrl, endpoints[i]!.id, r, 6);
      expect(twice).toEqual(i === 0 ? [firstSeen[1]!, firstSeen[4]!] : []);
    }
    const retried = await deliveriesOf(databaseUrl, endpoints[0]!.id);
    expect(retried.map((r) => r.attempts)).toEqual([1, 2, 1, 1, 2, 1]);
    expect(receivers[0]!.got.length).toBe(8);
    // Both instances made attempts.
    for (const s of services) {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const success = Number(/^gateway_webhook_attempts_total\{result="success"\} (\d+)/m.exec(text)?.[1]);
      expect(success).toBeGreaterThan(0);
    }
  }, 120_000);
});
