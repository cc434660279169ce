/**
 * The TRON family's gateway (issue 32: "every allow-listed path and method through the service equals the
 * stand-in's answer; refused ones never reach it; a solidified block read twice is one upstream call; an
 * unsolidified block is not served from the cache after a reorg") over real HTTP on loopback: the service
 * in-process with CHAIN=NILE in front of the stand-in java-tron (test/support/tronNode.ts), each answer held
 * to the stand-in's own answer to the same request made directly.
 *
 * Two stand-ins: `node` is never mined nor reorged (its answers are stable, so the service's and the
 * stand-in's can be compared at any time); `moving` is mined and reorged by the cache tests.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { PATH_POLICIES } from "../src/families/tron/httpApi";
import { TRON_JSON_RPC } from "../src/families/tron/methods";
import { metric } from "./support/metrics";
import { post, startTestService, type TestService } from "./support/service";
import { bytesToHex, hexToBase58, keyFromPrivate } from "./support/tron/codec";
import { HANDLERS, SOLIDITY_PATHS } from "./support/tron/http";
import { encodeTransaction } from "./support/tron/protobuf";
import { renderTransaction, SCENARIO_KEYS, signTransaction, TRC10, TRC20 } from "./support/tron/scenario";
import { startTronNode, type TronNode } from "./support/tronNode";
import { until } from "./support/until";

const HEAD_POLL_MS = 100;
/** How long the service's follower may take to see a new head (many polls at HEAD_POLL_MS). */
const FOLLOW_TIMEOUT_MS = 10_000;

const { alice, bob, carol } = SCENARIO_KEYS;
const evmAddress = (hex41: string) => `0x${hex41.slice(2)}`;
const word = (hex41: string) => hex41.slice(2).padStart(64, "0");
const hex = (n: number) => `0x${n.toString(16)}`;

let node: TronNode;
let service: TestService;
let moving: TronNode;
let movingService: TestService;

interface Reply {
  status: number;
  text: string;
  json: any;
  cache: string | null;
}

/** A request to `base` + `path`: POST with a JSON body (or raw text), or GET when `body` is undefined. */
async function ask(base: string, path: string, body?: unknown, raw = false): Promise<Reply> {
  const answer =
    body === undefined
      ? await post(`${base}${path}`, undefined, { method: "GET" })
      : await post(`${base}${path}`, body, { raw });
  return {
    status: answer.status,
    text: answer.text,
    json: answer.json,
    cache: answer.headers.get("x-cache"),
  };
}

