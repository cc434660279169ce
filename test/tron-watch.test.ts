/**
 * Watch filters on TRON (issue 33 item 3; design §14 "Watch filters"): the service (CHAIN=NILE,
 * INDEXER=on, CONFIRMATIONS the stand-in's solidify depth) in front of the stand-in java-tron
 * (test/support/tronNode.ts), with PostgreSQL:
 * - filters on TRON addresses in each accepted form (base58, `41...` hex, `0x` + 20 bytes), kept and shown
 *   in base58; a bad checksum, a malformed address, an account or a TRC-10 id as `contract_address` 422
 *   naming the field and why;
 * - every result of check and check_v2 of every block of the index compared exactly with what the test
 *   computes from the scenario's transactions (TRX, TRC-10, TRC-20 transfers; a reverted TRC-20 call that
 *   sent TRX with it; a reverted one that did not), for two keys; `lastBlockNumber` the index's last block,
 *   the head's, above the solidified block;
 * - the `watch_filters` subscription over a real WebSocket: a watched transfer as its block arrives, then a
 *   reorg above the solidified block that drops it and mines another: the dropped one's results again with
 *   `"removed": true`, then the new one's; check of that height gives the new branch's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AbiCoder } from "ethers";
import postgres from "postgres";
import { hashKey } from "../src/db/apiKeys";
import { createBlockQueries } from "../src/db/blockQueries";
import { describeTronChain, TRON_NETWORKS } from "../src/families/tron/chains";
import { createTronWatchMatcher } from "../src/families/tron/watchMatcher";
import { toJson } from "../src/json";
import { expectResultsOfKeysAsEach } from "./support/resultsOfKeys";
import { post, startTestService, type TestService } from "./support/service";
import { bytesToHex, hexToBase58, hexToBytes, type TronKey } from "./support/tron/codec";
import { SELECTORS, type SignedTx, signTransaction } from "./support/tron/scenario";
import { SCENARIO_KEYS, startTronNode, TRC10, TRC20, type TronNode } from "./support/tronNode";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const KEY_A = "tron-watch-a";
const KEY_B = "tron-watch-b";
/** The stand-in's solidify depth, and CONFIRMATIONS: finality follows the solidified block. */
const DEPTH = 4;
const ENV = {
  CHAIN: "NILE",
  INDEXER: "on",
  INDEX_FROM_BLOCK: "0",
  CONFIRMATIONS: String(DEPTH),
  HEAD_POLL_MS: "50",
  API_KEYS: `${KEY_A},${KEY_B}`,
};
/** How long a notification may take (the index writes a block within a few head polls; a shared machine). */
const NOTIFY_MS = 15_000;
const { alice, bob, carol, issuer } = SCENARIO_KEYS;
const abi = AbiCoder.defaultAbiCoder();
const TRX_DECIMALS = 6;
/** A TRC-20 call's fee limit (sun), as the scenario's builder sets it. */
const FEE_LIMIT = 100_000_000n;

let node: TronNode;
let service: TestService;

/** The filters of each key: the address (41-hex) and contract (41-hex or null) each follows. */
interface Watched {
  id: string;
  address: string;
  contract: string | null;
  withApproval: boolean;
}
const filters: Record<string, Watched[]> = { [KEY_A]: [], [KEY_B]: [] };

const as = (key: string) => ({ headers: { "x-api-key": key } });
const watch = (method: string, path: string, body: unknown, key = KEY_A) =>
  post(`${service.url}/watch_filters/${path}`, body, { ...as(key), method });
const lastBlockNumber = async () =>
  (await watch("GET", "lastBlockNumber", undefined)).json.block_number as number;

/** Every result of a block for a key: check's (or check_v2's) pages, by offset. */
async function checkAll(key: string, block: number, path = "check"): Promise<unknown[]> {
  const all: unknown[] = [];
  for (let offset = 0; ; offset += 1_000) {
    const answer = await watch("POST", path, { block_number: block, offset }, key);
    expect(answer.status).toBe(200);
    all.push(...answer.json.filters);
    if (answer.json.filters.length < 1_000) return all;
  }
}

/** Until the index holds the stand-in's head. */
const indexedToHead = () =>
  until(
    "the index at the stand-in's head",
    async () => ((await lastBlockNumber()) === node.chain.headNumber() ? true : undefined),
    NOTIFY_MS,
  );

