/**
 * The TRON index and its data operations on part 2's chain (test/support/tron/part2.ts: three UTC days, TRX,
 * TRC-10, TRC-20 `transfer`/`transferFrom`/`Approval`, a reverted call, `call_value`, internal transfers, a
 * TRC-721 Transfer, a creation, a tip above the solidified block), held against the ground truth computed
 * from the scenario (test/support/tron/truth.ts), never from the index. The service (CHAIN=NILE, INDEXER=on,
 * CONFIRMATIONS = the stand-in's solidifyDepth) runs in-process in front of the stand-in java-tron, and as a
 * child process for the kill -9. Every answer is compared as text, over REST and JSON-RPC alike.
 *
 * The truth's rows are in the interface's Transfer (docs/interface.md §4.6, src/families/tron/transferShape.ts)
 * with these mappings, and every member the interface answers is compared:
 * - `logIndex`: the truth's for a log; an internal TRX transfer's is 1000000000 + its position among its
 *   transaction's internal rows (the truth's `internalIndex` names the node's internal transaction, rejected
 *   ones included: the position is counted over the rows); null for a transaction's own row;
 * - `value`: the truth's decimal text, written as a JSON number with all its digits (§4.4);
 * - `internalIndex` is the truth's own (no such member in the interface).
 * DayStats: `totalFees` is the truth's `feesBurned`; `energyFee` and `netFee`, which the truth does not
 * compute, are the sums of the receipts the stand-in stored for the day's transactions.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { TronWeb } from "tronweb";
import { post, startServiceProcess, startTestService, type TestService } from "./support/service";
import { onTeardown, postgresServer } from "./support/shared";
import { PART2_DAYS } from "./support/tron/part2";
import * as truth from "./support/tron/truth";
import { type Part2, SCENARIO_KEYS, startTronNode, TRC20, TRC721, type TronNode } from "./support/tronNode";
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
/**
 * Empty blocks after block 6: the backfill spans several of the indexer's windows (src/indexer/window.ts,
 * 32 blocks), so a restart or a kill finds one in flight and more to come (a stop ends the window under way:
 * src/indexer/lead.ts).
 */
const EMPTY_BLOCKS = 150;
/** The interface's largest page (§4.6): the whole chain's rows fit in one. */
const MAX_LIMIT = 500;
/** A logIndex of an internal TRX transfer (docs: 1000000000 + its position among its transaction's). */
const INTERNAL_LOG_INDEX = 1_000_000_000;
const { alice, carol, dave } = SCENARIO_KEYS;
/** Base58 of the contracts by tronweb, the real client, not the service's codec or the truth's. */
const USDT = TronWeb.address.fromHex(TRC20.address);
const NFT = TronWeb.address.fromHex(TRC721.address);

let node: TronNode;
let part2: Part2;
let service: TestService;
let db: postgres.Sql;
let payout: string;

