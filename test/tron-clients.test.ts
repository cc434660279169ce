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
import { post, startTestService, type TestService } from "./support/service";
import { hexToBase58 } from "./support/tron/codec";
import { GENESIS_BLOCK_ID, renderTransaction } from "./support/tron/scenario";
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
const wallet = (
  svc: TestService,
  path: string,
  body: unknown = {},
  headers: Record<string, string> = { "x-api-key": KEY },
) => post(`${svc.url}${path}`, body, { headers });

/** A JSON-RPC call through the service; its whole answer. */
async function rpc(svc: TestService, method: string, params: unknown[] = []) {
  return (
    await post(
      `${svc.url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 1, method, params },
      { headers: { "x-api-key": KEY } },
    )
  ).json;
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
    expect(current).toEqual(await direct(node.url, "/wallet/getnowblock"));

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
    const wrong = await wallet(svc, "/wallet/getaccount", body, { "TRON-PRO-API-KEY": "not-a-key" });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ detail: "invalid API key" });
    const none = await wallet(svc, "/wallet/getaccount", body, {});
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
    expect(
      node.calls.filter((c) => c.face !== "jsonrpc" && c.path !== "/walletsolidity/getnowblock"),
    ).toEqual([]);

    const expected = await direct(node.url, "/wallet/getaccount", body);
    node.calls.length = 0;
    const byHeader = await wallet(svc, "/wallet/getaccount", body, { "x-api-key": KEY });
    expect(byHeader.status).toBe(200);
    expect(byHeader.json).toEqual(expected);
    expect(callsTo(node, "/wallet/getaccount")).toBe(1);
    const byTronGrid = await wallet(svc, "/wallet/getaccount", body, { "TRON-PRO-API-KEY": KEY });
    expect(byTronGrid.json).toEqual(expected);
  }, 60_000);
});

describe("failover between two stand-ins of one chain", () => {
  test("the first stopped, reads keep answering from the second", async () => {
    const first = await standIn();
    const second = await standIn();
    // Started the same way: the same chain, block for block.
    const head = first.chain.headNumber();
    expect(second.chain.headNumber()).toBe(head);
    for (const n of [0, 2, head]) expect(second.chain.block(n)!.blockID).toBe(first.chain.block(n)!.blockID);
    const svc = await service([first.url, second.url], { UPSTREAM_COOLDOWN_MS: "60000" });
    const expected = new Map<number, unknown>();
    for (const num of [3, 4, 6])
      expected.set(num, await direct(second.url, "/wallet/getblockbynum", { num }));
    first.calls.length = 0;
    second.calls.length = 0;

    const before = await wallet(svc, "/wallet/getblockbynum", { num: 3 });
    expect(before.json).toEqual(expected.get(3));
    expect([callsTo(first, "/wallet/getblockbynum", 3), callsTo(second, "/wallet/getblockbynum", 3)]).toEqual(
      [1, 0],
    );

    await first.stop();
    for (const num of [4, 6]) {
      const answer = await wallet(svc, "/wallet/getblockbynum", { num });
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual(expected.get(num));
      expect(callsTo(second, "/wallet/getblockbynum", num)).toBe(1);
    }
    const byRpc = await rpc(svc, "eth_getBlockByNumber", ["0x7", false]);
    expect(byRpc.result.hash).toBe(`0x${second.chain.block(7)!.blockID}`);
    const trc20 = second.scenario.trc20.txID;
    const info = await wallet(svc, "/wallet/gettransactioninfobyid", { value: trc20 });
    expect(info.json).toEqual(await direct(second.url, "/wallet/gettransactioninfobyid", { value: trc20 }));
    // the first's calls: the one read before it stopped, and nothing since (it is down)
    expect(
      first.calls.filter((c) => c.face !== "jsonrpc" && c.path !== "/walletsolidity/getnowblock"),
    ).toEqual([{ face: "full", path: "/wallet/getblockbynum", body: { num: 3 } }]);
    // the head follows the second
    const [next] = second.mine();
    const nextNumber = `0x${next!.block_header.raw_data.number.toString(16)}`;
    await until("the second's new block followed", async () =>
      (await rpc(svc, "eth_blockNumber")).result === nextNumber ? true : undefined,
    );
    const health = (await (await fetch(`${svc.url}/health`)).json()) as any;
    expect(health.head.hash).toBe(`0x${next!.blockID}`);
    expect(health.upstream.upstreams.map((u: any) => [u.name, u.state])).toEqual([
      ["upstream-1", "open"],
      ["upstream-2", "closed"],
    ]);
  }, 60_000);

  test("writes are never hedged: a broadcast reaches one stand-in, where a read is hedged to both", async () => {
    const first = await standIn();
    const second = await standIn();
    const svc = await service([first.url, second.url], { HEDGE_AFTER_MS: "50" });
    // The first answers late: past the hedging delay, well within UPSTREAM_TIMEOUT_MS.
    first.delayMs = 600;
    const expected = await direct(second.url, "/wallet/getblockbynum", { num: 9 });
    first.calls.length = 0;
    second.calls.length = 0;

    const { txID, body } = signedTransfer(first, 7n);
    const sent = await wallet(svc, "/wallet/broadcasttransaction", body);
    expect(sent.json).toEqual({ result: true, code: "SUCCESS", txid: txID });
    expect(callsTo(first, "/wallet/broadcasttransaction")).toBe(1);
    expect(callsTo(second, "/wallet/broadcasttransaction")).toBe(0);
    expect(first.broadcastPool.map((t) => t.txID)).toEqual([txID]);
    expect(second.broadcastPool).toEqual([]);

    const read = await wallet(svc, "/wallet/getblockbynum", { num: 9 });
    expect(read.json).toEqual(expected);
    expect(callsTo(first, "/wallet/getblockbynum", 9)).toBe(1);
    expect(callsTo(second, "/wallet/getblockbynum", 9)).toBe(1);
  }, 60_000);
});

/**
 * A loopback front that asks for HTTP Basic credentials (as a node behind a reverse proxy does) and passes
 * what carries them on to `target`; 401 otherwise. `down`: it answers 503.
 */
function basicAuthFront(target: string) {
  const expected = `Basic ${btoa(`${BASIC_USER}:${BASIC_PASSWORD}`)}`;
  const front = { url: "", refused: 0, passed: 0, down: false };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (req.headers.get("authorization") !== expected) {
        front.refused++;
        return new Response("Unauthorized", { status: 401 });
      }
      if (front.down) return new Response("Service Unavailable", { status: 503 });
      front.passed++;
      const url = new URL(req.url);
      const answer = await fetch(`${target}${url.pathname}${url.search}`, {
        method: req.method,
        body: req.method === "POST" ? await req.text() : undefined,
      });
      return new Response(await answer.text(), {
        status: answer.status,
        headers: { "content-type": "application/json" },
      });
    },
  });
  front.url = `http://127.0.0.1:${server.port}`;
  parts.push(() => server.stop(true));
  return front;
}

describe("a provider's key and URL credentials are never shown", () => {
  test("#key= and user:pass@ work, and appear in no /health, /status, /metrics, API document, error or log line", async () => {
    const keyed = await standIn({ apiKey: PROVIDER_KEY });
    const behind = await standIn();
    const front = basicAuthFront(behind.url);
    const lines: string[] = [];
    const keyedUrl = `${keyed.url}#key=${PROVIDER_KEY}`;
    const basicUrl = `http://${BASIC_USER}:${BASIC_PASSWORD}@${front.url.slice("http://".length)}`;
    const svc = await service(
      [keyedUrl, basicUrl],
      { LOG_LEVEL: "debug", UPSTREAM_COOLDOWN_MS: "60000" },
      (line) => lines.push(line),
    );
    const shown: string[] = [];
    const read = async (path: string, body: unknown = {}) => {
      const answer = await wallet(svc, path, body);
      shown.push(answer.text);
      return answer;
    };
    const get = async (path: string) => {
      const text = await (await fetch(`${svc.url}${path}`, { headers: { "x-api-key": KEY } })).text();
      shown.push(text);
      return text;
    };

    // the keyed upstream answers (the stand-in refuses what lacks its key: none was refused)
    const three = await read("/wallet/getblockbynum", { num: 3 });
    expect(three.json.blockID).toBe(keyed.chain.block(3)!.blockID);
    expect(callsTo(keyed, "/wallet/getblockbynum", 3)).toBe(1);
    // the one behind Basic auth answers once the keyed one fails (every request it saw carried them)
    keyed.fail = () => new Response("Internal Server Error", { status: 500 });
    const four = await read("/wallet/getblockbynum", { num: 4 });
    expect(four.json.blockID).toBe(behind.chain.block(4)!.blockID);
    expect(callsTo(behind, "/wallet/getblockbynum", 4)).toBe(1);
    expect(front.passed).toBeGreaterThan(0);
    expect(front.refused).toBe(0);

    // both fail: the errors callers are told
    front.down = true;
    const failed = await read("/wallet/getblockbynum", { num: 5 });
    expect(failed.status).toBe(502);
    expect(failed.json).toEqual({
      detail: `no upstream could answer: upstream ${front.url}/… answered HTTP 503`,
    });
    const failedRpc = await post(
      `${svc.url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x5", false] },
      { headers: { "x-api-key": KEY } },
    );
    shown.push(failedRpc.text);
    expect(failedRpc.json.error).toEqual({
      code: -32002,
      message: `no upstream could answer: upstream ${front.url}/… answered HTTP 503`,
    });

    const health = JSON.parse(await get("/health"));
    expect(health.upstream.upstreams.map((u: any) => u.url)).toEqual([`${keyed.url}/…`, `${front.url}/…`]);
    await get("/status");
    await get("/status.json");
    await get("/metrics");
    await get("/swagger");
    await get("/swagger/json");
    // a configuration error naming the upstreams
    const configError = (() => {
      try {
        loadConfig({ UPSTREAM_URLS: `${keyedUrl},${basicUrl},ftp://127.0.0.1:1`, CHAIN: "NILE" });
        return "";
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
    })();
    expect(configError).toBe(
      `UPSTREAM_URLS: expected comma-separated http(s) URLs of JSON-RPC nodes, got "${keyed.url}#…,http://…@${front.url.slice("http://".length)},ftp://127.0.0.1:1"`,
    );
    shown.push(configError);

    // the log tells of both failing upstreams, by host and port
    for (const told of [
      `upstream ${keyed.url}/… answered HTTP 500`,
      `upstream ${front.url}/… answered HTTP 503`,
    ])
      expect(lines.some((l) => l.includes(told))).toBe(true);
    for (const secret of [PROVIDER_KEY, BASIC_USER, BASIC_PASSWORD]) {
      for (const text of [...shown, ...lines]) expect(text).not.toContain(secret);
    }
  }, 60_000);
});

describe("identity: the chain of every upstream", () => {
  const NILE_IDENTITY = `0xcd8690dc:${GENESIS_BLOCK_ID.NILE}`;
  const TRON_IDENTITY = `0x2b6653dc:${GENESIS_BLOCK_ID.TRON}`;

  test("a mainnet node with CHAIN=NILE stops the start, naming the chain NILE takes", async () => {
    const mainnet = await standIn({ network: "TRON" });
    const error = await startFailure([mainnet.url], { CHAIN: "NILE" });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      `upstream-1 serves chain ${TRON_IDENTITY}: CHAIN=NILE takes nodes of chain ${NILE_IDENTITY}`,
    );
  }, 60_000);

  test("a second upstream of another chain is taken out of rotation, never used", async () => {
    const nile = await standIn();
    const mainnet = await standIn({ network: "TRON" });
    const svc = await service([nile.url, mainnet.url], { UPSTREAM_COOLDOWN_MS: "60000" });
    const health = (await (await fetch(`${svc.url}/health`)).json()) as any;
    expect(health.chain).toBe("NILE");
    expect(health.upstream.upstreams.map((u: any) => [u.name, u.state])).toEqual([
      ["upstream-1", "closed"],
      ["upstream-2", "open"],
    ]);
    // The first fails: the call has nowhere else to go (the mainnet node is never asked).
    nile.fail = (call) =>
      call.path === "/wallet/getblockbynum" ? new Response("Bad Gateway", { status: 502 }) : undefined;
    const failed = await wallet(svc, "/wallet/getblockbynum", { num: 3 });
    expect(failed.status).toBe(502);
    expect(failed.json.detail).toBe(`no upstream could answer: upstream ${nile.url}/… answered HTTP 502`);
    nile.fail = undefined;
    const answer = await wallet(svc, "/wallet/getblockbynum", { num: 4 });
    expect(answer.json.blockID).toBe(nile.chain.block(4)!.blockID);
    // The mainnet node was asked its identity only: eth_chainId and block 0, never a caller's read.
    const asked = new Set(
      mainnet.calls.map((c) =>
        c.face === "jsonrpc" ? (c.body as any).method : `${c.path} ${JSON.stringify(c.body)}`,
      ),
    );
    expect([...asked].sort()).toEqual(['/wallet/getblockbynum {"num":0}', "eth_chainId"]);
  }, 60_000);

  test("without UPSTREAM_URLS, CHAIN=TRON stops: a node or a provider is needed", async () => {
    const error = await startFailure([], { CHAIN: "TRON" });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'CHAIN=TRON and CHAIN=NILE need a java-tron node or a provider: set UPSTREAM_URLS (e.g. https://nile.trongrid.io, or http://10.0.0.1:8090#solidity=8091&jsonrpc=8545 for a bare node; README, "In front of a TRON node")',
    );
  }, 60_000);

  test("CHAIN unset in front of java-tron: the EVM family refuses it, naming CHAIN=NILE", async () => {
    const nile = await standIn();
    // java-tron's JSON-RPC as an EVM node's URL (its WebSocket, which java-tron lacks, off)
    const error = await startFailure([`${nile.url}/jsonrpc`], { UPSTREAM_WS_URLS: "off" });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      "upstream-1 serves chain 0xcd8690dc: chain id 3448148188 is NILE's, served by the TRON family: set CHAIN=NILE",
    );
  }, 60_000);
});

