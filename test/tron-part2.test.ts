/**
 * Watch filters and TronGrid's v1 API on part 2's chain (test/support/tron/part2.ts: TRX, TRC-10, TRC-20
 * `transfer`/`transferFrom`/`Approval`, a reverted TRC-20 call, `call_value`, internal TRX transfers (one
 * `rejected`), a reverted call that sent TRX, a TRC-721 Transfer, a creation, a tip above the solidified
 * block and its reorg), every answer held against what the test computes from the scenario's ground truth
 * (test/support/tron/truth.ts: `transfers`, `approvals`), never from the index. The service (CHAIN=NILE,
 * INDEXER=on, CONFIRMATIONS = the stand-in's solidifyDepth) runs in-process in front of the stand-in.
 *
 * - Watch filters (docs/interface.md §5, §17.10): `check` and `check_v2` of every block for filters on alice,
 *   carol, dave, bob and the payout contract (TRX and every token, or USDT only; with and without approvals);
 *   the `watch_filters` subscription over a real WebSocket across `part2.reorg()`.
 * - TronGrid's v1 API (src/http/tronGrid/, src/families/tron/tronGrid/): the TRC-20 rows of alice and dave
 *   (Transfer and Approval), with fingerprint paging in both orders; USDT's events, a transaction's events, a
 *   block's (the TRC-721 Transfer with its 4 topics); carol's and dave's transactions with `search_internal`.
 *   There the service lists the transaction that moved TRX to the address internally, its internal
 *   transactions inside it (src/families/tron/tronGrid/tronGrid.ts). TronGrid itself, as its clients read it
 *   (LedgerHQ/ledger-live coin-tron `MalformedTransactionTronAPI`, horizontalsystems' tron kit
 *   `InternalTransactionData`), also puts each internal transaction in `data` as an item of its own
 *   (`internal_tx_id`, `tx_id`, `from_address`, `to_address`, `data`, `block_timestamp`); that is not served,
 *   and this file holds the service to what it serves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TronWeb } from "tronweb";
import { post, startTestService, type TestService } from "./support/service";
import * as truth from "./support/tron/truth";
import {
  type Part2,
  SCENARIO_KEYS,
  type SignedTx,
  startTronNode,
  TRC10,
  TRC20,
  TRC721,
  type TronNode,
} from "./support/tronNode";
import { until } from "./support/until";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const SOLIDIFY_DEPTH = 4;
const KEY = "tron-part2-key";
const ENV = {
  CHAIN: "NILE",
  INDEXER: "on",
  INDEX_FROM_BLOCK: "0",
  CONFIRMATIONS: String(SOLIDIFY_DEPTH),
  HEAD_POLL_MS: "50",
  API_KEYS: KEY,
};
const CATCH_UP_MS = 60_000;
/** How long a notification may take (the index writes a block within a few head polls; a shared machine). */
const NOTIFY_MS = 20_000;
/** check's page (docs/interface.md §5.4). */
const CHECK_PAGE = 1_000;
const TRX_DECIMALS = 6;
const { alice, bob, carol, dave } = SCENARIO_KEYS;
/** Base58 by tronweb, the real client, not the service's codec or the truth's. */
const USDT = TronWeb.address.fromHex(TRC20.address);
const NFT = TronWeb.address.fromHex(TRC721.address);

let node: TronNode;
let part2: Part2;
let service: TestService;
let payout: string;
let socket: TestSocket;
let subscription: string;

type Json = Record<string, unknown>;
type Row = truth.TransferRow;
type Approval = truth.ApprovalRow;

// ---------------------------------------------------------------------------------------------------------
// Watch filters: the results the truth makes

interface Watched {
  id: string;
  /** base58 */
  address: string;
  /** base58 of a TRC-20, or null */
  contract: string | null;
  withApproval: boolean;
}
const filters: Watched[] = [];

const watch = (method: string, path: string, body: unknown) =>
  post(`${service.url}/watch_filters/${path}`, body, { headers: { "x-api-key": KEY }, method });
const lastBlockNumber = async () =>
  (await watch("GET", "lastBlockNumber", undefined)).json.block_number as number;