/** A JSON-RPC request's answer (one call or a batch). */
async function rpc(url: string, body: unknown): Promise<Reply> {
  return ask(url, "", body);
}
const call = (method: string, params: unknown[], id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

/** The JSON-RPC calls that reached a stand-in (batches unrolled), optionally those matching `match`. */
function rpcCalls(on: TronNode, method: string, match: (params: unknown[]) => boolean = () => true): number {
  let count = 0;
  for (const c of on.calls) {
    if (c.face !== "jsonrpc") continue;
    for (const one of Array.isArray(c.body) ? c.body : [c.body]) {
      const { method: m, params } = (one ?? {}) as { method?: string; params?: unknown[] };
      if (m === method && match(params ?? [])) count++;
    }
  }
  return count;
}
/** The calls of a path that reached a stand-in, optionally those whose body matches. */
function pathCalls(on: TronNode, path: string, match: (body: any) => boolean = () => true): number {
  return on.calls.filter((c) => c.path === path && match(c.body)).length;
}
/** Calls to the HTTP API's full-node face (the service's head follower never makes one). */
const walletCalls = (on: TronNode) => on.calls.filter((c) => c.path.startsWith("/wallet/")).length;

interface Health {
  head: { number: number; hash: string; finalized: number; nodeFinal: { tag: string; number: number } };
}
const health = async (svc: TestService): Promise<Health> => (await ask(svc.url, "/health")).json;

/** Until the service's followed head is the stand-in's head (by hash: a reorg to the same height shows). */
async function followed(svc: TestService, on: TronNode): Promise<void> {
  const want = `0x${on.chain.block(on.chain.headNumber())!.blockID}`;
  await until(
    `the service to follow head ${want}`,
    async () => ((await health(svc)).head?.hash === want ? true : undefined),
    FOLLOW_TIMEOUT_MS,
  );
}

async function startPair(): Promise<[TronNode, TestService]> {
  const stand = await startTronNode({ network: "NILE" });
  const svc = await startTestService({
    upstreamUrls: [stand.url],
    // The stand-in solidifies 19 blocks below its head; finality then follows the solidified block.
    env: { CHAIN: "NILE", HEAD_POLL_MS: String(HEAD_POLL_MS), CONFIRMATIONS: "19" },
  });
  await followed(svc, stand);
  return [stand, svc];
}

beforeAll(async () => {
  [[node, service], [moving, movingService]] = await Promise.all([startPair(), startPair()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([service?.stop(), movingService?.stop()]);
});

// ---- 1. every allow-listed path equals the stand-in's answer ----

/** What each allow-listed path is asked (the stand-in's answer is the expected one). */
interface PathCase {
  body: Record<string, unknown>;
  /** What the stand-in's own answer is (default: a real answer, neither `{}` nor `{"Error": ...}`). */
  is?: (answer: any) => boolean;
}
const realAnswer = (answer: any) =>
  typeof answer === "object" && answer !== null && Object.keys(answer).length > 0 && !("Error" in answer);

function pathCases(): Record<string, PathCase[]> {
  const { trx, trc20, reverted } = node.scenario;
  const block1 = node.chain.block(1)!.blockID;
  const block2 = node.chain.block(2)!.blockID;
  const balanceOf = {
    contract_address: TRC20.address,
    function_selector: "balanceOf(address)",
    parameter: word(alice.hex),
    owner_address: alice.hex,
  };
  // A transfer signed by bob for alice's TRX: well formed, refused by the node (SIGERROR), never pooled.
  const forgedTx = node.chain.trx(alice, bob.hex, 3n);
  const { ret: _ret, ...forged } = renderTransaction({ ...forgedTx, contractRet: "SUCCESS" }, true);
  const bobSignature = bytesToHex(signTransaction(forgedTx.raw, bob).signatures[0]!);
  return {
    getnowblock: [{ body: {} }, { body: { visible: true } }],
    getblockbynum: [{ body: { num: 1 } }, { body: { num: 2 } }, { body: { num: 2, visible: true } }],
    getblockbyid: [{ body: { value: block2 } }, { body: { value: block1, visible: true } }],
    getblock: [
      { body: { id_or_num: "2", detail: true } },
      { body: { id_or_num: block1, detail: false } },
      { body: { detail: false } },
    ],
    getblockbylimitnext: [{ body: { startNum: 1, endNum: 3 } }],
    getblockbylatestnum: [{ body: { num: 2 } }],
    gettransactionbyid: [{ body: { value: trx.txID } }, { body: { value: trc20.txID, visible: true } }],
    gettransactioninfobyid: [
      { body: { value: trc20.txID } },
      { body: { value: reverted.txID, visible: true } },
    ],
    gettransactioninfobyblocknum: [{ body: { num: 1 } }, { body: { num: 2, visible: true } }],
    getaccount: [{ body: { address: alice.hex } }, { body: { address: alice.base58, visible: true } }],
    getaccountresource: [
      { body: { address: alice.hex } },
      { body: { address: alice.base58, visible: true } },
    ],
    getcontract: [
      { body: { value: TRC20.address } },
      { body: { value: hexToBase58(TRC20.address), visible: true } },
    ],
    getcontractinfo: [{ body: { value: TRC20.address } }],
    triggerconstantcontract: [
      { body: balanceOf },
      {
        body: {
          ...balanceOf,
          contract_address: hexToBase58(TRC20.address),
          owner_address: alice.base58,
          visible: true,
        },
      },
    ],
    getassetissuebyid: [{ body: { value: TRC10.id } }, { body: { value: TRC10.id, visible: true } }],
    getchainparameters: [{ body: {} }],
    validateaddress: [{ body: { address: alice.base58 } }, { body: { address: alice.hex } }],
    createtransaction: [
      { body: { owner_address: alice.hex, to_address: bob.hex, amount: 1_000 } },
      { body: { owner_address: alice.base58, to_address: carol.base58, amount: 2_000, visible: true } },
    ],
    triggersmartcontract: [
      {
        body: {
          owner_address: alice.hex,
          contract_address: TRC20.address,
          function_selector: "transfer(address,uint256)",
          parameter: `${word(bob.hex)}${"0".repeat(63)}1`,
          fee_limit: 100_000_000,
        },
      },
    ],
    transferasset: [
      {
        body: {
          owner_address: alice.hex,
          to_address: bob.hex,
          asset_name: Buffer.from(TRC10.id).toString("hex"),
          amount: 5,
        },
      },
    ],
    broadcasttransaction: [
      {
        body: { ...forged, visible: true, signature: [bobSignature] },
        is: (answer) => answer.code === "SIGERROR",
      },
    ],
    // Hex, but not a transaction: the node's own decoding error, passed through.
    broadcasthex: [
      { body: { transaction: "0a0201" }, is: (answer) => Object.keys(answer).join() === "Error" },
    ],
  };
}

/**
 * The service's answer and the stand-in's own to one request, the clock stopped (at now: never set back)
 * across both: builders stamp their transactions with it.
 */
async function both(path: string, body?: unknown): Promise<[Reply, Reply]> {
  setSystemTime(new Date());
  try {
    const viaService = await ask(service.url, path, body);
    const direct = await ask(node.url, path, body);
    return [viaService, direct];
  } finally {
    setSystemTime();
  }
}

describe("java-tron's HTTP API at its paths", () => {
  test("every allow-listed path the stand-in serves answers as the stand-in, on each face", async () => {
    const cases = pathCases();
    const unserved: string[] = [];
    for (const method of PATH_POLICIES.keys()) {
      const [face, name] = method.split("/") as [string, string];
      if (!HANDLERS[name] || (face === "walletsolidity" && !SOLIDITY_PATHS.has(name))) {
        unserved.push(method);
        continue;
      }
      const bodies = cases[name];
      expect(bodies, `a case for /${method}`).toBeDefined();
      for (const { body, is = realAnswer } of bodies!) {
        const [viaService, direct] = await both(`/${method}`, body);
        const label = `/${method} ${JSON.stringify(body)}`;
        expect(direct.status, label).toBe(200);
        // The stand-in's answer is the expected one: a real answer, or the node's refusal where asked for.
        expect(is(direct.json), label).toBe(true);
        expect({ label, status: viaService.status, text: viaService.text }).toEqual({
          label,
          status: 200,
          text: direct.text,
        });
      }
    }
    // The paths of the allow-list the stand-in does not serve: their answers are not compared here.
    expect(unserved.sort()).toEqual([
      "wallet/cancelallunfreezev2",
      "wallet/delegateresource",
      "wallet/estimateenergy",
      "wallet/freezebalancev2",
      "wallet/getaccountnet",
      "wallet/getassetissuelist",
      "wallet/getbandwidthprices",
      "wallet/getenergyprices",
      "wallet/undelegateresource",
      "wallet/unfreezebalancev2",
      "wallet/votewitnessaccount",
      "wallet/withdrawbalance",
      "wallet/withdrawexpireunfreeze",
      "walletsolidity/getassetissuelist",
      "walletsolidity/getbandwidthprices",
      "walletsolidity/getenergyprices",
    ]);
  }, 60_000);

  test("GET with the body's members in the query answers as the stand-in's GET", async () => {
    const { trc20 } = node.scenario;
    for (const path of [
      "/wallet/getblockbynum?num=2",
      "/walletsolidity/getblockbynum?num=1&visible=true",
      `/wallet/getblock?id_or_num=2&detail=false`,
      `/wallet/getaccount?address=${alice.base58}&visible=true`,
      `/walletsolidity/getaccount?address=${alice.hex}`,
      `/wallet/gettransactionbyid?value=${trc20.txID}`,
      `/walletsolidity/gettransactioninfobyid?value=${trc20.txID}&visible=true`,
      "/wallet/getnowblock",
      "/wallet/getchainparameters",
    ]) {
      const [viaService, direct] = await both(path);
      expect(direct.status, path).toBe(200);
      expect(realAnswer(direct.json), path).toBe(true);
      expect({ path, status: viaService.status, text: viaService.text }).toEqual({
        path,
        status: 200,
        text: direct.text,
      });
    }
  });

  test("a signed transaction broadcast through the service reaches the node's pool once", async () => {
    const tx = node.chain.trx(alice, bob.hex, 11n);
    const { ret: _ret, ...body } = renderTransaction({ ...tx, contractRet: "SUCCESS" }, false);
    const before = pathCalls(node, "/wallet/broadcasttransaction");
    const answer = await ask(service.url, "/wallet/broadcasttransaction", body);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ result: true, code: "SUCCESS", txid: tx.txID });
    expect(answer.cache).toBe("miss");
    expect(pathCalls(node, "/wallet/broadcasttransaction") - before).toBe(1);
    const viaHex = node.chain.trx(alice, bob.hex, 12n);
    const hexAnswer = await ask(service.url, "/wallet/broadcasthex", {
      transaction: bytesToHex(encodeTransaction(viaHex.rawBytes, viaHex.signatures)),
    });
    expect({ ...hexAnswer.json, transaction: JSON.parse(hexAnswer.json.transaction).txID }).toEqual({
      result: true,
      code: "SUCCESS",
      message: "",
      transaction: viaHex.txID,
      txid: viaHex.txID,
    });
    expect(node.broadcastPool.map((t) => t.txID)).toEqual([tx.txID, viaHex.txID]);
    // The same transaction again: the node's own refusal (a write is never answered from a cache).
    const again = await ask(service.url, "/wallet/broadcasttransaction", body);
    expect(again.json.code).toBe("DUP_TRANSACTION_ERROR");
    expect(pathCalls(node, "/wallet/broadcasttransaction") - before).toBe(2);
  });
});

// ---- 2. every JSON-RPC method of the family ----

function rpcCases(): Record<string, unknown[][]> {
  const { trx, trc20, reverted } = node.scenario;
  const block2 = `0x${node.chain.block(2)!.blockID}`;
  const usdt = evmAddress(TRC20.address);
  const balanceOf = `0x70a08231${word(alice.hex)}`;
  return {
    web3_clientVersion: [[]],
    net_version: [[]],
    net_listening: [[]],
    net_peerCount: [[]],
    eth_chainId: [[]],
    eth_protocolVersion: [[]],
    eth_syncing: [[]],
    eth_gasPrice: [[]],
    eth_estimateGas: [[{ from: evmAddress(alice.hex), to: usdt, data: balanceOf }]],
    eth_accounts: [[]],
    eth_blockNumber: [[]],
    eth_getBalance: [
      [evmAddress(alice.hex), "latest"],
      [evmAddress(bob.hex), "latest"],
    ],
    eth_getStorageAt: [[usdt, "0x0", "latest"]],
    eth_getCode: [[usdt, "latest"]],
    eth_getBlockByHash: [
      [block2, true],
      [block2, false],
    ],
    eth_getBlockByNumber: [
      ["0x1", false],
      ["0x2", true],
      ["latest", false],
      ["earliest", false],
      ["finalized", false],
    ],
    eth_getBlockTransactionCountByHash: [[block2]],
    eth_getBlockTransactionCountByNumber: [["0x1"], ["latest"]],
    eth_getTransactionByHash: [[`0x${trc20.txID}`], [`0x${trx.txID}`]],
    eth_getTransactionByBlockHashAndIndex: [[block2, "0x1"]],
    eth_getTransactionByBlockNumberAndIndex: [["0x1", "0x0"]],
    eth_getTransactionReceipt: [[`0x${trc20.txID}`], [`0x${reverted.txID}`]],
    eth_getBlockReceipts: [["0x2"]],
    // The service's name for the same node method (ext_getBlockReceipts calls eth_getBlockReceipts).
    ext_getBlockReceipts: [["0x2"]],
    eth_call: [[{ to: usdt, data: balanceOf }, "latest"]],
    eth_getLogs: [[{ fromBlock: "0x1", toBlock: "0x2" }], [{ address: usdt, blockHash: block2 }]],
    eth_getUncleCountByBlockHash: [[block2]],
    eth_getUncleCountByBlockNumber: [["0x2"]],
    eth_getUncleByBlockHashAndIndex: [[block2, "0x0"]],
    eth_getUncleByBlockNumberAndIndex: [["0x2", "0x0"]],
  };
}

/** The stand-in's own `result` for a method (ext_getBlockReceipts is eth_getBlockReceipts to a node). */
async function directResult(method: string, params: unknown[]): Promise<unknown> {
  const nodeMethod = method === "ext_getBlockReceipts" ? "eth_getBlockReceipts" : method;
  const { json } = await rpc(`${node.url}/jsonrpc`, call(nodeMethod, params));
  expect(json.error, `${method} ${JSON.stringify(params)} on the stand-in`).toBeUndefined();
  return json.result;
}

describe("java-tron's JSON-RPC at /node/jsonrpc", () => {
  test("every method of the family answers the stand-in's result", async () => {
    await followed(service, node);
    const cases = rpcCases();
    expect(Object.keys(cases).sort()).toEqual([...TRON_JSON_RPC].sort());
    for (const [method, list] of Object.entries(cases)) {
      for (const params of list) {
        const label = `${method} ${JSON.stringify(params)}`;
        const expected = await directResult(method, params);
        const viaService = await rpc(`${service.url}/node/jsonrpc`, call(method, params, 7));
        expect({ label, status: viaService.status, answer: viaService.json }).toEqual({
          label,
          status: 200,
          answer: { jsonrpc: "2.0", id: 7, result: expected },
        });
      }
    }
  }, 60_000);

  test("a batch answers each call in place, a refused one among them", async () => {
    const { trc20 } = node.scenario;
    const batch = [
      call("eth_blockNumber", [], 1),
      call("eth_getBlockByNumber", ["0x2", false], "two"),
      call("eth_sendRawTransaction", ["0x00"], 3),
      call("eth_getTransactionReceipt", [`0x${trc20.txID}`], 4),
      call("eth_chainId", [], 5),
    ];
    const answer = await rpc(`${service.url}/node/jsonrpc`, batch);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: await directResult("eth_blockNumber", []) },
      { jsonrpc: "2.0", id: "two", result: await directResult("eth_getBlockByNumber", ["0x2", false]) },
      {
        jsonrpc: "2.0",
        id: 3,
        error: {
          code: -32601,
          message:
            "the method eth_sendRawTransaction is not served on NILE: java-tron's JSON-RPC takes no transactions: broadcast a signed one with POST /wallet/broadcasttransaction or /wallet/broadcasthex",
        },
      },
      {
        jsonrpc: "2.0",
        id: 4,
        result: await directResult("eth_getTransactionReceipt", [`0x${trc20.txID}`]),
      },
      { jsonrpc: "2.0", id: 5, result: "0xcd8690dc" },
    ]);
  });
});

