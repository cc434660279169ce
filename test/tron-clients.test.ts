/**
 * The TRON family through the service, over real HTTP on loopback, in front of the stand-in java-tron
 * (test/support/tronNode.ts; test/tron-standin.test.ts holds it to recorded java-tron answers and says which
 * path each tronweb call asks):
 * - tronweb (npm) with the service's URL as `fullHost` and a service key in TronGrid's header;
 * - failover between two stand-ins of one chain; writes never hedged, reads hedged;
 * - a provider's key (`#key=`) and URL credentials (`user:pass@`) never shown;
 * - identity: another chain stops the start, or is taken out of rotation; no node, no start;
 * - a bare node's three ports in one URL;
 * - the head within 2 s of a new block.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TronWeb } from "tronweb";
import { ConfigError, loadConfig } from "../src/config";
import { hexToBase58 } from "./support/tron/codec";
import { GENESIS_BLOCK_ID, renderTransaction } from "./support/tron/scenario";
import { post, startTestService, type TestService } from "./support/service";
import { SCENARIO_KEYS, startTronNode, TRC20, type TronNode, type TronNodeOptions } from "./support/tronNode";
import { until } from "./support/until";

const KEY = "tron-clients-key-0123456789";
const PROVIDER_KEY = "SECRETKEY123";
const BASIC_USER = "tronuser7";
const BASIC_PASSWORD = "PASSWORD987";

/** Every part a test starts, stopped after it whatever happened (last started, first stopped). */
const parts: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const stop of parts.splice(0).reverse()) await stop();
});

async function standIn(options: TronNodeOptions = {}): Promise<TronNode> {
  const node = await startTronNode(options);
  parts.push(() => node.stop());
  return node;
}

async function service(
  upstreamUrls: string[],
  env: Record<string, string> = {},
  logWrite?: (line: string) => void,
): Promise<TestService> {
  const running = await startTestService({
    upstreamUrls,
    env: { CHAIN: "NILE", API_KEYS: KEY, ...env },
    logWrite,
  });
  parts.push(() => running.stop());
  return running;
}