/** Every result of a block: check's (or check_v2's) pages, by offset. */
async function checkAll(block: number, path: "check" | "check_v2"): Promise<unknown[]> {
  const all: unknown[] = [];
  for (let offset = 0; offset < 10 * CHECK_PAGE; offset += CHECK_PAGE) {
    const answer = await watch("POST", path, { block_number: block, offset });
    expect({ block, path, status: answer.status }).toEqual({ block, path, status: 200 });
    all.push(...answer.json.filters);
    if (answer.json.filters.length < CHECK_PAGE) return all;
  }
  throw new Error("check did not end within 10 pages");
}

/** Until the index holds the stand-in's head (and its id). */
const indexedToHead = () =>
  until(
    "the index at the stand-in's head",
    async () => ((await lastBlockNumber()) === node.chain.headNumber() ? true : undefined),
    CATCH_UP_MS,
  );

/** A movement a filter can match: a transfer row of the truth or an Approval. */
interface Movement {
  type: "trx" | "trc20" | "trc10" | "approval";
  transactionIndex: number;
  /** A transaction's own row first (-1), then its logs, then its internal transfers (after every log). */
  order: number;
  transactionHash: string;
  from: string;
  to: string;
  /** base58 of a TRC-20; a TRC-10's id; null for TRX */
  contract: string | null;
  value: string;
  decimals: number;
  currency: string;
  fee: number;
  success: boolean;
}

const INTERNAL_ORDER = 1_000_000_000;

function fromRow(r: Row): Movement | undefined {
  if (r.transferType === "erc721transfer") return undefined; // never a filter result (§5.5)
  const type = r.transferType === "erc20transfer" ? "trc20" : r.transferType;
  return {
    type,
    transactionIndex: r.transactionIndex,
    order: r.logIndex ?? (r.internalIndex === null ? -1 : INTERNAL_ORDER + r.internalIndex),
    transactionHash: r.transactionHash,
    from: r.from,
    to: r.to,
    contract: type === "trx" ? null : r.contractAddress,
    value: r.value,
    decimals: r.decimals!,
    currency: r.asset,
    fee: r.fee,
    success: !r.transactionError,
  };
}

const fromApproval = (a: Approval): Movement => ({
  type: "approval",
  transactionIndex: a.transactionIndex,
  order: a.logIndex,
  transactionHash: a.transactionHash,
  from: a.owner,
  to: a.spender,
  contract: a.contractAddress,
  value: a.value,
  decimals: TRC20.decimals,
  currency: TRC20.symbol,
  fee: a.fee,
  success: true,
});

/** Block `n`'s results for the filters, in check's order (transaction, log with its own row first, filter). */
function expectedResults(n: number, version: "v1" | "v2") {
  const block = node.chain.blocks[n]!;
  const created = new Date(Math.floor(block.header.raw_data.timestamp / 1000) * 1000)
    .toISOString()
    .replace(".000Z", "Z");
  const movements = [
    ...truth
      .transfers(node.chain, n, n)
      .filter((r) => version === "v2" || r.internalIndex === null)
      .flatMap((r) => fromRow(r) ?? []),
    ...truth.approvals(node.chain, n, n).map(fromApproval),
  ].sort((a, b) => a.transactionIndex - b.transactionIndex || a.order - b.order);
  const sorted = [...filters].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return movements.flatMap((m) =>
    sorted
      .filter(
        (f) =>
          (f.address === m.from || f.address === m.to) &&
          (f.contract === null || f.contract === m.contract) &&
          (m.type !== "approval" || f.withApproval),
      )
      .map((f) => ({
        from_address: [m.from],
        to_address: [m.to],
        contract_address: m.contract ?? "",
        type: m.type,
        value: { value: Number(m.value), decimals: m.decimals },
        currency: m.currency,
        transaction: {
          hash: m.transactionHash,
          fee: { value: m.fee, decimals: TRX_DECIMALS },
          fee_symbol: "TRX",
        },
        filter_id: f.id,
        filter_target: {
          address: f.address,
          direction:
            m.type === "approval" || m.from === m.to
              ? "unknown"
              : m.to === f.address
                ? "deposit"
                : "withdrawal",
        },
        block: { hash: block.blockID, number: n, created_at: created },
        trx_success: m.success,
      })),
  );
}

