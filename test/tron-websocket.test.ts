/**
 * The WebSocket java-tron lacks, served by the service from its followed head (issue 32, item 4): over a
 * real WebSocket on /node/jsonrpc, in front of the stand-in java-tron (test/support/tronNode.ts), with raw
 * sockets (every notification compared with the stand-in's own answers) and ethers v6 as a real client:
 * `newHeads` (every block once, in order, and the new branch after a reorg), `logs` by address and topic
 * (a TRC-20 Transfer; after a reorg the same log with `removed: true`, then the new branch's), the kinds TRON
 * lacks refused naming the chain, and `logs` fed where the node has no eth_getBlockReceipts (java-tron
 * before 4.7.6).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WebSocketProvider } from "ethers";
import { post, startTestService, type TestService } from "./support/service";
import { TRANSFER_TOPIC } from "./support/tron/scenario";
import { SCENARIO_KEYS, startTronNode, TRC20, type TronCall, type TronNode } from "./support/tronNode";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const hex = (n: number) => `0x${n.toString(16)}`;
/** The scenario TRC-20 as java-tron's JSON-RPC writes addresses: `0x` + 20 bytes, without `41`. */
const TOKEN = `0x${TRC20.address.slice(2)}`;
const TRANSFER = `0x${TRANSFER_TOPIC}`;
/** keccak("Approval(address,address,uint256)"): a topic no scenario transaction writes. */
const APPROVAL = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";
/** Short polls, so a mined block reaches the service within a few of them. */
const HEAD_POLL_MS = "100";
/** How long a notification may take to come (many polls: the machine is shared). */
const WAIT_MS = 5_000;
/** How long a test waits to see that nothing more comes. */
const QUIET_MS = 400;

