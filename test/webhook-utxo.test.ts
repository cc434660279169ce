/**
 * Webhook deliveries on the Bitcoin family (CHAIN=LTC in front of a regtest Litecoin Core, PostgreSQL,
 * CONFIRMATIONS=1), received by Bun.serve receivers verifying each with `standardwebhooks`:
 * - an endpoint with `pending: true` gets a payment to a watched address as it enters the mempool (type
 *   `pending`, `block` null, the results as check later gives them for its block, with `"pending": true`),
 *   then the block's delivery once processed;
 * - an endpoint without `pending` gets the block's delivery only, exactly check's results of each block;
 * - a reorg deeper than CONFIRMATIONS (`invalidateblock` on the node, then a longer branch) drops blocks
 *   whose deliveries were made: their results come again as `block.removed` (each with `"removed": true`,
 *   lowest block first), then the new branch's blocks, exactly check's results of each after the reorg.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
/** Confirmations of the coins the reorg's payments spend: far deeper than the reorg. */
const OLD_COIN_CONFIRMATIONS = 50;

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

/**
 * Pays `amount` (coins, as the node writes them) to the watched address from a coin at least
 * OLD_COIN_CONFIRMATIONS deep, the change and fee as the wallet sets them: a reorg of a few blocks leaves it
 * valid at any height, where a coinbase matured in a dropped block would leave the mempool with the reorg.
 */
async function payFromOldCoin(amount: string): Promise<string> {
  const [coin] = await node.rpc<{ txid: string; vout: number }[]>("listunspent", [OLD_COIN_CONFIRMATIONS]);
  const raw = await node.rpc<string>("createrawtransaction", [
    [{ txid: coin!.txid, vout: coin!.vout }],
    [{ [watched]: amount }],
  ]);
  const funded = await node.rpc<{ hex: string }>("fundrawtransaction", [raw, { add_inputs: false }]);
  const { hex } = await node.rpc<{ hex: string }>("signrawtransactionwithwallet", [funded.hex]);
  return node.rpc<string>("sendrawtransaction", [hex]);
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

afterAll(async () => {
  await db?.end();
});

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
  }, 120_000);

  test("a reorg deeper than CONFIRMATIONS: the dropped blocks' results as block.removed, lowest first, then the new branch's", async () => {
    const receiver = startReceiver();
    await createEndpoint(service.url, { key: KEY, receiver });
    // Two payments to the watched address, each in a block of its own, both processed and sent.
    const first = await payFromOldCoin("2");
    const [firstBlock] = await node.mine(1);
    const fork = (await node.rpc<{ height: number }>("getblockheader", [firstBlock])).height;
    const second = await payFromOldCoin("3");
    expect(await mineAndSettle()).toBe(fork + 1);
    const sent = await accepted(receiver, 2);
    expect(sent.map((d) => d.body)).toEqual(
      await Promise.all(
        [fork, fork + 1].map(async (n) => {
          const results = await checkAll(n);
          return { type: "block", chain: "LTC", block: { number: n, hash: results[0].block.hash }, results };
        }),
      ),
    );
    expect(sent.map((d) => d.body.results.map((r: any) => r.transaction.hash))).toEqual([[first], [second]]);

    // Both processed blocks and the one over them go (3 deep, past CONFIRMATIONS 1); both payments return
    // to the mempool and the new branch mines them together in its first block.
    const dropped = await node.rpc<string>("getblockhash", [fork + DEPTH + 1]);
    await node.rpc("invalidateblock", [firstBlock]);
    // Mined to another address: the same coinbase, transactions and second would make the dropped block again.
    await node.rpc("generatetoaddress", [DEPTH + 3, await node.rpc<string>("getnewaddress")]);
    expect(await node.rpc<number>("getblockcount")).toBe(fork + DEPTH + 2);
    expect((await node.rpc<{ confirmations: number }>("getblockheader", [dropped])).confirmations).toBe(-1);
    const processed = fork + DEPTH + 1;
    await until(
      "the new branch to be processed and made",
      async () => {
        const last = (await watch("lastBlockNumber", undefined, "GET")).json.block_number;
        const [made] = await db`select last_block::int as n from webhook_progress`;
        return last >= processed && made?.n >= processed ? true : undefined;
      },
      ARRIVE_MS,
    );
    const branch: unknown[] = [];
    for (let n = fork; n <= processed; n++) {
      const results = await checkAll(n);
      const hash = await node.rpc<string>("getblockhash", [n]);
      for (const r of results) expect(r.block.hash).toBe(hash);
      if (results.length > 0)
        branch.push({ type: "block", chain: "LTC", block: { number: n, hash }, results });
    }
    expect(
      branch.map((body: any) => [body.block.number, body.results.map((r: any) => r.transaction.hash).sort()]),
    ).toEqual([[fork, [first, second].sort()]]);
    const removed = sent.map((d) => ({
      ...d.body,
      type: "block.removed",
      results: d.body.results.map((r: object) => ({ ...r, removed: true })),
    }));
    // On a timeout, what did come is compared: the diff shows what is missing.
    const got = await accepted(receiver, sent.length + removed.length + branch.length).catch(() =>
      receiver.accepted(),
    );
    expect(got.map((d) => d.body)).toEqual([...sent.map((d) => d.body), ...removed, ...branch]);
    // Each delivery an id of its own: a removal is not the block's delivery sent again.
    expect(new Set(got.map((d) => d.id)).size).toBe(got.length);
    await Bun.sleep(1_500);
    expect(receiver.got.length).toBe(got.length);
    expect(receiver.forged).toEqual([]);
  }, 120_000);
});