// ---- 3. refusals never reach the node ----

describe("refusals, without a node call", () => {
  const noKeys = "java-tron holds no keys for its callers (it refuses it)";
  const noTraces =
    "java-tron has no traces: a transaction's internal transactions are in /wallet/gettransactioninfobyid";
  const unserved: [string, unknown[], string][] = [
    [
      "eth_sendRawTransaction",
      ["0xf86c"],
      "java-tron's JSON-RPC takes no transactions: broadcast a signed one with POST /wallet/broadcasttransaction or /wallet/broadcasthex",
    ],
    [
      "eth_getTransactionCount",
      ["0x0000000000000000000000000000000000000001", "latest"],
      "TRON accounts have no nonce (java-tron refuses it)",
    ],
    ["trace_block", ["0x1"], noTraces],
    ["debug_traceTransaction", [`0x${"ab".repeat(32)}`], noTraces],
    ["eth_sendTransaction", [{ from: "0x0000000000000000000000000000000000000001" }], noKeys],
  ];

  test.each(unserved)("%p is -32601 naming the chain and why", async (method, params, why) => {
    const answer = await rpc(`${service.url}/node/jsonrpc`, call(method, params, 9));
    expect(answer.json).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32601, message: `the method ${method} is not served on NILE: ${why}` },
    });
    expect(rpcCalls(node, method)).toBe(0);
  });

  test("pending and safe tags are refused in java-tron's words", async () => {
    for (const [params, message] of [
      [["pending", false], "TAG pending not supported"],
      [["safe", true], "TAG safe not supported"],
    ] as const) {
      const nodeAnswer = await rpc(`${node.url}/jsonrpc`, call("eth_getBlockByNumber", [...params], 2));
      const before = rpcCalls(node, "eth_getBlockByNumber", (p) => p[0] === params[0]);
      const answer = await rpc(`${service.url}/node/jsonrpc`, call("eth_getBlockByNumber", [...params], 2));
      expect(answer.json).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32602, message } });
      // java-tron's own refusal, word for word
      expect(nodeAnswer.json.error).toEqual({ code: -32602, message, data: "{}" });
      expect(rpcCalls(node, "eth_getBlockByNumber", (p) => p[0] === params[0])).toBe(before);
    }
    const logs = await rpc(
      `${service.url}/node/jsonrpc`,
      call("eth_getLogs", [{ fromBlock: "0x1", toBlock: "pending" }], 3),
    );
    expect(logs.json.error).toEqual({ code: -32602, message: "TAG pending not supported" });
    expect(rpcCalls(node, "eth_getLogs", (p) => (p[0] as any)?.toBlock === "pending")).toBe(0);
  });

  test("a state read at a height is refused as java-tron refuses it", async () => {
    const params = [evmAddress(alice.hex), "0x1"];
    const nodeAnswer = await rpc(`${node.url}/jsonrpc`, call("eth_getBalance", params, 4));
    const before = rpcCalls(node, "eth_getBalance", (p) => p[1] === "0x1");
    const answer = await rpc(`${service.url}/node/jsonrpc`, call("eth_getBalance", params, 4));
    const message = "QUANTITY not supported, just support TAG as latest";
    expect(answer.json).toEqual({ jsonrpc: "2.0", id: 4, error: { code: -32602, message } });
    expect(nodeAnswer.json.error.message).toBe(message);
    expect(rpcCalls(node, "eth_getBalance", (p) => p[1] === "0x1")).toBe(before);
  });

  test("paths that take or make a private key are 403 naming why", async () => {
    for (const path of [
      "/wallet/easytransferbyprivate",
      "/wallet/gettransactionsign",
      "/wallet/createaddress",
      "/wallet/generateaddress",
    ]) {
      for (const answer of [
        await ask(service.url, path, { privateKey: "ab".repeat(32), amount: 1 }),
        await ask(service.url, path),
      ]) {
        expect({ path, status: answer.status, json: answer.json }).toEqual({
          path,
          status: 403,
          json: {
            detail: `${path} is never forwarded: it takes or makes a private key, which must never leave the caller`,
          },
        });
      }
      expect(pathCalls(node, path)).toBe(0);
    }
  });

  test("admin and unknown paths are 404", async () => {
    for (const path of ["/wallet/getnodeinfo", "/wallet/listnodes", "/wallet/foo", "/walletsolidity/foo"]) {
      expect(PATH_POLICIES.has(path.slice(1))).toBe(false);
      for (const answer of [await ask(service.url, path, {}), await ask(service.url, path)]) {
        expect({ path, status: answer.status, json: answer.json }).toEqual({
          path,
          status: 404,
          json: { detail: `${path} is not served: not on this service's allow-list of java-tron's API` },
        });
      }
      expect(pathCalls(node, path)).toBe(0);
    }
  });

  test("broadcasts: POST only, their bodies checked before any node call", async () => {
    const tx = node.chain.trx(alice, bob.hex, 13n);
    const { ret: _ret, ...good } = renderTransaction({ ...tx, contractRet: "SUCCESS" }, false);
    const path = "/wallet/broadcasttransaction";
    const before = walletCalls(node);
    const cases: [unknown, string, boolean?][] = [
      [{ ...good, txID: "xyz" }, `${path}: txID: expected 64 hex digits`],
      [{ ...good, txID: tx.txID.slice(2) }, `${path}: txID: expected 64 hex digits`],
      [{ ...good, raw_data: undefined }, `${path}: raw_data: expected the transaction's raw_data object`],
      [{ ...good, raw_data_hex: "0a0" }, `${path}: raw_data_hex: expected hex`],
      [{ ...good, signature: ["zz"] }, `${path}: signature: expected hex strings`],
      [{ ...good, signature: undefined }, `${path}: signature: expected the signatures (hex)`],
      [{ ...good, signature: [] }, `${path}: signature: expected the signatures (hex)`],
      [[good], `${path}: the body must be a JSON object`],
      ['"text"', `${path}: the body must be a JSON object`, true],
    ];
    for (const [body, detail, raw] of cases) {
      const answer = await ask(service.url, path, body, raw);
      expect({ status: answer.status, json: answer.json }).toEqual({ status: 400, json: { detail } });
    }
    const hexPath = "/wallet/broadcasthex";
    for (const transaction of ["0a0", "zz", undefined, 12]) {
      const answer = await ask(service.url, hexPath, { transaction });
      expect({ status: answer.status, json: answer.json }).toEqual({
        status: 400,
        json: { detail: `${hexPath}: transaction: expected the signed transaction's hex` },
      });
    }
    // Not JSON at all: the service's own answer to an unparsable body, as on every route (422).
    const notJson = await ask(service.url, path, "{not json", true);
    expect(notJson.status).toBe(422);
    expect(notJson.json.detail).toEqual([
      { loc: ["body"], msg: expect.stringMatching(/^JSON decode error/), type: "json_invalid" },
    ]);
    for (const write of [path, hexPath]) {
      const get = await ask(service.url, `${write}?transaction=0a02`);
      expect({ status: get.status, json: get.json }).toEqual({
        status: 400,
        json: { detail: `${write} changes the chain: POST only` },
      });
    }
    expect(walletCalls(node)).toBe(before);
    expect(node.broadcastPool.some((t) => t.txID === tx.txID)).toBe(false);
  });

  test("a read's body that is not an object is 400, without a node call", async () => {
    const before = walletCalls(node);
    for (const body of [[1], "3", "null"]) {
      const answer = await ask(service.url, "/wallet/getblockbynum", body, typeof body === "string");
      expect({ status: answer.status, json: answer.json }).toEqual({
        status: 400,
        json: { detail: "/wallet/getblockbynum: the body must be a JSON object" },
      });
    }
    expect(walletCalls(node)).toBe(before);
  });
});

