/**
 * The node methods of issue 25 (docs/interface.md §2.2), against a real anvil behind a loopback proxy that
 * counts what reaches the node: each one answers what anvil answers to the same raw request (anvil's own
 * -32601 where it lacks the method), with the cache rule its row gives it; eth_accounts is answered by the
 * service alone; the methods that use the node's keys or change its state never reach it.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { DevChain } from "../src/families/evm/devChain";
import { type ChainFixture, populateChain, rpc } from "./support/chain";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const hex = (n: number) => `0x${n.toString(16)}`;
/** anvil's finalized block is head - 64: mined after the fixture, they make its blocks final. */
const MINED_AFTER = 100;
const HEAD_POLL_MS = 200;

let anvil: DevChain;
let chain: ChainFixture;
let proxy: NodeProxy;
let service: string;
let hashOf13: string;
/** A block between the last final one and the head: a by-hash answer about it is kept while canonical. */
let recentHash: string;

const endpoint = () => `${service}/node/jsonrpc`;

/** A raw JSON-RPC answer: its `result` or `error`, as parsed, and the x-cache header. */
async function answer(url: string, method: string, params: unknown[]) {
  const { status, json, headers } = await post(url, { jsonrpc: "2.0", id: 7, method, params });
  return { status, json, cache: headers.get("x-cache") };
}

beforeAll(async () => {
  anvil = await newAnvil();
  chain = await populateChain(anvil.url);
  await rpc(anvil.url)("anvil_mine", [hex(MINED_AFTER)]);
  const call = rpc(anvil.url);
  hashOf13 = (await call("eth_getBlockByNumber", [hex(13), false])).hash;
  recentHash = (await call("eth_getBlockByNumber", [hex(Number(await call("eth_blockNumber")) - 2), false]))
    .hash;
  proxy = startProxy(anvil.url);
  service = (
    await startTestService({ upstreamUrls: [proxy.url], env: { HEAD_POLL_MS: String(HEAD_POLL_MS) } })
  ).url;
}, 120_000);

/**
 * What a second identical request is: `memory` (kept: a final block, or a recent one by hash), `miss` (never
 * kept: the rule says never, the answer is null, or a block-class call names its block by hash) or `head`
 * (kept one head poll).
 */
type Second = "memory" | "miss" | "head";

/** [method, params, the second identical call] for every method of issue 25's item 1 that anvil has. */
function served(): [string, unknown[], Second][] {
  const [a0, a1] = chain.accounts as [string, string];
  const { token } = chain.contracts;
  const final = chain.bigBlock;
  const balanceOf = `0x70a08231${"0".repeat(24)}${a1.slice(2)}`;
  return [
    ["web3_clientVersion", [], "head"],
    ["net_listening", [], "head"],
    ["eth_syncing", [], "head"],
    ["eth_protocolVersion", [], "head"],
    ["eth_maxPriorityFeePerGas", [], "head"],
    ["eth_blobBaseFee", [], "head"],
    ["eth_getBlockReceipts", [hex(final)], "memory"],
    ["eth_getBlockReceipts", [hashOf13], "miss"],
    ["eth_getProof", [token, [`0x${"0".repeat(64)}`, `0x${"0".repeat(63)}2`], hex(20)], "memory"],
    ["eth_createAccessList", [{ from: a0, to: token, data: balanceOf }, hex(20)], "memory"],
    ["eth_getTransactionBySenderAndNonce", [a0, "0x1"], "memory"],
    [
      "eth_simulateV1",
      [{ blockStateCalls: [{ calls: [{ from: a0, to: a1, value: "0x1" }] }] }, hex(20)],
      "memory",
    ],
    // No uncles on anvil: null, never kept.
    ["eth_getUncleByBlockNumberAndIndex", [hex(3), "0x0"], "miss"],
    ["eth_getUncleByBlockHashAndIndex", [recentHash, "0x0"], "miss"],
    ["debug_traceTransaction", [chain.tx.erc20Transfer], "miss"],
    ["debug_traceTransaction", [chain.tx.internalValue, { tracer: "callTracer" }], "miss"],
    ["debug_traceBlockByNumber", [hex(13), { tracer: "callTracer" }], "memory"],
    ["debug_traceBlockByNumber", [hex(13)], "memory"],
    ["debug_traceBlockByHash", [recentHash, { tracer: "callTracer" }], "memory"],
    ["debug_traceCall", [{ from: a0, to: a1, value: "0x1" }, hex(20), { tracer: "callTracer" }], "memory"],
    ["trace_filter", [{ fromBlock: "0x1", toBlock: hex(20) }], "miss"],
    ["trace_replayBlockTransactions", [hex(13), ["trace"]], "memory"],
  ];
}

