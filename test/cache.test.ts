/**
 * The finality-aware cache against a real anvil: every cacheable method's second call is a hit that the
 * node never sees, byte for byte the node's answer; final answers survive a restart on disk; nothing that
 * may still change is kept; after a reorg every answer matches the new chain.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonRpcProvider } from "ethers";
import type { DevChain } from "../src/families/evm/devChain";
import {
  anvilWallets,
  type ChainFixture,
  calldata,
  deployContract,
  populateChain,
  rpc,
} from "./support/chain";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil, onTeardown } from "./support/shared";
import { until } from "./support/until";

const hex = (n: number) => `0x${n.toString(16)}`;
const MINED_AFTER = 100;

/** The node's own `result`, exactly as it sent it. */
async function nodeRaw(url: string, method: string, params: unknown[]): Promise<string> {
  const { text } = await post(url, { jsonrpc: "2.0", id: 1, method, params });
  const prefix = '{"jsonrpc":"2.0","id":1,"result":';
  if (!text.startsWith(prefix)) throw new Error(`${method}: ${text.slice(0, 200)}`);
  return text.trimEnd().slice(prefix.length, -1);
}

/**
 * The calls of a method that answer a request, leaving out the chain follower's own reads of tagged blocks
 * (its head polls and finality reads), which come when they come.
 */
function callsFor(p: NodeProxy, method: string) {
  return p.callsOf(method).filter((c) => !["latest", "safe", "finalized"].includes(c.params[0] as string));
}

let anvil: DevChain;
let chain: ChainFixture;
let blob: string;
let proxy: NodeProxy;
let service: TestService;
let recentHash: string;
let head: number;

beforeAll(async () => {
  anvil = await newAnvil();
  chain = await populateChain(anvil.url);
  blob = await deployContract(anvil.url, "Blob");
  // anvil's finalized block is head - 64: these make the fixture's blocks final.
  await rpc(anvil.url)("anvil_mine", [hex(MINED_AFTER)]);
  head = Number(await rpc(anvil.url)("eth_blockNumber"));
  recentHash = (await rpc(anvil.url)("eth_getBlockByNumber", [hex(head - 2), false])).hash;
  proxy = startProxy(anvil.url);
  // The data directory is the test's own, so that the restart below finds the disk tier.
  const dataDir = mkdtempSync(join(tmpdir(), "cg-cache-"));
  onTeardown(async () => rmSync(dataDir, { recursive: true, force: true }));
  service = await startTestService({ upstreamUrls: [proxy.url], dataDir, env: { HEAD_POLL_MS: "200" } });
}, 60_000);

