/**
 * The data operations on a Bitcoin-family instance (CHAIN=LTC, INDEXER=on, in front of a real regtest Litecoin
 * Core holding the shared test chain, test/support/utxoChain.ts), over REST and JSON-RPC alike, each answer
 * compared exactly with what `truth` computes from the node's own answers (docs/interface.md §16.5):
 * - every transfer row (one per paying output, `fromAddresses`, `from` "coinbase"), by address and direction,
 *   by block range, page by page; the token types and `contractAddresses` refused naming the chain;
 * - block by time and blocks by day over three UTC days, with a block whose header time is below its
 *   parent's: block times are their running maximum, never going back;
 * - each day's figures in satoshis, and the reorg's day changed exactly;
 * - past the index's last block (an index another instance stopped writing, or none written yet) the node's
 *   headers walked forward by the same rule, and 503 past the walk's bound; before the index's first block
 *   (INDEX_FROM_BLOCK above 0), 404;
 * - token balances and metadata refused naming the chain; the OpenAPI document shows the family's Transfer
 *   and DayStats (and an EVM table's stay the interface's).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { evm } from "../src/families/evm/evm";
import { buildOpenApi } from "../src/http/docs";
import { createOperationTable } from "../src/operations/table";
import { createTransferOperations } from "../src/operations/transfers";
import { Transfer } from "../src/schemas";
import { post, startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import {
  DAYS,
  iso,
  startUtxoChain,
  type Truth,
  type TruthDay,
  type TruthTransfer,
  type UtxoChain,
} from "./support/utxoChain";

/**
 * CONFIRMATIONS: deeper than regtest's default (1), so the reorg here is followed within the depth the chain
 * expects (a reorg past it is test/reorg-past-finality.test.ts's).
 */
const INDEX_ENV = { CHAIN: "LTC", INDEXER: "on", HEAD_POLL_MS: "50", CONFIRMATIONS: "6" };
const DAY_S = 86_400;
/** How far past the index's last block the node's headers are walked (operations/stats.ts). */
const NODE_WALK_MAX = 64;
/** Tests ask hundreds of questions both ways, or wait for the index: more than bun's 5 s. */
const SLOW_MS = 120_000;

/** This family's DayStats, in order: in each answer and in the API docs' schema (no EVM-only member). */
const DAY_STATS_MEMBERS = [
  "date",
  "fromBlock",
  "toBlock",
  "blockCount",
  "transactionCount",
  "transferCount",
  "activeAddresses",
  "totalOutput",
  "totalFees",
  "minersReward",
  "averageFeeRate",
];

let chain: UtxoChain;
let service: TestService;
let truth: Truth;

// ---------------------------------------------------------------------------------------------------------
// What the answers must be, written from the truth (not from the service's code)

const transferJson = (t: TruthTransfer) =>
  `{"blockNumber":${t.blockNumber},"blockTimestamp":"${iso(t.timestamp)}","transactionHash":"${t.transactionHash}","transactionIndex":${t.transactionIndex},"logIndex":${t.logIndex},"contractAddress":null,"transferType":"trx","from":"${t.from}","fromAddresses":${JSON.stringify(t.fromAddresses)},"to":"${t.to}","value":${t.value},"fee":${t.fee},"transactionError":false,"asset":"LTC","decimals":8}`;
const page = (rows: TruthTransfer[]) => `[${rows.map(transferJson).join(",")}]`;
const dayJson = (d: TruthDay | null) =>
  d === null
    ? "null"
    : `{"date":"${d.date}","fromBlock":${d.fromBlock},"toBlock":${d.toBlock},"blockCount":${d.blockCount},"transactionCount":${d.transactionCount},"transferCount":${d.transferCount},"activeAddresses":${d.activeAddresses},"totalOutput":${d.totalOutput},"totalFees":${d.totalFees},"minersReward":${d.minersReward},"averageFeeRate":${d.averageFeeRate}}`;
/** The last block whose running-maximum time is at or before `t`; undefined: none. */
const blockAt = (tr: Truth, t: number) => tr.blocks.findLast((b) => b.timestamp <= t)?.height;
const rangeJson = (tr: Truth, date: string) => {
  const of = tr.blocks.filter((b) => b.day === date);
  if (of.length === 0) return "null";
  const [first, last] = [of[0]!.height, of[of.length - 1]!.height];
  return `{"date":"${date}","fromBlock":${first},"toBlock":${last},"blockCount":${last - first + 1}}`;
};
const midnightOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

