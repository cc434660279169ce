/**
 * Every node operation, over REST and over JSON-RPC: the service's answer equals the node's own answer to
 * the same question, found or not, in every block-number form.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { ChainFixture } from "./support/chain";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

let chain: ChainFixture;
let node: string;
let service: string;

const hex = (n: number) => `0x${n.toString(16)}`;
const MISSING_HASH = `0x${"ab".repeat(32)}`;
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** The node's own answer: the parsed `result`, or the `error` object. */
async function nodeAnswer(method: string, params: unknown[]): Promise<{ result?: unknown; error?: unknown }> {
  const { json } = await post(node, { jsonrpc: "2.0", id: 1, method, params });
  return "error" in json ? { error: json.error } : { result: json.result };
}

beforeAll(async () => {
  const fixture = await fixtureChain();
  chain = fixture.chain;
  node = fixture.anvil.url;
  service = (await startTestService({ upstreamUrls: [node] })).url;
});

interface Case {
  title: string;
  rest: string;
  body: () => unknown;
  method: string;
  /** Params as the node takes them; also what JSON-RPC callers send. */
  params: () => unknown[];
  /** Params in another accepted form, sent over JSON-RPC, with the same answer. */
  altParams?: () => unknown[];
  /** What REST answers for a node result (default: the result itself). */
  restShape?: (result: unknown) => unknown;
}

function cases(): Case[] {
  const big = () => chain.bigBlock;
  const c: Case[] = [];
  // eth_getBlockByNumber in every block-number form.
  for (const [title, number, nodeRef] of [
    ["integer", () => big(), () => hex(big())],
    ["hex", () => hex(big()), () => hex(big())],
    [
      "hex with upper-case digits and leading zeros",
      () => `0X00${big().toString(16).toUpperCase()}`,
      () => hex(big()),
    ],
    ["decimal string", () => String(big()), () => hex(big())],
    ["latest", () => "latest", () => "latest"],
    ["LATEST in capitals", () => "LATEST", () => "latest"],
    ["earliest", () => "earliest", () => "earliest"],
    ["safe", () => "Safe", () => "safe"],
    ["finalized", () => "finalized", () => "finalized"],
    ["a block that does not exist", () => 1_000_000, () => hex(1_000_000)],
  ] as [string, () => unknown, () => string][]) {
    for (const full of [false, true]) {
      c.push({
        title: `eth_getBlockByNumber, ${title}, full=${full}`,
        rest: "eth_getBlockByNumber",
        body: () => ({ number: number(), is_full_trx: full }),
        method: "eth_getBlockByNumber",
        params: () => [nodeRef(), full],
        altParams: () => [number(), full],
      });
    }
  }
  return c;
}

