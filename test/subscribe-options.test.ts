/**
 * eth_subscribe takes the options geth and anvil take (docs/interface.md §14), over raw WebSocket requests
 * to the service in front of a real anvil: `newPendingTransactions` with `true` (full transactions, from a
 * second shared upstream subscription) or `false` (hashes); `logs` with `fromBlock`/`toBlock` (a past
 * fromBlock and `latest`/`pending` change nothing, a bound at the head or later keeps out the blocks beyond
 * it, a toBlock below the head is refused).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Server, ServerWebSocket } from "bun";
import { Contract } from "ethers";
import { deployContract, rpc, waitForReceipt } from "./support/chain";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { newAnvil, onTeardown } from "./support/shared";
import { compileContracts } from "./support/solc";
import { until } from "./support/until";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const hex = (n: number) => `0x${n.toString(16)}`;
const ALICE = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const BOB = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

let anvilUrl: string;
let node: ReturnType<typeof rpc>;
let proxy: NodeProxy;
let service: string;
let token: string;
let mintData: (to: string, amount: bigint) => string;

beforeAll(async () => {
  const anvil = await newAnvil();
  anvilUrl = anvil.url;
  node = rpc(anvil.url);
  token = await deployContract(anvil.url, "TestToken", ["Token", "TOK", 18]);
  const minter = new Contract(token, (await compileContracts()).TestToken!.abi).interface;
  mintData = (to, amount) => minter.encodeFunctionData("mint", [to, amount]);
  proxy = startProxy(anvil.url);
  service = (await startTestService({ upstreamUrls: [proxy.url] })).url;
}, 60_000);

/** Mints in a block of its own; the receipt once mined. */
async function mint(to: string, amount: bigint): Promise<any> {
  const hash = await node("eth_sendTransaction", [{ from: ALICE, to: token, data: mintData(to, amount) }]);
  return waitForReceipt(anvilUrl, hash);
}

/** The node's head, once the service follows it. */
async function followedHead(): Promise<number> {
  const head = Number(await node("eth_blockNumber"));
  await until("the service follows the node's head", async () => {
    const { json } = await post(`${service}/node/jsonrpc`, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_blockNumber",
    });
    return Number(json.result) === head ? true : undefined;
  });
  return head;
}