// ---------------------------------------------------------------------------------------------------------
// Calls: REST and JSON-RPC, the same question both ways

const rest = (base: string, name: string, body: unknown) => post(`${base}/node/rest/${name}`, body);
const jsonrpc = (base: string, method: string, params: unknown[]) =>
  post(`${base}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });

/** Asks REST and JSON-RPC; both must answer `result` (JSON text) exactly. */
async function both(
  base: string,
  name: string,
  body: Record<string, unknown>,
  params: unknown[],
  result: string,
) {
  const r = await rest(base, name, body);
  expect({ name, body, status: r.status, text: r.text }).toEqual({ name, body, status: 200, text: result });
  const j = await jsonrpc(base, name, params);
  expect({ name, params, text: j.text }).toEqual({
    name,
    params,
    text: `{"jsonrpc":"2.0","id":1,"result":${result}}`,
  });
}

/** Asks REST and JSON-RPC; both must refuse: REST `status` with `{detail}`, JSON-RPC `code` with it. */
async function refusedBoth(
  base: string,
  name: string,
  body: Record<string, unknown>,
  params: unknown[],
  refusal: { status: number; code: number; detail: string },
) {
  const r = await rest(base, name, body);
  expect({ status: r.status, body: JSON.parse(r.text) }).toEqual({
    status: refusal.status,
    body: { detail: refusal.detail },
  });
  const j = await jsonrpc(base, name, params);
  expect(JSON.parse(j.text)).toEqual({
    jsonrpc: "2.0",
    id: 1,
    error: { code: refusal.code, message: refusal.detail },
  });
}

const allTransfers = (base: string) => rest(base, "watch_getTransfers", { limit: 500 });

/** Waits until an instance's transfers are the truth's (the index caught up with the node). */
async function caughtUp(base: string, tr: Truth, fromBlock = 0) {
  const expected = page(tr.allTransfers({ fromBlock }));
  await until(
    "the index to catch up with the node",
    async () => ((await allTransfers(base)).text === expected ? true : undefined),
    60_000,
  );
}

beforeAll(async () => {
  chain = await startUtxoChain();
  truth = await chain.truth();
  service = await startTestService({ upstreamUrls: [chain.node.url], env: INDEX_ENV });
  await caughtUp(service.url, truth);
}, 300_000);

afterAll(async () => {
  await service?.stop();
});

// ---------------------------------------------------------------------------------------------------------

describe("transfers", () => {
  test(
    "every row, in order, with its exact fields, over REST and JSON-RPC",
    async () => {
      const rows = truth.allTransfers();
      await both(service.url, "watch_getTransfers", { limit: 500 }, [{ limit: 500 }], page(rows));
      // What the chain was built to hold, as rows: the coinbase paid to a watched address, the node's sendmany
      // and a transaction of two inputs from two addresses.
      const { txs, addresses } = chain;
      const of = (txid: string) => rows.filter((r) => r.transactionHash === txid);
      expect(of(txs.coinbase).map((r) => [r.from, r.fromAddresses, r.to, r.fee])).toEqual([
        ["coinbase", [], addresses.coinbase, 0n],
      ]);
      expect(of(txs.multiFrom).map((r) => [r.from, r.fromAddresses, r.to])).toEqual([
        [addresses.bech32, [addresses.bech32, addresses.p2sh], addresses.external],
        [addresses.bech32, [addresses.bech32, addresses.p2sh], addresses.legacy],
      ]);
      // Change to a sender, a consolidation and an OP_RETURN output are no rows.
      expect(of(txs.consolidation)).toEqual([]);
      expect(of(txs.change).map((r) => r.to)).toEqual([addresses.bech32]);
      expect(of(txs.opReturn).map((r) => [r.logIndex, r.to])).toEqual([
        [1, addresses.legacy],
        [2, addresses.external],
      ]);
      // Nothing of the mempool.
      for (const txid of [txs.pendingIn, txs.pendingOut]) expect(of(txid)).toEqual([]);
    },
    SLOW_MS,
  );

  test(
    "paging with offset and limit covers every row once, both ways",
    async () => {
      const rows = truth.allTransfers();
      for (let offset = 0; offset <= rows.length; offset += 7) {
        const body = { offset, limit: 7 };
        await both(service.url, "watch_getTransfers", body, [body], page(rows.slice(offset, offset + 7)));
      }
      await both(service.url, "watch_getTransfers", { limit: 0 }, [{ limit: 0 }], "[]");
    },
    SLOW_MS,
  );

  test(
    "block ranges: numbers, tags against the index",
    async () => {
      const { midnight, backInTime, tip } = chain.blocks;
      for (const [fromBlock, toBlock] of [
        [midnight, backInTime],
        [backInTime, tip],
        [0, midnight - 1],
        [tip, tip],
      ]) {
        const body = { fromBlock, toBlock, limit: 500 };
        await both(
          service.url,
          "watch_getTransfers",
          body,
          [body],
          page(truth.allTransfers({ fromBlock, toBlock })),
        );
      }
      const tags = { fromBlock: "earliest", toBlock: "latest", limit: 500 };
      await both(service.url, "watch_getTransfers", tags, [tags], page(truth.allTransfers()));
      const hex = { fromBlock: `0x${midnight.toString(16)}`, toBlock: String(backInTime), limit: 500 };
      await both(
        service.url,
        "watch_getTransfers",
        hex,
        [hex],
        page(truth.allTransfers({ fromBlock: midnight, toBlock: backInTime })),
      );
    },
    SLOW_MS,
  );

  test(
    "by address: the recipient, or any input address (direction from), each row once",
    async () => {
      const { addresses } = chain;
      for (const address of Object.values(addresses)) {
        for (const direction of [undefined, "from", "to"] as const) {
          const body = { addresses: address, transferDirection: direction ?? null, limit: 500 };
          const expected = page(truth.transfers(address, { direction }));
          await both(service.url, "watch_getTransfersByAddress", body, [body], expected);
        }
      }
      // Several at once: a row matching two of them appears once.
      const several = [addresses.bech32, addresses.p2sh, addresses.external];
      const body = { addresses: several, limit: 500 };
      await both(service.url, "watch_getTransfersByAddress", body, [body], page(truth.transfers(several)));
      const multi = truth.transfers(several).filter((t) => t.transactionHash === chain.txs.multiFrom);
      expect(multi.length).toBe(2);
      // An address the chain never saw: nothing.
      const unused = await chain.node.rpc<string>("getnewaddress", ["", "bech32"]);
      const none = { addresses: unused, limit: 500 };
      const answer = await rest(service.url, "watch_getTransfersByAddress", none);
      expect([answer.status, answer.text]).toEqual([200, "[]"]);
    },
    SLOW_MS,
  );

  test(
    "the token types and contractAddresses are refused naming the chain; trx, null and [] are the index",
    async () => {
      // The bodies' schemas offer only what the index holds (so does the API document), and say why.
      const refused = async (
        name: string,
        body: Record<string, unknown>,
        field: string,
        msg: string,
        type: string,
      ) => {
        const r = await rest(service.url, name, body);
        expect({ status: r.status, body: JSON.parse(r.text) }).toEqual({
          status: 422,
          body: { detail: [{ loc: ["body", field], msg, type }] },
        });
        expect(JSON.parse((await jsonrpc(service.url, name, [body])).text)).toEqual({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32602, message: `invalid params: params[0].${field} (query): ${msg}` },
        });
      };
      for (const type of ["erc20transfer", "erc721transfer"]) {
        await refused(
          "watch_getTransfers",
          { transferType: type },
          "transferType",
          `Input should be "trx" or null (LTC's transfers are trx only)`,
          "enum",
        );
      }
      for (const [contracts, type] of [
        [chain.addresses.legacy, "union_type"],
        [[chain.addresses.bech32], "too_long"],
      ] as const) {
        await refused(
          "watch_getTransfersByAddress",
          { addresses: chain.addresses.legacy, contractAddresses: contracts },
          "contractAddresses",
          "Input should be null or [] (LTC has no token contracts)",
          type,
        );
      }
      const expected = page(truth.allTransfers());
      for (const body of [
        { transferType: "trx", limit: 500 },
        { transferType: null, contractAddresses: null, limit: 500 },
        { contractAddresses: [], limit: 500 },
      ]) {
        await both(service.url, "watch_getTransfers", body, [body], expected);
      }
    },
    SLOW_MS,
  );
});