async function addFilter(address: string, contract: string | null, withApproval: boolean) {
  const answer = await watch("POST", "add", {
    address,
    contract_address: contract,
    with_approval: withApproval,
  });
  expect(answer.status).toBe(200);
  filters.push({ id: answer.json.filter_id, address, contract, withApproval });
}

// ---------------------------------------------------------------------------------------------------------
// TronGrid's v1 API: the rows the truth makes

async function v1(path: string) {
  const response = await fetch(`${service.url}${path}`, { headers: { "TRON-PRO-API-KEY": KEY } });
  return { status: response.status, body: (await response.json()) as Json };
}
const data = async (path: string) => {
  const { status, body } = await v1(path);
  expect({ path, status, success: body.success }).toEqual({ path, status: 200, success: true });
  return body.data as Json[];
};

/** Every page of `path`, following meta.links.next until there is none. */
async function walk(path: string): Promise<{ rows: Json[]; pages: number }> {
  const rows: Json[] = [];
  let next: string | undefined = path;
  let pages = 0;
  while (next !== undefined && pages < 50) {
    const { status, body } = await v1(next);
    expect({ next, status }).toEqual({ next, status: 200 });
    rows.push(...(body.data as Json[]));
    pages++;
    const meta = body.meta as { fingerprint?: string; links?: { next: string } };
    if (meta.fingerprint === undefined) next = undefined;
    else {
      const link = new URL(meta.links!.next);
      expect(link.searchParams.get("fingerprint")).toBe(meta.fingerprint);
      next = `${link.pathname}${link.search}`;
    }
  }
  return { rows, pages };
}

const msOf = (blockNumber: number) => node.chain.blocks[blockNumber]!.header.raw_data.timestamp;
/** An address in an event's `result`: `0x` + 20 bytes, lower-case. */
const word = (base58: string) => `0x${TronWeb.address.toHex(base58).slice(2).toLowerCase()}`;

/** A TRC-20 row of /v1/accounts/:a/transactions/trc20 (a Transfer or an Approval). */
type Trc20Item = { blockNumber: number; logIndex: number; json: Json };