/** [JSON-RPC method, params, the upstream method it becomes, REST route and body (when it has one)] */
function cases(): [string, unknown[], string, [string, unknown, boolean]?][] {
  const final = chain.bigBlock;
  return [
    ["eth_chainId", [], "eth_chainId"],
    ["net_version", [], "net_version", ["net_version", undefined, false]],
    [
      "eth_getBlockByNumber",
      [hex(3), false],
      "eth_getBlockByNumber",
      ["eth_getBlockByNumber", { number: 3, is_full_trx: false }, false],
    ],
    [
      "eth_getBlockByNumber",
      [hex(final), true],
      "eth_getBlockByNumber",
      ["eth_getBlockByNumber", { number: final, is_full_trx: true }, false],
    ],
    ["eth_getBlockByNumber", [hex(head - 1), true], "eth_getBlockByNumber"],
    ["eth_getBlockTransactionCountByNumber", [hex(final)], "eth_getBlockTransactionCountByNumber"],
    ["eth_getBlockTransactionCountByHash", [recentHash], "eth_getBlockTransactionCountByHash"],
    [
      "eth_getTransactionByBlockNumberAndIndex",
      [hex(final), "0x5"],
      "eth_getTransactionByBlockNumberAndIndex",
    ],
    ["eth_getUncleCountByBlockNumber", [hex(3)], "eth_getUncleCountByBlockNumber"],
    ["eth_getUncleCountByBlockHash", [recentHash], "eth_getUncleCountByBlockHash"],
    [
      "ext_getBlockReceipts",
      [hex(final)],
      "eth_getBlockReceipts",
      ["ext_getBlockReceipts", { number: final }, false],
    ],
    [
      "eth_getTransactionReceipt",
      [chain.tx.erc20Transfer],
      "eth_getTransactionReceipt",
      ["eth_getTransactionReceipt", { trx_hash: chain.tx.erc20Transfer }, true],
    ],
    [
      "eth_getTransactionByHash",
      [chain.tx.legacy],
      "eth_getTransactionByHash",
      ["eth_getTransactionByHash", { trx_hash: chain.tx.legacy }, false],
    ],
    ["trace_block", [hex(13)], "trace_block", ["trace_block", { number: 13 }, false]],
    ["trace_transaction", [chain.tx.internalValue], "trace_transaction"],
    ["eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(20), address: chain.contracts.token }], "eth_getLogs"],
    ["eth_getBalance", [chain.accounts[2], hex(10)], "eth_getBalance"],
    ["eth_getCode", [chain.contracts.token, hex(20)], "eth_getCode"],
    ["eth_getStorageAt", [chain.contracts.token, "0x2", hex(20)], "eth_getStorageAt"],
    ["eth_getTransactionCount", [chain.accounts[0], hex(20)], "eth_getTransactionCount"],
    ["eth_feeHistory", ["0x4", hex(20), [50]], "eth_feeHistory"],
    ["eth_gasPrice", [], "eth_gasPrice"],
  ];
}

describe("every cacheable method", () => {
  test("the second call is a memory hit the node never sees, byte for byte its answer, with its own id", async () => {
    const all = [
      ...cases(),
      [
        "eth_call",
        [{ to: blob, data: await calldata("Blob", "blob", [1, 3000]) }, hex(50)],
        "eth_call",
      ] as const,
    ];
    for (const [method, params, upstreamMethod, rest] of all) {
      const raw = await nodeRaw(anvil.url, upstreamMethod, params as unknown[]);
      const first = await post(`${service.url}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id: "first",
        method,
        params,
      });
      expect(first.headers.get("x-cache")).toBe("miss");
      const seen = callsFor(proxy, upstreamMethod).length;
      const second = await post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 2, method, params });
      expect({ method, cache: second.headers.get("x-cache") }).toEqual({ method, cache: "memory" });
      expect(second.text).toBe(`{"jsonrpc":"2.0","id":2,"result":${raw}}`);
      if (rest) {
        const [route, body, wrapped] = rest;
        const answer = await post(`${service.url}/node/rest/${route}`, body);
        expect(answer.headers.get("x-cache")).toBe("memory");
        expect(answer.text).toBe(wrapped ? `[${raw}]` : raw);
      }
      const batch = await post(`${service.url}/node/jsonrpc`, [
        { jsonrpc: "2.0", id: 3, method, params },
        { jsonrpc: "2.0", id: "four", method, params },
      ]);
      expect(batch.text).toBe(
        `[{"jsonrpc":"2.0","id":3,"result":${raw}},{"jsonrpc":"2.0","id":"four","result":${raw}}]`,
      );
      expect({ method, calls: callsFor(proxy, upstreamMethod).length }).toEqual({ method, calls: seen });
    }
  });

  test("eth_blockNumber is kept for the head-poll interval", async () => {
    const first = await post(`${service.url}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_blockNumber",
    });
    const second = await post(`${service.url}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 2,
      method: "eth_blockNumber",
    });
    expect(second.json.result).toBe(first.json.result);
    expect(["memory", "coalesced"]).toContain(second.headers.get("x-cache") ?? "none");
  });

  test("a large answer (128 KB) is spliced from bytes, exactly", async () => {
    const params = [{ to: blob, data: await calldata("Blob", "blob", [7, 128 * 1024]) }, hex(50)];
    const raw = await nodeRaw(anvil.url, "eth_call", params);
    expect(raw.length).toBeGreaterThan(256 * 1024);
    await post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method: "eth_call", params });
    const hit = await post(`${service.url}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 9,
      method: "eth_call",
      params,
    });
    expect(hit.headers.get("x-cache")).toBe("memory");
    expect(hit.text).toBe(`{"jsonrpc":"2.0","id":9,"result":${raw}}`);
  });
});