/** Methods of item 1 that anvil 1.7 lacks: the service passes anvil's own -32601 through. */
const LACKED: [string, () => unknown[]][] = [
  ["net_peerCount", () => []],
  ["trace_replayTransaction", () => [chain.tx.internalValue, ["trace"]]],
];

describe("every method of item 1 equals anvil's own answer", () => {
  test("served and passed through: the service's result is anvil's", async () => {
    for (const [method, params] of served()) {
      const node = await answer(anvil.url, method, params);
      const ours = await answer(endpoint(), method, params);
      expect({ method, params, status: ours.status, json: ours.json }).toEqual({
        method,
        params,
        status: 200,
        json: { jsonrpc: "2.0", id: 7, result: node.json.result },
      });
      // Not a vacuous comparison: anvil answered a result of its own.
      expect({ method, node: "result" in node.json }).toEqual({ method, node: true });
    }
  }, 60_000);

  test("where anvil lacks the method, its -32601 is the answer, byte for byte", async () => {
    for (const [method, params] of LACKED) {
      const node = await answer(anvil.url, method, params());
      const ours = await answer(endpoint(), method, params());
      expect(node.json.error.code).toBe(-32601);
      expect({ method, status: ours.status, json: ours.json }).toEqual({
        method,
        status: 200,
        json: { jsonrpc: "2.0", id: 7, error: node.json.error },
      });
    }
  });

  test("eth_accounts is [] from the service itself: anvil's unlocked accounts are never asked for", async () => {
    expect((await answer(anvil.url, "eth_accounts", [])).json.result).toHaveLength(10);
    const ours = await answer(endpoint(), "eth_accounts", []);
    expect([ours.status, ours.json, ours.cache]).toEqual([200, { jsonrpc: "2.0", id: 7, result: [] }, null]);
    expect(proxy.callsOf("eth_accounts")).toEqual([]);
  });
});

describe("the cache rule of each row", () => {
  test("a second identical request: memory where the answer is kept, a node call where it is not", async () => {
    for (const [method, params, second] of served()) {
      if (second === "head") continue;
      await answer(endpoint(), method, params);
      const seen = proxy.callsOf(method).length;
      const again = await answer(endpoint(), method, params);
      const calls = proxy.callsOf(method).length - seen;
      expect({ method, params, cache: again.cache, calls }).toEqual({
        method,
        params,
        cache: second,
        calls: second === "miss" ? 1 : 0,
      });
    }
  }, 60_000);

  test("eth_getBlockReceipts and ext_getBlockReceipts share one node method and its cache entries", async () => {
    const block = hex(chain.bigBlock - 1);
    const seen = proxy.callsOf("eth_getBlockReceipts").length;
    const first = await answer(endpoint(), "ext_getBlockReceipts", [block]);
    const second = await answer(endpoint(), "eth_getBlockReceipts", [block]);
    expect([first.cache, second.cache]).toEqual(["miss", "memory"]);
    expect(second.json.result).toEqual(first.json.result);
    expect(second.json.result).toHaveLength(1);
    expect(proxy.callsOf("eth_getBlockReceipts").length - seen).toBe(1);
  });

  test("answers about the head: memory while fresh, asked again once the head has moved", async () => {
    const heads = served().filter(([, , rule]) => rule === "head");
    expect(heads.map(([m]) => m)).toHaveLength(6);
    for (const [method, params] of heads) {
      await answer(endpoint(), method, params);
      expect({ method, cache: (await answer(endpoint(), method, params)).cache }).toEqual({
        method,
        cache: "memory",
      });
    }
    const before = Number((await answer(endpoint(), "eth_blockNumber", [])).json.result);
    await rpc(anvil.url)("anvil_mine", ["0x1"]);
    await until("the service follows the new head", async () =>
      Number((await answer(endpoint(), "eth_blockNumber", [])).json.result) > before ? true : undefined,
    );
    // Kept one head poll at most.
    await Bun.sleep(HEAD_POLL_MS + 50);
    for (const [method, params] of heads) {
      const seen = proxy.callsOf(method).length;
      const after = await answer(endpoint(), method, params);
      expect({ method, cache: after.cache, calls: proxy.callsOf(method).length - seen }).toEqual({
        method,
        cache: "miss",
        calls: 1,
      });
      expect(after.json.result).toEqual((await answer(anvil.url, method, params)).json.result);
    }
  });

  test("a tag is resolved before the node is asked: eth_getProof without a block asks about the head", async () => {
    const head = Number((await answer(endpoint(), "eth_blockNumber", [])).json.result);
    const params = [chain.contracts.token, [`0x${"0".repeat(63)}1`]];
    const seen = proxy.callsOf("eth_getProof").length;
    const ours = await answer(endpoint(), "eth_getProof", params);
    expect(proxy.callsOf("eth_getProof").slice(seen)).toEqual([
      { method: "eth_getProof", params: [...params, hex(head)] },
    ]);
    const node = await answer(anvil.url, "eth_getProof", [...params, hex(head)]);
    expect(node.json.result.address).toBe(chain.contracts.token);
    expect(ours.json).toEqual({ jsonrpc: "2.0", id: 7, result: node.json.result });
  });
});