function trc20Items(address: string): Trc20Item[] {
  const tokenInfo = { symbol: TRC20.symbol, address: USDT, decimals: TRC20.decimals, name: TRC20.name };
  const row = (
    r: { transactionHash: string; blockNumber: number },
    from: string,
    to: string,
    type: string,
    value: string,
  ) => ({
    transaction_id: r.transactionHash,
    token_info: tokenInfo,
    block_timestamp: msOf(r.blockNumber),
    from,
    to,
    type,
    value,
  });
  const transfers = truth
    .transfers(node.chain)
    .filter((r) => r.transferType === "erc20transfer" && (r.from === address || r.to === address))
    .map((r) => ({
      blockNumber: r.blockNumber,
      logIndex: r.logIndex!,
      json: row(r, r.from, r.to, "Transfer", r.value),
    }));
  const approvals = truth
    .approvals(node.chain)
    .filter((a) => a.owner === address || a.spender === address)
    .map((a) => ({
      blockNumber: a.blockNumber,
      logIndex: a.logIndex,
      json: row(a, a.owner, a.spender, "Approval", a.value),
    }));
  return [...transfers, ...approvals].sort(
    (a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex,
  );
}
const newestFirst = (items: Trc20Item[]) => [...items].reverse().map((i) => i.json);

/** Every log of the chain as TronGrid's event row, in chain order (Transfer of TRC-20/721, Approval). */
function eventRows(): { blockNumber: number; transactionHash: string; contract: string; json: Json }[] {
  const logs = [
    ...truth
      .transfers(node.chain)
      .filter((r) => r.logIndex !== null)
      .map((r) => {
        const nft = r.transferType === "erc721transfer";
        return {
          r,
          contract: r.contractAddress!,
          name: "Transfer",
          event: nft
            ? "Transfer(address indexed from, address indexed to, uint256 indexed tokenId)"
            : "Transfer(address indexed from, address indexed to, uint256 value)",
          params: [
            ["from", "address", word(r.from)],
            ["to", "address", word(r.to)],
            [nft ? "tokenId" : "value", "uint256", r.value],
          ],
        };
      }),
    ...truth.approvals(node.chain).map((a) => ({
      r: a,
      contract: a.contractAddress,
      name: "Approval",
      event: "Approval(address indexed owner, address indexed spender, uint256 value)",
      params: [
        ["owner", "address", word(a.owner)],
        ["spender", "address", word(a.spender)],
        ["value", "uint256", a.value],
      ],
    })),
  ].sort((a, b) => a.r.blockNumber - b.r.blockNumber || a.r.logIndex! - b.r.logIndex!);
  // event_index: the log's place among its transaction's logs (every log of the scenario is one of these).
  const firstLog = new Map<string, number>();
  for (const l of logs)
    if (!firstLog.has(l.r.transactionHash)) firstLog.set(l.r.transactionHash, l.r.logIndex!);
  return logs.map((l) => {
    const result: Record<string, string> = {};
    const types: Record<string, string> = {};
    l.params.forEach(([, , value], i) => {
      result[i] = value!;
    });
    for (const [name, type, value] of l.params) {
      result[name!] = value!;
      types[name!] = type!;
    }
    return {
      blockNumber: l.r.blockNumber,
      transactionHash: l.r.transactionHash,
      contract: l.contract,
      json: {
        block_number: l.r.blockNumber,
        block_timestamp: msOf(l.r.blockNumber),
        // Every log's transaction called the emitting contract.
        caller_contract_address: l.contract,
        contract_address: l.contract,
        event_index: l.r.logIndex! - firstLog.get(l.r.transactionHash)!,
        event_name: l.name,
        result,
        result_type: types,
        event: l.event,
        transaction_id: l.r.transactionHash,
      },
    };
  });
}

/**
 * A transaction as the service's TronGrid listing writes it: the node's transaction with its info's figures,
 * and its internal transactions (every one the node keeps, rejected and TRC-10 ones included) from the
 * scenario's movements; their ids and notes are the node's.
 */
function transactionRow(tx: SignedTx): Json {
  const found = node.chain.findTx(tx.txID)!;
  const held = structuredClone(node.chain.transaction(tx.txID)!.tx) as unknown as Json;
  const info = found.info as unknown as Json & { internal_transactions?: { hash: string; note: string }[] };
  const receipt = (info.receipt ?? {}) as Record<string, number>;
  const ms = msOf(found.block.number);
  const internals = found.tx.outcome.movements.flatMap((m) =>
    m.via !== "internal"
      ? []
      : [
          {
            internal_tx_id: info.internal_transactions![m.internalIndex]!.hash,
            data: {
              note: info.internal_transactions![m.internalIndex]!.note,
              rejected: m.rejected,
              call_value: { [m.kind === "trx" ? "_" : m.asset!]: Number(m.amount) },
            },
            block_timestamp: ms,
            to_address: m.to,
            tx_id: tx.txID,
            from_address: m.from,
          },
        ],
  );
  return {
    ret: (held.ret as Json[]).map((r, i) => (i === 0 ? { fee: info.fee ?? 0, ...r } : r)),
    signature: held.signature,
    txID: tx.txID,
    net_usage: receipt.net_usage ?? 0,
    raw_data_hex: held.raw_data_hex,
    net_fee: receipt.net_fee ?? 0,
    energy_usage: receipt.energy_usage ?? 0,
    blockNumber: found.block.number,
    block_timestamp: ms,
    energy_fee: receipt.energy_fee ?? 0,
    energy_usage_total: receipt.energy_usage_total ?? 0,
    raw_data: held.raw_data,
    internal_transactions: internals,
  };
}

// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  node = await startTronNode({ scenario: "part2", network: "NILE", solidifyDepth: SOLIDIFY_DEPTH });
  part2 = node.part2!;
  payout = TronWeb.address.fromHex(part2.payoutContract);
  // The node holds back the tip's blocks (java-tron's `{}` for a block it has not got: a lagging node) until
  // the subscriber is in, so the tip's watched transfer reaches it as its block is indexed.
  const heldFrom = part2.tipBlock;
  const blockOf = (body: any) => Number(body?.id_or_num ?? body?.num);
  node.fail = (call) =>
    call.face === "full" &&
    (call.path === "/wallet/getblock" || call.path === "/wallet/gettransactioninfobyblocknum") &&
    blockOf(call.body) >= heldFrom
      ? new Response("{}", { headers: { "content-type": "application/json" } })
      : undefined;
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  // Each accepted form of an address; added before the index holds anything.
  await addFilter(alice.base58, null, true);
  await addFilter(carol.base58, USDT, true);
  await addFilter(carol.base58, null, false);
  await addFilter(dave.base58, null, false);
  await addFilter(dave.base58, USDT, false);
  await addFilter(bob.base58, null, false);
  await addFilter(bob.base58, USDT, true);
  await addFilter(payout, null, false);
  await until(
    "the index below the held tip",
    async () => ((await lastBlockNumber()) === heldFrom - 1 ? true : undefined),
    CATCH_UP_MS,
  );
  socket = await connectSocket(wsUrl(service.url, KEY));
  subscription = (await socket.request("eth_subscribe", ["watch_filters", { version: "v1" }])).result;
  expect(subscription).toMatch(/^0x[0-9a-f]+$/);
  node.fail = undefined;
  await indexedToHead();
}, 120_000);