// ---------------------------------------------------------------------------------------------------------
// What the results must be, from the scenario's transactions (never from the index)

interface Movement {
  type: "trx" | "trc20" | "trc10";
  from: string;
  to: string;
  /** 41-hex of a TRC-20; a TRC-10's asset id; null for TRX. */
  contract: string | null;
  value: bigint;
  decimals: number;
  currency: string;
  txID: string;
  fee: bigint;
  success: boolean;
}

/** A TRC-20 `transfer(address,uint256)` call's recipient (41-hex) and amount. */
function trc20Call(data: Uint8Array): { to: string; amount: bigint } | undefined {
  const hex = bytesToHex(data);
  if (!hex.startsWith(SELECTORS.transfer)) return undefined;
  const [to, amount] = abi.decode(["address", "uint256"], `0x${hex.slice(8)}`);
  return { to: `41${(to as string).slice(2).toLowerCase()}`, amount: amount as bigint };
}

/** One transaction's movements in the order the index keeps them (its own TRX first, then its log). */
function movementsOf(tx: SignedTx & { contractRet: string }, fee: bigint): Movement[] {
  const c = tx.raw.contract;
  const success = tx.contractRet === "SUCCESS";
  const base = { txID: tx.txID, fee, success, from: bytesToHex(c.value.owner_address) };
  const trx = { type: "trx" as const, contract: null, decimals: TRX_DECIMALS, currency: "TRX" };
  if (c.type === "TransferContract") {
    return [{ ...base, ...trx, to: bytesToHex(c.value.to_address), value: c.value.amount }];
  }
  if (c.type === "TransferAssetContract") {
    const id = new TextDecoder().decode(c.value.asset_name);
    expect(id).toBe(TRC10.id);
    const asset = { type: "trc10" as const, contract: id, decimals: TRC10.precision, currency: TRC10.abbr };
    return [{ ...base, ...asset, to: bytesToHex(c.value.to_address), value: c.value.amount }];
  }
  // The part-1 chain this file builds holds no creation: every other transaction is a contract call.
  if (c.type !== "TriggerSmartContract") throw new Error(`no movements written for ${c.type}`);
  const contract = bytesToHex(c.value.contract_address);
  const out: Movement[] = [];
  if ((c.value.call_value ?? 0n) > 0n)
    out.push({ ...base, ...trx, to: contract, value: c.value.call_value! });
  const call = c.value.data && trc20Call(c.value.data);
  // A reverted call moves no token (and writes no log).
  if (success && contract === TRC20.address && call) {
    const token = { type: "trc20" as const, contract, decimals: TRC20.decimals, currency: TRC20.symbol };
    out.push({ ...base, ...token, to: call.to, value: call.amount });
  }
  return out;
}

/** The stand-in's block `n` as it is now: its id, time (s) and movements. */
function scenarioBlock(n: number) {
  const b = node.chain.blocks[n]!;
  const movements = b.txs.flatMap((tx, i) => movementsOf(tx, BigInt(b.infos[i]?.fee ?? 0)));
  const seconds = Math.floor(b.header.raw_data.timestamp / 1_000);
  return {
    hash: b.blockID,
    number: n,
    created_at: new Date(seconds * 1_000).toISOString().replace(".000", ""),
    movements,
  };
}

/** A block's results for a key's filters, in check's order: movement, then filter id. */
function expectedResults(n: number, key: string) {
  const block = scenarioBlock(n);
  const sorted = [...filters[key]!].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return block.movements.flatMap((m) =>
    sorted
      .filter(
        (f) =>
          (f.address === m.from || f.address === m.to) && (f.contract === null || f.contract === m.contract),
      )
      .map((f) => ({
        from_address: [hexToBase58(m.from)],
        to_address: [hexToBase58(m.to)],
        contract_address: m.type === "trx" ? "" : m.type === "trc20" ? hexToBase58(m.contract!) : m.contract,
        type: m.type,
        value: { value: Number(m.value), decimals: m.decimals },
        currency: m.currency,
        transaction: {
          hash: m.txID,
          fee: { value: Number(m.fee), decimals: TRX_DECIMALS },
          fee_symbol: "TRX",
        },
        filter_id: f.id,
        filter_target: {
          address: hexToBase58(f.address),
          direction: m.from === m.to ? "unknown" : m.to === f.address ? "deposit" : "withdrawal",
        },
        block: { hash: block.hash, number: n, created_at: block.created_at },
        trx_success: m.success,
      })),
  );
}

