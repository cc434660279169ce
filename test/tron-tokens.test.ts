/**
 * TRON's token balances and metadata (src/families/tron/tokens.ts) over REST and JSON-RPC, the service
 * (CHAIN=NILE, INDEXER=on, CONFIRMATIONS = the stand-in's solidifyDepth) in front of the stand-in java-tron
 * (test/support/tronNode.ts) and a real PostgreSQL. The expected balances are written from the scenario's
 * genesis allocations and its own transactions (amounts, and the fees the infos charge), never read from the
 * service's index: TRX in sun, the TRC-10 asset with its precision, the TRC-20 after alice's transfer to bob;
 * every address in an answer base58; a bad base58check checksum a 422 naming it.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { TronWeb } from "tronweb";
import { post, startTestService, type TestService } from "./support/service";
import { onTeardown } from "./support/shared";
import {
  GENESIS_TRC20,
  GENESIS_TRX,
  SCENARIO_KEYS,
  type SignedTx,
  startTronNode,
  TRC10,
  TRC20,
  type TronNode,
} from "./support/tronNode";
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
/** The contract's base58, by tronweb (the real client), not the service's codec. */
const TRC20_BASE58 = TronWeb.address.fromHex(TRC20.address);
/** An asset id the stand-in has no asset for. */
const NO_ASSET = "1000999";

let node: TronNode;
let service: TestService;
let started: number;

const rest = (name: string, body: unknown) => post(`${service.url}/node/rest/${name}`, body);
const jsonrpc = (method: string, params: unknown[]) =>
  post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });

/** Asks REST and JSON-RPC; both must answer exactly (JSON-RPC's list named `token_balances`). */
async function both(name: string, method: string, body: unknown, params: unknown[], result: string) {
  const r = await rest(name, body);
  expect({ name, body, status: r.status, text: r.text }).toEqual({ name, body, status: 200, text: result });
  const j = await jsonrpc(method, params);
  expect({ method, params, text: j.text }).toEqual({
    method,
    params,
    text: `{"jsonrpc":"2.0","id":1,"result":${result.replace('"tokenBalances":', '"token_balances":')}}`,
  });
}

// ---------------------------------------------------------------------------------------------------------
// The truth: genesis, then what the scenario's transactions move and what their infos charge

const feeOf = (tx: SignedTx) => BigInt(node.chain.info(tx.txID)?.fee ?? 0);
const trx = new Map<string, bigint>();
const trc10 = new Map<string, bigint>();
const trc20 = new Map<string, bigint>();
const add = (m: Map<string, bigint>, hex: string, v: bigint) => m.set(hex, (m.get(hex) ?? 0n) + v);

function computeBalances(): void {
  const s = node.scenario;
  for (const [hex, v] of Object.entries(GENESIS_TRX)) add(trx, hex, v);
  for (const [hex, v] of Object.entries(GENESIS_TRC20)) add(trc20, hex, v);
  add(trc10, TRC10.owner, TRC10.totalSupply);
  // block 1: alice sends bob 1.5 TRX; the issuer sends alice 250 STT
  add(trx, alice.hex, -1_500_000n - feeOf(s.trx));
  add(trx, bob.hex, 1_500_000n);
  add(trc10, issuer.hex, -250_000_000n);
  add(trc10, alice.hex, 250_000_000n);
  add(trx, issuer.hex, -feeOf(s.trc10));
  // block 2: alice sends bob 12.345678 USDT; bob's 20 USDT to carol reverts, and only burns its energy
  add(trc20, alice.hex, -12_345_678n);
  add(trc20, bob.hex, 12_345_678n);
  add(trx, alice.hex, -feeOf(s.trc20));
  add(trx, bob.hex, -feeOf(s.reverted));
}

const item = (contract: string, balance: bigint | undefined, decimals: number | null) =>
  balance === undefined
    ? `{"contractAddress":"${contract}","tokenBalance":null,"decimals":${decimals},"error":true}`
    : `{"contractAddress":"${contract}","tokenBalance":"${balance}","decimals":${decimals},"error":null}`;
const balancesJson = (address: string, items: string[]) =>
  `{"address":"${address}","tokenBalances":[${items.join(",")}]}`;