afterAll(() => socket?.close());

describe("watch filters on part 2's chain, against the truth", () => {
  test("the chain holds what the filters must tell apart (part2.ts), above and below the solidified block", () => {
    expect(node.chain.solidifiedNumber()).toBeLessThan(part2.tipBlock);
    const rows = truth.transfers(node.chain);
    const of = (tx: SignedTx) => rows.filter((r) => r.transactionHash === tx.txID);
    // The reverted TRC-20 call moved nothing and sent no TRX: no row. The reverted call with 1 TRX: its row.
    expect(of(part2.txs.reverted)).toEqual([]);
    expect(
      of(part2.txs.failedCall).map((r) => [r.transferType, r.from, r.to, r.value, r.transactionError]),
    ).toEqual([["trx", alice.base58, payout, "1000000", true]]);
    // The payout: its call_value, then two internal TRX transfers (bob's 6 TRX rejected, dave's STT no row).
    expect(of(part2.txs.payout).map((r) => [r.to, r.value, r.internalIndex])).toEqual([
      [payout, "10000000", null],
      [carol.base58, "3000000", 0],
      [dave.base58, "2000000", 1],
    ]);
    expect(truth.approvals(node.chain).map((a) => [a.owner, a.spender, a.value])).toEqual([
      [alice.base58, carol.base58, "50000000"],
    ]);
  });

  test("check and check_v2 of every block equal the results computed from the truth", async () => {
    const last = await lastBlockNumber();
    expect(last).toBe(node.chain.headNumber());
    const seen = new Set<string>();
    for (let n = 0; n <= last; n++) {
      for (const version of ["v1", "v2"] as const) {
        const expected = expectedResults(n, version);
        const answer = await checkAll(n, version === "v1" ? "check" : "check_v2");
        expect({ n, version, answer }).toEqual({ n, version, answer: expected as unknown[] });
        for (const r of expected) seen.add(`${version} ${r.type} ${r.trx_success}`);
      }
    }
    // Every kind of result the family has, a failed one among them; internal transfers in check_v2 only.
    expect([...seen].sort()).toEqual([
      "v1 approval true",
      "v1 trc10 true",
      "v1 trc20 true",
      "v1 trx false",
      "v1 trx true",
      "v2 approval true",
      "v2 trc10 true",
      "v2 trc20 true",
      "v2 trx false",
      "v2 trx true",
    ]);
  });

  test("the results spelled out: the approval, transferFrom, the payout's call value and internal transfers, the revert", async () => {
    const [aliceAll, carolUsdt, carolAll, daveAll, daveUsdt, bobAll, bobUsdt, payoutAll] = filters.map(
      (f) => f.id,
    );
    const summary = (r: any) =>
      `${r.type} ${r.from_address[0]}>${r.to_address[0]} ${r.value.value} ${r.currency} ${r.filter_target.direction} ${r.trx_success}`;
    const blockOf = (tx: SignedTx) => node.chain.transaction(tx.txID)!.blockNumber;
    const byFilter = async (tx: SignedTx, path: "check" | "check_v2") => {
      const out: Record<string, string[]> = {};
      for (const r of (await checkAll(blockOf(tx), path)) as any[]) {
        if (r.transaction.hash !== tx.txID) continue;
        out[r.filter_id] = [...(out[r.filter_id] ?? []), summary(r)];
      }
      return out;
    };
    const [a, b, c, d, p] = [alice.base58, bob.base58, carol.base58, dave.base58, payout];
    // The approval: alice (owner) and carol's USDT filter (spender) take it; carol's TRX-and-tokens filter
    // does not (no with_approval), nor bob's.
    expect(await byFilter(part2.txs.approve, "check")).toEqual({
      [aliceAll!]: [`approval ${a}>${c} 50000000 USDT unknown true`],
      [carolUsdt!]: [`approval ${a}>${c} 50000000 USDT unknown true`],
    });
    // transferFrom by carol: alice → dave; carol is neither side of the Transfer.
    expect(await byFilter(part2.txs.transferFrom, "check")).toEqual({
      [aliceAll!]: [`trc20 ${a}>${d} 30000000 USDT withdrawal true`],
      [daveAll!]: [`trc20 ${a}>${d} 30000000 USDT deposit true`],
      [daveUsdt!]: [`trc20 ${a}>${d} 30000000 USDT deposit true`],
    });
    // The payout: check has its call value; check_v2 adds carol's 3 and dave's 2 TRX, never bob's rejected 6
    // nor dave's STT (an internal TRC-10 transfer is no row).
    expect(await byFilter(part2.txs.payout, "check")).toEqual({
      [aliceAll!]: [`trx ${a}>${p} 10000000 TRX withdrawal true`],
      [payoutAll!]: [`trx ${a}>${p} 10000000 TRX deposit true`],
    });
    expect(await byFilter(part2.txs.payout, "check_v2")).toEqual({
      [aliceAll!]: [`trx ${a}>${p} 10000000 TRX withdrawal true`],
      [payoutAll!]: [
        `trx ${a}>${p} 10000000 TRX deposit true`,
        `trx ${p}>${c} 3000000 TRX withdrawal true`,
        `trx ${p}>${d} 2000000 TRX withdrawal true`,
      ],
      [carolAll!]: [`trx ${p}>${c} 3000000 TRX deposit true`],
      [daveAll!]: [`trx ${p}>${d} 2000000 TRX deposit true`],
    });
    // The call that reverted with 1 TRX: its own row only, trx_success false.
    expect(await byFilter(part2.txs.failedCall, "check_v2")).toEqual({
      [aliceAll!]: [`trx ${a}>${p} 1000000 TRX withdrawal false`],
      [payoutAll!]: [`trx ${a}>${p} 1000000 TRX deposit false`],
    });
    // The reverted TRC-20 transfer (no call value) and the TRC-721 transfer are no result at all.
    expect(await byFilter(part2.txs.reverted, "check_v2")).toEqual({});
    expect(await byFilter(part2.txs.trc721, "check_v2")).toEqual({});
    // TRC-10 with its asset id, abbreviation and precision; a USDT filter never takes it.
    const trc10 = ((await checkAll(blockOf(part2.txs.trc10), "check")) as any[]).find(
      (r) => r.transaction.hash === part2.txs.trc10.txID,
    );
    expect(trc10).toMatchObject({
      type: "trc10",
      contract_address: TRC10.id,
      value: { value: 250_000_000, decimals: TRC10.precision },
      currency: TRC10.abbr,
      filter_id: aliceAll,
    });
    expect(await byFilter(part2.txs.trx, "check")).toEqual({
      [aliceAll!]: [`trx ${a}>${b} 1500000 TRX withdrawal true`],
      [bobAll!]: [`trx ${a}>${b} 1500000 TRX deposit true`],
    });
    expect(await byFilter(part2.txs.trc20, "check")).toEqual({
      [aliceAll!]: [`trc20 ${a}>${b} 12345678 USDT withdrawal true`],
      [bobAll!]: [`trc20 ${a}>${b} 12345678 USDT deposit true`],
      [bobUsdt!]: [`trc20 ${a}>${b} 12345678 USDT deposit true`],
    });
  });
});