async function subscribe(socket: TestSocket, params: unknown[]): Promise<string> {
  const answer = await socket.request("eth_subscribe", params);
  if (!answer.result)
    throw new Error(`eth_subscribe ${JSON.stringify(params)}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/**
 * What differs between a pending transaction and the same one mined: where it is, and the gas price (while
 * pending, anvil's guess from the base fee of the moment, at most the fee cap; once mined, the price paid).
 */
const INCLUSION = ["blockHash", "blockNumber", "blockTimestamp", "transactionIndex", "gasPrice"] as const;
const withoutInclusion = (tx: any) =>
  Object.fromEntries(Object.entries(tx).filter(([k]) => !(INCLUSION as readonly string[]).includes(k)));

/** Asserts `got` is the transaction `hash`, as it is pending or as it was mined (its receipt, its block). */
async function expectPendingOrMined(got: any, hash: string): Promise<void> {
  const receipt = await waitForReceipt(anvilUrl, hash);
  const block = await node("eth_getBlockByHash", [receipt.blockHash, false]);
  const { blockHash, blockNumber, blockTimestamp, transactionIndex, gasPrice } = got;
  if (blockHash === null) {
    expect({ blockNumber, blockTimestamp, transactionIndex }).toEqual({
      blockNumber: null,
      blockTimestamp: undefined,
      transactionIndex: null,
    });
    expect(BigInt(gasPrice)).toBeLessThanOrEqual(BigInt(got.maxFeePerGas));
  } else {
    expect({ blockHash, blockNumber, blockTimestamp, transactionIndex, gasPrice }).toEqual({
      blockHash: receipt.blockHash,
      blockNumber: receipt.blockNumber,
      blockTimestamp: block.timestamp,
      transactionIndex: receipt.transactionIndex,
      gasPrice: receipt.effectiveGasPrice,
    });
  }
}

/** eth_subscribe calls the upstream WebSocket received with these params. */
const upstreamSubscribes = (params: unknown[]) =>
  proxy.callsOf("eth_subscribe").filter((c) => JSON.stringify(c.params) === JSON.stringify(params)).length;

describe("newPendingTransactions [full]", () => {
  test("false and absent: hashes; true: the full transactions anvil pushes, from one shared upstream subscription", async () => {
    // What anvil itself pushes to a client that asks for full transactions.
    const direct = await connectSocket(anvilUrl.replace(/^http/, "ws"));
    const directId = (await direct.request("eth_subscribe", ["newPendingTransactions", true])).result;
    const a = await connectSocket(wsUrl(service));
    const b = await connectSocket(wsUrl(service));
    const hashesBefore = upstreamSubscribes(["newPendingTransactions"]);
    const fullBefore = upstreamSubscribes(["newPendingTransactions", true]);
    const hashes = await subscribe(a, ["newPendingTransactions", false]);
    const plain = await subscribe(b, ["newPendingTransactions"]);
    const fullA = await subscribe(a, ["newPendingTransactions", true]);
    const fullB = await subscribe(b, ["newPendingTransactions", true]);
    expect(upstreamSubscribes(["newPendingTransactions"]) - hashesBefore).toBe(1);
    expect(upstreamSubscribes(["newPendingTransactions", true]) - fullBefore).toBe(1);

    const hash = await node("eth_sendTransaction", [{ from: ALICE, to: BOB, value: "0x2a" }]);
    const [pushed] = await direct.waitFor(directId, 1);
    expect(pushed.hash).toBe(hash);
    expect(await a.waitFor(hashes, 1)).toEqual([hash]);
    expect(await b.waitFor(plain, 1)).toEqual([hash]);
    // anvil mines at once, so which form a push takes (pending, or already in its block) is a race of
    // anvil's own; either is the same transaction, and both subscribers get the one upstream push.
    const [gotA] = await a.waitFor(fullA, 1);
    expect(await b.waitFor(fullB, 1)).toEqual([gotA]);
    expect(withoutInclusion(gotA)).toEqual(withoutInclusion(pushed));
    await expectPendingOrMined(gotA, hash);
    await expectPendingOrMined(pushed, hash);

    // The full transactions' upstream subscription ends with its last subscriber; the hashes' stays.
    const unsubscribes = proxy.callsOf("eth_unsubscribe").length;
    expect((await a.request("eth_unsubscribe", [fullA])).result).toBe(true);
    expect(proxy.callsOf("eth_unsubscribe").length).toBe(unsubscribes);
    expect((await b.request("eth_unsubscribe", [fullB])).result).toBe(true);
    await until("the upstream subscription ends", async () =>
      proxy.callsOf("eth_unsubscribe").length === unsubscribes + 1 ? true : undefined,
    );
    const next = await node("eth_sendTransaction", [{ from: ALICE, to: BOB, value: "0x2b" }]);
    expect(await a.waitFor(hashes, 2)).toEqual([hash, next]);
    for (const socket of [direct, a, b]) socket.close();
  });

  test("anything but a boolean is -32602", async () => {
    const socket = await connectSocket(wsUrl(service));
    for (const option of ["yes", 1, {}]) {
      expect((await socket.request("eth_subscribe", ["newPendingTransactions", option])).error).toEqual({
        code: -32602,
        message:
          "invalid params: newPendingTransactions takes true (full transactions) or false (hashes) as its option",
      });
    }
    socket.close();
  });

  test("a node that refuses full transactions: -32601 naming why; hashes still served", async () => {
    const refusing = startRefusingRelay(anvilUrl);
    const url = (await startTestService({ upstreamUrls: [refusing] })).url;
    const socket = await connectSocket(wsUrl(url));
    expect((await socket.request("eth_subscribe", ["newPendingTransactions", true])).error).toEqual({
      code: -32601,
      message:
        "the method newPendingTransactions with full transactions (the upstream refused it: full transactions are not offered) does not exist or is not available",
    });
    const hashes = await subscribe(socket, ["newPendingTransactions", false]);
    const hash = await node("eth_sendTransaction", [{ from: ALICE, to: BOB, value: "0x2c" }]);
    expect(await socket.waitFor(hashes, 1)).toEqual([hash]);
    socket.close();
  });
});

/**
 * anvil behind a relay that refuses `eth_subscribe ["newPendingTransactions", true]` as a node without full
 * pending transactions does (a fault anvil cannot be asked to produce); everything else passes.
 */
function startRefusingRelay(target: string): string {
  const server: Server<{ upstream: WebSocket }> = Bun.serve<{ upstream: WebSocket }>({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request, bun) {
      if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const upstream = new WebSocket(target.replace(/^http/, "ws"));
        await new Promise((resolve) => {
          upstream.onopen = resolve;
          upstream.onerror = resolve;
        });
        return bun.upgrade(request, { data: { upstream } }) ? undefined : new Response("no", { status: 400 });
      }
      return fetch(target, { method: "POST", body: await request.text(), headers: request.headers });
    },
    websocket: {
      open(ws: ServerWebSocket<{ upstream: WebSocket }>) {
        ws.data.upstream.onmessage = (event) => ws.send(String(event.data));
      },
      message(ws, message) {
        const call = JSON.parse(String(message));
        if (
          call.method === "eth_subscribe" &&
          call.params?.[0] === "newPendingTransactions" &&
          call.params[1]
        ) {
          const error = { code: -32602, message: "full transactions are not offered" };
          ws.send(JSON.stringify({ jsonrpc: "2.0", id: call.id, error }));
          return;
        }
        ws.data.upstream.send(String(message));
      },
      close(ws) {
        ws.data.upstream.close();
      },
    },
  });
  onTeardown(async () => void server.stop(true));
  return `http://127.0.0.1:${server.port}`;
}

describe("logs {address, topics, fromBlock, toBlock}", () => {
  test("a past fromBlock, latest and pending change nothing: the logs of the blocks to come", async () => {
    const socket = await connectSocket(wsUrl(service));
    await followedHead();
    const cast = await subscribe(socket, ["logs", { address: token, fromBlock: "0x0", toBlock: "latest" }]);
    const pending = await subscribe(socket, [
      "logs",
      { address: [token], fromBlock: "pending", toBlock: "pending" },
    ]);
    const receipt = await mint(BOB, 7n);
    expect(await socket.waitFor(cast, 1)).toEqual(receipt.logs);
    expect(await socket.waitFor(pending, 1)).toEqual(receipt.logs);
    socket.close();
  });

  test("bounds at the head or later keep out the logs of the blocks beyond them", async () => {
    const socket = await connectSocket(wsUrl(service));
    const head = await followedHead();
    const from = await subscribe(socket, ["logs", { address: token, fromBlock: hex(head + 2) }]);
    const to = await subscribe(socket, ["logs", { address: token, fromBlock: "latest", toBlock: head + 1 }]);
    const all = await subscribe(socket, ["logs", { address: token, toBlock: hex(head + 5) }]);
    const first = await mint(BOB, 1n);
    const second = await mint(ALICE, 2n);
    expect([first.blockNumber, second.blockNumber]).toEqual([hex(head + 1), hex(head + 2)]);
    expect(await socket.waitFor(all, 2)).toEqual([...first.logs, ...second.logs]);
    expect(socket.notifications(from)).toEqual(second.logs);
    expect(socket.notifications(to)).toEqual(first.logs);
    socket.close();
  });

  test("topic positions as geth reads them: an empty list, or one holding null, matches anything", async () => {
    const socket = await connectSocket(wsUrl(service));
    const first = await mint(BOB, 3n);
    const transfer = first.logs[0].topics[0];
    // Subscribed once the service follows that block: the next block's logs are the first sent.
    await followedHead();
    const other = `0x${"11".repeat(32)}`;
    const empty = await subscribe(socket, ["logs", { address: token, topics: [transfer, []] }]);
    const withNull = await subscribe(socket, [
      "logs",
      { address: token, topics: [[transfer], [other, null]] },
    ]);
    const none = await subscribe(socket, ["logs", { address: token, topics: [other] }]);
    const receipt = await mint(BOB, 4n);
    expect(await socket.waitFor(empty, 1)).toEqual(receipt.logs);
    expect(await socket.waitFor(withNull, 1)).toEqual(receipt.logs);
    expect(socket.notifications(none)).toEqual([]);
    socket.close();
  });

  test("a range that is past, reversed, or anything else in the object: -32602 saying so", async () => {
    const socket = await connectSocket(wsUrl(service));
    const head = await followedHead();
    const refused = async (filter: unknown) =>
      (await socket.request("eth_subscribe", ["logs", filter])).error;
    expect(await refused({ fromBlock: "0x0", toBlock: hex(head - 1) })).toEqual({
      code: -32602,
      message: `invalid params: toBlock ${head - 1} is below the head (${head}): a logs subscription sends new blocks only; read past logs with eth_getLogs`,
    });
    expect(await refused({ toBlock: "earliest" })).toEqual({
      code: -32602,
      message: `invalid params: toBlock 0 is below the head (${head}): a logs subscription sends new blocks only; read past logs with eth_getLogs`,
    });
    expect(await refused({ fromBlock: hex(head + 9), toBlock: hex(head + 3) })).toEqual({
      code: -32602,
      message: `invalid params: fromBlock ${head + 9} is above toBlock ${head + 3}`,
    });
    expect(await refused({ fromBlock: "soon" })).toEqual({
      code: -32602,
      message: "invalid params: fromBlock should be a block number or a tag",
    });
    expect(await refused({ blockHash: `0x${"ab".repeat(32)}` })).toEqual({
      code: -32602,
      message: "invalid params: the logs filter takes address, topics, fromBlock and toBlock, not blockHash",
    });
    // Nothing was left subscribed.
    expect((await socket.request("eth_unsubscribe", ["0x0"])).result).toBe(false);
    socket.close();
  });

  test("at most 1,000 addresses and 1,000 alternatives a topic position, as geth: more is -32602 naming the bound", async () => {
    const socket = await connectSocket(wsUrl(service));
    const addresses = (n: number) =>
      Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const topics = (n: number) =>
      Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(64, "0")}`);
    const refused = async (filter: unknown) =>
      (await socket.request("eth_subscribe", ["logs", filter])).error;
    expect(await refused({ address: addresses(1_001) })).toEqual({
      code: -32602,
      message: "invalid params: address should be a list of at most 1000 addresses, not 1001",
    });
    expect(await refused({ topics: [null, topics(1_001)] })).toEqual({
      code: -32602,
      message: "invalid params: topics[1] should be a list of at most 1000 alternatives, not 1001",
    });
    // At the bounds: taken, and matching as any filter does (subscribed once the service follows `first`).
    const first = await mint(BOB, 5n);
    const transfer = first.logs[0].topics[0];
    await followedHead();
    const wide = await subscribe(socket, [
      "logs",
      { address: [...addresses(999), token], topics: [[...topics(999), transfer]] },
    ]);
    const receipt = await mint(BOB, 6n);
    expect(await socket.waitFor(wide, 1)).toEqual(receipt.logs);
    socket.close();
  });
});