// ---- 4. the cache ----

describe("the cache", () => {
  test("a solidified block read twice is one upstream call, on each face and on JSON-RPC", async () => {
    await followed(movingService, moving);
    expect((await health(movingService)).head.nodeFinal).toEqual({
      tag: "solidified",
      number: moving.chain.solidifiedNumber(),
    });
    for (const path of ["/wallet/getblockbynum", "/walletsolidity/getblockbynum"]) {
      const isOne = (body: any) => body?.num === 1 && body.visible === undefined;
      const direct = await ask(moving.url, path, { num: 1 });
      const before = pathCalls(moving, path, isOne);
      const first = await ask(movingService.url, path, { num: 1 });
      const second = await ask(movingService.url, path, { num: 1 });
      expect([first.cache, second.cache]).toEqual(["miss", "memory"]);
      expect([first.text, second.text]).toEqual([direct.text, direct.text]);
      expect(pathCalls(moving, path, isOne) - before).toBe(1);
    }
    const isOne = (p: unknown[]) => p[0] === "0x1" && p[1] === false;
    const direct = await rpc(`${moving.url}/jsonrpc`, call("eth_getBlockByNumber", ["0x1", false]));
    const before = rpcCalls(moving, "eth_getBlockByNumber", isOne);
    const rpcUrl = `${movingService.url}/node/jsonrpc`;
    const first = await rpc(rpcUrl, call("eth_getBlockByNumber", ["0x1", false]));
    const second = await rpc(rpcUrl, call("eth_getBlockByNumber", ["0x1", false]));
    expect([first.cache, second.cache]).toEqual(["miss", "memory"]);
    expect([first.json, second.json]).toEqual([direct.json, direct.json]);
    expect(rpcCalls(moving, "eth_getBlockByNumber", isOne) - before).toBe(1);
  });

  test("an unsolidified block is answered anew after a reorg replaces it", async () => {
    await followed(movingService, moving);
    const n = moving.chain.headNumber() - 1;
    expect(n).toBeGreaterThan(moving.chain.solidifiedNumber());
    const byNum = { num: n };
    const rpcCall = call("eth_getBlockByNumber", [hex(n), false]);
    const rpcUrl = `${movingService.url}/node/jsonrpc`;
    const oldPath = await ask(moving.url, "/wallet/getblockbynum", byNum);
    const oldRpc = await rpc(`${moving.url}/jsonrpc`, rpcCall);
    // Read twice: the second from the cache, so the entry a reorg must drop is there.
    for (let i = 0; i < 2; i++) {
      expect((await ask(movingService.url, "/wallet/getblockbynum", byNum)).text).toBe(oldPath.text);
      expect((await rpc(rpcUrl, rpcCall)).json).toEqual(oldRpc.json);
    }
    expect((await ask(movingService.url, "/wallet/getblockbynum", byNum)).cache).toBe("memory");

    moving.reorg(2);
    await followed(movingService, moving);
    const newPath = await ask(moving.url, "/wallet/getblockbynum", byNum);
    const newRpc = await rpc(`${moving.url}/jsonrpc`, rpcCall);
    expect(newPath.json.blockID).not.toBe(oldPath.json.blockID);
    expect(newRpc.json.result.hash).not.toBe(oldRpc.json.result.hash);
    const afterPath = await ask(movingService.url, "/wallet/getblockbynum", byNum);
    expect(afterPath.text).toBe(newPath.text);
    expect((await rpc(rpcUrl, rpcCall)).json).toEqual(newRpc.json);
    // The head's block through /wallet/getnowblock is the new branch's too.
    const head = moving.chain.headNumber();
    expect((await ask(movingService.url, "/wallet/getnowblock", {})).text).toBe(
      (await ask(moving.url, "/wallet/getblockbynum", { num: head })).text,
    );
  });

  test('`{}` and `{"Error": ...}` are passed through and never kept', async () => {
    await followed(movingService, moving);
    const ahead = moving.chain.headNumber() + 2;
    const isAhead = (body: any) => body?.num === ahead;
    const before = pathCalls(moving, "/wallet/getblockbynum", isAhead);
    for (let i = 0; i < 2; i++) {
      const answer = await ask(movingService.url, "/wallet/getblockbynum", { num: ahead });
      expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: "{}" });
    }
    expect(pathCalls(moving, "/wallet/getblockbynum", isAhead) - before).toBe(2);
    moving.mine(2);
    const mined = await ask(moving.url, "/wallet/getblockbynum", { num: ahead });
    expect(mined.json.blockID.startsWith(ahead.toString(16).padStart(16, "0"))).toBe(true);
    expect((await ask(movingService.url, "/wallet/getblockbynum", { num: ahead })).text).toBe(mined.text);

    const wrong = { id_or_num: "-1" };
    const direct = await ask(moving.url, "/wallet/getblock", wrong);
    expect(direct.json).toEqual({ Error: "num must be non-positive number." });
    const errorsBefore = pathCalls(moving, "/wallet/getblock");
    for (let i = 0; i < 2; i++) {
      const answer = await ask(movingService.url, "/wallet/getblock", wrong);
      expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: direct.text });
    }
    expect(pathCalls(moving, "/wallet/getblock") - errorsBefore).toBe(2);
  });

  test("a new account and a pending transaction: `{}` until mined, then the node's answer", async () => {
    await followed(movingService, moving);
    const fresh = keyFromPrivate("11".repeat(32));
    const tx = moving.chain.trx(alice, fresh.hex, 2_000_000n);
    const { ret: _ret, ...body } = renderTransaction({ ...tx, contractRet: "SUCCESS" }, false);
    const sent = await ask(movingService.url, "/wallet/broadcasttransaction", body);
    expect(sent.json).toEqual({ result: true, code: "SUCCESS", txid: tx.txID });
    const account = { address: fresh.hex };
    const info = { value: tx.txID };
    const isAccount = (b: any) => b?.address === fresh.hex;
    const isInfo = (b: any) => b?.value === tx.txID;
    const before = [
      pathCalls(moving, "/wallet/getaccount", isAccount),
      pathCalls(moving, "/wallet/gettransactioninfobyid", isInfo),
      pathCalls(moving, "/walletsolidity/gettransactioninfobyid", isInfo),
    ];
    for (let i = 0; i < 2; i++) {
      expect((await ask(movingService.url, "/wallet/getaccount", account)).text).toBe("{}");
      expect((await ask(movingService.url, "/wallet/gettransactioninfobyid", info)).text).toBe("{}");
    }
    // Each read asked the node again: the account's and the info's (solidity face first, then the full node).
    expect([
      pathCalls(moving, "/wallet/getaccount", isAccount) - before[0]!,
      pathCalls(moving, "/wallet/gettransactioninfobyid", isInfo) - before[1]!,
      pathCalls(moving, "/walletsolidity/gettransactioninfobyid", isInfo) - before[2]!,
    ]).toEqual([2, 2, 2]);
    moving.mine(1);
    await followed(movingService, moving);
    const accountNow = await ask(moving.url, "/wallet/getaccount", account);
    const infoNow = await ask(moving.url, "/wallet/gettransactioninfobyid", info);
    expect(accountNow.json.balance).toBe(2_000_000);
    expect(infoNow.json.id).toBe(tx.txID);
    expect((await ask(movingService.url, "/wallet/getaccount", account)).text).toBe(accountNow.text);
    expect((await ask(movingService.url, "/wallet/gettransactioninfobyid", info)).text).toBe(infoNow.text);
  });
});