/** Methods that use the node's keys or change its state: never forwarded (docs/interface.md §2.3). */
const NEVER_FORWARDED: [string, (accounts: string[]) => unknown[]][] = [
  ["eth_sign", (a) => [a[0], "0xdeadbeef"]],
  ["eth_signTransaction", (a) => [{ from: a[0], to: a[1], value: "0x1" }]],
  ["eth_sendTransaction", (a) => [{ from: a[0], to: a[1], value: "0xde0b6b3a7640000" }]],
  ["personal_sign", (a) => ["0xdeadbeef", a[0]]],
  ["admin_peers", () => []],
  ["miner_start", () => []],
  ["anvil_setBalance", (a) => [a[1], "0x1"]],
  ["anvil_mine", () => ["0x5"]],
  ["hardhat_mine", () => ["0x5"]],
  ["evm_mine", () => []],
  ["evm_increaseTime", () => [3600]],
  ["txpool_content", () => []],
  ["debug_setHead", () => ["0x1"]],
];

describe("never forwarded: -32601 naming the method, and the node never sees it", () => {
  test("single, batch and WebSocket alike; anvil's state is unchanged", async () => {
    const [a0, a1] = chain.accounts as [string, string];
    const call = rpc(anvil.url);
    const state = async () => ({
      head: await call("eth_blockNumber"),
      nonce: await call("eth_getTransactionCount", [a0, "latest"]),
      balance: await call("eth_getBalance", [a1, "latest"]),
      pending: await call("eth_getBlockTransactionCountByNumber", ["pending"]),
    });
    const before = await state();
    const seen = proxy.calls.length;
    const socket = await connectSocket(wsUrl(service));
    const missing = (method: string) => ({
      code: -32601,
      message: `the method ${method} does not exist or is not available`,
    });
    for (const [method, params] of NEVER_FORWARDED) {
      const body = { jsonrpc: "2.0", id: 1, method, params: params([a0, a1]) };
      const single = await post(`${service}/node/jsonrpc`, body);
      expect([method, single.status, single.json]).toEqual([
        method,
        200,
        { jsonrpc: "2.0", id: 1, error: missing(method) },
      ]);
      const viaSocket = await socket.request(method, params([a0, a1]));
      expect(viaSocket.error).toEqual(missing(method));
    }
    const batch = await post(
      `${service}/node/jsonrpc`,
      NEVER_FORWARDED.map(([method, params], id) => ({
        jsonrpc: "2.0",
        id,
        method,
        params: params([a0, a1]),
      })),
    );
    expect([batch.status, batch.json]).toEqual([
      200,
      NEVER_FORWARDED.map(([method], id) => ({ jsonrpc: "2.0", id, error: missing(method) })),
    ]);
    socket.send(
      NEVER_FORWARDED.map(([method, params], id) => ({
        jsonrpc: "2.0",
        id: `b${id}`,
        method,
        params: params([a0, a1]),
      })),
    );
    const socketBatch = await socket.next((m) => Array.isArray(m));
    expect(socketBatch).toEqual(
      NEVER_FORWARDED.map(([method], id) => ({ jsonrpc: "2.0", id: `b${id}`, error: missing(method) })),
    );
    socket.close();
    const names = new Set(NEVER_FORWARDED.map(([m]) => m));
    expect(proxy.calls.slice(seen).filter((c) => names.has(c.method))).toEqual([]);
    expect(await state()).toEqual(before);
  }, 30_000);

  test("the same unknown request answers the same bytes whether the fast path or the full path reads it", async () => {
    const compact = '{"jsonrpc":"2.0","id":3,"method":"eth_sendTransaction","params":[]}';
    const spaced = '{ "jsonrpc": "2.0", "id": 3, "method": "eth_sendTransaction", "params": [ ] }';
    // eth_chainId with [] is known to the fast path's memo from here on; the unknown method never is.
    await post(`${service}/node/jsonrpc`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', {
      raw: true,
    });
    const texts = [];
    for (const text of [compact, spaced, compact]) {
      const { status, text: body } = await post(`${service}/node/jsonrpc`, text, { raw: true });
      texts.push([status, body]);
    }
    const expected = [
      200,
      '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"the method eth_sendTransaction does not exist or is not available"}}',
    ];
    expect(texts).toEqual([expected, expected, expected]);
  });
});

