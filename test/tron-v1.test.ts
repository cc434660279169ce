/**
 * TronGrid's v1 API from the index (http/tronGrid/, families/tron/tronGrid/): the service (CHAIN=NILE,
 * INDEXER=on, CONFIRMATIONS = the stand-in's solidifyDepth, a key required) in front of the stand-in java-tron
 * (test/support/tronNode.ts) and a real PostgreSQL. The expected answers are written from the scenario's own
 * transactions (what the test built and the stand-in mined, its transactions and infos as the node holds
 * them), never read from the index: the account, its transactions, its TRC-20 rows, the events of a contract,
 * a transaction and a block; fingerprint paging walking every row once, both orders; only_confirmed against
 * the solidified block; the key as TRON-PRO-API-KEY and in the path; tronweb's event calls with the service
 * as its event server; TronGrid's error form.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { TronWeb } from "tronweb";
import { startTestService, type TestService } from "./support/service";
import { onTeardown } from "./support/shared";
import { SCENARIO_KEYS, type SignedTx, startTronNode, TRC10, TRC20, type TronNode } from "./support/tronNode";
import { until } from "./support/until";

const SOLIDIFY_DEPTH = 4;
const KEY = "v1-test-key";
const ENV = {
  CHAIN: "NILE",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  CONFIRMATIONS: String(SOLIDIFY_DEPTH),
  INDEX_FROM_BLOCK: "0",
  API_KEYS: KEY,
};
const CATCH_UP_MS = 60_000;
const { alice, bob, carol } = SCENARIO_KEYS;
const TRC20_BASE58 = TronWeb.address.fromHex(TRC20.address);
const TRANSFER_EVENT = "Transfer(address indexed from, address indexed to, uint256 value)";

let node: TronNode;
let service: TestService;
let db: postgres.Sql;
/** The TRC-20 transfers the test mined beyond the scenario's: alice to carol, one a block. */
const extra: SignedTx[] = [];
/** One more, in the head block: not yet confirmed. */
let unconfirmed: SignedTx;

