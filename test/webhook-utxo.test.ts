/**
 * Webhook deliveries on the Bitcoin family (CHAIN=LTC in front of a regtest Litecoin Core, PostgreSQL,
 * CONFIRMATIONS=1), received by Bun.serve receivers verifying each with `standardwebhooks`:
 * - an endpoint with `pending: true` gets a payment to a watched address as it enters the mempool (type
 *   `pending`, `block` null, the results as check later gives them for its block, with `"pending": true`),
 *   then the block's delivery once processed;
 * - an endpoint without `pending` gets the block's delivery only, exactly check's results of each block.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { post, startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import { createEndpoint, type Receiver, startReceiver, WEBHOOK_ENV } from "./support/webhooks";

const KEY = "webhook-utxo-key";
const DEPTH = 1;
const ENV = {
  CHAIN: "LTC",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  CONFIRMATIONS: String(DEPTH),
  API_KEYS: KEY,
  ...WEBHOOK_ENV,
};
/** A pending delivery waits for the mempool follower's pass (a second) and the producer's start of it. */
const ARRIVE_MS = 20_000;
/** How long one payment is given to arrive as pending before another is sent (the feed may not run yet). */
const PENDING_TRY_MS = 5_000;

let node: LitecoinNode;
let service: TestService;
let db: postgres.Sql;
let watched: string;

const watch = (path: string, body: unknown, method = "POST") =>
  post(`${service.url}/watch_filters/${path}`, body, { headers: { "x-api-key": KEY }, method });

async function checkAll(block: number): Promise<any[]> {
  const answer = await watch("check", { block_number: block });
  expect(answer.status).toBe(200);
  expect(answer.json.filters.length).toBeLessThan(1_000);
  return answer.json.filters;
}

/** Mines a block holding the mempool, and CONFIRMATIONS over it; waits until it is processed and made. */
async function mineAndSettle(): Promise<number> {
  const [block] = await node.mine(1 + DEPTH);
  const height = (await node.rpc<{ height: number }>("getblockheader", [block])).height;
  await until(
    "the block to be processed and made",
    async () => {
      const last = (await watch("lastBlockNumber", undefined, "GET")).json.block_number;
      const [made] = await db`select last_block::int as n from webhook_progress`;
      return last >= height && made?.n >= height ? true : undefined;
    },
    ARRIVE_MS,
  );
  return height;
}

const accepted = (receiver: Receiver, count: number) =>
  until(
    `${count} deliveries accepted`,
    async () => (receiver.accepted().length >= count ? receiver.accepted() : undefined),
    ARRIVE_MS,
  );

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(101);
  watched = await node.rpc<string>("getnewaddress");
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  db = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
  expect((await watch("add", { address: watched })).status).toBe(200);
  await mineAndSettle();
}, 120_000);

describe("deliveries on LTC", () => {
  test("pending results as a payment enters the mempool, then its block's; without pending, the block's only", async () => {
    const pending = startReceiver();
    const blocks = startReceiver();
    await createEndpoint(service.url, { key: KEY, receiver: pending, pending: true });
    const [made] = await db`select last_block::int as n from webhook_progress`;
    const from = (made!.n as number) + 1;
    await createEndpoint(service.url, { key: KEY, receiver: blocks });
    // The feed starts with the producer's next pass, from the mempool as it is then: a payment sent before
    // it runs is not pending news; another is sent until one arrives.
    const paid: string[] = [];
    let first: any;
    for (let i = 0; i < 5 && !first; i++) {
      paid.push(await node.rpc<string>("sendtoaddress", [watched, 1 + i / 10]));
      first = await until("a pending delivery", async () => pending.accepted()[0], PENDING_TRY_MS).catch(
        () => undefined,
      );
    }
    expect(first).toBeDefined();
    const txid = paid[paid.length - 1]!;
    expect(first.body).toMatchObject({ type: "pending", chain: "LTC", block: null });
    expect(first.body.results.map((r: any) => [r.transaction.hash, r.pending, r.block])).toEqual([
      [txid, true, null],
    ]);
    const height = await mineAndSettle();
    const confirmed = await checkAll(height);
    expect(confirmed.map((r) => r.transaction.hash).sort()).toEqual([...paid].sort());
    // The pending result is the block's, but for block and pending.
    const mined = confirmed.find((r) => r.transaction.hash === txid);
    expect(first.body.results).toEqual([{ ...mined, block: null, pending: true }]);
    const blockBody = {
      type: "block",
      chain: "LTC",
      block: { number: height, hash: confirmed[0].block.hash },
      results: confirmed,
    };
    const got = await accepted(pending, 2);
    expect(got.map((d) => d.body)).toEqual([first.body, blockBody]);
    // Every block from the endpoint's first: this one only has its key's results.
    for (let n = from; n < height; n++) expect(await checkAll(n)).toEqual([]);
    expect((await accepted(blocks, 1)).map((d) => d.body)).toEqual([blockBody]);
    await Bun.sleep(1_500);
    expect([pending.got.length, blocks.got.length]).toEqual([2, 1]);
    expect([...pending.forged, ...blocks.forged]).toEqual([]);
    await db.end();
  }, 120_000);
});
