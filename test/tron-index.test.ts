/**
 * The TRON family's index (sql/tron/009_tron_index.sql) and its data operations, the service (CHAIN=NILE,
 * INDEXER=on, CONFIRMATIONS = the stand-in's solidifyDepth) in front of the stand-in java-tron
 * (test/support/tronNode.ts) and a real PostgreSQL. The expected answers are written from the scenario's own
 * transactions (what the test built and the stand-in mined), never read from the index: transfers by range
 * and by address (directions, types, contracts in base58, paging, the three address forms, a bad checksum),
 * blocks by time and by day across the scenario's UTC midnight, the daily figures, a reorg above the
 * solidified block undone in the index, and a restart resuming where the index ended.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { TronWeb } from "tronweb";
import { rfc3339 } from "../src/json";
import { post, startTestService, type TestService } from "./support/service";
import { onTeardown } from "./support/shared";
import { SCENARIO_KEYS, type SignedTx, startTronNode, TRC10, TRC20, type TronNode } from "./support/tronNode";
import { until } from "./support/until";

const SOLIDIFY_DEPTH = 4;
const ENV = {
  CHAIN: "NILE",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  CONFIRMATIONS: String(SOLIDIFY_DEPTH),
  INDEX_FROM_BLOCK: "0",
};
const CATCH_UP_MS = 60_000;
const { alice, bob, carol, issuer } = SCENARIO_KEYS;
const TRC20_BASE58 = base58Of(TRC20.address);

let node: TronNode;
let service: TestService;
let db: postgres.Sql;

/** The contract's base58 (the keys carry both forms), by tronweb, the real client, not the service's codec. */
function base58Of(hex41: string): string {
  return TronWeb.address.fromHex(hex41);
}

const rest = (name: string, body: unknown) => post(`${service.url}/node/rest/${name}`, body);
const jsonrpc = (method: string, params: unknown[]) =>
  post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });

/** Asks REST and JSON-RPC; both must answer `result` (JSON text) exactly. */
async function both(
  name: string,
  body: Record<string, unknown>,
  result: string,
  params: unknown[] = [body],
): Promise<void> {
  const r = await rest(name, body);
  expect({ name, body, status: r.status, text: r.text }).toEqual({ name, body, status: 200, text: result });
  const j = await jsonrpc(name, params);
  expect({ name, body, text: j.text }).toEqual({
    name,
    body,
    text: `{"jsonrpc":"2.0","id":1,"result":${result}}`,
  });
}

/** Waits until the index ends at the node's head, with its id. */
async function caughtUp(): Promise<void> {
  const head = node.chain.head;
  await until(
    `the index to reach block ${head.number}`,
    async () => {
      const [row] = await db`select s.last_block::text as last, encode(b.hash, 'hex') as hash
        from indexer_state s left join blocks b on b.number = s.last_block`.catch(() => [undefined]);
      return row && Number(row.last) === head.number && row.hash === head.blockID ? true : undefined;
    },
    CATCH_UP_MS,
  );
}

// ---------------------------------------------------------------------------------------------------------
// The truth: what the scenario's transactions move, written from them

interface Expected {
  block: number;
  tx: SignedTx;
  index: number;
  logIndex: number | null;
  type: "trx" | "trc10" | "erc20transfer";
  contract: string | null;
  from: string;
  to: string;
  value: bigint;
  asset: string;
  error?: boolean;
}

const blockSeconds = (n: number) => Math.floor(node.chain.blocks[n]!.header.raw_data.timestamp / 1000);
/** The fee the stand-in charged a transaction (its info's `fee`, 0 where it wrote none). */
const feeOf = (tx: SignedTx) => node.chain.info(tx.txID)?.fee ?? 0;

function transferJson(e: Expected): string {
  return `{"blockNumber":${e.block},"blockTimestamp":"${rfc3339(blockSeconds(e.block))}","transactionHash":"${e.tx.txID}","transactionIndex":${e.index},"logIndex":${e.logIndex},"contractAddress":${e.contract === null ? "null" : `"${e.contract}"`},"transferType":"${e.type}","from":"${e.from}","to":"${e.to}","value":${e.value},"fee":${feeOf(e.tx)},"transactionError":${e.error ?? false},"asset":"${e.asset}","decimals":6}`;
}
const page = (rows: Expected[]) => `[${rows.map(transferJson).join(",")}]`;

let TRX: Expected;
let TRC10_ROW: Expected;
let TRC20_ROW: Expected;

