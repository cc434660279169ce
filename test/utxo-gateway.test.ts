/**
 * The Bitcoin family's gateway (/node/jsonrpc, HTTP and WebSocket) in front of a real Litecoin Core in
 * regtest (test/support/litecoind.ts), on a chain the test makes: blocks of sendmany transactions with
 * several inputs and outputs, a transaction in the mempool. Ground truth is the node's own answer to the same
 * call, byte for byte over HTTP: every allow-listed method (singles, batches, params by name); answers by
 * hash kept and answered with the node's `confirmations` and `nextblockhash` as the chain grows and as a
 * block leaves it; answers by height kept only once final; mempool answers at most a second old; methods
 * off the list never reach the node (a proxy counts what reaches it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { objectMembers } from "../src/json";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { type NodeProxy, startProxy } from "./support/proxy";
import { startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

/** CONFIRMATIONS of the service under test: blocks this deep are final (regtest's default is 1). */
const CONFIRMATIONS = 6;
/** How long a test may take: some wait for answers to expire, or for the node to mine. */
const TEST_MS = 30_000;
/** How long mempool, fee and unspent-output answers may be kept (and a little more). */
const BRIEF_MS = 1_100;
/** Blocks to mine before coins can be spent: regtest's coinbase matures after 100 blocks. */
const MATURE = 110;

let node: LitecoinNode;
let proxy: NodeProxy;
let service: TestService;
/** Blocks and transactions the chain was made with. */
const made = { blocks: [] as string[], txs: [] as string[], rawTx: "", addresses: [] as string[] };

interface Answer {
  status: number;
  cache: string | null;
  text: string;
}