describe("eth_getBlockByNumber in every block-number form", () => {
  for (const k of cases()) {
    test(k.title, async () => {
      const expected = await nodeAnswer(k.method, k.params());
      const rest = await post(`${service}/node/rest/${k.rest}`, k.body());
      expect(rest.status).toBe(200);
      expect(rest.json).toEqual(expected.result);
      const rpc = await post(`${service}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id: 7,
        method: k.method,
        params: k.altParams!(),
      });
      expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 7, result: expected.result });
    });
  }

  test("pending: the node's pending block, by number and parent", async () => {
    const expected = (await nodeAnswer("eth_getBlockByNumber", ["pending", false])).result as any;
    const rest = await post(`${service}/node/rest/eth_getBlockByNumber`, {
      number: "PENDING",
      is_full_trx: false,
    });
    expect(rest.status).toBe(200);
    // anvil builds the pending block afresh on each call (its timestamp moves): compare what is fixed.
    expect(rest.json.number).toBe(expected.number);
    expect(rest.json.parentHash).toBe(expected.parentHash);
    expect(rest.json.transactions).toEqual(expected.transactions);
  });
});

describe("every node operation equals the node's answer", () => {
  const table: {
    title: string;
    rest: string;
    body: () => unknown;
    method: string;
    params: () => unknown[];
    restShape?: (r: unknown) => unknown;
  }[] = [
    {
      title: "eth_getBlockByHash, hashes",
      rest: "eth_getBlockByHash",
      body: () => ({ hash: blockHash, is_full_trx: false }),
      method: "eth_getBlockByHash",
      params: () => [blockHash, false],
    },
    {
      title: "eth_getBlockByHash, full, hash in upper case",
      rest: "eth_getBlockByHash",
      body: () => ({ hash: `0x${blockHash.slice(2).toUpperCase()}`, is_full_trx: true }),
      method: "eth_getBlockByHash",
      params: () => [blockHash, true],
    },
    {
      title: "eth_getBlockByHash, unknown hash",
      rest: "eth_getBlockByHash",
      body: () => ({ hash: MISSING_HASH, is_full_trx: false }),
      method: "eth_getBlockByHash",
      params: () => [MISSING_HASH, false],
    },
    {
      title: "eth_blockNumber",
      rest: "eth_blockNumber",
      body: () => undefined,
      method: "eth_blockNumber",
      params: () => [],
    },
    {
      title: "net_version",
      rest: "net_version",
      body: () => undefined,
      method: "net_version",
      params: () => [],
    },
    {
      title: "eth_getLogs by address over a range",
      rest: "eth_getLogs",
      body: () => ({
        fromBlock: 0,
        toBlock: "latest",
        address: [chain.contracts.token],
        topics: null,
        blockHash: null,
      }),
      method: "eth_getLogs",
      params: () => [{ fromBlock: "0x0", toBlock: "latest", address: [chain.contracts.token] }],
    },
    {
      title: "eth_getLogs by topics with a wildcard",
      rest: "eth_getLogs",
      body: () => ({
        fromBlock: "0x0",
        topics: [TRANSFER_TOPIC, null, `0x${"0".repeat(24)}${chain.accounts[1]!.slice(2)}`],
      }),
      method: "eth_getLogs",
      params: () => [
        {
          fromBlock: "0x0",
          topics: [TRANSFER_TOPIC, null, `0x${"0".repeat(24)}${chain.accounts[1]!.slice(2)}`],
        },
      ],
    },
    {
      title: "eth_getLogs by block hash",
      rest: "eth_getLogs",
      body: () => ({ blockHash: bigBlockHash }),
      method: "eth_getLogs",
      params: () => [{ blockHash: bigBlockHash }],
    },
    {
      title: "eth_getLogs with an empty body: the node's defaults",
      rest: "eth_getLogs",
      body: () => ({}),
      method: "eth_getLogs",
      params: () => [{}],
    },
    ...(["legacy", "eip1559", "tokenDeploy", "failed"] as const).map((name) => ({
      title: `eth_getTransactionByHash, ${name}`,
      rest: "eth_getTransactionByHash",
      body: () => ({ trx_hash: chain.tx[name] }),
      method: "eth_getTransactionByHash",
      params: () => [chain.tx[name]],
    })),
    {
      title: "eth_getTransactionByHash, unknown",
      rest: "eth_getTransactionByHash",
      body: () => ({ trx_hash: MISSING_HASH }),
      method: "eth_getTransactionByHash",
      params: () => [MISSING_HASH],
    },
    {
      title: "eth_getTransactionByBlockNumberAndIndex",
      rest: "eth_getTransactionByBlockNumberAndIndex",
      body: () => ({ block_number: String(chain.bigBlock), trx_index: 17 }),
      method: "eth_getTransactionByBlockNumberAndIndex",
      params: () => [hex(chain.bigBlock), "0x11"],
    },
    {
      title: "eth_getTransactionByBlockNumberAndIndex, index past the end",
      rest: "eth_getTransactionByBlockNumberAndIndex",
      body: () => ({ block_number: chain.bigBlock, trx_index: 999 }),
      method: "eth_getTransactionByBlockNumberAndIndex",
      params: () => [hex(chain.bigBlock), hex(999)],
    },
    {
      title: "eth_getTransactionByBlockHashAndIndex",
      rest: "eth_getTransactionByBlockHashAndIndex",
      body: () => ({ block_hash: bigBlockHash, trx_index: 3 }),
      method: "eth_getTransactionByBlockHashAndIndex",
      params: () => [bigBlockHash, "0x3"],
    },
    {
      title: "eth_getTransactionByBlockHashAndIndex, unknown block",
      rest: "eth_getTransactionByBlockHashAndIndex",
      body: () => ({ block_hash: MISSING_HASH, trx_index: 0 }),
      method: "eth_getTransactionByBlockHashAndIndex",
      params: () => [MISSING_HASH, "0x0"],
    },
    {
      title: "eth_getBlockTransactionCountByNumber",
      rest: "eth_getBlockTransactionCountByNumber",
      body: () => ({ number: chain.bigBlock }),
      method: "eth_getBlockTransactionCountByNumber",
      params: () => [hex(chain.bigBlock)],
    },
    {
      title: "eth_getBlockTransactionCountByHash",
      rest: "eth_getBlockTransactionCountByHash",
      body: () => ({ hash: bigBlockHash }),
      method: "eth_getBlockTransactionCountByHash",
      params: () => [bigBlockHash],
    },
    {
      title: "eth_getBlockTransactionCountByHash, unknown",
      rest: "eth_getBlockTransactionCountByHash",
      body: () => ({ hash: MISSING_HASH }),
      method: "eth_getBlockTransactionCountByHash",
      params: () => [MISSING_HASH],
    },
    {
      title: "ext_getBlockReceipts: the node's eth_getBlockReceipts",
      rest: "ext_getBlockReceipts",
      body: () => ({ number: chain.bigBlock }),
      method: "eth_getBlockReceipts",
      params: () => [hex(chain.bigBlock)],
    },
    {
      title: "ext_getBlockReceipts, latest",
      rest: "ext_getBlockReceipts",
      body: () => ({ number: "latest" }),
      method: "eth_getBlockReceipts",
      params: () => ["latest"],
    },
    {
      title: "ext_getBlockReceipts, a block that does not exist",
      rest: "ext_getBlockReceipts",
      body: () => ({ number: 1_000_000 }),
      method: "eth_getBlockReceipts",
      params: () => [hex(1_000_000)],
    },
    ...(["legacy", "eip1559", "tokenDeploy", "failed", "erc20Transfer", "nftTransfer"] as const).map(
      (name) => ({
        title: `eth_getTransactionReceipt, ${name} (REST: an array holding it)`,
        rest: "eth_getTransactionReceipt",
        body: () => ({ trx_hash: chain.tx[name] }),
        method: "eth_getTransactionReceipt",
        params: () => [chain.tx[name]],
        restShape: (r: unknown) => [r],
      }),
    ),
    {
      title: "eth_getTransactionReceipt, unknown: null",
      rest: "eth_getTransactionReceipt",
      body: () => ({ trx_hash: MISSING_HASH }),
      method: "eth_getTransactionReceipt",
      params: () => [MISSING_HASH],
      restShape: (r: unknown) => r,
    },
    {
      title: "trace_block",
      rest: "trace_block",
      body: () => ({ number: hex(chain.bigBlock - 1) }),
      method: "trace_block",
      params: () => [hex(chain.bigBlock - 1)],
    },
    {
      title: "trace_transaction with an internal value transfer",
      rest: "trace_transaction",
      body: () => ({ trx_hash: chain.tx.internalValue }),
      method: "trace_transaction",
      params: () => [chain.tx.internalValue],
    },
    {
      title: "trace_transaction of a failed transaction",
      rest: "trace_transaction",
      body: () => ({ trx_hash: chain.tx.failed }),
      method: "trace_transaction",
      params: () => [chain.tx.failed],
    },
    {
      title: "eth_getUncleCountByBlockHash",
      rest: "eth_getUncleCountByBlockHash",
      body: () => ({ hash: bigBlockHash }),
      method: "eth_getUncleCountByBlockHash",
      params: () => [bigBlockHash],
    },
    {
      title: "eth_getUncleCountByBlockNumber",
      rest: "eth_getUncleCountByBlockNumber",
      body: () => ({ number: 1 }),
      method: "eth_getUncleCountByBlockNumber",
      params: () => ["0x1"],
    },
  ];

  let blockHash: string;
  let bigBlockHash: string;
  beforeAll(async () => {
    blockHash = ((await nodeAnswer("eth_getBlockByNumber", ["0x3", false])).result as any).hash;
    bigBlockHash = ((await nodeAnswer("eth_getBlockByNumber", [hex(chain.bigBlock), false])).result as any)
      .hash;
  });

  for (const k of table) {
    test(k.title, async () => {
      const expected = await nodeAnswer(k.method, k.params());
      expect(expected.error).toBeUndefined();
      const body = k.body();
      const rest = await post(`${service}/node/rest/${k.rest}`, body);
      expect(rest.status).toBe(200);
      expect(rest.headers.get("content-type")).toBe("application/json");
      const restExpected = expected.result === null ? null : (k.restShape ?? ((r) => r))(expected.result);
      expect(rest.json).toEqual(restExpected);
      // JSON-RPC: the operation's own name and the node's params.
      const method = k.rest === "ext_getBlockReceipts" ? "ext_getBlockReceipts" : k.method;
      const rpc = await post(`${service}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id: "x",
        method,
        params: k.params(),
      });
      expect(rpc.status).toBe(200);
      expect(rpc.json).toEqual({ jsonrpc: "2.0", id: "x", result: expected.result });
    });
  }

  test("the same calls as one JSON-RPC batch answer in order, each as the node", async () => {
    const requests = table.map((k, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: k.rest === "ext_getBlockReceipts" ? "ext_getBlockReceipts" : k.method,
      params: k.params(),
    }));
    const expected = await Promise.all(table.map((k) => nodeAnswer(k.method, k.params())));
    const batch = await post(`${service}/node/jsonrpc`, requests);
    expect(batch.status).toBe(200);
    expect(batch.json).toEqual(expected.map((e, i) => ({ jsonrpc: "2.0", id: i, result: e.result })));
  });
});