beforeAll(async () => {
  started = Math.floor(Date.now() / 1000) * 1000;
  node = await startTronNode({ solidifyDepth: SOLIDIFY_DEPTH });
  computeBalances();
  service = await startTestService({ upstreamUrls: [node.url], env: ENV });
  const db = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
  onTeardown(() => db.end());
  const head = node.chain.head.number;
  await until(
    `the index to reach block ${head}`,
    async () => {
      const [row] = await db`select last_block::text as last from indexer_state`.catch(() => [undefined]);
      return row && Number(row.last) === head ? true : undefined;
    },
    CATCH_UP_MS,
  );
}, 120_000);

describe("token balances", () => {
  test("TRX in sun, the TRC-10 with its precision and the TRC-20 after the transfer, exact, in the order asked", async () => {
    const tokens = ["TRX", TRC20.address, TRC10.id, TRC20_BASE58];
    for (const [key, form] of [
      [alice, alice.base58],
      [bob, bob.hex],
      [issuer, `0x${issuer.hex.slice(2)}`],
    ] as const) {
      const expected = balancesJson(key.base58, [
        item("TRX", trx.get(key.hex) ?? 0n, 6),
        item(TRC20_BASE58, trc20.get(key.hex) ?? 0n, TRC20.decimals),
        item(TRC10.id, trc10.get(key.hex) ?? 0n, TRC10.precision),
        item(TRC20_BASE58, trc20.get(key.hex) ?? 0n, TRC20.decimals),
      ]);
      await both(
        "get_token_balances",
        "watch_getTokenBalances",
        { address: form, list_contract_address: tokens },
        [form, tokens],
        expected,
      );
    }
    // The figures the test wrote, spelled out once: alice after 1.5 TRX and 12.345678 USDT out, 250 STT in.
    expect([trc20.get(alice.hex), trc20.get(bob.hex), trc10.get(alice.hex)]).toEqual([
      987_654_322n,
      12_345_678n,
      250_000_000n,
    ]);
    // TRX and the TRC-10 are one getaccount at the head (the full face), in the node's hex form.
    const accounts = node.calls.filter((c) => c.path.endsWith("/getaccount"));
    expect(accounts.every((c) => c.face === "full")).toBe(true);
    expect(accounts.map((c) => (c.body as { address: string }).address)).toContain(alice.hex);
  });

  test("an account the chain has never seen holds nothing; no contract and no asset are errors", async () => {
    const tokens = ["TRX", TRC10.id, TRC20_BASE58, carol.base58, NO_ASSET];
    await both(
      "get_token_balances",
      "watch_getTokenBalances",
      { address: carol.base58, list_contract_address: tokens },
      [carol.base58, tokens],
      balancesJson(carol.base58, [
        item("TRX", 0n, 6),
        item(TRC10.id, 0n, TRC10.precision),
        item(TRC20_BASE58, 0n, TRC20.decimals),
        item(carol.base58, undefined, null),
        item(NO_ASSET, undefined, null),
      ]),
    );
  });

  test("DEFAULT_TOKENS: TRX, then the tokens transferred most in the last day (the reverted call not counted)", async () => {
    // One TRC-20 and one TRC-10 transfer, one sender each: the tie goes to the TRC-20.
    const j = await jsonrpc("watch_getTokenBalances", [bob.base58, "DEFAULT_TOKENS"]);
    expect(j.text).toBe(
      `{"jsonrpc":"2.0","id":1,"result":${balancesJson(bob.base58, [
        item("TRX", trx.get(bob.hex)!, 6),
        item(TRC20_BASE58, 12_345_678n, TRC20.decimals),
        item(TRC10.id, 0n, TRC10.precision),
      ]).replace('"tokenBalances":', '"token_balances":')}}`,
    );
  });
});