beforeAll(async () => {
  node = await startTronNode({ solidifyDepth: SOLIDIFY_DEPTH });
  // The scenario mined blocks 1 and 2 and solidifyDepth + 3 empty ones (to block 9); 6 more cross the UTC
  // midnight at block 10.
  node.mine(6);
  const s = node.scenario;
  TRX = {
    block: 1,
    tx: s.trx,
    index: 0,
    logIndex: null,
    type: "trx",
    contract: null,
    from: alice.base58,
    to: bob.base58,
    value: 1_500_000n,
    asset: "TRX",
  };
  TRC10_ROW = {
    block: 1,
    tx: s.trc10,
    index: 1,
    logIndex: null,
    type: "trc10",
    contract: TRC10.id,
    from: issuer.base58,
    to: alice.base58,
    value: 250_000_000n,
    asset: TRC10.abbr,
  };
  TRC20_ROW = {
    block: 2,
    tx: s.trc20,
    index: 0,
    logIndex: 0,
    type: "erc20transfer",
    contract: TRC20_BASE58,
    from: alice.base58,
    to: bob.base58,
    value: 12_345_678n,
    asset: TRC20.symbol,
  };
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  db = postgres(service.databaseUrl, { max: 2, onnotice: () => {} });
  onTeardown(() => db.end());
  await caughtUp();
}, 120_000);

describe("transfers", () => {
  test("watch_getTransfers: the block range's TRX, TRC-10 and TRC-20 transfers (the reverted call moves nothing)", async () => {
    await both("watch_getTransfers", { fromBlock: 0, toBlock: 5 }, page([TRX, TRC10_ROW, TRC20_ROW]));
    await both("watch_getTransfers", { fromBlock: 2, toBlock: 2 }, page([TRC20_ROW]));
    await both("watch_getTransfers", { fromBlock: 0, toBlock: 5, transferType: "trc10" }, page([TRC10_ROW]));
    await both("watch_getTransfers", { fromBlock: 0, toBlock: 5, transferType: "trx" }, page([TRX]));
    await both("watch_getTransfers", { fromBlock: 0, toBlock: 5, limit: 1, offset: 1 }, page([TRC10_ROW]));
  });

  test("watch_getTransfersByAddress: directions, types, contracts, paging, the three address forms", async () => {
    const all = page([TRX, TRC10_ROW, TRC20_ROW]);
    for (const form of [alice.base58, alice.hex, `0x${alice.hex.slice(2)}`]) {
      await both("watch_getTransfersByAddress", { addresses: [form] }, all);
    }
    await both(
      "watch_getTransfersByAddress",
      { addresses: alice.base58, transferDirection: "from" },
      page([TRX, TRC20_ROW]),
    );
    await both(
      "watch_getTransfersByAddress",
      { addresses: alice.base58, transferDirection: "to" },
      page([TRC10_ROW]),
    );
    await both(
      "watch_getTransfersByAddress",
      { addresses: [bob.base58], transferType: "erc20transfer" },
      page([TRC20_ROW]),
    );
    await both(
      "watch_getTransfersByAddress",
      { addresses: [alice.base58], contractAddresses: [TRC20_BASE58] },
      page([TRC20_ROW]),
    );
    await both(
      "watch_getTransfersByAddress",
      { addresses: [alice.base58, bob.base58], limit: 2 },
      page([TRX, TRC10_ROW]),
    );
    await both(
      "watch_getTransfersByAddress",
      { addresses: [alice.base58], after: { blockNumber: 1, transactionIndex: 0, logIndex: null } },
      page([TRC10_ROW, TRC20_ROW]),
    );
    await both("watch_getTransfersByAddress", { addresses: [carol.base58] }, "[]");
  });

  test("a bad checksum and a type TRON has not are 422 naming them", async () => {
    const bad = `${alice.base58.slice(0, -1)}${alice.base58.endsWith("A") ? "B" : "A"}`;
    const r = await rest("watch_getTransfersByAddress", { addresses: [bad] });
    // The codec refuses a bad checksum as it refuses any text that is no TRON address, naming where it is.
    expect({ status: r.status, json: r.json }).toEqual({
      status: 422,
      json: {
        detail: [
          {
            loc: ["body", "addresses", 0],
            msg: "Input should be a TRON address: base58check T... (34 characters), 41 followed by 40 hex digits, or 0x and 40 hex digits",
            type: "string_pattern_mismatch",
          },
        ],
      },
    });
    const t = await rest("watch_getTransfers", { transferType: "erc1155transfer" });
    expect(t.status).toBe(422);
    expect(t.text).toContain("transferType");
  });
});