describe("paging deep: keyset pages after a row, offsets bounded and charged by depth", () => {
  /** A row's place, as a body's `after` names it: its blockNumber, transactionIndex and logIndex. */
  const keyOf = (t: TruthTransfer) => ({
    blockNumber: t.blockNumber,
    transactionIndex: t.transactionIndex,
    logIndex: t.logIndex,
  });
  /** Pages of `limit` read one `after` another, both ways: each must be the offset page of the same rows. */
  async function walk(name: string, query: Record<string, unknown>, rows: TruthTransfer[], limit: number) {
    let pages = 0;
    for (let at = 0; at <= rows.length; at += limit) {
      const body = { ...query, limit, ...(at === 0 ? {} : { after: keyOf(rows[at - 1]!) }) };
      await both(service.url, name, body, [body], page(rows.slice(at, at + limit)));
      pages++;
    }
    return pages;
  }

  test(
    "every page `after` the last row of the one before equals the offset page: a range, addresses, a side",
    async () => {
      const all = truth.allTransfers();
      expect(await walk("watch_getTransfers", {}, all, 7)).toBeGreaterThan(3);
      const { legacy, bech32, p2sh, miner } = chain.addresses;
      await walk("watch_getTransfersByAddress", { addresses: miner }, truth.transfers(miner), 5);
      const several = [legacy, bech32, p2sh];
      await walk("watch_getTransfersByAddress", { addresses: several }, truth.transfers(several), 3);
      const sending = { addresses: several, transferDirection: "from" };
      await walk("watch_getTransfersByAddress", sending, truth.transfers(several, { direction: "from" }), 2);
      // With a range: rows after the cursor and within it; an offset skips rows after the cursor.
      const { midnight, backInTime } = chain.blocks;
      const range = { fromBlock: midnight, toBlock: backInTime };
      const inRange = truth.allTransfers(range);
      await walk("watch_getTransfers", range, inRange, 2);
      const before = { ...range, after: keyOf(all[0]!), limit: 500 };
      await both(service.url, "watch_getTransfers", before, [before], page(inRange));
      const skipping = { after: keyOf(all[9]!), offset: 3, limit: 4 };
      await both(service.url, "watch_getTransfers", skipping, [skipping], page(all.slice(13, 17)));
      const last = { after: keyOf(all.at(-1)!) };
      await both(service.url, "watch_getTransfers", last, [last], "[]");
    },
    SLOW_MS,
  );

  test(
    "an offset up to 10,000 is served; past it, refused naming the bound and `after`; a bad cursor is refused",
    async () => {
      const deepest = { offset: 10_000, limit: 500 };
      await both(service.url, "watch_getTransfers", deepest, [deepest], "[]");
      const msg =
        'Input should be less than or equal to 10000: page deeper with "after" (the last row\'s blockNumber, transactionIndex and logIndex)';
      for (const [name, body] of [
        ["watch_getTransfers", { offset: 10_001 }],
        ["watch_getTransfersByAddress", { addresses: chain.addresses.miner, offset: 10_001 }],
      ] as const) {
        const r = await rest(service.url, name, body);
        expect({ status: r.status, body: JSON.parse(r.text) }).toEqual({
          status: 422,
          body: { detail: [{ loc: ["body", "offset"], msg, type: "less_than_equal" }] },
        });
        expect(JSON.parse((await jsonrpc(service.url, name, [body])).text)).toEqual({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32602, message: `invalid params: params[0].offset (query): ${msg}` },
        });
      }
      // A cursor is a row's place as this family answers it: its logIndex (the output's index) is never null.
      for (const [after, loc, msg, type] of [
        [
          { blockNumber: 1, transactionIndex: 0, logIndex: null },
          "logIndex",
          "Input should be a valid integer",
          "int_type",
        ],
        [
          { blockNumber: 1, transactionIndex: 0, logIndex: 0, vout: 0 },
          "vout",
          "Extra inputs are not permitted",
          "extra_forbidden",
        ],
        [
          { blockNumber: 1, transactionIndex: 2 ** 31, logIndex: 0 },
          "transactionIndex",
          "Input should be less than or equal to 2147483647",
          "less_than_equal",
        ],
        [{ blockNumber: 1, logIndex: 0 }, "transactionIndex", "Field required", "missing"],
      ] as const) {
        const r = await rest(service.url, "watch_getTransfers", { after });
        expect({ status: r.status, body: JSON.parse(r.text) }).toEqual({
          status: 422,
          body: { detail: [{ loc: ["body", "after", loc], msg, type }] },
        });
      }
    },
    SLOW_MS,
  );

  test(
    "a page costs a token per 500 rows it reads, those its offset skips included; a page `after` a row one",
    async () => {
      // A second instance reading the first's index, every caller's bucket 25 tokens that hardly refill.
      const limited = await startTestService({
        upstreamUrls: [chain.node.url],
        databaseUrl: service.databaseUrl,
        env: { ...INDEX_ENV, INDEXER: "off", RATE_LIMIT: "0.001/25" },
      });
      try {
        const status = async (body: Record<string, unknown>) =>
          (await rest(limited.url, "watch_getTransfers", body)).status;
        const all = truth.allTransfers();
        // 1 token, however deep the row; then 21 (10,500 rows read), 3 (1,500); the bucket is empty.
        expect(await status({ after: keyOf(all.at(-2)!), limit: 500 })).toBe(200);
        expect(await status({ offset: 10_000, limit: 500 })).toBe(200);
        expect(await status({ offset: 1_000, limit: 500 })).toBe(200);
        expect(await status({ limit: 1 })).toBe(429);
      } finally {
        await limited.stop();
      }
    },
    SLOW_MS,
  );
});