type Json = Record<string, unknown>;
async function v1(path: string, headers: Record<string, string> = { "TRON-PRO-API-KEY": KEY }) {
  const response = await fetch(`${service.url}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as Json };
}
const data = async (path: string) => {
  const { status, body } = await v1(path);
  expect({ path, status, success: body.success }).toEqual({ path, status: 200, success: true });
  return body.data as Json[];
};

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
// The truth, from the scenario's transactions

const blockOf = (tx: SignedTx) => node.chain.transaction(tx.txID)!.blockNumber;
const timeOf = (tx: SignedTx) => node.chain.blocks[blockOf(tx)]!.header.raw_data.timestamp;
const word20 = (hex41: string) => `0x${hex41.slice(2)}`;

interface Trc20Move {
  tx: SignedTx;
  from: { base58: string; hex: string };
  to: { base58: string; hex: string };
  value: bigint;
}
let moves: Trc20Move[];

const trc20Row = (m: Trc20Move) => ({
  transaction_id: m.tx.txID,
  token_info: { symbol: TRC20.symbol, address: TRC20_BASE58, decimals: TRC20.decimals, name: TRC20.name },
  block_timestamp: timeOf(m.tx),
  from: m.from.base58,
  to: m.to.base58,
  type: "Transfer",
  value: m.value.toString(),
});

const eventRow = (m: Trc20Move) => ({
  block_number: blockOf(m.tx),
  block_timestamp: timeOf(m.tx),
  caller_contract_address: TRC20_BASE58,
  contract_address: TRC20_BASE58,
  event_index: 0,
  event_name: "Transfer",
  result: {
    0: word20(m.from.hex),
    1: word20(m.to.hex),
    2: m.value.toString(),
    from: word20(m.from.hex),
    to: word20(m.to.hex),
    value: m.value.toString(),
  },
  result_type: { from: "address", to: "address", value: "uint256" },
  event: TRANSFER_EVENT,
  transaction_id: m.tx.txID,
});

/** A transaction as TronGrid lists it: the node's transaction with its info's figures. */
function transactionRow(tx: SignedTx): Json {
  const held = structuredClone(node.chain.transaction(tx.txID)!.tx) as unknown as Json;
  const info = node.chain.info(tx.txID)! as unknown as Json;
  const receipt = (info.receipt ?? {}) as Record<string, number>;
  const raw = held.raw_data as { contract: { type: string; parameter: { value: Json } }[] };
  for (const c of raw.contract) {
    // TronGrid writes a TRC-10 transfer's asset id as text (the node: its hex).
    if (c.type === "TransferAssetContract") c.parameter.value.asset_name = TRC10.id;
  }
  const ret = (held.ret as Json[]).map((r, i) => (i === 0 ? { fee: info.fee ?? 0, ...r } : r));
  return {
    ret,
    signature: held.signature,
    txID: tx.txID,
    net_usage: receipt.net_usage ?? 0,
    raw_data_hex: held.raw_data_hex,
    net_fee: receipt.net_fee ?? 0,
    energy_usage: receipt.energy_usage ?? 0,
    blockNumber: blockOf(tx),
    block_timestamp: timeOf(tx),
    energy_fee: receipt.energy_fee ?? 0,
    energy_usage_total: receipt.energy_usage_total ?? 0,
    raw_data: raw,
    internal_transactions: [],
  };
}

/** Every page of `path` (its query without fingerprint), following meta.fingerprint until there is none. */
async function walk(path: string): Promise<{ rows: Json[]; pages: number }> {
  const rows: Json[] = [];
  let next: string | undefined = path;
  let pages = 0;
  while (next !== undefined && pages < 50) {
    const { status, body } = await v1(next);
    expect({ next, status }).toEqual({ next, status: 200 });
    rows.push(...(body.data as Json[]));
    pages++;
    const meta = body.meta as { fingerprint?: string; page_size: number; links?: { next: string } };
    expect(meta.page_size).toBe((body.data as Json[]).length);
    if (meta.fingerprint !== undefined) {
      // The link names the same query with the fingerprint, and never the key.
      const link = new URL(meta.links!.next);
      expect(link.searchParams.get("fingerprint")).toBe(meta.fingerprint);
      expect(link.pathname.includes(KEY) || link.search.includes(KEY)).toBe(false);
      next = `${link.pathname}${link.search}`;
    } else next = undefined;
  }
  return { rows, pages };
}

beforeAll(async () => {
  node = await startTronNode({ solidifyDepth: SOLIDIFY_DEPTH });
  for (let i = 1; i <= 5; i++) {
    const tx = node.chain.trc20Transfer(alice, carol.hex, BigInt(i) * 1_000n);
    extra.push(tx);
    node.mine(1, [tx]);
  }
  node.mine(SOLIDIFY_DEPTH + 2);
  unconfirmed = node.chain.trc20Transfer(bob, carol.hex, 777n);
  node.mine(1, [unconfirmed]);
  moves = [
    { tx: node.scenario.trc20, from: alice, to: bob, value: 12_345_678n },
    ...extra.map((tx, i) => ({ tx, from: alice, to: carol, value: BigInt(i + 1) * 1_000n })),
    { tx: unconfirmed, from: bob, to: carol, value: 777n },
  ];
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  db = postgres(service.databaseUrl, { max: 2, onnotice: () => {} });
  onTeardown(() => db.end());
  await caughtUp();
}, 120_000);

describe("accounts", () => {
  test("/v1/accounts/:address: the node's account, in TronGrid's envelope; an unknown account has no data", async () => {
    const { status, body } = await v1(`/v1/accounts/${alice.base58}`);
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    const [account] = body.data as Json[];
    expect({ address: account!.address, balance: account!.balance }).toEqual({
      address: alice.hex,
      balance: Number(node.chain.balance(alice.hex)),
    });
    expect((body.meta as Json).page_size).toBe(1);
    expect(typeof (body.meta as Json).at).toBe("number");
    const nobody = TronWeb.address.fromHex(`41${"ab".repeat(20)}`);
    expect(await data(`/v1/accounts/${nobody}`)).toEqual([]);
  });

  test("/v1/accounts/:address/transactions: as owner and receiver, newest first, only_from / only_to", async () => {
    const { trx, trc10, trc20, reverted } = node.scenario;
    // bob: received the TRX transfer, sent the reverted call (the TRC-20 transfer to bob is the contract's call).
    expect(await data(`/v1/accounts/${bob.base58}/transactions`)).toEqual([
      transactionRow(unconfirmed),
      transactionRow(reverted),
      transactionRow(trx),
    ]);
    expect(await data(`/v1/accounts/${bob.base58}/transactions?only_to=true`)).toEqual([transactionRow(trx)]);
    expect(await data(`/v1/accounts/${bob.base58}/transactions?only_from=true`)).toEqual([
      transactionRow(unconfirmed),
      transactionRow(reverted),
    ]);
    expect(await data(`/v1/accounts/${bob.base58}/transactions?only_confirmed=true`)).toEqual([
      transactionRow(reverted),
      transactionRow(trx),
    ]);
    // Both filters given: neither (TronGrid's filters are not exclusive).
    expect(
      (await data(`/v1/accounts/${bob.base58}/transactions?only_to=true&only_from=true`)).map((t) => t.txID),
    ).toEqual([unconfirmed.txID, reverted.txID, trx.txID]);
    // alice, oldest first: the TRX sent, the TRC-10 received, the TRC-20 calls.
    const aliceTxs = [trx, trc10, trc20, ...extra];
    expect(
      await data(`/v1/accounts/${alice.base58}/transactions?order_by=block_timestamp,asc&limit=200`),
    ).toEqual(aliceTxs.map(transactionRow));
  });

  test("/v1/accounts/:address/transactions/trc20: TronGrid's rows, contract_address, only_confirmed", async () => {
    const ofAlice = moves.filter((m) => m.from === alice || m.to === alice).reverse();
    expect(await data(`/v1/accounts/${alice.base58}/transactions/trc20`)).toEqual(ofAlice.map(trc20Row));
    expect(
      await data(`/v1/accounts/${alice.hex}/transactions/trc20?contract_address=${TRC20_BASE58}&limit=200`),
    ).toEqual(ofAlice.map(trc20Row));
    const [received, sent] = [moves[0]!, moves[moves.length - 1]!];
    expect(await data(`/v1/accounts/${bob.base58}/transactions/trc20`)).toEqual(
      [sent, received].map(trc20Row),
    );
    expect(await data(`/v1/accounts/${bob.base58}/transactions/trc20?only_to=true`)).toEqual([
      trc20Row(received),
    ]);
    expect(await data(`/v1/accounts/${bob.base58}/transactions/trc20?only_from=true`)).toEqual([
      trc20Row(sent),
    ]);
    // The head block's transfer is above the solidified block.
    expect(await data(`/v1/accounts/${bob.base58}/transactions/trc20?only_confirmed=true`)).toEqual([
      trc20Row(received),
    ]);
    expect(await data(`/v1/accounts/${bob.base58}/transactions/trc20?onlyUnconfirmed=true`)).toEqual([
      trc20Row(sent),
    ]);
    const other = TronWeb.address.fromHex(`41${"cd".repeat(20)}`);
    expect(await data(`/v1/accounts/${alice.base58}/transactions/trc20?contract_address=${other}`)).toEqual(
      [],
    );
  });

  test("min_timestamp / max_timestamp bound the block times (ms, both ends included)", async () => {
    const [first, second, third] = extra.map((tx) => moves.find((m) => m.tx === tx)!);
    const q = `min_timestamp=${timeOf(first!.tx)}&max_timestamp=${timeOf(third!.tx)}`;
    expect(await data(`/v1/accounts/${carol.base58}/transactions/trc20?${q}`)).toEqual(
      [third!, second!, first!].map(trc20Row),
    );
  });
});

describe("fingerprint paging", () => {
  test("pages of 2 walk every row once, newest first and oldest first", async () => {
    const all = moves.filter((m) => m.from === alice || m.to === alice);
    const desc = await walk(`/v1/accounts/${alice.base58}/transactions/trc20?limit=2`);
    expect(desc.rows).toEqual([...all].reverse().map(trc20Row));
    expect(desc.pages).toBe(Math.ceil(all.length / 2));
    const asc = await walk(
      `/v1/accounts/${alice.base58}/transactions/trc20?limit=2&order_by=block_timestamp,asc`,
    );
    expect(asc.rows).toEqual(all.map(trc20Row));
    const events = await walk(`/v1/contracts/${TRC20_BASE58}/events?limit=3`);
    expect(events.rows).toEqual([...moves].reverse().map(eventRow));
    const txs = await walk(`/v1/accounts/${alice.base58}/transactions?limit=3`);
    expect(txs.rows.map((t) => t.txID)).toEqual(
      [node.scenario.trx, node.scenario.trc10, node.scenario.trc20, ...extra].map((t) => t.txID).reverse(),
    );
  });

  test("a fingerprint it did not write, or of another listing, is TronGrid's 400", async () => {
    const { body } = await v1(`/v1/accounts/${alice.base58}/transactions/trc20?limit=1`);
    const fingerprint = (body.meta as Json).fingerprint as string;
    for (const bad of ["nonsense!", Buffer.from("trc20:1").toString("base64url")]) {
      expect(await v1(`/v1/accounts/${alice.base58}/transactions/trc20?fingerprint=${bad}`)).toEqual({
        status: 400,
        body: { success: false, error: "Invalid fingerprint.", statusCode: 400 },
      });
    }
    expect((await v1(`/v1/contracts/${TRC20_BASE58}/events?fingerprint=${fingerprint}`)).status).toBe(400);
  });
});

describe("events", () => {
  test("/v1/transactions/:id/events, /v1/blocks/:number/events, /v1/contracts/:address/events", async () => {
    const transfer = moves[0]!;
    expect(await data(`/v1/transactions/${transfer.tx.txID}/events`)).toEqual([eventRow(transfer)]);
    // The reverted call left no logs; an unknown transaction has no events.
    expect(await data(`/v1/transactions/${node.scenario.reverted.txID}/events`)).toEqual([]);
    expect(await data(`/v1/transactions/${"0".repeat(64)}/events`)).toEqual([]);
    expect(await data(`/v1/blocks/${blockOf(transfer.tx)}/events`)).toEqual([eventRow(transfer)]);
    expect(await data(`/v1/blocks/1/events`)).toEqual([]);
    expect(await data(`/v1/blocks/latest/events`)).toEqual([eventRow(moves[moves.length - 1]!)]);
    expect(await v1(`/v1/blocks/999999/events`)).toEqual({
      status: 404,
      body: { success: false, error: "Block not found.", statusCode: 404 },
    });
    expect(await data(`/v1/contracts/${TRC20_BASE58}/events?order_by=block_timestamp,asc&limit=200`)).toEqual(
      moves.map(eventRow),
    );
    expect(await data(`/v1/contracts/${TRC20_BASE58}/events?event_name=Approval`)).toEqual([]);
    expect(
      await data(
        `/v1/contracts/${TRC20_BASE58}/events?block_number=${blockOf(extra[2]!)}&only_confirmed=true`,
      ),
    ).toEqual([eventRow(moves[3]!)]);
  });

  test("tronweb's event calls, the service as its event server with the key in the path", async () => {
    const tronWeb = new TronWeb({
      fullHost: service.url,
      headers: { "TRON-PRO-API-KEY": KEY },
      eventServer: `${service.url}/tron/key/${KEY}`,
    });
    const byContract = await tronWeb.event.getEventsByContractAddress(TRC20_BASE58, { limit: 2 });
    expect(byContract.data).toEqual([...moves].reverse().slice(0, 2).map(eventRow) as never);
    const more = await tronWeb.event.getEventsByContractAddress(TRC20_BASE58, {
      limit: 200,
      fingerprint: byContract.meta!.fingerprint,
    });
    expect(more.data).toEqual([...moves].reverse().slice(2).map(eventRow) as never);
    const byTx = await tronWeb.event.getEventsByTransactionID(moves[1]!.tx.txID);
    expect(byTx.data).toEqual([eventRow(moves[1]!)] as never);
  });
});

describe("keys and errors", () => {
  test("the key in the path or as TRON-PRO-API-KEY; none is TronGrid's 401 form", async () => {
    const path = `/v1/accounts/${alice.base58}/transactions/trc20`;
    const byHeader = await v1(path);
    const byPath = await v1(`/tron/key/${KEY}${path}`, {});
    expect(byPath.status).toBe(200);
    expect(byPath.body.data).toEqual(byHeader.body.data);
    const none = await v1(path, {});
    expect(none.status).toBe(401);
    expect(none.body.success).toBe(false);
    expect(none.body.statusCode).toBe(401);
    expect((await v1(`/tron/key/wrong${path}`, {})).status).toBe(401);
  });

  test("bad input is TronGrid's error form with 400", async () => {
    const bad = (error: string) => ({ status: 400, body: { success: false, error, statusCode: 400 } });
    // A base58 address with its last character changed: the checksum fails.
    const broken = `${alice.base58.slice(0, -1)}${alice.base58.endsWith("A") ? "B" : "A"}`;
    expect(await v1(`/v1/accounts/${broken}`)).toEqual(bad("A valid account address is required."));
    expect(await v1(`/v1/accounts/nope/transactions`)).toEqual(bad("A valid account address is required."));
    expect(await v1(`/v1/contracts/${broken}/events`)).toEqual(bad("A valid contract address is required."));
    expect(await v1(`/v1/accounts/${alice.base58}/transactions/trc20?limit=201`)).toEqual(
      bad("limit must be an integer from 1 to 200."),
    );
    expect(
      await v1(`/v1/accounts/${alice.base58}/transactions?only_confirmed=true&only_unconfirmed=true`),
    ).toEqual(bad("only_confirmed and only_unconfirmed cannot be both true."));
    expect(await v1(`/v1/accounts/${alice.base58}/transactions?order_by=value,asc`)).toEqual(
      bad("order_by must be block_timestamp,desc or block_timestamp,asc."),
    );
    expect(await v1(`/v1/transactions/xyz/events`)).toEqual(bad("A valid transaction id is required."));
    expect(await v1(`/v1/nothing/here`)).toEqual({
      status: 404,
      body: { success: false, error: "Not Found", statusCode: 404 },
    });
  });
});