describe("token metadata", () => {
  test("a TRC-20 by triggerconstantcontract and a TRC-10 by its id, in base58 and decimal text", async () => {
    const check = async (token: string, contract: string, name: string, symbol: string, decimals: number) => {
      for (const answer of [
        (await rest("get_token_metadata", { token_address: token })).json,
        (await jsonrpc("watch_getTokenMetadata", [token])).json.result,
      ]) {
        const { lastUpdate, ...rest } = answer;
        expect({ token, rest }).toEqual({
          token,
          rest: {
            contractAddress: contract,
            blockchain: "NILE",
            tokenName: name,
            tokenSymbol: symbol,
            tokenDecimals: decimals,
          },
        });
        // When it was read: during this run, to the second.
        expect(Date.parse(lastUpdate)).toBeGreaterThanOrEqual(started);
        expect(Date.parse(lastUpdate)).toBeLessThanOrEqual(Date.now());
      }
    };
    for (const form of [TRC20_BASE58, TRC20.address, `0x${TRC20.address.slice(2)}`]) {
      await check(form, TRC20_BASE58, TRC20.name, TRC20.symbol, TRC20.decimals);
    }
    await check(TRC10.id, TRC10.id, TRC10.name, TRC10.abbr, TRC10.precision);
  });

  test("an account that is no contract, and an asset id the node has not, are null", async () => {
    for (const token of [alice.base58, NO_ASSET]) {
      const r = await rest("get_token_metadata", { token_address: token });
      expect({ token, status: r.status, text: r.text }).toEqual({ token, status: 200, text: "null" });
      const j = await jsonrpc("watch_getTokenMetadata", [token]);
      expect({ token, text: j.text }).toEqual({ token, text: '{"jsonrpc":"2.0","id":1,"result":null}' });
    }
  });
});

describe("bad addresses", () => {
  const DESCRIPTION =
    "a TRON address: base58check T... (34 characters), 41 followed by 40 hex digits, or 0x and 40 hex digits";
  /** alice's address with its last character changed: still base58, 25 bytes, version 0x41; the checksum fails. */
  const badChecksum = () => `${alice.base58.slice(0, -1)}${alice.base58.endsWith("A") ? "B" : "A"}`;

  test("a bad base58check checksum is a 422 naming it; a text that is no address says so", async () => {
    const tokens = ["TRX"];
    for (const [address, problem] of [
      [badChecksum(), "bad base58check checksum"],
      ["1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "not a TRON address"],
    ] as const) {
      const r = await rest("get_token_balances", { address, list_contract_address: tokens });
      expect({ status: r.status, json: r.json }).toEqual({
        status: 422,
        json: {
          detail: [
            {
              loc: ["body", "address"],
              msg: `Input should be ${DESCRIPTION}; ${problem}`,
              type: "string_pattern_mismatch",
            },
          ],
        },
      });
      const j = await jsonrpc("watch_getTokenBalances", [address, tokens]);
      expect(j.json.error.code).toBe(-32602);
      expect(j.json.error.message).toContain(`Input should be ${DESCRIPTION}; ${problem}`);
    }
  });

  test("a token that is none of TRX, a TRON address or an asset id is a 422 saying what a token is", async () => {
    const r = await rest("get_token_balances", { address: alice.base58, list_contract_address: ["USDT"] });
    expect({ status: r.status, json: r.json }).toEqual({
      status: 422,
      json: {
        detail: [
          {
            loc: ["body", "list_contract_address", 0],
            msg: 'Input should be "TRX", a TRC-20 contract (a TRON address) or a TRC-10 asset id (decimal text)',
            type: "union_type",
          },
        ],
      },
    });
  });
});

describe("the API document", () => {
  test("the token routes with TRON's forms (tokens as TRX, contracts or asset ids; balances with decimals), not listed as refused", async () => {
    const doc: any = await (await fetch(`${service.url}/swagger/json`)).json();
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.TokenBalance.properties)).toEqual([
      "contractAddress",
      "tokenBalance",
      "decimals",
      "error",
    ]);
    const body =
      doc.paths["/node/rest/get_token_balances"].post.requestBody.content["application/json"].schema;
    expect(JSON.stringify(body)).toContain("a TRC-10 asset id (decimal text)");
    expect(doc.paths["/node/rest/get_token_metadata"]).toBeDefined();
    // What the instance refuses as the EVM family's no longer names what it serves (the tokens, eth_*).
    const rpc: string = doc.paths["/node/jsonrpc"].post.description;
    expect(rpc).toContain("the evm family's names (`debug_*`, `trace_*`, `txpool_*`).");
    expect(rpc).not.toContain("get_token_*");
  });
});