describe("block by time and blocks by day: the running maximum of header times", () => {
  test("the chain has a block whose header time is below its parent's", () => {
    const back = truth.blocks[chain.blocks.backInTime]!;
    const parent = truth.blocks[chain.blocks.backInTime - 1]!;
    expect(back.time).toBeLessThan(parent.time);
    expect(back.timestamp).toBe(parent.timestamp);
    expect([parent.day, back.day]).toEqual([DAYS[1], DAYS[1]]);
  });

  test(
    "every block's time, a second before and after: the last block at or before it",
    async () => {
      const times = new Set<number>();
      for (const b of truth.blocks)
        for (const t of [b.time, b.timestamp - 1, b.timestamp, b.timestamp + 1]) times.add(t);
      for (const t of [...times].sort((a, b) => a - b)) {
        const n = blockAt(truth, t);
        if (n === undefined) {
          const detail = `no block has a timestamp at or before ${t}`;
          await refusedBoth(service.url, "watch_getBlockNumberByTimestamp", { timestamp: t }, [t], {
            status: 404,
            code: -32001,
            detail,
          });
        } else {
          await both(service.url, "watch_getBlockNumberByTimestamp", { timestamp: t }, [t], String(n));
        }
      }
      // The block whose header time is below its parent's is never "before" its parent.
      const back = truth.blocks[chain.blocks.backInTime]!;
      await both(
        service.url,
        "watch_getBlockNumberByTimestamp",
        { timestamp: back.time },
        [back.time],
        String(chain.blocks.midnight - 1),
      );
      // Past the head: the head.
      const later = chain.clock() + 10 * DAY_S;
      await both(
        service.url,
        "watch_getBlockNumberByTimestamp",
        { timestamp: later },
        [later],
        String(truth.tip),
      );
    },
    SLOW_MS,
  );

  test(
    "each day's first and last block; days without a block are null",
    async () => {
      const genesisDay = truth.blocks[0]!.day;
      for (const date of [genesisDay, ...DAYS, "2015-06-01", "2020-02-29", "2020-03-04", "2021-01-01"]) {
        await both(service.url, "watch_getBlockNumbersByDay", { date }, [date], rangeJson(truth, date));
      }
      // Day 1 ends with the block before `midnight`; `backInTime` (header time of day 1) is day 2's.
      const day2 = JSON.parse(rangeJson(truth, DAYS[1]));
      expect(day2.fromBlock).toBe(chain.blocks.midnight);
      expect(day2.toBlock).toBeGreaterThan(chain.blocks.backInTime);
    },
    SLOW_MS,
  );
});