/** A JSON-RPC body to the service: its status, `x-cache` and text. */
async function viaService(body: unknown): Promise<Answer> {
  const response = await fetch(`${service.url}/node/jsonrpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, cache: response.headers.get("x-cache"), text: await response.text() };
}

/** The raw text of a response's `result` (or `error`), as it was sent. */
function member(text: string, name: "result" | "error"): string | undefined {
  const span = objectMembers(text, 0).get(name);
  return span && text.slice(span.start, span.end);
}

/** The outcome of one call as text: its result, or its error's code and message. */
function outcome(text: string): string {
  const error = member(text, "error");
  if (error !== undefined && error !== "null") {
    const { code, message } = JSON.parse(error) as { code: number; message: string };
    return `error ${code}: ${message}`;
  }
  return member(text, "result")!;
}

/** The node's own answer to the same call. */
async function viaNode(method: string, params: unknown): Promise<string> {
  const { text } = await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
  return outcome(text);
}

/** A call through the service, with its outcome as text. */
async function call(method: string, params: unknown, id = 1) {
  const answer = await viaService({ jsonrpc: "2.0", id, method, params });
  return { ...answer, outcome: outcome(answer.text) };
}

/** The service's head is the node's (the follower has the node's best block). */
async function synced(): Promise<void> {
  const best = await node.rpc<string>("getbestblockhash");
  await until("the service to follow the node's head", async () => {
    const { outcome: theirs } = await call("getbestblockhash", []);
    return theirs === JSON.stringify(best) ? true : undefined;
  });
}

/** A sendmany to the test's addresses; the amounts need several of the wallet's coins. */
async function sendMany(amounts: number[]): Promise<string> {
  const outputs = Object.fromEntries(made.addresses.map((a, i) => [a, amounts[i % amounts.length]]));
  return node.rpc<string>("sendmany", ["", outputs]);
}

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(MATURE);
  made.addresses = [
    await node.rpc<string>("getnewaddress", ["", "bech32"]),
    await node.rpc<string>("getnewaddress", ["", "p2sh-segwit"]),
    await node.rpc<string>("getnewaddress", ["", "legacy"]),
  ];
  // Two blocks of transactions with several inputs (coinbases of 50) and several outputs.
  for (const amounts of [
    [60, 45.5, 0.12345678],
    [70.25, 12.5, 0.29],
  ]) {
    made.txs.push(await sendMany(amounts), await sendMany([1, 2, 3]));
    made.blocks.push(...(await node.mine(1)));
  }
  // A signed transaction not sent (testmempoolaccept, sendrawtransaction).
  const unspent = (await node.rpc<{ txid: string; vout: number; amount: number }[]>("listunspent"))[0]!;
  const raw = await node.rpc<string>("createrawtransaction", [
    [{ txid: unspent.txid, vout: unspent.vout }],
    { [made.addresses[0]!]: Number((unspent.amount - 0.001).toFixed(8)) },
  ]);
  made.rawTx = (await node.rpc<{ hex: string }>("signrawtransactionwithwallet", [raw])).hex;
  // Kept from the wallet's later sends (a sendmany below may pick it: CI saw "txn-mempool-conflict").
  await node.rpc("lockunspent", [false, [{ txid: unspent.txid, vout: unspent.vout }]]);
  proxy = startProxy(node.url);
  service = await startTestService({
    upstreamUrls: [proxy.url],
    env: { CHAIN: "LTC", CONFIRMATIONS: String(CONFIRMATIONS), HEAD_POLL_MS: "200" },
  });
  await synced();
}, 120_000);

afterAll(async () => {
  await service?.stop();
  proxy?.stop();
});

/** Every allow-listed method, with params that name what the chain holds (filled once it is made). */
function allowListed(mempoolTx: string): [string, unknown[]][] {
  const [block1, block2] = made.blocks as [string, string];
  const [tx1] = made.txs as [string];
  return [
    ["getblockchaininfo", []],
    ["getbestblockhash", []],
    ["getblockcount", []],
    ["getblockhash", [MATURE + 1]],
    ["getblock", [block1]],
    ["getblock", [block1, 0]],
    ["getblock", [block1, 1]],
    ["getblock", [block2, 2]],
    ["getblock", [block2, true]],
    ["getblockheader", [block1]],
    ["getblockheader", [block1, false]],
    ["getblockstats", [MATURE + 1]],
    ["getblockstats", [block2, ["avgfee", "height", "ins", "outs"]]],
    ["getchaintips", []],
    ["getdifficulty", []],
    ["getrawtransaction", [tx1]],
    ["getrawtransaction", [tx1, true]],
    ["getrawtransaction", [tx1, true, block1]],
    ["gettxout", [tx1, 0]],
    ["gettxout", [mempoolTx, 0, true]],
    ["getblockfilter", [block1]],
    ["getrawmempool", []],
    ["getrawmempool", [true]],
    ["getmempoolinfo", []],
    ["getmempoolentry", [mempoolTx]],
    ["estimatesmartfee", [6]],
    ["decoderawtransaction", [made.rawTx]],
    ["decodescript", ["76a9145d3b19d581f4c425135c2c144fddf1319f0acf0588ac"]],
    ["validateaddress", [made.addresses[1]]],
    ["testmempoolaccept", [[made.rawTx]]],
    // The node's errors pass through: a block it does not have, a height past its head.
    ["getblock", ["00".repeat(32)]],
    ["getblockhash", [1_000_000]],
  ];
}

describe("every allow-listed method equals the node's answer", () => {
  let mempoolTx: string;
  beforeAll(async () => {
    // A transaction left in the mempool (mined by the tests further down).
    mempoolTx = await sendMany([0.5, 0.25, 0.125]);
    // The instance's mempool follower reads the mempool through the cache every second: what it kept
    // before the send (at most a second, as any caller's answer) is gone by now.
    await Bun.sleep(BRIEF_MS);
  });

  test(
    "singles over HTTP, byte for byte (the second time from the cache where it keeps them)",
    async () => {
      for (const [method, params] of allowListed(mempoolTx)) {
        for (let round = 0; round < 2; round++) {
          const theirs = await call(method, params);
          expect([method, params, theirs.status, theirs.outcome]).toEqual([
            method,
            params,
            200,
            await viaNode(method, params),
          ]);
        }
      }
      // Kept: a block by hash, a final block's hash by height; the tip from the followed head.
      expect((await call("getblock", [made.blocks[0], 2])).cache).toBe("miss");
      expect((await call("getblock", [made.blocks[0], 2])).cache).toBe("memory");
      expect((await call("getblockhash", [MATURE + 1])).cache).toBe("memory");
      expect((await call("getblockcount", [])).cache).toBe("memory");
    },
    TEST_MS,
  );

  test(
    "a batch over HTTP: each answer equals the node's, in order",
    async () => {
      const calls = allowListed(mempoolTx);
      const answer = await viaService(
        calls.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params })),
      );
      expect(answer.status).toBe(200);
      const elements = JSON.parse(answer.text) as unknown[];
      expect(elements.map((e) => (e as { id: number }).id)).toEqual(calls.map((_, i) => i));
      // Each element's own text, as the service wrote it.
      const texts = splitBatch(answer.text);
      for (let i = 0; i < calls.length; i++) {
        const [method, params] = calls[i]!;
        expect([method, outcome(texts[i]!)]).toEqual([method, await viaNode(method, params)]);
      }
    },
    TEST_MS,
  );

  test(
    "params by name: the node's answer to the same call by position, and one cache entry",
    async () => {
      const [block1, block2] = made.blocks as [string, string];
      const [tx1] = made.txs as [string];
      const named: [string, Record<string, unknown>, unknown[]][] = [
        ["getblock", { verbosity: 2, blockhash: block2 }, [block2, 2]],
        ["getblockheader", { blockhash: block1, verbose: false }, [block1, false]],
        ["getrawtransaction", { txid: tx1, blockhash: block1 }, [tx1, null, block1]],
        ["getrawtransaction", { txid: tx1, verbose: true }, [tx1, true]],
        ["getblockhash", { height: MATURE }, [MATURE]],
        ["estimatesmartfee", { conf_target: 2, estimate_mode: "ECONOMICAL" }, [2, "ECONOMICAL"]],
        ["getblockstats", { hash_or_height: MATURE + 2, stats: ["txs"] }, [MATURE + 2, ["txs"]]],
      ];
      for (const [method, byName, byPosition] of named) {
        const theirs = await call(method, byName);
        expect([method, theirs.outcome]).toEqual([method, await viaNode(method, byPosition)]);
      }
      // A block at verbosity 1 asked by name first, then by position: the second is the first's entry.
      expect((await call("getblock", { blockhash: block2, verbosity: 1 })).cache).toBe("miss");
      expect((await call("getblock", [block2, 1])).cache).toBe("memory");
      // A name the method does not take: -32602 naming it, and the node never asked.
      proxy.calls.length = 0;
      const wrong = await call("getblock", { blockhash: block1, verbosity: 1, format: "json" });
      expect(JSON.parse(wrong.text).error).toEqual({
        code: -32602,
        message: 'invalid params: getblock has no param named "format" (its params: blockhash, verbosity)',
      });
      expect(proxy.callsOf("getblock")).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "over a WebSocket: singles, a batch and params by name, as the node answers them",
    async () => {
      const socket = await connectSocket(wsUrl(service.url));
      const calls = allowListed(mempoolTx);
      for (const [method, params] of calls) {
        const answer = await socket.request(method, params);
        const expected = await viaNode(method, params);
        expect([
          method,
          answer.error ? `error ${answer.error.code}: ${answer.error.message}` : answer.result,
        ]).toEqual([method, expected.startsWith("error ") ? expected : JSON.parse(expected)]);
      }
      socket.send(calls.map(([method, params], id) => ({ jsonrpc: "2.0", id: `b${id}`, method, params })));
      const batch = (await socket.next((m) => Array.isArray(m))) as { id: string; result?: unknown }[];
      expect(batch.map((a) => a.id)).toEqual(calls.map((_, i) => `b${i}`));
      for (let i = 0; i < 3; i++) {
        const [method, params] = calls[i]!;
        expect(batch[i]!.result).toEqual(JSON.parse(await viaNode(method, params)));
      }
      socket.send({
        jsonrpc: "2.0",
        id: "n",
        method: "getblock",
        params: { blockhash: made.blocks[0], verbosity: 2 },
      });
      const byName = await socket.next((m) => m?.id === "n");
      expect(byName.result).toEqual(JSON.parse(await viaNode("getblock", [made.blocks[0], 2])));
      socket.close();
    },
    TEST_MS,
  );

  test(
    "sendrawtransaction: the node's txid, sent once to one node",
    async () => {
      proxy.calls.length = 0;
      const sent = await call("sendrawtransaction", [made.rawTx]);
      const txid = JSON.parse(await viaNode("decoderawtransaction", [made.rawTx])).txid;
      expect(sent.outcome).toBe(JSON.stringify(txid));
      expect(proxy.callsOf("sendrawtransaction")).toHaveLength(1);
      expect(await node.rpc<string[]>("getrawmempool")).toContain(txid);
    },
    TEST_MS,
  );
});

/** The elements of a batch answer's text, each as the service wrote it. */
function splitBatch(text: string): string[] {
  const wrapped = `{"a":${text}}`;
  const span = objectMembers(wrapped, 0).get("a")!;
  const parts: string[] = [];
  let depth = 0;
  let start = span.start + 1;
  let inString = false;
  for (let i = span.start + 1; i < span.end - 1; i++) {
    const c = wrapped[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(wrapped.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(wrapped.slice(start, span.end - 1));
  return parts;
}

describe("answers by hash: kept for ever, their confirmations and next block as the node says them now", () => {
  test(
    "after more blocks: a hit (x-cache memory) equal to the node's answer now",
    async () => {
      await node.mine(1);
      await synced();
      const tip = await node.rpc<string>("getbestblockhash");
      const tipTx = (await node.rpc<{ tx: string[] }>("getblock", [tip, 1])).tx[1]!;
      const calls: [string, unknown[]][] = [
        ["getblock", [tip, 1]],
        ["getblock", [tip, 2]],
        ["getblockheader", [tip]],
        ["getrawtransaction", [tipTx, true]],
        ["getrawtransaction", [tipTx, true, tip]],
      ];
      for (const [method, params] of calls) {
        expect((await call(method, params)).outcome).toBe(await viaNode(method, params));
      }
      for (let more = 1; more <= 3; more++) {
        await node.mine(1);
        await synced();
        for (const [method, params] of calls) {
          const hit = await call(method, params);
          expect([method, params, hit.cache, hit.outcome]).toEqual([
            method,
            params,
            "memory",
            await viaNode(method, params),
          ]);
        }
      }
      expect(JSON.parse((await call("getblock", [tip, 1])).outcome).confirmations).toBe(4);
    },
    TEST_MS,
  );

  test(
    "a block that left the main chain: -1 and no next block, byte for byte the node's; its transaction asked anew",
    async () => {
      const [left] = await node.mine(1);
      await synced();
      const tx = (await node.rpc<{ tx: string[] }>("getblock", [left, 1])).tx[0]!;
      for (const verbosity of [1, 2]) await call("getblock", [left, verbosity]);
      await call("getblockheader", [left]);
      await call("getrawtransaction", [tx, true]);
      await node.rpc("invalidateblock", [left]);
      // The follower never goes down: a longer branch without the block (other blocks: another address).
      const other = await node.rpc<string>("getnewaddress");
      await node.rpc("generatetoaddress", [2, other]);
      await synced();
      for (const [method, params] of [
        ["getblock", [left, 1]],
        ["getblock", [left, 2]],
        ["getblockheader", [left]],
      ] as [string, unknown[]][]) {
        const hit = await call(method, params);
        const theirs = await viaNode(method, params);
        expect(JSON.parse(theirs).confirmations).toBe(-1);
        expect([method, params, hit.cache, hit.outcome]).toEqual([method, params, "memory", theirs]);
      }
      // Its coinbase is in no block of the main chain now: the node is asked, and says so.
      const asked = await call("getrawtransaction", [tx, true]);
      expect([asked.cache, asked.outcome]).toEqual(["miss", await viaNode("getrawtransaction", [tx, true])]);
    },
    TEST_MS,
  );
});

describe("a transaction of a final block, in the followed window", () => {
  test(
    "its block's height from the followed chain (no header read), then hits counting the node's confirmations",
    async () => {
      await synced();
      const [tx1] = made.txs as [string];
      const height = await node.rpc<number>("getblockcount");
      expect(height - (MATURE + 1)).toBeGreaterThan(CONFIRMATIONS);
      proxy.calls.length = 0;
      const first = await call("getrawtransaction", [tx1, true]);
      expect(first.outcome).toBe(await viaNode("getrawtransaction", [tx1, true]));
      // Final, yet followed (the follower keeps 1,024 blocks below its head): its height needs no read. A
      // block below what the follower holds has its header read once (src/cache/live.test.ts).
      expect(proxy.callsOf("getblockheader")).toEqual([]);
      await node.mine(1);
      await synced();
      const hit = await call("getrawtransaction", [tx1, true]);
      expect([hit.cache, hit.outcome]).toEqual(["memory", await viaNode("getrawtransaction", [tx1, true])]);
    },
    TEST_MS,
  );
});

describe("answers by height: kept once final, else a block time and while their block stands", () => {
  test(
    "a final block's hash stays kept; a shallow one's expires and follows a reorg",
    async () => {
      await synced();
      const height = await node.rpc<number>("getblockcount");
      // The last final block (CONFIRMATIONS below the head), not asked before.
      const deep = height - CONFIRMATIONS;
      expect((await call("getblockhash", [deep])).cache).toBe("miss");
      await call("getblockhash", [height]);
      expect((await call("getblockhash", [height])).cache).toBe("memory");
      // A block time on regtest is a second: the shallow one is gone, the final one stays.
      await Bun.sleep(1_200);
      expect((await call("getblockhash", [deep])).cache).toBe("memory");
      expect((await call("getblockhash", [height])).cache).toBe("miss");
      // A reorg replaces the block at `height`: the kept hash goes with it.
      expect((await call("getblockhash", [height])).cache).toBe("memory");
      await node.rpc("invalidateblock", [await node.rpc<string>("getblockhash", [height])]);
      await node.rpc("generatetoaddress", [2, await node.rpc<string>("getnewaddress")]);
      await synced();
      const after = await call("getblockhash", [height]);
      expect([after.cache, after.outcome]).toEqual(["miss", await viaNode("getblockhash", [height])]);
      expect((await call("getblockstats", [deep])).outcome).toBe(await viaNode("getblockstats", [deep]));
      expect((await call("getblockstats", [deep])).cache).toBe("memory");
    },
    TEST_MS,
  );
});

describe("the mempool, fees and unspent outputs: at most a second old", () => {
  test(
    "a transaction entering the mempool shows within a second",
    async () => {
      // What earlier tests were answered is at most a second old: past it, the node's.
      await Bun.sleep(BRIEF_MS);
      const before = await call("getrawmempool", []);
      expect(before.outcome).toBe(await viaNode("getrawmempool", []));
      expect((await call("getrawmempool", [])).cache).toBe("memory");
      const sentAt = Date.now();
      const txid = await sendMany([0.01, 0.02, 0.03]);
      const seen = await until("the service's mempool to hold the new transaction", async () => {
        const now = await call("getrawmempool", []);
        return (JSON.parse(now.outcome) as string[]).includes(txid) ? now : undefined;
      });
      expect(Date.now() - sentAt).toBeLessThan(1_500);
      expect(seen.outcome).toBe(await viaNode("getrawmempool", []));
      for (const [method, params] of [
        ["getmempoolentry", [txid]],
        ["gettxout", [txid, 0, true]],
        ["getmempoolinfo", []],
        ["estimatesmartfee", [2]],
      ] as [string, unknown[]][]) {
        await Bun.sleep(BRIEF_MS);
        expect([method, (await call(method, params)).outcome]).toEqual([
          method,
          await viaNode(method, params),
        ]);
      }
    },
    TEST_MS,
  );
});

describe("methods off the allow-list never reach the node", () => {
  const refused: [string, unknown[]][] = [
    ["generatetoaddress", [5, "rltc1qp9e4kkk2uzvg2rhlznez4tycgxcg37j8l3unjy"]],
    ["sendtoaddress", ["rltc1qp9e4kkk2uzvg2rhlznez4tycgxcg37j8l3unjy", 1]],
    ["stop", []],
    ["addnode", ["127.0.0.1:1", "add"]],
    ["getnewaddress", []],
    ["walletpassphrase", ["x", 60]],
    ["setban", ["127.0.0.2", "add"]],
    ["dumpprivkey", ["rltc1qp9e4kkk2uzvg2rhlznez4tycgxcg37j8l3unjy"]],
    ["invalidateblock", ["00".repeat(32)]],
  ];

  test(
    "-32601 naming the method, singly, in a batch and over a WebSocket; the chain does not move",
    async () => {
      await synced();
      const height = await node.rpc<number>("getblockcount");
      const balance = await node.rpc<number>("getbalance");
      proxy.calls.length = 0;
      for (const [method, params] of refused) {
        const answer = await call(method, params);
        expect([answer.status, JSON.parse(answer.text).error.code]).toEqual([200, -32601]);
        expect(JSON.parse(answer.text).error.message).toContain(method);
      }
      const batch = await viaService(
        refused.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params })),
      );
      expect((JSON.parse(batch.text) as { error: { code: number } }[]).map((a) => a.error.code)).toEqual(
        refused.map(() => -32601),
      );
      const socket = await connectSocket(wsUrl(service.url));
      for (const [method, params] of refused)
        expect((await socket.request(method, params)).error.code).toBe(-32601);
      socket.close();
      expect(proxy.calls.filter((c) => refused.some(([m]) => m === c.method))).toEqual([]);
      // Not mined, not sent: the node's chain and wallet are as they were (no block was made meanwhile).
      expect(await node.rpc<number>("getblockcount")).toBe(height);
      expect(await node.rpc<number>("getbalance")).toBe(balance);
    },
    TEST_MS,
  );

  test(
    "Ethereum's methods: -32601 naming the chain, never reaching the node",
    async () => {
      proxy.calls.length = 0;
      for (const method of ["eth_blockNumber", "eth_getBlockByNumber", "eth_chainId"]) {
        const answer = await call(method, []);
        expect(JSON.parse(answer.text).error.code).toBe(-32601);
        expect(JSON.parse(answer.text).error.message).toContain(method);
      }
      expect(proxy.calls.filter((c) => c.method.startsWith("eth_"))).toEqual([]);
    },
    TEST_MS,
  );
});

describe("the dev node", () => {
  /** The dev node's head, through the service. */
  const headOf = (url: string) =>
    fetch(`${url}/node/jsonrpc`, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getblockhash", params: [1] }),
    }).then(async (r) => ((await r.json()) as { result: string }).result);

  test("CHAIN=LTC without UPSTREAM_URLS: a regtest litecoind with a first block; its chain and credentials kept under DATA_DIR; stopped with the service", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cg-ltc-dev-"));
    try {
      const dir = join(dataDir, "devchain");
      const first = await startTestService({ upstreamUrls: [], dataDir, env: { CHAIN: "LTC" } });
      const block1 = await headOf(first.url);
      const count = await fetch(`${first.url}/node/jsonrpc`, {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getblockcount", params: [] }),
      }).then((r) => r.json() as Promise<{ result: number }>);
      expect(count.result).toBe(1);
      expect(statSync(join(dir, "rpc.json")).mode & 0o777).toBe(0o600);
      const credentials = readFileSync(join(dir, "rpc.json"), "utf8");
      const pid = Number(readFileSync(join(dir, "gateway.pid"), "utf8"));
      expect(process.kill(pid, 0)).toBe(true);
      await first.stop();
      expect(() => process.kill(pid, 0)).toThrow();
      expect(existsSync(join(dir, "gateway.pid"))).toBe(false);
      // Started again: the same chain (no second first block), the same credentials.
      const second = await startTestService({ upstreamUrls: [], dataDir, env: { CHAIN: "LTC" } });
      expect(await headOf(second.url)).toBe(block1);
      expect(readFileSync(join(dir, "rpc.json"), "utf8")).toBe(credentials);
      await second.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