describe("pass-through NodeMethods equal the node's answer", () => {
  const calls: [string, () => unknown[]][] = [
    ["eth_chainId", () => []],
    ["eth_gasPrice", () => []],
    ["eth_getBalance", () => [chain.accounts[2], "latest"]],
    ["eth_getBalance", () => [chain.accounts[2], hex(3)]],
    ["eth_getCode", () => [chain.contracts.token, "latest"]],
    ["eth_getStorageAt", () => [chain.contracts.token, "0x3", "latest"]],
    ["eth_getTransactionCount", () => [chain.accounts[0], "latest"]],
    ["eth_feeHistory", () => ["0x4", "latest", [25, 75]]],
    [
      "eth_call",
      () => [
        {
          to: chain.contracts.token,
          data: `0x70a08231000000000000000000000000${chain.accounts[1]!.slice(2)}`,
        },
        "latest",
      ],
    ],
    ["eth_estimateGas", () => [{ from: chain.accounts[0], to: chain.accounts[1], value: "0x1" }]],
  ];
  for (const [i, [method, params]] of calls.entries()) {
    test(`${method} (call ${i})`, async () => {
      const expected = await nodeAnswer(method, params());
      const rpc = await post(`${service}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params: params() });
      expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 1, result: expected.result });
    });
  }

  test("eth_getBalance with an EIP-1898 block hash object and an integer block", async () => {
    const block = (await nodeAnswer("eth_getBlockByNumber", ["0x3", false])).result as any;
    const expected = await nodeAnswer("eth_getBalance", [chain.accounts[1], "0x3"]);
    const byHash = await post(`${service}/node/jsonrpc`, {
      id: 1,
      method: "eth_getBalance",
      params: [chain.accounts[1], { blockHash: block.hash }],
    });
    const byInteger = await post(`${service}/node/jsonrpc`, {
      id: 2,
      method: "eth_getBalance",
      params: [chain.accounts[1], 3],
    });
    expect(byHash.json.result).toBe(expected.result);
    expect(byInteger.json.result).toBe(expected.result);
  });
});

describe("the node's errors", () => {
  test("pass through JSON-RPC with code, message and data", async () => {
    const params = [{ to: chain.contracts.forwarder, data: "0xa9cc4718" }, "latest"];
    const expected = await nodeAnswer("eth_call", params);
    expect(expected.error).toMatchObject({ code: 3, message: expect.stringContaining("always fails") });
    const rpc = await post(`${service}/node/jsonrpc`, { jsonrpc: "2.0", id: 9, method: "eth_call", params });
    expect(rpc.status).toBe(200);
    expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 9, error: expected.error });
  });

  test("about the request itself are a 400 over REST quoting the node", async () => {
    const future = hex(chain.head + 1000);
    const expected = (await nodeAnswer("eth_getBlockTransactionCountByNumber", [future])).error as any;
    expect(expected.code).toBe(-32602);
    const rest = await post(`${service}/node/rest/eth_getBlockTransactionCountByNumber`, { number: future });
    expect(rest.status).toBe(400);
    expect(rest.json).toEqual({ detail: expected.message });
    const rpc = await post(`${service}/node/jsonrpc`, {
      id: 1,
      method: "eth_getBlockTransactionCountByNumber",
      params: [future],
    });
    expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 1, error: expected });
  });
});