describe("daily figures", () => {
  test(
    "each day's figures in satoshis, exactly the truth's; a day without a block is null",
    async () => {
      const genesisDay = truth.blocks[0]!.day;
      for (const date of [genesisDay, ...DAYS, "2020-02-29", "2020-03-04"]) {
        const start = midnightOf(date);
        for (const t of [start, start + DAY_S - 1]) {
          await both(service.url, "watch_getStatsByDay", { timestamp: t }, [t], dayJson(truth.day(date)));
        }
      }
      // The members are the family's: the EVM-only ones absent.
      const day = JSON.parse(
        (await rest(service.url, "watch_getStatsByDay", { timestamp: midnightOf(DAYS[1]) })).text,
      );
      expect(Object.keys(day)).toEqual(DAY_STATS_MEMBERS);
      expect(day.totalFees).toBeGreaterThan(0);
    },
    SLOW_MS,
  );

  test(
    "the figures agree with the node's getblockstats summed over the day's blocks",
    async () => {
      for (const date of DAYS) {
        const d = truth.day(date)!;
        let totalOut = 0n;
        let totalFee = 0n;
        let txs = 0;
        for (let h = d.fromBlock; h <= d.toBlock; h++) {
          // Amounts in getblockstats are whole satoshis, as JSON integers: exact below 2^53.
          const s = await chain.node.rpc("getblockstats", [h, ["total_out", "totalfee", "txs"]]);
          totalOut += BigInt(s.total_out);
          totalFee += BigInt(s.totalfee);
          txs += s.txs;
        }
        expect([d.totalOutput, d.totalFees, d.transactionCount]).toEqual([totalOut, totalFee, txs]);
      }
    },
    SLOW_MS,
  );
});