/** A TRC-20 `transfer` that reverts (more than the sender holds), sending `callValue` sun with it. */
function revertedWithValue(from: TronKey, callValue: bigint): SignedTx {
  const data = `${SELECTORS.transfer}${abi.encode(["address", "uint256"], [`0x${carol.hex.slice(2)}`, 10n ** 15n]).slice(2)}`;
  const value = {
    owner_address: hexToBytes(from.hex),
    contract_address: hexToBytes(TRC20.address),
    call_value: callValue,
    data: hexToBytes(data),
  };
  return signTransaction(node.chain.unsigned({ type: "TriggerSmartContract", value }, FEE_LIMIT), from);
}

async function addFilter(
  key: string,
  body: Record<string, unknown>,
  address: string,
  contract: string | null,
) {
  const answer = await watch("POST", "add", body, key);
  expect(answer.status).toBe(200);
  filters[key]!.push({
    id: answer.json.filter_id,
    address,
    contract,
    withApproval: body.with_approval === true,
  });
}

// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  node = await startTronNode({ network: "NILE", solidifyDepth: DEPTH });
  // More than the scenario's: TRC-10 and USDT to and from bob, and a reverted call that sent TRX.
  node.mine(1, [
    node.chain.trc10(issuer, bob.hex, 5_000_000n),
    node.chain.trc20Transfer(bob, carol.hex, 2_000_000n),
    revertedWithValue(bob, 3_000_000n),
  ]);
  node.mine(2);
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  // Each accepted form of an address; the filters are added before the index holds anything.
  await addFilter(
    KEY_A,
    { address: alice.base58, contract_address: null, with_approval: true },
    alice.hex,
    null,
  );
  await addFilter(
    KEY_A,
    { address: bob.hex, contract_address: `0x${TRC20.address.slice(2)}` },
    bob.hex,
    TRC20.address,
  );
  await addFilter(KEY_A, { address: `0x${carol.hex.slice(2)}` }, carol.hex, null);
  await addFilter(KEY_B, { address: bob.base58, contract_address: null }, bob.hex, null);
  await indexedToHead();
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await node?.stop();
});