describe("params checked strictly where a loose reading would answer something else", () => {
  test("-32602 naming the param, and nothing reaches the node", async () => {
    const seen = proxy.calls.length;
    const cases: [string, unknown[], string][] = [
      ["eth_getProof", [chain.contracts.token, "0x00", "latest"], "params[1] (storage keys)"],
      ["eth_getTransactionBySenderAndNonce", [chain.accounts[0], -1], "params[1] (nonce)"],
      ["trace_replayBlockTransactions", [hex(13), ["everything"]], "params[1][0] (trace types)"],
      ["debug_traceTransaction", [chain.tx.legacy, "callTracer"], "params[1] (tracer options)"],
      ["eth_simulateV1", [{ calls: [] }, "latest"], "params[0].blockStateCalls (simulation)"],
      ["trace_filter", [{ fromBlock: "soon" }], "params[0].fromBlock (filter)"],
    ];
    for (const [method, params, where] of cases) {
      const { status, json } = await answer(endpoint(), method, params);
      expect({ method, status, code: json.error?.code }).toEqual({ method, status: 200, code: -32602 });
      expect(json.error.message).toStartWith(`invalid params: ${where}: `);
    }
    expect(proxy.calls.slice(seen).filter((c) => cases.some(([m]) => m === c.method))).toEqual([]);
  });
});

test("a by-hash question about a block anvil does not have: anvil's own error, passed through", async () => {
  const missing = `0x${"ab".repeat(32)}`;
  const node = await answer(anvil.url, "eth_getUncleByBlockHashAndIndex", [missing, "0x0"]);
  const ours = await answer(endpoint(), "eth_getUncleByBlockHashAndIndex", [missing, "0x0"]);
  expect(node.json.error).toEqual({ code: -32001, message: "Resource not found" });
  expect(ours.json).toEqual({ jsonrpc: "2.0", id: 7, error: node.json.error });
});

test("trace_filter costs as eth_getLogs does, an absent fromBlock counting from block 0", async () => {
  const limited = (await startTestService({ upstreamUrls: [anvil.url], env: { RATE_LIMIT: "1/5" } })).url;
  const traceFilter = (filter: object) =>
    post(`${limited}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method: "trace_filter", params: [filter] });
  const tooMany = {
    jsonrpc: "2.0",
    id: 1,
    error: {
      code: -32005,
      message: "rate limit: this request counts as 6 calls, more than this key may make at once (5)",
    },
  };
  for (const filter of [{ fromBlock: "0x0", toBlock: hex(5_999) }, { toBlock: 5_999 }]) {
    const answer = await traceFilter(filter);
    expect([answer.status, answer.json]).toEqual([429, tooMany]);
  }
  // 1,000 blocks: one token.
  const one = await traceFilter({ fromBlock: "0x1", toBlock: hex(1_000) });
  expect(one.status).toBe(200);
  expect(one.json.result).toEqual(
    (await answer(anvil.url, "trace_filter", [{ fromBlock: "0x1", toBlock: hex(1_000) }])).json.result,
  );
});