describe("what this family does not serve", () => {
  test("token balances and metadata: -32601 and 404 naming the chain", async () => {
    const why = "it is a method of the evm family, and LTC is served by the utxo family";
    for (const [method, params] of [
      ["watch_getTokenBalances", [chain.addresses.legacy, [chain.addresses.bech32]]],
      ["watch_getTokenMetadata", [chain.addresses.legacy]],
    ] as const) {
      const answer = await jsonrpc(service.url, method, [...params]);
      expect(JSON.parse(answer.text)).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32601, message: `the method ${method} is not served on LTC: ${why}` },
      });
    }
    for (const name of ["get_token_balances", "get_token_metadata"]) {
      const answer = await rest(service.url, name, { address: chain.addresses.legacy });
      expect([answer.status, JSON.parse(answer.text)]).toEqual([
        404,
        { detail: `/node/rest/${name} is not served on LTC: ${why}` },
      ]);
    }
  });
});

describe("the OpenAPI document", () => {
  test("shows this family's Transfer (with fromAddresses) and DayStats", async () => {
    const doc = (await (await fetch(`${service.url}/swagger/json`)).json()) as any;
    const transfer = doc.components.schemas.Transfer;
    expect(Object.keys(transfer.properties)).toEqual([
      "blockNumber",
      "blockTimestamp",
      "transactionHash",
      "transactionIndex",
      "logIndex",
      "contractAddress",
      "transferType",
      "from",
      "fromAddresses",
      "to",
      "value",
      "fee",
      "transactionError",
      "asset",
      "decimals",
    ]);
    expect(transfer.properties.fromAddresses).toMatchObject({ type: "array", items: { type: "string" } });
    expect(transfer.properties.transferType).toMatchObject({ const: "trx" });
    // Its bodies page deep `after` a row, whose logIndex (an output's index) is never null; offsets stop at 10,000.
    const body = (name: string) =>
      doc.paths[`/node/rest/${name}`].post.requestBody.content["application/json"].schema;
    for (const name of ["watch_getTransfers", "watch_getTransfersByAddress"]) {
      const { offset, after } = body(name).properties;
      expect(offset.anyOf[0]).toMatchObject({ type: "integer", minimum: 0, maximum: 10_000 });
      expect(after.anyOf[0]).toMatchObject({
        type: "object",
        required: ["blockNumber", "transactionIndex", "logIndex"],
        additionalProperties: false,
        properties: { logIndex: { type: "integer" } },
      });
    }
    const stats = doc.components.schemas.DayStats;
    expect(Object.keys(stats.properties)).toEqual(DAY_STATS_MEMBERS);
    const paths = doc.paths;
    for (const name of [
      "watch_getTransfers",
      "watch_getTransfersByAddress",
      "watch_getBlockNumberByTimestamp",
      "watch_getBlockNumbersByDay",
      "watch_getStatsByDay",
    ]) {
      expect(paths[`/node/rest/${name}`]?.post).toBeDefined();
    }
    expect(paths["/node/rest/get_token_balances"]).toBeUndefined();
  });

  test("an EVM table's transfers keep the interface's Transfer", () => {
    const chainInfo = {
      chainId: 1n,
      blockchain: "ETH",
      nativeSymbol: "ETH",
      nativeDecimals: 18,
      confirmations: 0,
      blockTimeMs: 12_000,
      devChain: true,
    } as const;
    const unused = {} as never;
    const table = createOperationTable(
      createTransferOperations({
        transfers: unused,
        blocks: unused,
        head: unused,
        chain: chainInfo,
        addresses: evm.addresses,
      }),
    );
    const doc = buildOpenApi(table, [], [], T.Object({}), { subscriptionKinds: [] }) as any;
    expect(doc.components.schemas.Transfer).toEqual(JSON.parse(JSON.stringify(Transfer)));
    // A native row has no logIndex: a cursor after one names it null.
    const after =
      doc.paths["/node/rest/watch_getTransfers"].post.requestBody.content["application/json"].schema
        .properties.after.anyOf[0];
    expect(after.properties.logIndex.anyOf.map((s: { type: string }) => s.type)).toEqual(["integer", "null"]);
  });
});