// ---- 5. /wallet/getnowblock is the followed head's block ----

describe("/wallet/getnowblock", () => {
  test("is the block at eth_blockNumber, without a node call when that block is kept", async () => {
    await followed(service, node);
    const number = Number(
      (await rpc(`${service.url}/node/jsonrpc`, call("eth_blockNumber", []))).json.result,
    );
    expect(number).toBe(node.chain.headNumber());
    for (const visible of [undefined, true]) {
      const body = visible === undefined ? {} : { visible };
      const block = await ask(service.url, "/wallet/getblockbynum", { ...body, num: number });
      expect(block.text).toBe((await ask(node.url, "/wallet/getblockbynum", { ...body, num: number })).text);
      const before = walletCalls(node);
      const now = await ask(service.url, "/wallet/getnowblock", body);
      expect(walletCalls(node)).toBe(before);
      expect(now.text).toBe(block.text);
      expect(now.text).toBe((await ask(node.url, "/wallet/getnowblock", body)).text);
    }
  });
});

// ---- 6. metrics ----

describe("metrics", () => {
  const series = (operation: string, outcome: string) => async () =>
    metric(await (await fetch(`${service.url}/metrics`)).text(), "gateway_requests_total", {
      operation,
      transport: "node_path",
      outcome,
    }) ?? 0;

  test("/metrics counts each path's requests by outcome", async () => {
    const full = series("/wallet/getblockbynum", "ok");
    const solidity = series("/walletsolidity/getblockbynum", "ok");
    const [fullBefore, solidityBefore] = [await full(), await solidity()];
    await ask(service.url, "/wallet/getblockbynum", { num: 1 });
    await ask(service.url, "/wallet/getblockbynum?num=2");
    await ask(service.url, "/walletsolidity/getblockbynum", { num: 1 });
    expect([(await full()) - fullBefore, (await solidity()) - solidityBefore]).toEqual([2, 1]);
  });

  test("a body refused before any node call counts as invalid, never as the service's fault", async () => {
    const path = "/wallet/broadcasttransaction";
    const invalid = series(path, "invalid");
    const internal = series(path, "internal");
    const [invalidBefore, internalBefore] = [await invalid(), await internal()];
    expect((await ask(service.url, path, { txID: "xyz" })).status).toBe(400);
    expect((await ask(service.url, path, [1])).status).toBe(400);
    expect([(await invalid()) - invalidBefore, (await internal()) - internalBefore]).toEqual([2, 0]);
  });
});