/** The stand-in's own JSON-RPC answer (what java-tron writes), straight from its face. */
async function standIn(node: TronNode, method: string, params: unknown[]): Promise<any> {
  const { json } = await post(`${node.urls.jsonrpc}/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });
  if (json.error) throw new Error(`${method}: ${json.error.message}`);
  return json.result;
}

async function serviceHead(service: TestService): Promise<number> {
  const { json } = await post(`${service.url}/node/jsonrpc`, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_blockNumber",
    params: [],
  });
  return Number(json.result);
}

/** Until the service follows the stand-in's head: subscriptions opened after it see only new blocks. */
async function caughtUp(service: TestService, node: TronNode): Promise<number> {
  const head = node.chain.headNumber();
  await until("the service at the stand-in's head", async () =>
    (await serviceHead(service)) === head ? true : undefined,
  );
  return head;
}

/** The Transfer logs of one block, as the stand-in's eth_getLogs answers them. */
const logsOf = (node: TronNode, blockHash: string) =>
  standIn(node, "eth_getLogs", [{ blockHash, address: TOKEN, topics: [TRANSFER] }]);

describe("TRON over WebSocket: newHeads and logs from the followed head", () => {
  let node: TronNode;
  let service: TestService;

  beforeAll(async () => {
    node = await startTronNode({ network: "NILE" });
    service = await startTestService({
      upstreamUrls: [node.url],
      env: { CHAIN: "NILE", HEAD_POLL_MS },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await node?.stop();
  });

  test("newHeads: every mined block once, in order, as java-tron's eth_getBlockByNumber <n> false; a reorg's new branch", async () => {
    const socket = await connectSocket(wsUrl(service.url));
    const start = await caughtUp(service, node);
    const { result: id } = await socket.request("eth_subscribe", ["newHeads"]);
    expect(id).toMatch(/^0x[0-9a-f]{32}$/);

    const mined = node.mine(3);
    const heads = await socket.waitFor(id, 3, WAIT_MS);
    expect(heads.map((h: any) => Number(h.number))).toEqual([start + 1, start + 2, start + 3]);
    for (const [i, head] of heads.entries()) {
      expect(head).toEqual(await standIn(node, "eth_getBlockByNumber", [hex(start + 1 + i), false]));
      expect(head.hash).toBe(`0x${mined[i]!.blockID}`);
      expect(head.parentHash).toBe(`0x${mined[i]!.block_header.raw_data.parentHash}`);
      expect(head.timestamp).toBe(hex(Math.floor(mined[i]!.block_header.raw_data.timestamp! / 1000)));
    }

    // The top two are replaced by a longer branch of three: its heads come from the fork point.
    node.reorg(2);
    const after = await socket.waitFor(id, 6, WAIT_MS);
    expect(after.slice(3).map((h: any) => Number(h.number))).toEqual([start + 2, start + 3, start + 4]);
    expect(after[3].parentHash).toBe(heads[0].hash);
    expect(after[3].hash).not.toBe(heads[1].hash);
    for (const head of after.slice(3)) {
      expect(head).toEqual(await standIn(node, "eth_getBlockByNumber", [head.number, false]));
    }
    node.mine(1);
    expect((await socket.waitFor(id, 7, WAIT_MS))[6].parentHash).toBe(after[5].hash);
    await Bun.sleep(QUIET_MS);
    expect(socket.notifications(id)).toHaveLength(7);
    expect((await socket.request("eth_unsubscribe", [id])).result).toBe(true);
    socket.close();
  });

  test("ethers v6 WebSocketProvider: the chain id, and a block event for every mined block", async () => {
    const provider = new WebSocketProvider(wsUrl(service.url));
    try {
      expect((await provider.getNetwork()).chainId).toBe(BigInt(await standIn(node, "eth_chainId", [])));
      const start = await caughtUp(service, node);
      const seen: number[] = [];
      await provider.on("block", (n: number) => void seen.push(n));
      await Bun.sleep(QUIET_MS);
      node.mine(2);
      await until("both block events", async () => (seen.includes(start + 2) ? true : undefined));
      expect(seen.filter((n) => n > start)).toEqual([start + 1, start + 2]);
    } finally {
      await provider.destroy();
    }
  });

  test("logs by address and topic: a TRC-20 Transfer as eth_getLogs writes it; removed after a reorg, then the new branch's", async () => {
    const socket = await connectSocket(wsUrl(service.url));
    await caughtUp(service, node);
    const { alice, bob, carol } = SCENARIO_KEYS;
    const { result: transfers } = await socket.request("eth_subscribe", [
      "logs",
      { address: TOKEN, topics: [TRANSFER] },
    ]);
    const { result: approvals } = await socket.request("eth_subscribe", [
      "logs",
      { address: TOKEN, topics: [APPROVAL] },
    ]);

    const [block] = node.mine(1, [node.chain.trc20Transfer(alice, bob.hex, 1_000_000n)]);
    node.mine(1);
    const sent = await socket.waitFor(transfers, 1, WAIT_MS);
    const expected = await logsOf(node, `0x${block!.blockID}`);
    expect(expected).toHaveLength(1);
    expect(sent).toEqual(expected);

    // Both blocks replaced; the new branch's first block holds another transfer.
    node.reorg(2, [node.chain.trc20Transfer(alice, carol.hex, 2_000_000n)]);
    const after = await socket.waitFor(transfers, 3, WAIT_MS);
    expect(after[1]).toEqual({ ...expected[0], removed: true });
    const replaced = await standIn(node, "eth_getBlockByNumber", [expected[0].blockNumber, false]);
    expect(replaced.hash).not.toBe(expected[0].blockHash);
    expect(after.slice(2)).toEqual(await logsOf(node, replaced.hash));
    await Bun.sleep(QUIET_MS);
    expect(socket.notifications(transfers)).toHaveLength(3);
    expect(socket.notifications(approvals)).toEqual([]);
    socket.close();
  });

  test("newPendingTransactions refused naming the chain; watch_filters served (the index); an unknown kind lists the served ones", async () => {
    const socket = await connectSocket(wsUrl(service.url));
    const calls = node.calls.length;
    expect((await socket.request("eth_subscribe", ["newPendingTransactions"])).error).toEqual({
      code: -32601,
      message:
        "the subscription newPendingTransactions is not served on NILE: java-tron has no pending transactions to show (its JSON-RPC has no transaction pool); subscribe to newHeads, logs or watch_filters",
    });
    expect((await socket.request("eth_subscribe", ["newPendingTransactions", true])).error.code).toBe(-32601);
    // Watch filters come with the index (test/tron-watch.test.ts holds their results).
    const watching = await socket.request("eth_subscribe", ["watch_filters", { version: "v2" }]);
    expect(watching.result).toMatch(/^0x[0-9a-f]{32}$/);
    expect((await socket.request("eth_subscribe", ["syncing"])).error).toEqual({
      code: -32602,
      message:
        'invalid params: the subscription should be one of newHeads, logs, watch_filters; got "syncing"',
    });
    expect((await fetch(`${service.url}/watch_filters/lastBlockNumber`)).status).toBe(200);
    // None of it reached the node, and the socket still serves.
    expect(node.calls.slice(calls).filter((c) => c.face === "jsonrpc")).toEqual([]);
    const { result } = await socket.request("eth_subscribe", ["newHeads"]);
    expect(result).toMatch(/^0x[0-9a-f]{32}$/);
    socket.close();
  });
});

/** java-tron before 4.7.6: eth_getBlockReceipts is "method not found". */
const isBlockReceipts = (call: TronCall) =>
  call.face === "jsonrpc" && (call.body as { method?: unknown }).method === "eth_getBlockReceipts";

describe("TRON logs where the node has no eth_getBlockReceipts (java-tron before 4.7.6)", () => {
  let node: TronNode;
  let service: TestService;

  beforeAll(async () => {
    node = await startTronNode({ network: "NILE" });
    node.fail = (call) => {
      if (!isBlockReceipts(call)) return undefined;
      const { id } = call.body as { id: unknown };
      // jsonrpc4j's answer to a method TronJsonRpc does not declare (test/support/tron/jsonrpc.ts).
      return Response.json({ jsonrpc: "2.0", id, error: { code: -32601, message: "method not found" } });
    };
    service = await startTestService({
      upstreamUrls: [node.url],
      // One call per request: the stand-in's fault hook answers a whole request, not one call of a batch.
      env: { CHAIN: "NILE", HEAD_POLL_MS, BATCH_MAX_SIZE: "1" },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await node?.stop();
  });

  test("logs assembled from each transaction's receipt: the Transfer as eth_getLogs writes it, removed after a reorg", async () => {
    const socket = await connectSocket(wsUrl(service.url));
    await caughtUp(service, node);
    const { alice, bob } = SCENARIO_KEYS;
    const { result: id } = await socket.request("eth_subscribe", [
      "logs",
      { address: [TOKEN], topics: [[TRANSFER], null, null] },
    ]);
    const calls = node.calls.length;
    const tx = node.chain.trc20Transfer(alice, bob.hex, 3_000_000n);
    const [block] = node.mine(1, [tx]);
    const expected = await logsOf(node, `0x${block!.blockID}`);
    expect(expected).toHaveLength(1);
    expect(await socket.waitFor(id, 1, WAIT_MS)).toEqual(expected);
    const asked = node.calls.slice(calls).filter((c) => c.face === "jsonrpc");
    expect(asked.some(isBlockReceipts)).toBe(true);
    expect(
      asked.some(
        (c) =>
          (c.body as { method?: string }).method === "eth_getTransactionReceipt" &&
          JSON.stringify((c.body as { params?: unknown }).params) === JSON.stringify([`0x${tx.txID}`]),
      ),
    ).toBe(true);

    node.reorg(1);
    expect((await socket.waitFor(id, 2, WAIT_MS))[1]).toEqual({ ...expected[0], removed: true });
    await Bun.sleep(QUIET_MS);
    expect(socket.notifications(id)).toHaveLength(2);
    socket.close();
  });
});