describe("TronGrid's v1 API on part 2's chain, against the truth", () => {
  test("/v1/accounts/:a/transactions/trc20: alice's and dave's Transfer and Approval rows, both orders", async () => {
    const ofAlice = trc20Items(alice.base58);
    // alice: her transfer to bob, her approval of carol, carol's transferFrom of hers to dave.
    expect(ofAlice.map((i) => `${i.json.type} ${i.json.from}>${i.json.to} ${i.json.value}`)).toEqual([
      `Transfer ${alice.base58}>${bob.base58} 12345678`,
      `Approval ${alice.base58}>${carol.base58} 50000000`,
      `Transfer ${alice.base58}>${dave.base58} 30000000`,
    ]);
    expect(await data(`/v1/accounts/${alice.base58}/transactions/trc20`)).toEqual(newestFirst(ofAlice));
    expect(
      await data(
        `/v1/accounts/${alice.base58}/transactions/trc20?order_by=block_timestamp,asc&contract_address=${USDT}`,
      ),
    ).toEqual(ofAlice.map((i) => i.json));
    const ofDave = trc20Items(dave.base58);
    expect(ofDave).toHaveLength(2);
    expect(await data(`/v1/accounts/${dave.base58}/transactions/trc20`)).toEqual(newestFirst(ofDave));
    expect(await data(`/v1/accounts/${dave.hex}/transactions/trc20?only_from=true`)).toEqual([]);
    // carol: the approval (she is its spender), never the transferFrom she sent (neither side of it).
    expect(await data(`/v1/accounts/${carol.base58}/transactions/trc20`)).toEqual(
      newestFirst(trc20Items(carol.base58)),
    );
    expect(trc20Items(carol.base58).map((i) => i.json.type)).toEqual(["Approval"]);
  });

  test("fingerprint paging walks every row once, newest first and oldest first", async () => {
    for (const who of [alice.base58, dave.base58]) {
      const items = trc20Items(who);
      const desc = await walk(`/v1/accounts/${who}/transactions/trc20?limit=1`);
      expect(desc).toEqual({ rows: newestFirst(items), pages: items.length });
      const asc = await walk(`/v1/accounts/${who}/transactions/trc20?limit=2&order_by=block_timestamp,asc`);
      expect(asc).toEqual({ rows: items.map((i) => i.json), pages: Math.ceil(items.length / 2) });
    }
    const usdt = eventRows().filter((e) => e.contract === USDT);
    const events = await walk(`/v1/contracts/${USDT}/events?limit=2&order_by=block_timestamp,asc`);
    expect(events).toEqual({ rows: usdt.map((e) => e.json), pages: Math.ceil(usdt.length / 2) });
  });

  test("events: USDT's, the approval's and transferFrom's transactions, the TRC-721 block's 4-topic Transfer", async () => {
    const all = eventRows();
    const usdt = all.filter((e) => e.contract === USDT);
    expect(await data(`/v1/contracts/${USDT}/events?limit=200`)).toEqual(
      [...usdt].reverse().map((e) => e.json),
    );
    expect(await data(`/v1/contracts/${USDT}/events?event_name=Approval`)).toEqual(
      usdt.filter((e) => e.json.event_name === "Approval").map((e) => e.json),
    );
    for (const tx of [part2.txs.approve, part2.txs.transferFrom]) {
      const expected = all.filter((e) => e.transactionHash === tx.txID).map((e) => e.json);
      expect(expected).toHaveLength(1);
      expect(await data(`/v1/transactions/${tx.txID}/events`)).toEqual(expected);
    }
    // The reverted call left no logs.
    expect(await data(`/v1/transactions/${part2.txs.reverted.txID}/events`)).toEqual([]);
    const nftBlock = node.chain.transaction(part2.txs.trc721.txID)!.blockNumber;
    const inBlock = all.filter((e) => e.blockNumber === nftBlock).map((e) => e.json);
    expect(await data(`/v1/blocks/${nftBlock}/events`)).toEqual(inBlock);
    expect(inBlock[0]).toMatchObject({
      contract_address: NFT,
      event_name: "Transfer",
      event: "Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
      result: { tokenId: "3", from: word(SCENARIO_KEYS.issuer.base58), to: word(alice.base58) },
      result_type: { from: "address", to: "address", tokenId: "uint256" },
    });
    expect(await data(`/v1/contracts/${NFT}/events`)).toEqual([inBlock[0]!]);
  });

  test("/v1/accounts/:a/transactions with search_internal: the payout's internal TRX transfers to carol and dave", async () => {
    const { fundCarol, fundDave, transferFrom, payout: payoutTx, daveTrx, tip } = part2.txs;
    expect(await data(`/v1/accounts/${carol.base58}/transactions`)).toEqual(
      [payoutTx, transferFrom, fundCarol].map(transactionRow),
    );
    expect(await data(`/v1/accounts/${carol.base58}/transactions?search_internal=false`)).toEqual(
      [transferFrom, fundCarol].map(transactionRow),
    );
    expect(await data(`/v1/accounts/${dave.base58}/transactions?order_by=block_timestamp,asc`)).toEqual(
      [fundDave, payoutTx, daveTrx, tip].map(transactionRow),
    );
    expect(await data(`/v1/accounts/${dave.base58}/transactions?search_internal=false&only_to=true`)).toEqual(
      [tip, daveTrx, fundDave].map(transactionRow),
    );
    // The payout's row lists every internal transaction the node keeps: bob's rejected 6 TRX and dave's STT too.
    const internals = transactionRow(payoutTx).internal_transactions as Json[];
    expect(internals.map((t) => [t.to_address, t.data])).toEqual([
      [carol.hex, { note: expect.any(String), rejected: false, call_value: { _: 3_000_000 } }],
      [dave.hex, { note: expect.any(String), rejected: false, call_value: { _: 2_000_000 } }],
      [bob.hex, { note: expect.any(String), rejected: true, call_value: { _: 6_000_000 } }],
      [dave.hex, { note: expect.any(String), rejected: false, call_value: { [TRC10.id]: 5_000_000 } }],
    ]);
  });
});