describe("never cached", () => {
  test("pending", async () => {
    const before = proxy.callsOf("eth_getBlockByNumber").filter((c) => c.params[0] === "pending").length;
    for (const id of [1, 2]) {
      const answer = await post(`${service.url}/node/jsonrpc`, {
        id,
        method: "eth_getBlockByNumber",
        params: ["pending", false],
      });
      expect(answer.headers.get("x-cache")).toBe("miss");
    }
    expect(
      proxy.callsOf("eth_getBlockByNumber").filter((c) => c.params[0] === "pending").length - before,
    ).toBe(2);
  });

  test("null for a block that may still come: once mined, the real block", async () => {
    const next = Number(await rpc(anvil.url)("eth_blockNumber")) + 1;
    const early = await post(`${service.url}/node/rest/eth_getBlockByNumber`, {
      number: next,
      is_full_trx: false,
    });
    expect(early.json).toBeNull();
    await rpc(anvil.url)("evm_mine");
    const later = await post(`${service.url}/node/rest/eth_getBlockByNumber`, {
      number: next,
      is_full_trx: false,
    });
    expect(later.json).toEqual(await rpc(anvil.url)("eth_getBlockByNumber", [hex(next), false]));
    expect(later.json.number).toBe(hex(next));
  });

  test("a transaction not yet known, then known", async () => {
    const provider = new JsonRpcProvider(anvil.url, 31337, { staticNetwork: true, cacheTimeout: -1 });
    const wallet = anvilWallets(provider)[7]!;
    const signed = await wallet.signTransaction({
      to: wallet.address,
      value: 1n,
      nonce: await provider.getTransactionCount(wallet.address),
      gasLimit: 21_000,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      chainId: 31337,
      type: 2,
    });
    const hash = (await import("ethers")).keccak256(signed);
    expect(
      (await post(`${service.url}/node/rest/eth_getTransactionReceipt`, { trx_hash: hash })).json,
    ).toBeNull();
    const sent = await post(`${service.url}/node/jsonrpc`, {
      id: 1,
      method: "eth_sendRawTransaction",
      params: [signed],
    });
    expect(sent.json.result).toBe(hash);
    const receipt = await until("the receipt", async () => {
      const r = await post(`${service.url}/node/rest/eth_getTransactionReceipt`, { trx_hash: hash });
      return r.json ?? undefined;
    });
    expect(receipt[0].transactionHash).toBe(hash);
    provider.destroy();
  });

  test("errors", async () => {
    const params = [{ to: chain.contracts.forwarder, data: "0xa9cc4718" }, hex(50)];
    const before = proxy.callsOf("eth_call").length;
    for (const id of [1, 2]) {
      const answer = await post(`${service.url}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id,
        method: "eth_call",
        params,
      });
      expect(answer.json.error.code).toBe(3);
      expect(answer.headers.get("x-cache")).toBe("miss");
    }
    expect(proxy.callsOf("eth_call").length - before).toBe(2);
  });
});

describe("latest", () => {
  test("the same request about latest, sent again and again, follows the head: hits while it stands, the new block's answer once it moves", async () => {
    const account = chain.accounts[4]!;
    const questions = [
      { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [account, "latest"] },
      { jsonrpc: "2.0", id: 2, method: "eth_getBlockByNumber", params: ["latest", false] },
    ];
    const ask = async () => {
      const answers = [];
      for (const q of questions) answers.push(await post(`${service.url}/node/jsonrpc`, q));
      return answers;
    };
    const headIs = (n: number) =>
      until(`the service to follow the head to ${n}`, async () => {
        const health = (await (await fetch(`${service.url}/health`)).json()) as any;
        return health.head.number === n ? true : undefined;
      });
    const expectAt = async (answers: Awaited<ReturnType<typeof ask>>, top: number) => {
      expect(answers.map((a) => a.text)).toEqual([
        `{"jsonrpc":"2.0","id":1,"result":${await nodeRaw(anvil.url, "eth_getBalance", [account, hex(top)])}}`,
        `{"jsonrpc":"2.0","id":2,"result":${await nodeRaw(anvil.url, "eth_getBlockByNumber", [hex(top), false])}}`,
      ]);
    };
    const before = Number(await rpc(anvil.url)("eth_blockNumber"));
    await headIs(before);
    await ask();
    const hits = await ask();
    expect(hits.map((a) => a.headers.get("x-cache"))).toEqual(["memory", "memory"]);
    await expectAt(hits, before);

    // A transfer to the account, mined at once: its balance and the head both move.
    await rpc(anvil.url)("eth_sendTransaction", [{ from: chain.accounts[0], to: account, value: "0x1234" }]);
    await headIs(before + 1);
    const moved = await ask();
    expect(moved.map((a) => a.headers.get("x-cache"))).toEqual(["miss", "miss"]);
    await expectAt(moved, before + 1);
    expect(BigInt(moved[0]!.json.result) - BigInt(hits[0]!.json.result)).toBe(0x1234n);
    const again = await ask();
    expect(again.map((a) => a.headers.get("x-cache"))).toEqual(["memory", "memory"]);
    expect(again.map((a) => a.text)).toEqual(moved.map((a) => a.text));
  });
});

describe("restart", () => {
  test("final answers come from disk after a restart, without asking the node", async () => {
    const finalCases = cases().filter(([method, params]) => {
      // Only answers about final blocks (and static ones) are on disk.
      if (
        [
          "eth_gasPrice",
          "eth_feeHistory",
          "eth_getBlockTransactionCountByHash",
          "eth_getUncleCountByBlockHash",
        ].includes(method)
      ) {
        return false;
      }
      return !(method === "eth_getBlockByNumber" && params[0] === hex(head - 1));
    });
    const { dataDir, databaseUrl } = service;
    await service.stop();
    const second = startProxy(anvil.url);
    const restarted = await startTestService({
      upstreamUrls: [second.url],
      dataDir,
      databaseUrl,
      env: { HEAD_POLL_MS: "200" },
    });
    for (const [method, params, upstreamMethod] of finalCases) {
      const raw = await nodeRaw(anvil.url, upstreamMethod, params);
      const seen = callsFor(second, upstreamMethod).length;
      const answer = await post(`${restarted.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 5, method, params });
      expect({ method, cache: answer.headers.get("x-cache") }).toEqual({ method, cache: "disk" });
      expect(answer.text).toBe(`{"jsonrpc":"2.0","id":5,"result":${raw}}`);
      expect({ method, calls: callsFor(second, upstreamMethod).length - seen }).toEqual({ method, calls: 0 });
    }
    await restarted.stop();
  }, 30_000);
});