describe("TRON watch filters: check, check_v2, lastBlockNumber", () => {
  test("every block's results exactly as computed from the scenario's transactions, for each key (check and check_v2)", async () => {
    const last = await lastBlockNumber();
    const seen = new Set<string>();
    for (let n = 0; n <= last; n++) {
      for (const key of [KEY_A, KEY_B]) {
        const expected = expectedResults(n, key);
        expect(await checkAll(key, n)).toEqual(expected);
        // No internal TRX transfers in these blocks: check_v2 is check.
        expect(await checkAll(key, n, "check_v2")).toEqual(expected);
        for (const r of expected) seen.add(`${r.type}:${r.trx_success}`);
      }
    }
    // The blocks hold each kind of result the stand-in makes, a failed one among them.
    expect([...seen].sort()).toEqual(["trc10:true", "trc20:true", "trx:false", "trx:true"]);
    // One result spelled out: the scenario's USDT transfer as alice's filter sees it.
    const block = node.chain.blocks.findIndex((b) => b.txs.some((t) => t.txID === node.scenario.trc20.txID));
    const aliceFilter = filters[KEY_A]![0]!.id;
    const usdt = (await checkAll(KEY_A, block)).find(
      (r: any) => r.type === "trc20" && r.filter_id === aliceFilter,
    ) as any;
    expect(usdt).toMatchObject({
      from_address: [alice.base58],
      to_address: [bob.base58],
      contract_address: hexToBase58(TRC20.address),
      value: { value: 12_345_678, decimals: 6 },
      currency: "USDT",
      transaction: { hash: node.scenario.trc20.txID },
      filter_target: { address: alice.base58, direction: "withdrawal" },
      trx_success: true,
    });
    expect(usdt.transaction.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(usdt.block.hash).toBe(node.chain.blocks[block]!.blockID);
  });

  test("resultsOfKeys (webhooks' producer) gives each key exactly results(key), v1 and v2, on every block; a key with none is absent", async () => {
    const sql = postgres(service.databaseUrl, { max: 2 });
    try {
      // Open mode's key (stored empty): a filter of its own on alice.
      await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
        values ('\\x'::bytea, decode(${alice.hex}, 'hex'), null, true)`;
      const nile = TRON_NETWORKS.NILE;
      const chain = describeTronChain(`${nile.chainId}:${nile.genesis}`, {
        blockchain: "NILE",
        confirmations: DEPTH,
      });
      // Results read the index only (the node is asked about a filter's contract when it is added): no engine.
      const matcher = createTronWatchMatcher({ sql, guard: (q) => q, engine: undefined as never, chain });
      const blocks = createBlockQueries(sql);
      const [a, b, none] = [KEY_A, KEY_B, "tron-watch-none"].map(hashKey);
      const keys = [a!, b!, none!, null];
      const last = await lastBlockNumber();
      const kinds = new Set<string>();
      for (let n = 0; n <= last; n++) {
        const block = { number: BigInt(n), ...(await blocks.block(BigInt(n)))! };
        for (const version of ["v1", "v2"] as const) {
          const { all, each } = await expectResultsOfKeysAsEach(matcher, keys, block, version);
          for (const [key, results] of each)
            for (const r of results) kinds.add(`${key === null ? "open" : key === a ? "a" : "b"}:${r.type}`);
          // As check answers them: the scenario's.
          const answered = (key: string) => JSON.parse(toJson(all.get(key) ?? []));
          expect(answered(a!)).toEqual(expectedResults(n, KEY_A));
          expect(answered(b!)).toEqual(expectedResults(n, KEY_B));
        }
      }
      // Key A's filter with a contract (bob's USDT), and open mode's, found results of each kind.
      expect([...kinds].sort()).toEqual([
        "a:trc10",
        "a:trc20",
        "a:trx",
        "b:trc10",
        "b:trc20",
        "b:trx",
        "open:trc10",
        "open:trc20",
        "open:trx",
      ]);
    } finally {
      await sql`delete from watch_filters where key_hash = '\\x'::bytea`;
      await sql.end();
    }
  });

  test("lastBlockNumber is the index's last block (the head, above the solidified block); a block above it is 404", async () => {
    const head = node.chain.headNumber();
    expect(await lastBlockNumber()).toBe(head);
    expect(head).toBeGreaterThan(node.chain.solidifiedNumber());
    node.mine(1);
    await indexedToHead();
    expect(await lastBlockNumber()).toBe(head + 1);
    const above = await watch("POST", "check", { block_number: head + 2 });
    expect(above.status).toBe(404);
    expect(above.json.detail).toBe(
      `block ${head + 2} is not processed yet; the last processed block is ${head + 1}`,
    );
  });

  test("filters are kept and shown in base58 whatever form named them; bad addresses and contracts 422 naming why", async () => {
    const info = await watch("POST", "info", { address: `0x${bob.hex.slice(2)}` });
    expect(info.status).toBe(200);
    expect(info.json.filters.map((f: any) => [f.address, f.contract_address, f.blockchain])).toEqual([
      [bob.base58, hexToBase58(TRC20.address), "NILE"],
    ]);
    // Adding the same filter in another form is the same filter.
    const again = await watch("POST", "add", {
      address: bob.base58,
      contract_address: hexToBase58(TRC20.address),
    });
    expect(again.json.filter_id).toBe(filters[KEY_A]![1]!.id);

    const should =
      "Input should be a TRON address: base58check T... (34 characters), 41 followed by 40 hex digits, or 0x and 40 hex digits";
    const badChecksum = `${alice.base58.slice(0, -1)}${alice.base58.endsWith("1") ? "2" : "1"}`;
    // What is wrong is named: a base58check text whose checksum fails, or no address at all.
    const checksum = `${should}; bad base58check checksum`;
    const none = `${should}; not a TRON address`;
    for (const [body, field, msg] of [
      [{ address: badChecksum }, "address", checksum],
      [{ address: `41${"ab".repeat(19)}` }, "address", none],
      [{ address: bob.base58, contract_address: TRC10.id }, "contract_address", none],
      [
        { address: bob.base58, contract_address: `${hexToBase58(TRC20.address).slice(0, -1)}z` },
        "contract_address",
        checksum,
      ],
    ] as const) {
      const answer = await watch("POST", "add", body);
      expect(answer.status).toBe(422);
      expect(answer.json.detail).toEqual([{ loc: ["body", field], msg, type: "string_pattern_mismatch" }]);
    }
    // An account is no TRC-20 contract.
    const account = await watch("POST", "add", { address: bob.base58, contract_address: carol.base58 });
    expect(account.status).toBe(422);
    expect(account.json.detail).toEqual([
      {
        loc: ["body", "contract_address"],
        msg: `${carol.base58} is not a TRC-20 contract (it answers no decimals(): an account, a TRC-721 or another contract); a filter names a TRC-20 contract, or null for TRX, TRC-10 and every token`,
        type: "value_error",
      },
    ]);
    expect((await watch("POST", "info", { address: badChecksum })).status).toBe(422);
  });
});

test("the API document's FilterType is the family's: trx, trc20, approval, trc10", async () => {
  const doc = (await (await fetch(`${service.url}/swagger/json`)).json()) as any;
  const types = doc.components.schemas.FilterType.anyOf.map((t: { const: string }) => t.const);
  expect(types).toEqual(["trx", "trc20", "approval", "trc10"]);
  expect(JSON.stringify(doc.paths["/watch_filters/check"])).toContain("FilterResult");
});

describe("TRON watch_filters over a real WebSocket", () => {
  test("a watched transfer as its block arrives; a reorg above the solidified block: its results removed, the new branch's sent", async () => {
    await indexedToHead();
    const socket = await connectSocket(wsUrl(service.url, KEY_A));
    const { result: id } = await socket.request("eth_subscribe", ["watch_filters", { version: "v1" }]);
    expect(id).toMatch(/^0x[0-9a-f]+$/);
    // Both built on a block the reorg keeps; alice and carol are watched by KEY_A.
    const replacement = node.chain.trc20Transfer(alice, carol.hex, 777_000n);
    const dropped = node.chain.trx(alice, carol.hex, 4_000_000n);
    node.mine(1, [dropped]);
    const height = node.chain.headNumber();
    const first = expectedResults(height, KEY_A);
    // alice's filter and carol's (in filter id order).
    expect(first.map((r) => `${r.type} ${r.filter_target.direction}`).sort()).toEqual([
      "trx deposit",
      "trx withdrawal",
    ]);
    expect(await socket.waitFor(id, first.length, NOTIFY_MS)).toEqual(first);

    expect(height - 1).toBeGreaterThan(node.chain.solidifiedNumber());
    node.reorg(1, [replacement]);
    const second = expectedResults(height, KEY_A);
    expect(second.map((r) => [r.type, r.transaction.hash])).toEqual([
      ["trc20", replacement.txID],
      ["trc20", replacement.txID],
    ]);
    const all = await socket.waitFor(id, first.length * 2 + second.length, NOTIFY_MS);
    expect(all).toEqual([...first, ...first.map((r) => ({ ...r, removed: true })), ...second]);
    await indexedToHead();
    expect(await checkAll(KEY_A, height)).toEqual(second);
    // Nothing more: the new branch's next block moves nothing of KEY_A's.
    await Bun.sleep(500);
    expect(socket.notifications(id)).toHaveLength(all.length);
    socket.close();
  }, 60_000);

  test("pending is refused naming the chain; newPendingTransactions names watch_filters among the kinds served", async () => {
    const socket = await connectSocket(wsUrl(service.url, KEY_A));
    expect((await socket.request("eth_subscribe", ["watch_filters", { pending: true }])).error).toEqual({
      code: -32602,
      message:
        'invalid params: "pending" is not served on NILE: its watch filters match blocks only, not the nodes\' mempool',
    });
    expect((await socket.request("eth_subscribe", ["newPendingTransactions"])).error).toEqual({
      code: -32601,
      message:
        "the subscription newPendingTransactions is not served on NILE: java-tron has no pending transactions to show (its JSON-RPC has no transaction pool); subscribe to newHeads, logs or watch_filters",
    });
    socket.close();
  });
});