describe("the watch_filters subscription across part 2's reorg", () => {
  test("the tip's alice → dave 4 TRX as its block came, again removed after the reorg, then the branch's USDT 2", async () => {
    const tipResults = expectedResults(part2.tipBlock, "v1");
    expect(
      tipResults.map(
        (r) => `${r.type} ${r.value.value} ${r.filter_target.address} ${r.filter_target.direction}`,
      ),
    ).toEqual(
      [alice, dave]
        .map((k) => filters.find((f) => f.address === k.base58 && f.contract === null)!)
        .sort((x, y) => (x.id < y.id ? -1 : 1))
        .map((f) => `trx 4000000 ${f.address} ${f.address === dave.base58 ? "deposit" : "withdrawal"}`),
    );
    // Everything the subscriber got so far: the held blocks' results (the tip's only).
    expect(await socket.waitFor(subscription, tipResults.length, NOTIFY_MS)).toEqual(tipResults);
    expect(part2.reorg()).toEqual({ dropped: [part2.txs.tip.txID], added: [part2.replacement!.txID] });
    const branch = expectedResults(part2.tipBlock, "v1");
    // alice's filter, dave's and dave's USDT one take the replacement.
    expect(branch.map((r) => `${r.type} ${r.transaction.hash} ${r.filter_id}`)).toEqual(
      filters
        .filter((f) => f.address === alice.base58 || f.address === dave.base58)
        .map((f) => f.id)
        .sort()
        .map((id) => `trc20 ${part2.replacement!.txID} ${id}`),
    );
    const all = await socket.waitFor(subscription, tipResults.length * 2 + branch.length, NOTIFY_MS);
    expect(all).toEqual([...tipResults, ...tipResults.map((r) => ({ ...r, removed: true })), ...branch]);
    await indexedToHead();
    expect(await checkAll(part2.tipBlock, "check")).toEqual(branch);
    // The branch's other blocks move nothing watched.
    for (let n = part2.tipBlock + 1; n <= node.chain.headNumber(); n++) {
      expect(await checkAll(n, "check_v2")).toEqual([]);
    }
    await Bun.sleep(500);
    expect(socket.notifications(subscription)).toHaveLength(all.length);
    // v1 follows too: dave's TRC-20 rows with the replacement, his transactions without the tip.
    expect(await data(`/v1/accounts/${dave.base58}/transactions/trc20`)).toEqual(
      newestFirst(trc20Items(dave.base58)),
    );
    expect(trc20Items(dave.base58).at(-1)!.json.transaction_id).toBe(part2.replacement!.txID);
    const { fundDave, payout: payoutTx, daveTrx } = part2.txs;
    expect(await data(`/v1/accounts/${dave.base58}/transactions`)).toEqual(
      [daveTrx, payoutTx, fundDave].map(transactionRow),
    );
  }, 60_000);
});