const rest = (url: string, name: string, body: unknown) => post(`${url}/node/rest/${name}`, body);
const jsonrpc = (url: string, method: string, params: unknown[]) =>
  post(`${url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });

/** Asks REST and JSON-RPC; both must answer `result` (JSON text) exactly. */
async function both(
  name: string,
  body: Record<string, unknown>,
  result: string,
  params: unknown[] = [body],
  url = service.url,
): Promise<void> {
  const r = await rest(url, name, body);
  expect({ name, body, status: r.status, text: r.text }).toEqual({ name, body, status: 200, text: result });
  const j = await jsonrpc(url, name, params);
  expect({ name, body, text: j.text }).toEqual({
    name,
    body,
    text: `{"jsonrpc":"2.0","id":1,"result":${result}}`,
  });
}

type Row = truth.TransferRow;
const str = (s: string | null) => (s === null ? "null" : JSON.stringify(s));

/** The interface's logIndex of each truth row (the mapping of the file's comment). */
function logIndexes(rows: Row[]): Map<Row, number | null> {
  const out = new Map<Row, number | null>();
  const internalSeen = new Map<string, number>();
  for (const r of rows) {
    if (r.internalIndex === null) out.set(r, r.logIndex);
    else {
      const k = internalSeen.get(r.transactionHash) ?? 0;
      internalSeen.set(r.transactionHash, k + 1);
      out.set(r, INTERNAL_LOG_INDEX + k);
    }
  }
  return out;
}

function transferJson(r: Row, logIndex: number | null): string {
  return `{"blockNumber":${r.blockNumber},"blockTimestamp":"${r.blockTimestamp}","transactionHash":"${r.transactionHash}","transactionIndex":${r.transactionIndex},"logIndex":${logIndex},"contractAddress":${str(r.contractAddress)},"transferType":"${r.transferType}","from":"${r.from}","to":"${r.to}","value":${r.value},"fee":${r.fee},"transactionError":${r.transactionError},"asset":${str(r.asset)},"decimals":${r.decimals}}`;
}

/** The page the rows `pick` keeps make, in the truth's (the index's) order. */
function page(pick: (r: Row) => boolean = () => true): string {
  // Internal rows' positions are counted over whole transactions, before the filter.
  const rows = truth.transfers(node.chain);
  const logIndex = logIndexes(rows);
  return `[${rows
    .filter(pick)
    .map((r) => transferJson(r, logIndex.get(r)!))
    .join(",")}]`;
}

const touches = (address: string, direction?: "from" | "to") => (r: Row) =>
  direction === "from"
    ? r.from === address
    : direction === "to"
      ? r.to === address
      : r.from === address || r.to === address;

/** The index's last block and its id, once they are the node's head. */
async function caughtUp(sql = db): Promise<void> {
  const head = node.chain.head;
  await until(
    `the index to reach block ${head.number} (${head.blockID})`,
    async () => {
      const [row] = await sql`select s.last_block::text as last, encode(b.hash, 'hex') as hash
        from indexer_state s left join blocks b on b.number = s.last_block`.catch(() => [undefined]);
      return row && Number(row.last) === head.number && row.hash === head.blockID ? true : undefined;
    },
    CATCH_UP_MS,
  );
}

const blockSeconds = (n: number) => Math.floor(node.chain.blocks[n]!.header.raw_data.timestamp / 1000);

function dayJson(d: truth.DayFigures): string {
  const infos = node.chain.blocks
    .filter((b) => b.number >= d.fromBlock && b.number <= d.toBlock)
    .flatMap((b) => b.infos);
  const energyFee = infos.reduce((a, i) => a + (i.receipt.energy_fee ?? 0), 0);
  const netFee = infos.reduce((a, i) => a + (i.receipt.net_fee ?? 0), 0);
  return `{"date":"${d.date}","fromBlock":${d.fromBlock},"toBlock":${d.toBlock},"blockCount":${d.blockCount},"transactionCount":${d.transactionCount},"transferCount":${d.transferCount},"trxTransferCount":${d.trxTransferCount},"trc20TransferCount":${d.trc20TransferCount},"activeAddresses":${d.activeAddresses},"trxMoved":${d.trxMoved},"totalFees":${d.feesBurned},"energyFee":${energyFee},"netFee":${netFee},"energyUsed":${d.energyUsed},"bandwidthUsed":${d.bandwidthUsed}}`;
}

/** Every row of the index, as the transfers operation answers them, read in pages of `limit` by `after`. */
async function walk(url: string, body: Record<string, unknown>, limit: number): Promise<unknown[]> {
  const all: unknown[] = [];
  let after: unknown = null;
  for (let pages = 0; pages < 100; pages++) {
    const r = await rest(url, body.addresses ? "watch_getTransfersByAddress" : "watch_getTransfers", {
      ...body,
      limit,
      after,
    });
    expect(r.status).toBe(200);
    all.push(...r.json);
    if (r.json.length < limit) return all;
    const last = r.json[r.json.length - 1];
    after = {
      blockNumber: last.blockNumber,
      transactionIndex: last.transactionIndex,
      logIndex: last.logIndex,
    };
  }
  throw new Error("paging did not end within 100 pages");
}

/** The index's range (indexer_state), its blocks' span and its transfer rows' count. */
async function indexed(sql: postgres.Sql) {
  const [state] = await sql`select first_block::int as first, last_block::int as last from indexer_state`;
  const [blocks] =
    await sql`select count(*)::int as n, min(number)::int as lo, max(number)::int as hi from blocks`;
  const [transfers] = await sql`select count(*)::int as n from transfers`;
  return { state, blocks, transfers: transfers!.n };
}

/** The index's last block once it is above `n` (undefined until its tables exist). */
const indexedPast = (sql: postgres.Sql, n: number) =>
  until(
    `the backfill to pass block ${n}`,
    async () => {
      const last = (await indexed(sql).catch(() => undefined))?.state?.last;
      return last !== undefined && last > n ? last : undefined;
    },
    CATCH_UP_MS,
  );

beforeAll(async () => {
  node = await startTronNode({ scenario: "part2", solidifyDepth: SOLIDIFY_DEPTH, emptyBlocks: EMPTY_BLOCKS });
  part2 = node.part2!;
  payout = TronWeb.address.fromHex(part2.payoutContract);
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  db = postgres(service.databaseUrl, { max: 2, onnotice: () => {} });
  onTeardown(() => db.end());
  await caughtUp();
}, 120_000);

describe("transfers against the truth", () => {
  test("the scenario's chain is what part2.ts says (a tip above the solidified block, rows of every kind)", () => {
    expect(node.chain.solidifiedNumber()).toBeLessThan(part2.tipBlock);
    const kinds = new Set(truth.transfers(node.chain).map((r) => r.transferType));
    expect([...kinds].sort()).toEqual(["erc20transfer", "erc721transfer", "trc10", "trx"]);
    expect(truth.transfers(node.chain).some((r) => r.internalIndex !== null)).toBe(true);
    expect(truth.transfers(node.chain).some((r) => r.transactionError)).toBe(true);
  });

  test("watch_getTransfers over the whole range equals the truth row for row", async () => {
    const all = page();
    await both(
      "watch_getTransfers",
      { fromBlock: 0, toBlock: node.chain.headNumber(), limit: MAX_LIMIT },
      all,
    );
    await both("watch_getTransfers", { limit: MAX_LIMIT }, all);
    // Each block alone, and each type alone.
    for (const n of [1, 2, 3, 4, 5, 6, part2.tipBlock]) {
      await both(
        "watch_getTransfers",
        { fromBlock: n, toBlock: n },
        page((r) => r.blockNumber === n),
      );
    }
    for (const type of ["trx", "erc20transfer", "erc721transfer", "trc10"] as const) {
      await both(
        "watch_getTransfers",
        { transferType: type, limit: MAX_LIMIT },
        page((r) => r.transferType === type),
      );
    }
  });

  test("by address: alice, carol, dave and the payout contract, with directions and types", async () => {
    for (const address of [alice.base58, carol.base58, dave.base58, payout]) {
      await both(
        "watch_getTransfersByAddress",
        { addresses: [address], limit: MAX_LIMIT },
        page(touches(address)),
      );
      for (const direction of ["from", "to"] as const) {
        await both(
          "watch_getTransfersByAddress",
          { addresses: [address], transferDirection: direction, limit: MAX_LIMIT },
          page(touches(address, direction)),
        );
      }
      for (const type of ["trx", "erc20transfer", "erc721transfer", "trc10"] as const) {
        await both(
          "watch_getTransfersByAddress",
          { addresses: [address], transferType: type, limit: MAX_LIMIT },
          page((r) => touches(address)(r) && r.transferType === type),
        );
      }
    }
    // Several addresses: a row between two of them appears once.
    await both(
      "watch_getTransfersByAddress",
      { addresses: [alice.base58, dave.base58], limit: MAX_LIMIT },
      page((r) => touches(alice.base58)(r) || touches(dave.base58)(r)),
    );
    // The hex forms name the same address.
    await both(
      "watch_getTransfersByAddress",
      { addresses: [part2.payoutContract], transferDirection: "to", limit: MAX_LIMIT },
      page(touches(payout, "to")),
    );
  });

  test("contractAddresses: the TRC-20 in base58 (and hex), the TRC-721; TRX rows never match", async () => {
    for (const contract of [USDT, NFT]) {
      const token = (r: Row) => r.contractAddress === contract;
      await both("watch_getTransfers", { contractAddresses: [contract], limit: MAX_LIMIT }, page(token));
      await both(
        "watch_getTransfersByAddress",
        { addresses: [dave.base58], contractAddresses: [contract], limit: MAX_LIMIT },
        page((r) => token(r) && touches(dave.base58)(r)),
      );
    }
    await both(
      "watch_getTransfers",
      { contractAddresses: [TRC20.address], limit: MAX_LIMIT },
      page((r) => r.contractAddress === USDT),
    );
    await both(
      "watch_getTransfers",
      { contractAddresses: [USDT, NFT], limit: MAX_LIMIT },
      page((r) => r.contractAddress === USDT || r.contractAddress === NFT),
    );
    await both(
      "watch_getTransfers",
      { contractAddresses: [USDT], transferType: "trx", limit: MAX_LIMIT },
      "[]",
    );
  });

  test("paging by the cursor walks every row once, whatever the page size", async () => {
    const all = JSON.parse(page());
    expect(all.length).toBeGreaterThan(10);
    for (const limit of [1, 2, 3, 7]) {
      expect(await walk(service.url, {}, limit)).toEqual(all);
    }
    // By address: dave's rows (native, internal, logs, TRC-10 none) page the same way.
    const daves = JSON.parse(page(touches(dave.base58)));
    for (const limit of [1, 2]) {
      expect(await walk(service.url, { addresses: [dave.base58] }, limit)).toEqual(daves);
    }
    // An offset page is the same slice.
    await both("watch_getTransfers", { offset: 5, limit: 4 }, JSON.stringify(all.slice(5, 9)));
  });
});

describe("blocks by time and day, daily figures", () => {
  test("watch_getStatsByDay for each of the three UTC days equals the truth", async () => {
    const days = truth.dailyFigures(node.chain);
    expect(days.map((d) => d.date)).toEqual([...PART2_DAYS]);
    for (const d of days) {
      for (const n of [d.fromBlock, d.toBlock]) {
        await both("watch_getStatsByDay", { timestamp: blockSeconds(n) }, dayJson(d), [blockSeconds(n)]);
      }
    }
    const before = Date.UTC(2024, 11, 30) / 1000;
    await both("watch_getStatsByDay", { timestamp: before }, "null", [before]);
  });

  test("watch_getBlockNumberByTimestamp across the day boundaries", async () => {
    const head = node.chain.headNumber();
    for (const n of [0, 1, 3, 4, 5, 6, head]) {
      await both("watch_getBlockNumberByTimestamp", { timestamp: blockSeconds(n) }, String(n), [
        blockSeconds(n),
      ]);
    }
    // Each midnight: the last block before it (block 3, then block 5); a second before block 4: block 3.
    for (const [date, n] of [
      [Date.UTC(2025, 0, 1), 3],
      [Date.UTC(2025, 0, 2), 5],
    ] as const) {
      await both("watch_getBlockNumberByTimestamp", { timestamp: date / 1000 }, String(n), [date / 1000]);
    }
    await both("watch_getBlockNumberByTimestamp", { timestamp: blockSeconds(4) - 1 }, "3", [
      blockSeconds(4) - 1,
    ]);
    const later = blockSeconds(head) + 86_400;
    await both("watch_getBlockNumberByTimestamp", { timestamp: later }, String(head), [later]);
  });

  test("watch_getBlockNumbersByDay: each day's first and last block; null for a day without", async () => {
    for (const d of truth.dailyFigures(node.chain)) {
      await both(
        "watch_getBlockNumbersByDay",
        { date: d.date },
        `{"date":"${d.date}","fromBlock":${d.fromBlock},"toBlock":${d.toBlock},"blockCount":${d.blockCount}}`,
        [d.date],
      );
    }
    for (const date of ["2024-12-30", "2025-01-03"]) {
      await both("watch_getBlockNumbersByDay", { date }, "null", [date]);
    }
  });
});

describe("the reorg, a restart and a kill -9", () => {
  test("a reorg above the solidified block: the tip's alice → dave 4 TRX goes, the branch's USDT 2 comes", async () => {
    const tipRow = (r: Row) => r.transactionHash === part2.txs.tip.txID;
    expect(
      JSON.parse(page(touches(dave.base58))).some((r: Row) => r.transactionHash === part2.txs.tip.txID),
    ).toBe(true);
    await both(
      "watch_getTransfersByAddress",
      { addresses: [dave.base58], limit: MAX_LIMIT },
      page(touches(dave.base58)),
    );
    expect(part2.reorg()).toEqual({ dropped: [part2.txs.tip.txID], added: [part2.replacement!.txID] });
    // The index follows: /health's indexer section at the new head, and the head's id in the index.
    await until(
      "the indexer to reach the new head",
      async () => {
        const h = (await (await fetch(`${service.url}/health`)).json()) as {
          indexer: { lastBlockNumber: number | null };
        };
        return h.indexer.lastBlockNumber === node.chain.headNumber() ? true : undefined;
      },
      CATCH_UP_MS,
    );
    await caughtUp();
    const rows = truth.transfers(node.chain);
    expect(rows.some(tipRow)).toBe(false);
    const replacement = rows.filter((r) => r.transactionHash === part2.replacement!.txID);
    expect(replacement.map((r) => [r.transferType, r.from, r.to, r.value])).toEqual([
      ["erc20transfer", alice.base58, dave.base58, "2000000"],
    ]);
    await both("watch_getTransfers", { limit: MAX_LIMIT }, page());
    await both(
      "watch_getTransfersByAddress",
      { addresses: [dave.base58], limit: MAX_LIMIT },
      page(touches(dave.base58)),
    );
    await both(
      "watch_getTransfers",
      { fromBlock: part2.tipBlock, limit: MAX_LIMIT },
      page((r) => r.blockNumber >= part2.tipBlock),
    );
    const last = truth.dailyFigures(node.chain).at(-1)!;
    await both("watch_getStatsByDay", { timestamp: blockSeconds(last.toBlock) }, dayJson(last), [
      blockSeconds(last.toBlock),
    ]);
  });

  /**
   * Holds the node's blocks above `held` (java-tron's `{}` for a block it has not got: a lagging node), so a
   * backfill stops there; the release lets every block through, each answer `WINDOW_DELAY_MS` late, so a
   * window's reads are in flight whenever the test cuts the service.
   */
  function holdAbove(held: number): { release(): void } {
    const blockOf = (body: any) => Number(body?.id_or_num ?? body?.num);
    node.fail = (call) =>
      call.face === "full" &&
      (call.path === "/wallet/getblock" || call.path === "/wallet/gettransactioninfobyblocknum") &&
      blockOf(call.body) > held
        ? new Response("{}", { headers: { "content-type": "application/json" } })
        : undefined;
    return {
      release() {
        node.delayMs = WINDOW_DELAY_MS;
        node.fail = undefined;
      },
    };
  }
  /** The backfill is held after block 3 (day one's last): a cut in the middle of the scenario's rows. */
  const HELD = 3;
  /** How late the node answers once released: each window's reads take this long. */
  const WINDOW_DELAY_MS = 300;

  /** The index at the cut: whole blocks 0..last, none twice, their rows the truth's up to there. */
  async function checkCut(sql: postgres.Sql, url?: string): Promise<number> {
    const { state, blocks, transfers } = await indexed(sql);
    expect(state!.first).toBe(0);
    expect(state!.last).toBeGreaterThanOrEqual(HELD);
    expect(state!.last).toBeLessThan(node.chain.headNumber());
    expect(blocks).toEqual({ n: state!.last + 1, lo: 0, hi: state!.last });
    expect(transfers).toBe(truth.transfers(node.chain, 0, state!.last).length);
    if (url) {
      await both(
        "watch_getTransfers",
        { limit: MAX_LIMIT },
        page((r) => r.blockNumber <= state!.last),
        undefined,
        url,
      );
    }
    return state!.last;
  }

  async function checkWhole(sql: postgres.Sql, url: string): Promise<void> {
    const { state, blocks, transfers } = await indexed(sql);
    const head = node.chain.headNumber();
    expect(state).toEqual({ first: 0, last: head });
    expect(blocks).toEqual({ n: head + 1, lo: 0, hi: head });
    expect(transfers).toBe(truth.transfers(node.chain).length);
    await both("watch_getTransfers", { limit: MAX_LIMIT }, page(), undefined, url);
    for (const d of truth.dailyFigures(node.chain)) {
      await both(
        "watch_getStatsByDay",
        { timestamp: blockSeconds(d.toBlock) },
        dayJson(d),
        [blockSeconds(d.toBlock)],
        url,
      );
    }
  }

  test("a restart in the middle of a backfill resumes with no gap and no duplicate", async () => {
    const databaseUrl = await (await postgresServer()).createDatabase();
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    onTeardown(() => sql.end());
    const hold = holdAbove(HELD);
    let first: TestService | undefined;
    try {
      first = await startTestService({ upstreamUrls: [node.url], env: ENV, databaseUrl });
      expect(await indexedPast(sql, HELD - 1)).toBe(HELD);
      await checkCut(sql, first.url);
      hold.release();
      // A window written after the hold, the next one's reads in flight: stopped there (the stop ends the
      // window under way).
      await indexedPast(sql, HELD);
      await first.stop();
    } finally {
      node.fail = undefined;
      node.delayMs = 0;
      await first?.stop();
    }
    expect(await checkCut(sql)).toBeGreaterThan(HELD);
    const second = await startTestService({ upstreamUrls: [node.url], env: ENV, databaseUrl });
    try {
      await caughtUp(sql);
      await checkWhole(sql, second.url);
    } finally {
      await second.stop();
    }
  }, 120_000);

  test("kill -9 of the service's process in the middle of a backfill: no gap, no duplicate", async () => {
    const databaseUrl = await (await postgresServer()).createDatabase();
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    onTeardown(() => sql.end());
    const hold = holdAbove(HELD);
    try {
      const first = await startServiceProcess({ upstreamUrls: [node.url], env: ENV, databaseUrl });
      expect(await indexedPast(sql, HELD - 1)).toBe(HELD);
      hold.release();
      await indexedPast(sql, HELD);
      await first.kill("SIGKILL");
    } finally {
      node.fail = undefined;
      node.delayMs = 0;
    }
    expect(await checkCut(sql)).toBeGreaterThan(HELD);
    const second = await startServiceProcess({ upstreamUrls: [node.url], env: ENV, databaseUrl });
    try {
      await caughtUp(sql);
      await checkWhole(sql, second.url);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