describe("a bare node's three ports in one URL", () => {
  test("#solidity=<port>&jsonrpc=<port>: a block through each face, each call on its own port", async () => {
    const node = await standIn({ faces: "three" });
    const port = (url: string) => new URL(url).port;
    const url = `${node.urls.full}#solidity=${port(node.urls.solidity)}&jsonrpc=${port(node.urls.jsonrpc)}`;
    expect(new Set([port(node.urls.full), port(node.urls.solidity), port(node.urls.jsonrpc)]).size).toBe(3);
    const svc = await service([url]);
    const solidified = node.chain.solidifiedNumber();
    const expected = {
      full: await direct(node.urls.full, "/wallet/getblockbynum", { num: 3 }),
      solidity: await direct(node.urls.solidity, "/walletsolidity/getblockbynum", { num: 3 }),
      solidityHead: await direct(node.urls.solidity, "/walletsolidity/getnowblock"),
    };
    expect(expected.solidityHead.block_header.raw_data.number).toBe(solidified);
    node.calls.length = 0;

    const full = await wallet(svc, "/wallet/getblockbynum", { num: 3 });
    expect(full.json).toEqual(expected.full);
    const solidity = await wallet(svc, "/walletsolidity/getblockbynum", { num: 3 });
    expect(solidity.json).toEqual(expected.solidity);
    const solidHead = await wallet(svc, "/walletsolidity/getnowblock");
    expect(solidHead.json).toEqual(expected.solidityHead);
    const byRpc = await rpc(svc, "eth_getBlockByNumber", ["0x3", false]);
    expect(byRpc.result.hash).toBe(`0x${expected.full.blockID}`);
    expect(byRpc.result.number).toBe("0x3");
    // A face's server answers its own paths only (404 for the others): each call landed on its port.
    const seen = (path: string) => node.calls.filter((c) => c.path === path).map((c) => c.face);
    expect(seen("/wallet/getblockbynum")).toEqual(["full"]);
    expect(seen("/walletsolidity/getblockbynum")).toEqual(["solidity"]);
    expect(new Set(seen("/walletsolidity/getnowblock"))).toEqual(new Set(["solidity"]));
    const rpcCalls = node.calls.filter((c) => c.face === "jsonrpc").map((c) => c.body);
    expect(rpcCalls).toContainEqual({
      jsonrpc: "2.0",
      id: expect.any(Number),
      method: "eth_getBlockByNumber",
      params: ["0x3", false],
    });
  }, 60_000);
});

describe("the head", () => {
  test("eth_blockNumber names a new block within 2 s (median of 5, HEAD_POLL_MS unset: 1 s)", async () => {
    const node = await standIn();
    const svc = await service([node.url]);
    const BLOCKS = 5;
    const SPACING_MS = 1_500;
    const delays: number[] = [];
    for (let i = 0; i < BLOCKS; i++) {
      const started = performance.now();
      const [block] = node.mine();
      const number = `0x${block!.block_header.raw_data.number.toString(16)}`;
      await until(
        `block ${number} named by eth_blockNumber`,
        async () => ((await rpc(svc, "eth_blockNumber")).result === number ? true : undefined),
        5_000,
      );
      delays.push(performance.now() - started);
      const left = SPACING_MS - (performance.now() - started);
      if (left > 0) await Bun.sleep(left);
    }
    const median = [...delays].sort((a, b) => a - b)[Math.floor(BLOCKS / 2)]!;
    expect(median).toBeLessThan(2_000);
    // and the service's /wallet/getnowblock is that block
    const now = await wallet(svc, "/wallet/getnowblock");
    expect(now.json.blockID).toBe(node.chain.block(node.chain.headNumber())!.blockID);
  }, 60_000);
});