describe("a reorg", () => {
  test(
    "changes the figures of its day exactly, and the transfers with them",
    async () => {
      const before = truth;
      const day3 = before.day(DAYS[2])!;
      await both(
        service.url,
        "watch_getStatsByDay",
        { timestamp: midnightOf(DAYS[2]) },
        [midnightOf(DAYS[2])],
        dayJson(day3),
      );
      const reorg = await chain.reorg();
      const after = await chain.truth();
      await caughtUp(service.url, after);
      truth = after;
      await both(
        service.url,
        "watch_getTransfers",
        { limit: 500 },
        [{ limit: 500 }],
        page(after.allTransfers()),
      );
      const hashes = (await allTransfers(service.url)).text;
      expect(hashes).not.toContain(reorg.droppedTxid);
      expect(hashes).toContain(reorg.addedTxid);
      const changed = after.day(DAYS[2])!;
      expect(dayJson(changed)).not.toBe(dayJson(day3));
      for (const date of DAYS) {
        const t = midnightOf(date);
        await both(service.url, "watch_getStatsByDay", { timestamp: t }, [t], dayJson(after.day(date)));
        await both(service.url, "watch_getBlockNumbersByDay", { date }, [date], rangeJson(after, date));
      }
      // The other days are as they were.
      expect(dayJson(after.day(DAYS[0]))).toBe(dayJson(before.day(DAYS[0])));
      expect(dayJson(after.day(DAYS[1]))).toBe(dayJson(before.day(DAYS[1])));
    },
    SLOW_MS,
  );
});