/** The error a start stops with (its data directory removed: a failed start leaves it). */
async function startFailure(upstreamUrls: string[], env: Record<string, string>): Promise<Error> {
  const dataDir = mkdtempSync(join(tmpdir(), "cg-tron-fail-"));
  try {
    const running = await startTestService({ upstreamUrls, env, dataDir });
    await running.stop();
    throw new Error("the service started");
  } catch (error) {
    return error as Error;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A path of java-tron's HTTP API through the service, with the service's key. */
const wallet = (svc: TestService, path: string, body: unknown = {}, headers = { "x-api-key": KEY }) =>
  post(`${svc.url}${path}`, body, { headers });

/** A JSON-RPC call through the service; its whole answer. */
async function rpc(svc: TestService, method: string, params: unknown[] = []) {
  return (await post(`${svc.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params }, { headers: { "x-api-key": KEY } }))
    .json;
}

/** The node's own answer, asked straight (its call recorded as any other). */
async function direct(base: string, path: string, body: unknown = {}) {
  const response = await fetch(`${base}${path}`, { method: "POST", body: JSON.stringify(body) });
  return (await response.json()) as any;
}

/** The calls a stand-in saw to `path` (with `num` where given). */
const callsTo = (node: TronNode, path: string, num?: number) =>
  node.calls.filter((c) => c.path === path && (num === undefined || (c.body as any)?.num === num)).length;

/** A TRX transfer signed by alice, as tronweb's sendRawTransaction posts it. */
function signedTransfer(node: TronNode, amount: bigint) {
  const tx = node.chain.trx(SCENARIO_KEYS.alice, SCENARIO_KEYS.bob.hex, amount);
  const { ret: _ret, ...body } = renderTransaction({ ...tx, contractRet: "SUCCESS" }, false);
  return { txID: tx.txID, body };
}

describe("tronweb through the service", () => {
  test("blocks, a transaction and its info, balances, a TRC-20 balanceOf, a TRX transfer signed locally and broadcast", async () => {
    const { alice, bob, carol } = SCENARIO_KEYS;
    const node = await standIn();
    const svc = await service([node.url]);
    const tronWeb = new TronWeb({ fullHost: svc.url, headers: { "TRON-PRO-API-KEY": KEY } });

    const health = (await (await fetch(`${svc.url}/health`)).json()) as any;
    const head = node.chain.headNumber();
    expect(health.head.number).toBe(head);
    const current = await tronWeb.trx.getCurrentBlock();
    expect(current.blockID).toBe(node.chain.block(head)!.blockID);
    expect(`0x${current.blockID}`).toBe(health.head.hash);
    expect(current).toEqual((await direct(node.url, "/wallet/getnowblock")) as any);

    const two = await tronWeb.trx.getBlockByNumber(2);
    expect(two.transactions?.map((t) => t.txID)).toEqual([
      node.scenario.trc20.txID,
      node.scenario.reverted.txID,
    ]);
    expect(two).toEqual(await direct(node.url, "/wallet/getblockbynum", { num: 2 }));
    const tx = await tronWeb.trx.getTransaction(node.scenario.trx.txID);
    expect(tx.raw_data.contract[0]!.parameter.value).toEqual({
      amount: 1_500_000,
      owner_address: alice.hex,
      to_address: bob.hex,
    } as any);
    expect(tx.ret).toEqual([{ contractRet: "SUCCESS" }]);
    const info = await tronWeb.trx.getTransactionInfo(node.scenario.trc20.txID);
    expect(info.blockNumber).toBe(2);
    expect(info.fee).toBe(26_579_700);
    expect(info).toEqual(
      await direct(node.url, "/wallet/gettransactioninfobyid", { value: node.scenario.trc20.txID }),
    );
    // 1,000 TRX, 1.5 received, the reverted TRC-20 call's energy (4,500 at 420 sun) burned
    expect(await tronWeb.trx.getBalance(bob.base58)).toBe(1_000_000_000 + 1_500_000 - 1_890_000);

    const contract = await tronWeb.contract().at(hexToBase58(TRC20.address));
    const held = await contract.balanceOf(bob.base58).call();
    expect(BigInt(held.toString())).toBe(12_345_678n);

    const unsigned = await tronWeb.transactionBuilder.sendTrx(carol.base58, 2_000_000, alice.base58);
    const signed = await tronWeb.trx.sign(unsigned, alice.privateKey);
    const sent = await tronWeb.trx.sendRawTransaction(signed);
    expect(sent.result).toBe(true);
    expect(sent.transaction.txID).toBe(unsigned.txID);
    expect(node.broadcastPool.map((t) => t.txID)).toEqual([unsigned.txID]);
    const [mined] = node.mine();
    expect(mined!.transactions!.map((t) => t.txID)).toEqual([unsigned.txID]);
    const landed = await tronWeb.trx.getTransaction(unsigned.txID);
    expect(landed.txID).toBe(unsigned.txID);
    expect(landed.ret).toEqual([{ contractRet: "SUCCESS" }]);
    expect(landed.raw_data.contract[0]!.parameter.value).toEqual({
      amount: 2_000_000,
      owner_address: alice.hex,
      to_address: carol.hex,
    } as any);
    // the new block through the service once it follows it
    await until("the mined block followed", async () =>
      (await rpc(svc, "eth_blockNumber")).result === `0x${(head + 1).toString(16)}` ? true : undefined,
    );
    const block = await tronWeb.trx.getBlockByNumber(head + 1);
    expect(block.blockID).toBe(mined!.blockID);
    expect(block.transactions!.map((t) => t.txID)).toEqual([unsigned.txID]);
    expect(await tronWeb.trx.getUnconfirmedBalance(carol.base58)).toBe(2_000_000);
  }, 60_000);

  test("a wrong key is 401 from the service, no node call; the key in x-api-key works too", async () => {
    const node = await standIn();
    const svc = await service([node.url]);
    node.calls.length = 0;
    const body = { address: SCENARIO_KEYS.alice.hex };
    const wrong = await wallet(svc, "/wallet/getaccount", body, { "TRON-PRO-API-KEY": "not-a-key" } as any);
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ detail: "invalid API key" });
    const none = await wallet(svc, "/wallet/getaccount", body, {} as any);
    expect(none.status).toBe(401);
    expect(none.json).toEqual({
      detail: "missing API key: pass it as the api_key query parameter or the x-api-key header",
    });
    // tronweb is told the service's 401 (axios's error, its response the service's body)
    const byTronWeb = new TronWeb({ fullHost: svc.url, headers: { "TRON-PRO-API-KEY": "not-a-key" } });
    const refused = await byTronWeb.trx.getCurrentBlock().catch((e: any) => e);
    expect(refused.response?.status).toBe(401);
    expect(refused.response?.data).toEqual({ detail: "invalid API key" });
    // the follower's polls aside (its JSON-RPC and the solidified block), nothing reached the node
    expect(node.calls.filter((c) => c.face !== "jsonrpc" && c.path !== "/walletsolidity/getnowblock")).toEqual([]);

    const expected = await direct(node.url, "/wallet/getaccount", body);
    node.calls.length = 0;
    const byHeader = await wallet(svc, "/wallet/getaccount", body, { "x-api-key": KEY });
    expect(byHeader.status).toBe(200);
    expect(byHeader.json).toEqual(expected);
    expect(callsTo(node, "/wallet/getaccount")).toBe(1);
    const byTronGrid = await wallet(svc, "/wallet/getaccount", body, { "TRON-PRO-API-KEY": KEY } as any);
    expect(byTronGrid.json).toEqual(expected);
  }, 60_000);
});