describe("blocks by time and day, daily figures", () => {
  test("block by timestamp: the last block at or before it, in seconds from the blocks' ms", async () => {
    for (const n of [0, 1, 9, 10, 11]) {
      const t = blockSeconds(n);
      await both("watch_getBlockNumberByTimestamp", { timestamp: t }, String(n), [t]);
    }
    // block 10 is 1.5 s past midnight: at midnight the block before it
    const midnight = Date.UTC(2025, 0, 1) / 1000;
    await both("watch_getBlockNumberByTimestamp", { timestamp: midnight }, "9", [midnight]);
  });

  test("blocks by day across the UTC midnight", async () => {
    const last = node.chain.headNumber();
    await both(
      "watch_getBlockNumbersByDay",
      { date: "2024-12-31" },
      `{"date":"2024-12-31","fromBlock":0,"toBlock":9,"blockCount":10}`,
      ["2024-12-31"],
    );
    await both(
      "watch_getBlockNumbersByDay",
      { date: "2025-01-01" },
      `{"date":"2025-01-01","fromBlock":10,"toBlock":${last},"blockCount":${last - 9}}`,
      ["2025-01-01"],
    );
  });

  test("the daily figures: transactions, TRX and TRC-20 transfers, active addresses, TRX moved, fees, energy, bandwidth", async () => {
    const infos = [1, 2].flatMap((n) => node.chain.infos(n)!);
    const sum = (f: (i: (typeof infos)[number]) => number | undefined) =>
      infos.reduce((a, i) => a + (f(i) ?? 0), 0);
    const day = `{"date":"2024-12-31","fromBlock":0,"toBlock":9,"blockCount":10,"transactionCount":4,"transferCount":3,"trxTransferCount":1,"trc20TransferCount":1,"activeAddresses":4,"trxMoved":1500000,"totalFees":${sum((i) => i.fee)},"energyFee":${sum((i) => i.receipt.energy_fee)},"netFee":${sum((i) => i.receipt.net_fee)},"energyUsed":${sum((i) => i.receipt.energy_usage_total)},"bandwidthUsed":${sum((i) => i.receipt.net_usage)}}`;
    await both("watch_getStatsByDay", { timestamp: blockSeconds(3) }, day, [blockSeconds(3)]);
    const last = node.chain.headNumber();
    await both(
      "watch_getStatsByDay",
      { timestamp: blockSeconds(10) },
      `{"date":"2025-01-01","fromBlock":10,"toBlock":${last},"blockCount":${last - 9},"transactionCount":0,"transferCount":0,"trxTransferCount":0,"trc20TransferCount":0,"activeAddresses":0,"trxMoved":0,"totalFees":0,"energyFee":0,"netFee":0,"energyUsed":0,"bandwidthUsed":0}`,
      [blockSeconds(10)],
    );
  });
});

describe("reorgs and restarts", () => {
  test("a reorg above the solidified block drops a transfer and adds another", async () => {
    const dropped = node.chain.trx(alice, carol.hex, 2_000_000n);
    node.mine(1, [dropped]);
    const at = node.chain.headNumber();
    await caughtUp();
    const carolRow: Expected = {
      block: at,
      tx: dropped,
      index: 0,
      logIndex: null,
      type: "trx",
      contract: null,
      from: alice.base58,
      to: carol.base58,
      value: 2_000_000n,
      asset: "TRX",
    };
    await both("watch_getTransfersByAddress", { addresses: [carol.base58] }, page([carolRow]));
    const added = node.chain.trx(bob, carol.hex, 3_000_000n);
    node.reorg(2, [added]);
    await caughtUp();
    const addedRow: Expected = {
      block: at - 1,
      tx: added,
      index: 0,
      logIndex: null,
      type: "trx",
      contract: null,
      from: bob.base58,
      to: carol.base58,
      value: 3_000_000n,
      asset: "TRX",
    };
    await both("watch_getTransfersByAddress", { addresses: [carol.base58] }, page([addedRow]));
    const [day] =
      await db`select trx_moved::text as moved, trx_transfer_count from daily_stats where day = '2025-01-01'`;
    expect(day).toEqual({ moved: "3000000", trx_transfer_count: "1" });
  });

  test("a restart resumes where the index ended", async () => {
    await service.stop();
    const [before] = await db`select first_block::text as first, last_block::text as last from indexer_state`;
    const tx = node.chain.trx(alice, carol.hex, 4_000_000n);
    node.mine(1, [tx]);
    node.mine(2);
    service = await startTestService({
      upstreamUrls: [node.url],
      env: ENV,
      databaseUrl: service.databaseUrl,
    });
    await caughtUp();
    const [after] = await db`select first_block::text as first, last_block::text as last from indexer_state`;
    expect(after!.first).toBe(before!.first);
    expect(Number(after!.last)).toBe(node.chain.headNumber());
    const rows =
      await db`select count(*)::int as n from transfers where to_address = decode(${carol.hex}, 'hex')`;
    expect(rows[0]!.n).toBe(2);
  });
});