describe("where the index does not hold the blocks", () => {
  test(
    "past its last block: the node's headers walked forward by the running maximum, 503 past the walk's bound",
    async () => {
      // The index stops where its writer stopped; a reader instance answers past it from the node.
      await service.stop();
      const reader = await startTestService({
        upstreamUrls: [chain.node.url],
        databaseUrl: service.databaseUrl,
        env: { ...INDEX_ENV, INDEXER: "off" },
      });
      const indexed = truth.tip;
      // Three blocks past the index, the third's header time below the second's (above the median time past).
      const t0 = chain.clock();
      const mineAt = async (time: number) => {
        await chain.node.rpc("setmocktime", [time]);
        return chain.node.rpc<string[]>("generatetoaddress", [1, chain.addresses.miner]);
      };
      await mineAt(t0 + 60);
      await mineAt(t0 + 180);
      await mineAt(t0 + 120);
      const past = await chain.truth();
      expect(past.tip).toBe(indexed + 3);
      expect(past.blocks[indexed + 3]!.time).toBeLessThan(past.blocks[indexed + 2]!.time);
      await until("the reader to follow the node's head", async () => {
        const r = await rest(reader.url, "watch_getBlockNumberByTimestamp", { timestamp: t0 + 10 * DAY_S });
        return r.text === String(past.tip) ? true : undefined;
      });
      for (const t of [t0 + 59, t0 + 60, t0 + 119, t0 + 120, t0 + 179, t0 + 180, t0 + 181]) {
        await both(
          reader.url,
          "watch_getBlockNumberByTimestamp",
          { timestamp: t },
          [t],
          String(blockAt(past, t)),
        );
      }
      // The header at t0 + 120 is the third block's, yet the last block at or before it is the first.
      expect(blockAt(past, t0 + 120)).toBe(indexed + 1);
      const day3 = DAYS[2];
      await both(reader.url, "watch_getBlockNumbersByDay", { date: day3 }, [day3], rangeJson(past, day3));

      // Further past the index than the walk goes: 503, until the index gets there.
      await chain.node.rpc("setmocktime", [t0 + 300]);
      await chain.node.rpc("generatetoaddress", [NODE_WALK_MAX, chain.addresses.miner]);
      const head = indexed + 3 + NODE_WALK_MAX;
      await until("the reader to follow the node's head", async () => {
        const r = await jsonrpc(reader.url, "getblockcount", []);
        return r.text.includes(`"result":${head}`) ? true : undefined;
      });
      const far = t0 + 10 * DAY_S;
      await refusedBoth(reader.url, "watch_getBlockNumberByTimestamp", { timestamp: far }, [far], {
        status: 503,
        code: -32603,
        detail: `the index is ${head - indexed} blocks behind the node: block times past block ${indexed + NODE_WALK_MAX} are answered once it reaches them; retry shortly`,
      });
      // Times the walk settles within its bound are still answered.
      await both(
        reader.url,
        "watch_getBlockNumberByTimestamp",
        { timestamp: t0 + 120 },
        [t0 + 120],
        String(indexed + 1),
      );
      await reader.stop();
    },
    SLOW_MS,
  );

  test(
    "no index yet (a reader of an index nobody has written): the walk from block 0, within its bound",
    async () => {
      const reader = await startTestService({
        upstreamUrls: [chain.node.url],
        env: { ...INDEX_ENV, INDEXER: "off" },
      });
      const tr = await chain.truth();
      const genesis = tr.blocks[0]!.timestamp;
      await refusedBoth(
        reader.url,
        "watch_getBlockNumberByTimestamp",
        { timestamp: genesis - 1 },
        [genesis - 1],
        {
          status: 404,
          code: -32001,
          detail: `no block has a timestamp at or before ${genesis - 1}`,
        },
      );
      await both(reader.url, "watch_getBlockNumberByTimestamp", { timestamp: genesis }, [genesis], "0");
      const inWalk = tr.blocks[NODE_WALK_MAX - 2]!.timestamp;
      await both(
        reader.url,
        "watch_getBlockNumberByTimestamp",
        { timestamp: inWalk },
        [inWalk],
        String(blockAt(tr, inWalk)),
      );
      const far = tr.blocks[tr.tip]!.timestamp;
      await refusedBoth(reader.url, "watch_getBlockNumberByTimestamp", { timestamp: far }, [far], {
        status: 503,
        code: -32603,
        detail: `the index is ${tr.tip + 1} blocks behind the node: block times past block ${NODE_WALK_MAX - 1} are answered once it reaches them; retry shortly`,
      });
      await reader.stop();
    },
    SLOW_MS,
  );

  test(
    "before its first block (INDEX_FROM_BLOCK above 0): 404 saying why; inside it, the truth",
    async () => {
      const from = chain.blocks.fund;
      const late = await startTestService({
        upstreamUrls: [chain.node.url],
        env: { ...INDEX_ENV, INDEX_FROM_BLOCK: String(from) },
      });
      const tr = await chain.truth({ fromBlock: from });
      await caughtUp(late.url, tr, from);
      const first = tr.blocks[0]!;
      expect(first.height).toBe(from);
      const detail = `block times before block ${from} (the index's first) are not answered on this chain: its blocks' times may go back, and the running maximum they are answered by starts at the index's first block`;
      for (const t of [first.timestamp - 1, 0]) {
        await refusedBoth(late.url, "watch_getBlockNumberByTimestamp", { timestamp: t }, [t], {
          status: 404,
          code: -32001,
          detail,
        });
      }
      // Day 1 begins before the index: its range is refused; days 2 and 3 are the truth's.
      await refusedBoth(late.url, "watch_getBlockNumbersByDay", { date: DAYS[0] }, [DAYS[0]], {
        status: 404,
        code: -32001,
        detail,
      });
      for (const date of [DAYS[1], DAYS[2]]) {
        await both(late.url, "watch_getBlockNumbersByDay", { date }, [date], rangeJson(tr, date));
      }
      for (const b of tr.blocks) {
        await both(
          late.url,
          "watch_getBlockNumberByTimestamp",
          { timestamp: b.timestamp },
          [b.timestamp],
          String(blockAt(tr, b.timestamp)),
        );
      }
      // The figures cover the indexed blocks of a day: day 1's from the index's first block on.
      for (const date of DAYS) {
        const t = midnightOf(date);
        await both(late.url, "watch_getStatsByDay", { timestamp: t }, [t], dayJson(tr.day(date)));
      }
      await late.stop();
    },
    SLOW_MS,
  );
});