describe("reorg", () => {
  test("after a reorg, blocks by number, receipts, transactions and traces match the node", async () => {
    // A chain of its own, short enough that every block is unfinalized (anvil: head - 64 is final).
    const node = await newAnvil();
    const fixture = await populateChain(node.url);
    const reorgService = await startTestService({
      upstreamUrls: [node.url],
      env: { HEAD_POLL_MS: "50", CONFIRMATIONS: "3" },
    });
    const top = fixture.head;
    const questions: [string, unknown[], string][] = [];
    for (let n = top - 4; n <= top; n++) {
      questions.push(["eth_getBlockByNumber", [hex(n), true], "eth_getBlockByNumber"]);
      questions.push(["ext_getBlockReceipts", [hex(n)], "eth_getBlockReceipts"]);
      questions.push(["trace_block", [hex(n)], "trace_block"]);
      questions.push([
        "eth_getBlockTransactionCountByNumber",
        [hex(n)],
        "eth_getBlockTransactionCountByNumber",
      ]);
    }
    for (const tx of [fixture.tx.internalValue, fixture.tx.failed, fixture.tx.nftTransfer]) {
      questions.push(["eth_getTransactionByHash", [tx], "eth_getTransactionByHash"]);
      questions.push(["eth_getTransactionReceipt", [tx], "eth_getTransactionReceipt"]);
      questions.push(["trace_transaction", [tx], "trace_transaction"]);
    }
    questions.push(["eth_getBalance", [fixture.accounts[3], hex(top)], "eth_getBalance"]);
    questions.push(["eth_getBlockByNumber", ["latest", false], "eth_getBlockByNumber"]);
    const ask = async () => {
      const out: string[] = [];
      for (const [method, params] of questions) {
        out.push(
          (await post(`${reorgService.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params })).text,
        );
      }
      return out;
    };
    const expectMatches = async (answers: string[]) => {
      for (const [i, [, params, upstreamMethod]] of questions.entries()) {
        const resolved = params[0] === "latest" ? [hex(top), ...params.slice(1)] : params;
        expect(answers[i]).toBe(
          `{"jsonrpc":"2.0","id":1,"result":${await nodeRaw(node.url, upstreamMethod, resolved)}}`,
        );
      }
    };
    await ask();
    const cached = await ask();
    await expectMatches(cached);

    const oldHead = (await rpc(node.url)("eth_getBlockByNumber", ["latest", false])).hash;
    await rpc(node.url)("anvil_reorg", [4, []]);
    const newHead = (await rpc(node.url)("eth_getBlockByNumber", ["latest", false])).hash;
    expect(newHead).not.toBe(oldHead);
    // Once the service has seen the new head, no answer may come from the old chain.
    await until("the service to see the new head", async () => {
      const health = (await (await fetch(`${reorgService.url}/health`)).json()) as any;
      return health.head.hash === newHead ? true : undefined;
    });
    const after = await ask();
    await expectMatches(after);
    // The reorganized blocks really changed: the answers are not the cached ones.
    expect(after.filter((a, i) => a !== cached[i]).length).toBeGreaterThan(10);
    await reorgService.stop();
  }, 60_000);
});
