/**
 * The filters the service keeps (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter,
 * eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter; docs/interface.md "Filters kept by the
 * service") against real anvil nodes and a real PostgreSQL, over real HTTP on 127.0.0.1: ethers v6
 * `contract.on` over an HTTP JsonRpcProvider and viem's `watchEvent` over its `http` transport (both poll
 * filters), raw calls compared with the node's own blocks and logs, a reorg's removed logs, ownership (over
 * HTTP and the WebSocket), expiry and the sweep, the per-key bound, the per-poll bound, the rate costs, ids
 * polled through two workers and through two instances on one database, the embedded PostgreSQL, and pending
 * filters (anvil's automine off, transactions sent to anvil itself).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Contract, JsonRpcProvider } from "ethers";
import postgres from "postgres";
import { createPublicClient, http, parseAbiItem } from "viem";
import { deployContract, rpc, waitForReceipt } from "./support/chain";
import { metric } from "./support/metrics";
import { post, postFrom, startServiceProcess, startTestService } from "./support/service";
import { newAnvil, onTeardown } from "./support/shared";
import { compileContracts } from "./support/solc";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const ALICE = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const BOB = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const CAROL = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const ZERO = "0x0000000000000000000000000000000000000000";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const FILTER_NOT_FOUND = { code: -32000, message: "filter not found" };
const FILTER_ID = /^0x[0-9a-f]{32}$/;
const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const topicOf = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;

/** A JSON-RPC call to the service (with a key when given): the whole answer. */
async function call(url: string, method: string, params: unknown[] = [], key?: string): Promise<any> {
  const path = key ? `/node/jsonrpc?api_key=${key}` : "/node/jsonrpc";
  return (await post(`${url}${path}`, { jsonrpc: "2.0", id: 1, method, params })).json;
}

/** A call's result; throws on an error answer. */
async function result(url: string, method: string, params: unknown[] = [], key?: string): Promise<any> {
  const answer = await call(url, method, params, key);
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** A test chain: a fresh anvil with a token, and a mint sent to anvil itself (not through the service). */
async function tokenChain() {
  const anvil = await newAnvil();
  const node = rpc(anvil.url);
  const token = await deployContract(anvil.url, "TestToken", ["Token", "TOK", 18]);
  const minter = new Contract(token, (await compileContracts()).TestToken!.abi).interface;
  /** Mints from `from` (a fresh block each: automine) and returns the receipt. */
  const mint = async (to: string, amount: bigint, from = ALICE) => {
    const data = minter.encodeFunctionData("mint", [to, amount]);
    return waitForReceipt(anvil.url, await node("eth_sendTransaction", [{ from, to: token, data }]));
  };
  return { anvil, node, token, mint };
}

/** Waits until the service follows the node's head (its hash at the node's height). */
async function followed(url: string, node: ReturnType<typeof rpc>, key?: string): Promise<void> {
  const expected = await node("eth_getBlockByNumber", ["latest", false]);
  await until("the service's head", async () => {
    const got = await result(url, "eth_getBlockByNumber", [expected.number, false], key);
    const latest = await result(url, "eth_blockNumber", [], key);
    return got?.hash === expected.hash && latest === expected.number ? true : undefined;
  });
}

/** Polls a filter until a poll gives something (the head moves in its own time); that poll's results. */
async function changes(url: string, id: string, key?: string): Promise<any[]> {
  return until(`changes of ${id}`, async () => {
    const got = await result(url, "eth_getFilterChanges", [id], key);
    return got.length > 0 ? got : undefined;
  });
}

/** The service's count of a method's calls that answered. */
async function served(url: string, method: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return (
    metric(text, "gateway_requests_total", { operation: method, transport: "jsonrpc", outcome: "ok" }) ?? 0
  );
}

describe("one service", () => {
  let chain: Awaited<ReturnType<typeof tokenChain>>;
  let service: string;
  let databaseUrl: string;
  const KEY = "filters-a";
  const OTHER = "filters-b";

  beforeAll(async () => {
    chain = await tokenChain();
    const started = await startTestService({
      upstreamUrls: [chain.anvil.url],
      env: {
        API_KEYS: `${KEY},${OTHER},ethers-key,viem-key,bounded,limited,catchup`,
        RATE_LIMITS: "limited=0.01/9,catchup=0.01/5",
        RPC_FILTERS_PER_KEY: "4",
      },
    });
    service = started.url;
    databaseUrl = started.databaseUrl;
  }, 60_000);

  test("a block filter gives the hashes of the new canonical blocks, exactly the node's, once each", async () => {
    await followed(service, chain.node, KEY);
    const id = await result(service, "eth_newBlockFilter", [], KEY);
    expect(id).toMatch(FILTER_ID);
    expect(await result(service, "eth_getFilterChanges", [id], KEY)).toEqual([]);
    const start = Number(await chain.node("eth_blockNumber"));
    await chain.node("anvil_mine", ["0x5"]);
    const expected = await Promise.all(
      [1, 2, 3, 4, 5].map(
        async (i) => (await chain.node("eth_getBlockByNumber", [hex(start + i), false])).hash,
      ),
    );
    await followed(service, chain.node, KEY);
    expect(await result(service, "eth_getFilterChanges", [id], KEY)).toEqual(expected);
    expect(await result(service, "eth_getFilterChanges", [id], KEY)).toEqual([]);
    await chain.node("anvil_mine", ["0x1"]);
    const next = await chain.node("eth_getBlockByNumber", ["latest", false]);
    expect(await changes(service, id, KEY)).toEqual([next.hash]);
    expect(await result(service, "eth_uninstallFilter", [id], KEY)).toBe(true);
    expect(await result(service, "eth_uninstallFilter", [id], KEY)).toBe(false);
    expect((await call(service, "eth_getFilterChanges", [id], KEY)).error).toEqual(FILTER_NOT_FOUND);
  }, 30_000);

  test("a log filter gives the new logs that match, exactly the node's, in block and log order", async () => {
    await followed(service, chain.node, KEY);
    const all = await result(service, "eth_newFilter", [{ address: chain.token }], KEY);
    const toBob = await result(
      service,
      "eth_newFilter",
      [{ address: [chain.token.toUpperCase().replace("0X", "0x")], topics: [TRANSFER, null, topicOf(BOB)] }],
      KEY,
    );
    const start = Number(await chain.node("eth_blockNumber"));
    const receipts = [];
    for (const to of [BOB, ALICE, BOB]) receipts.push(await chain.mint(to, 5n));
    // A block without the token's logs between them.
    await chain.node("eth_sendTransaction", [{ from: ALICE, to: CAROL, value: "0x1" }]);
    receipts.push(await chain.mint(BOB, 6n));
    await followed(service, chain.node, KEY);
    const expected = await chain.node("eth_getLogs", [
      { address: chain.token, fromBlock: hex(start + 1), toBlock: "latest" },
    ]);
    expect(expected).toEqual(receipts.flatMap((r) => r.logs));
    expect(await result(service, "eth_getFilterChanges", [all], KEY)).toEqual(expected);
    expect(await result(service, "eth_getFilterChanges", [toBob], KEY)).toEqual([
      expected[0],
      expected[2],
      expected[3],
    ]);
    expect(await result(service, "eth_getFilterChanges", [all], KEY)).toEqual([]);
    for (const id of [all, toBob]) expect(await result(service, "eth_uninstallFilter", [id], KEY)).toBe(true);
  }, 30_000);

  test("eth_getFilterLogs equals eth_getLogs with the filter's criteria; fromBlock and toBlock bound the changes", async () => {
    await followed(service, chain.node, KEY);
    const head = Number(await chain.node("eth_blockNumber"));
    const everything = await result(
      service,
      "eth_newFilter",
      [{ fromBlock: "0x0", address: chain.token }],
      KEY,
    );
    const range = await result(
      service,
      "eth_newFilter",
      [{ fromBlock: hex(head + 2), toBlock: hex(head + 3), topics: [[TRANSFER]] }],
      KEY,
    );
    expect(await result(service, "eth_getFilterLogs", [everything], KEY)).toEqual(
      await chain.node("eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest", address: chain.token }]),
    );
    for (let i = 0; i < 4; i++) await chain.mint(CAROL, BigInt(i + 1));
    await followed(service, chain.node, KEY);
    const bounded = await chain.node("eth_getLogs", [
      { fromBlock: hex(head + 2), toBlock: hex(head + 3), topics: [[TRANSFER]] },
    ]);
    expect(bounded).toHaveLength(2);
    expect(await result(service, "eth_getFilterLogs", [range], KEY)).toEqual(bounded);
    // Only the blocks of its range: the first and the fourth block minted are not.
    expect(await result(service, "eth_getFilterChanges", [range], KEY)).toEqual(bounded);
    expect(await result(service, "eth_getFilterChanges", [range], KEY)).toEqual([]);
    expect(await result(service, "eth_getFilterLogs", [everything], KEY)).toEqual(
      await chain.node("eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest", address: chain.token }]),
    );
    // A block filter has no logs: geth's answer.
    const blocks = await result(service, "eth_newBlockFilter", [], KEY);
    expect((await call(service, "eth_getFilterLogs", [blocks], KEY)).error).toEqual(FILTER_NOT_FOUND);
    for (const id of [everything, range, blocks]) await result(service, "eth_uninstallFilter", [id], KEY);
  }, 30_000);

  test("what geth refuses in eth_newFilter is refused (-32602); unknown ids are not found", async () => {
    const refused = async (filter: unknown) => (await call(service, "eth_newFilter", [filter], KEY)).error;
    const hash = (await chain.node("eth_getBlockByNumber", ["latest", false])).hash;
    expect(await refused({ blockHash: hash })).toEqual({
      code: -32602,
      message:
        "invalid params: eth_newFilter takes no blockHash: a filter follows new blocks (read one block's logs with eth_getLogs)",
    });
    expect(await refused({ fromBlock: "pending" })).toEqual({
      code: -32602,
      message: "invalid params: pending logs are not supported",
    });
    expect(await refused({ fromBlock: "0x10", toBlock: "0x5" })).toEqual({
      code: -32602,
      message:
        "invalid params: invalid block range params: toBlock 0x5 must be latest or at least fromBlock 0x10",
    });
    expect(await refused({ toBlock: "0x5" })).toEqual({
      code: -32602,
      message:
        "invalid params: invalid block range params: toBlock 0x5 must be latest or at least fromBlock latest",
    });
    expect((await refused({ fromBlock: "finalized" })).code).toBe(-32602);
    expect((await refused({ topics: [TRANSFER, null, null, null, null] })).code).toBe(-32602);
    expect((await refused({ address: "0x12" })).code).toBe(-32602);
    const pending = await call(service, "eth_newPendingTransactionFilter", [true], KEY);
    expect(pending.error.code).toBe(-32602);
    for (const id of ["0x1", `0x${"ab".repeat(16)}`, "filter", `0x${"0".repeat(64)}`]) {
      expect((await call(service, "eth_getFilterChanges", [id], KEY)).error).toEqual(FILTER_NOT_FOUND);
      expect((await call(service, "eth_getFilterLogs", [id], KEY)).error).toEqual(FILTER_NOT_FOUND);
      expect(await result(service, "eth_uninstallFilter", [id], KEY)).toBe(false);
    }
    expect((await call(service, "eth_getFilterChanges", [], KEY)).error.code).toBe(-32602);
  });

  test("criteria bounded as geth's: 1,000 addresses, 1,000 alternatives a topic position; more is -32602 naming the bound, nothing kept", async () => {
    const rows = await filterRows(databaseUrl);
    const addresses = (n: number) =>
      Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const topics = (n: number) =>
      Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(64, "0")}`);
    const before = await rows();
    const refused = async (method: string, filter: unknown) =>
      (await call(service, method, [filter], KEY)).error;
    for (const method of ["eth_newFilter", "eth_getLogs"]) {
      expect(await refused(method, { address: addresses(1_001) })).toEqual({
        code: -32602,
        message: "invalid params: params[0].address (filter): List should have at most 1000 items",
      });
      expect(await refused(method, { topics: [TRANSFER, null, topics(1_001)] })).toEqual({
        code: -32602,
        message: "invalid params: params[0].topics[2] (filter): List should have at most 1000 items",
      });
    }
    const rest = await post(`${service}/node/rest/eth_getLogs?api_key=${KEY}`, { address: addresses(1_001) });
    expect(rest.status).toBe(422);
    expect(rest.json).toEqual({
      detail: [{ loc: ["body", "address"], msg: "List should have at most 1000 items", type: "too_long" }],
    });
    expect(await rows()).toBe(before);
    // At the bounds: kept, and matching as any filter does.
    await followed(service, chain.node, KEY);
    const wide = await result(
      service,
      "eth_newFilter",
      [{ address: [...addresses(999), chain.token], topics: [[...topics(999), TRANSFER]] }],
      KEY,
    );
    expect(await rows()).toBe(before + 1);
    const minted = await chain.mint(BOB, 3n);
    await followed(service, chain.node, KEY);
    expect(await result(service, "eth_getFilterChanges", [wide], KEY)).toEqual(minted.logs);
    expect(await result(service, "eth_uninstallFilter", [wide], KEY)).toBe(true);
  }, 30_000);

  test("a filter is its key's: another key's id is not found, and it cannot uninstall it", async () => {
    const id = await result(service, "eth_newBlockFilter", [], KEY);
    const logs = await result(service, "eth_newFilter", [{}], KEY);
    expect((await call(service, "eth_getFilterChanges", [id], OTHER)).error).toEqual(FILTER_NOT_FOUND);
    expect((await call(service, "eth_getFilterLogs", [logs], OTHER)).error).toEqual(FILTER_NOT_FOUND);
    expect(await result(service, "eth_uninstallFilter", [id], OTHER)).toBe(false);
    expect(await result(service, "eth_getFilterChanges", [id], KEY)).toBeArray();
    expect(await result(service, "eth_getFilterLogs", [logs], KEY)).toBeArray();
    for (const f of [id, logs]) expect(await result(service, "eth_uninstallFilter", [f], KEY)).toBe(true);
  });

  test("over the WebSocket a filter is its key's too: made on a socket, polled over HTTP", async () => {
    await followed(service, chain.node, KEY);
    const socket = await connectSocket(wsUrl(service, KEY));
    const other = await connectSocket(wsUrl(service, OTHER));
    const { result: id } = await socket.request("eth_newBlockFilter");
    expect(id).toMatch(FILTER_ID);
    expect((await other.request("eth_getFilterChanges", [id])).error).toEqual(FILTER_NOT_FOUND);
    await chain.node("anvil_mine", ["0x1"]);
    const mined = await chain.node("eth_getBlockByNumber", ["latest", false]);
    expect(await changes(service, id, KEY)).toEqual([mined.hash]);
    expect((await socket.request("eth_uninstallFilter", [id])).result).toBe(true);
    socket.close();
    other.close();
  });

  test("a key holds at most RPC_FILTERS_PER_KEY live filters; uninstalling one makes room", async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await result(service, "eth_newBlockFilter", [], "bounded"));
    expect(new Set(ids).size).toBe(4);
    const refused = await call(service, "eth_newFilter", [{}], "bounded");
    expect(refused.error).toEqual({
      code: -32005,
      message:
        "this key holds 4 filters, the most it may (RPC_FILTERS_PER_KEY): uninstall some with eth_uninstallFilter, or let them expire",
    });
    // Another key is not bounded by this one's filters.
    const other = await result(service, "eth_newBlockFilter", [], OTHER);
    expect(await result(service, "eth_uninstallFilter", [ids[0]], "bounded")).toBe(true);
    expect(await result(service, "eth_newFilter", [{}], "bounded")).toMatch(FILTER_ID);
    expect((await call(service, "eth_newBlockFilter", [], "bounded")).error.code).toBe(-32005);
    await result(service, "eth_uninstallFilter", [other], OTHER);
  });

  test("a poll covers at most 1,000 blocks: a filter left behind catches up over the next polls", async () => {
    await followed(service, chain.node, KEY);
    const id = await result(service, "eth_newBlockFilter", [], KEY);
    const start = Number(await chain.node("eth_blockNumber"));
    await chain.node("anvil_mine", [hex(2_600)]);
    await followed(service, chain.node, KEY);
    const hashOf = async (n: number) => (await chain.node("eth_getBlockByNumber", [hex(n), false])).hash;
    const polls: [number, number][] = [
      [start + 1, 1_000],
      [start + 1_001, 1_000],
      [start + 2_001, 600],
    ];
    for (const [first, count] of polls) {
      const got = await result(service, "eth_getFilterChanges", [id], KEY);
      expect(got).toHaveLength(count);
      expect([got[0], got[count - 1]]).toEqual([await hashOf(first), await hashOf(first + count - 1)]);
    }
    expect(await result(service, "eth_getFilterChanges", [id], KEY)).toEqual([]);
    await result(service, "eth_uninstallFilter", [id], KEY);
  }, 30_000);

  test("a log filter's poll reads at most 100 blocks' receipts, for one token: one left behind catches up a token a 100 blocks", async () => {
    await followed(service, chain.node, KEY);
    // 5 tokens, refilled at 0.01 a second: the calls below spend them exactly.
    const id = await result(service, "eth_newFilter", [{ address: chain.token }], "catchup");
    const start = Number(await chain.node("eth_blockNumber"));
    const minted = [await chain.mint(BOB, 1n)];
    await chain.node("anvil_mine", [hex(148)]);
    minted.push(await chain.mint(BOB, 2n));
    await chain.node("anvil_mine", [hex(99)]);
    minted.push(await chain.mint(BOB, 3n));
    expect(minted.map((r) => Number(r.blockNumber) - start)).toEqual([1, 150, 250]);
    await followed(service, chain.node, KEY);
    // Blocks 1 to 100, 101 to 200, 201 to 250 after the start: one mint's logs each.
    for (const receipt of minted) {
      expect(await result(service, "eth_getFilterChanges", [id], "catchup")).toEqual(receipt.logs);
    }
    expect(await result(service, "eth_getFilterChanges", [id], "catchup")).toEqual([]);
    expect((await call(service, "eth_getFilterChanges", [id], "catchup")).error).toEqual({
      code: -32005,
      message: "rate limit exceeded: 0.01 calls per second, bursts of 5",
    });
  }, 30_000);

  test("filters polling the same blocks at once share one parse of each block's receipts", async () => {
    const blockLogs = async () => {
      const text = await (await fetch(`${service}/metrics`)).text();
      // Each series appears with its first event (an EVM chain's: the Bitcoin family keeps no such filters).
      const count = (source: string) => metric(text, "gateway_rpc_filter_block_logs_total", { source }) ?? 0;
      return { read: count("read"), shared: count("shared") };
    };
    await followed(service, chain.node, KEY);
    const filters = [{ address: chain.token }, { topics: [TRANSFER, null, topicOf(CAROL)] }, {}];
    const ids = [];
    for (const filter of filters) ids.push(await result(service, "eth_newFilter", [filter], KEY));
    const before = await blockLogs();
    const minted = [await chain.mint(BOB, 1n), await chain.mint(CAROL, 2n), await chain.mint(BOB, 3n)];
    await chain.node("anvil_mine", ["0x2"]);
    await followed(service, chain.node, KEY);
    const logs = minted.flatMap((r) => r.logs);
    const polled = await Promise.all(ids.map((id) => result(service, "eth_getFilterChanges", [id], KEY)));
    expect(polled).toEqual([logs, minted[1].logs, logs]);
    // Five blocks: each read and parsed once, and shared with the two other polls.
    expect(await blockLogs()).toEqual({ read: before.read + 5, shared: before.shared + 10 });
    // Polls one after another: the first reads the block, the others are given what it read.
    const more = await chain.mint(CAROL, 4n);
    await followed(service, chain.node, KEY);
    for (const id of ids) expect(await result(service, "eth_getFilterChanges", [id], KEY)).toEqual(more.logs);
    expect(await blockLogs()).toEqual({ read: before.read + 6, shared: before.shared + 12 });
    for (const id of ids) expect(await result(service, "eth_uninstallFilter", [id], KEY)).toBe(true);
  }, 30_000);

  test("rate costs: eth_getFilterLogs as eth_getLogs over the filter's range, a poll and the others one token", async () => {
    if (Number(await chain.node("eth_blockNumber")) < 2_500) await chain.node("anvil_mine", [hex(2_600)]);
    await followed(service, chain.node, KEY);
    // 9 tokens, refilled at 0.01 a second: the calls below spend them exactly.
    const id = await result(service, "eth_newFilter", [{ fromBlock: "0x0", toBlock: hex(2_500) }], "limited");
    // Blocks 0 to 2,500: three tokens, five left.
    expect(await result(service, "eth_getFilterLogs", [id], "limited")).toEqual(
      await chain.node("eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(2_500) }]),
    );
    // A batch: three and one, one left.
    const batch = await post(`${service}/node/jsonrpc?api_key=limited`, [
      { jsonrpc: "2.0", id: 1, method: "eth_getFilterLogs", params: [id] },
      { jsonrpc: "2.0", id: 2, method: "eth_getFilterChanges", params: [id] },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.json.map((a: any) => a.id)).toEqual([1, 2]);
    expect(batch.json[1].result).toEqual([]);
    const over = await post(`${service}/node/jsonrpc?api_key=limited`, {
      jsonrpc: "2.0",
      id: 7,
      method: "eth_getFilterLogs",
      params: [id],
    });
    expect(over.status).toBe(429);
    expect(over.json.error).toEqual({
      code: -32005,
      message: "rate limit exceeded: 0.01 calls per second, bursts of 9",
    });
    expect(await result(service, "eth_getFilterChanges", [id], "limited")).toEqual([]);
    expect((await call(service, "eth_getFilterChanges", [id], "limited")).error.code).toBe(-32005);
  }, 30_000);

  test("a reorg: eth_getFilterChanges gives the dropped logs again with removed: true, then the new branch's", async () => {
    await followed(service, chain.node, KEY);
    const logs = await result(service, "eth_newFilter", [{ address: chain.token }], KEY);
    const blocks = await result(service, "eth_newBlockFilter", [], KEY);
    const minted = [];
    for (const to of [BOB, ALICE, BOB]) minted.push(await chain.mint(to, 7n));
    const nodeLogs = minted.flatMap((r) => r.logs);
    await followed(service, chain.node, KEY);
    expect(await result(service, "eth_getFilterChanges", [logs], KEY)).toEqual(nodeLogs);
    expect(await result(service, "eth_getFilterChanges", [blocks], KEY)).toEqual(
      minted.map((r) => r.blockHash),
    );

    // The last two blocks are replaced by empty ones.
    await chain.node("anvil_reorg", [2, []]);
    // The first poll once the service follows the new branch (its answers may show it a little before).
    expect(await changes(service, logs, KEY)).toEqual([
      { ...nodeLogs[1], removed: true },
      { ...nodeLogs[2], removed: true },
    ]);
    const height = Number(minted[2].blockNumber);
    const newBranch = await Promise.all(
      [height - 1, height].map(async (n) => (await chain.node("eth_getBlockByNumber", [hex(n), false])).hash),
    );
    expect(newBranch).not.toContain(minted[1].blockHash);
    expect(await result(service, "eth_getFilterChanges", [blocks], KEY)).toEqual(newBranch);

    // Then the new branch's logs, exactly the node's (the dropped transactions may come back in it).
    const again = await chain.mint(BOB, 9n, CAROL);
    await followed(service, chain.node, KEY);
    const after = await chain.node("eth_getLogs", [
      { address: chain.token, fromBlock: hex(height + 1), toBlock: "latest" },
    ]);
    expect(after).toContainEqual(again.logs[0]);
    expect(await result(service, "eth_getFilterChanges", [logs], KEY)).toEqual(after);
    expect(await result(service, "eth_getFilterChanges", [logs], KEY)).toEqual([]);
    for (const id of [logs, blocks]) await result(service, "eth_uninstallFilter", [id], KEY);
  }, 30_000);

  test("ethers v6: contract.on('Transfer') over an HTTP JsonRpcProvider gets each Transfer, through a kept filter", async () => {
    const provider = new JsonRpcProvider(`${service}/node/jsonrpc?api_key=ethers-key`, 31337, {
      staticNetwork: true,
      pollingInterval: 50,
    });
    const abi = (await compileContracts()).TestToken!.abi;
    const logsBefore = await served(service, "eth_getLogs");
    const filtersBefore = await served(service, "eth_newFilter");
    const seen: { from: string; to: string; value: bigint; hash: string; index: number }[] = [];
    const contract = new Contract(chain.token, abi, provider);
    await contract.on("Transfer", (from: string, to: string, value: bigint, event: any) => {
      seen.push({ from, to, value, hash: event.log.transactionHash, index: event.log.index });
    });
    await until("ethers' filter made", async () =>
      (await served(service, "eth_newFilter")) > filtersBefore ? true : undefined,
    );
    const minted = [];
    for (const [to, amount] of [
      [BOB, 11n],
      [CAROL, 12n],
      [BOB, 13n],
    ] as const) {
      minted.push({ to, amount, receipt: await chain.mint(to, amount) });
    }
    // ethers polls a filter on each new block it sees: the chain goes on, as a live one does.
    await until("every Transfer", async () => {
      if (seen.length >= 3) return true;
      await chain.node("anvil_mine", ["0x1"]);
      await Bun.sleep(100);
    });
    await Bun.sleep(300);
    expect(seen).toEqual(
      minted.map(({ to, amount, receipt }) => ({
        from: ZERO,
        to:
          to === BOB
            ? "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
            : "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        value: amount,
        hash: receipt.transactionHash,
        index: Number(receipt.logs[0].logIndex),
      })),
    );
    // Through the filter: no log was polled with eth_getLogs.
    expect(await served(service, "eth_getLogs")).toBe(logsBefore);
    expect(await served(service, "eth_getFilterChanges")).toBeGreaterThan(0);
    await contract.removeAllListeners();
    provider.destroy();
  }, 30_000);

  test("viem: watchEvent over the http transport gets each Transfer, through a kept filter", async () => {
    const client = createPublicClient({
      transport: http(`${service}/node/jsonrpc?api_key=viem-key`),
      pollingInterval: 50,
    });
    const logsBefore = await served(service, "eth_getLogs");
    const filtersBefore = await served(service, "eth_newFilter");
    const seen: any[] = [];
    const unwatch = client.watchEvent({
      address: chain.token as `0x${string}`,
      event: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"),
      onLogs: (logs) => void seen.push(...logs),
    });
    await until("viem's filter made", async () =>
      (await served(service, "eth_newFilter")) > filtersBefore ? true : undefined,
    );
    const minted = [];
    for (const to of [CAROL, BOB, CAROL]) minted.push(await chain.mint(to, 21n));
    await until("every Transfer", async () => (seen.length >= 3 ? true : undefined));
    await Bun.sleep(300);
    unwatch();
    const nodeLogs = minted.flatMap((r) => r.logs);
    expect(
      seen.map((l) => ({
        address: l.address,
        blockHash: l.blockHash,
        blockNumber: hex(l.blockNumber),
        data: l.data,
        logIndex: hex(l.logIndex),
        topics: l.topics,
        transactionHash: l.transactionHash,
        args: l.args,
      })),
    ).toEqual(
      nodeLogs.map((l, i) => ({
        address: l.address,
        blockHash: l.blockHash,
        blockNumber: l.blockNumber,
        data: l.data,
        logIndex: l.logIndex,
        topics: l.topics,
        transactionHash: l.transactionHash,
        args: {
          from: ZERO,
          to:
            [CAROL, BOB, CAROL][i] === BOB
              ? "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
              : "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
          value: 21n,
        },
      })),
    );
    expect(await served(service, "eth_getLogs")).toBe(logsBefore);
  }, 30_000);
});

/** The schema a service put its chain's tables in, and a connection to read them. */
async function filterRows(databaseUrl: string): Promise<() => Promise<number>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  onTeardown(() => sql.end());
  const [found] = await sql`select table_schema as schema from information_schema.tables
    where table_name = 'rpc_filters'`;
  const schema = found!.schema as string;
  return async () => {
    const [count] = await sql`select count(*)::int as n from ${sql(schema)}.rpc_filters`;
    return count!.n as number;
  };
}

describe("expiry, open mode", () => {
  test("a filter not polled for RPC_FILTER_TIMEOUT_MS is gone (lazily, and by the sweep); polls and eth_getFilterLogs keep it", async () => {
    const { anvil } = await tokenChain();
    const node = rpc(anvil.url);
    const service = await startTestService({
      upstreamUrls: [anvil.url],
      env: { RPC_FILTER_TIMEOUT_MS: "1500" },
    });
    const rows = await filterRows(service.databaseUrl);
    const url = service.url;
    // Open mode: every call here comes from 127.0.0.1, which owns the filters.
    const polled = await result(url, "eth_newBlockFilter");
    const logsOnly = await result(url, "eth_newFilter", [{}]);
    const forgotten = await result(url, "eth_newBlockFilter");
    expect(await rows()).toBe(3);
    for (let i = 0; i < 6; i++) {
      await node("anvil_mine", ["0x1"]);
      await Bun.sleep(400);
      expect(await result(url, "eth_getFilterChanges", [polled])).toHaveLength(1);
      expect(await result(url, "eth_getFilterLogs", [logsOnly])).toEqual([]);
    }
    // 2.4 s: the one never polled was swept (every 1.5 s here: at most the timeout).
    await until("the sweep", async () => ((await rows()) === 2 ? true : undefined), 5_000);
    expect((await call(url, "eth_getFilterChanges", [forgotten])).error).toEqual(FILTER_NOT_FOUND);
    await Bun.sleep(2_000);
    expect((await call(url, "eth_getFilterChanges", [polled])).error).toEqual(FILTER_NOT_FOUND);
    expect((await call(url, "eth_getFilterLogs", [logsOnly])).error).toEqual(FILTER_NOT_FOUND);
    expect(await result(url, "eth_uninstallFilter", [polled])).toBe(false);
    expect(await rows()).toBe(0);
    await service.stop();
  }, 30_000);

  test("open mode: each IP address has its own filters and its own RPC_FILTERS_PER_KEY; another's id is not found", async () => {
    const { anvil } = await tokenChain();
    const service = await startTestService({ upstreamUrls: [anvil.url], env: { RPC_FILTERS_PER_KEY: "2" } });
    const url = `${service.url}/node/jsonrpc`;
    const from = async (address: string, method: string, params: unknown[] = []) =>
      (await postFrom(address, url, { jsonrpc: "2.0", id: 1, method, params })).json;
    const a = [
      (await from("127.0.0.2", "eth_newBlockFilter")).result,
      (await from("127.0.0.2", "eth_newFilter", [{}])).result,
    ];
    expect(a).toEqual([expect.stringMatching(FILTER_ID), expect.stringMatching(FILTER_ID)]);
    expect((await from("127.0.0.2", "eth_newBlockFilter")).error).toEqual({
      code: -32005,
      message:
        "this IP address (open mode) holds 2 filters, the most it may (RPC_FILTERS_PER_KEY): uninstall some with eth_uninstallFilter, or let them expire",
    });
    // Another address is not bounded by the first one's filters, and does not see them.
    const b = (await from("127.0.0.3", "eth_newBlockFilter")).result;
    expect(b).toMatch(FILTER_ID);
    expect((await from("127.0.0.3", "eth_getFilterChanges", [a[0]])).error).toEqual(FILTER_NOT_FOUND);
    expect((await from("127.0.0.3", "eth_getFilterLogs", [a[1]])).error).toEqual(FILTER_NOT_FOUND);
    expect((await from("127.0.0.3", "eth_uninstallFilter", [a[0]])).result).toBe(false);
    expect((await from("127.0.0.2", "eth_getFilterChanges", [b])).error).toEqual(FILTER_NOT_FOUND);
    // Each its own.
    expect((await from("127.0.0.2", "eth_getFilterChanges", [a[0]])).result).toEqual([]);
    expect((await from("127.0.0.2", "eth_getFilterLogs", [a[1]])).result).toBeArray();
    expect((await from("127.0.0.2", "eth_uninstallFilter", [a[0]])).result).toBe(true);
    expect((await from("127.0.0.3", "eth_uninstallFilter", [b])).result).toBe(true);
    await service.stop();
  }, 30_000);

  test("the embedded PostgreSQL keeps filters too", async () => {
    const { anvil, node, token, mint } = await tokenChain();
    const service = await startTestService({ upstreamUrls: [anvil.url], databaseUrl: null });
    await followed(service.url, node);
    const id = await result(service.url, "eth_newFilter", [{ address: token }]);
    const minted = [await mint(BOB, 1n), await mint(CAROL, 2n)];
    await followed(service.url, node);
    expect(await result(service.url, "eth_getFilterChanges", [id])).toEqual(minted.flatMap((r) => r.logs));
    await service.stop();
  }, 30_000);
});

describe("across instances and workers", () => {
  test("two instances on one database: ids made on one are polled on the other, each change given once", async () => {
    const { anvil, node, token, mint } = await tokenChain();
    const a = await startTestService({ upstreamUrls: [anvil.url], env: { API_KEYS: "k" } });
    const b = await startTestService({
      upstreamUrls: [anvil.url],
      databaseUrl: a.databaseUrl,
      env: { API_KEYS: "k" },
    });
    await followed(a.url, node, "k");
    await followed(b.url, node, "k");
    const logs = await result(a.url, "eth_newFilter", [{ address: token }], "k");
    const blocks = await result(b.url, "eth_newBlockFilter", [], "k");
    const start = Number(await node("eth_blockNumber"));
    const got = { logs: [] as any[], blocks: [] as any[] };
    for (let i = 0; i < 6; i++) {
      await mint(i % 2 === 0 ? BOB : CAROL, BigInt(i + 1));
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      await followed(first.url, node, "k");
      got.logs.push(...(await result(first.url, "eth_getFilterChanges", [logs], "k")));
      got.blocks.push(...(await result(second.url, "eth_getFilterChanges", [blocks], "k")));
    }
    await followed(a.url, node, "k");
    got.logs.push(...(await result(a.url, "eth_getFilterChanges", [logs], "k")));
    got.blocks.push(...(await result(a.url, "eth_getFilterChanges", [blocks], "k")));
    expect(got.logs).toEqual(
      await node("eth_getLogs", [{ address: token, fromBlock: hex(start + 1), toBlock: "latest" }]),
    );
    const hashes = [];
    for (let n = start + 1; n <= start + 6; n++)
      hashes.push((await node("eth_getBlockByNumber", [hex(n), false])).hash);
    expect(got.blocks).toEqual(hashes);
    // Uninstalled on one, gone on the other.
    expect(await result(b.url, "eth_uninstallFilter", [logs], "k")).toBe(true);
    expect((await call(a.url, "eth_getFilterChanges", [logs], "k")).error).toEqual(FILTER_NOT_FOUND);
    await b.stop();
    await a.stop();
  }, 60_000);

  test("WORKERS=2: ids polled through both workers, each change given once", async () => {
    const { anvil, node, token, mint } = await tokenChain();
    const service = await startServiceProcess({
      upstreamUrls: [anvil.url],
      env: { WORKERS: "2", API_KEYS: "w" },
    });
    const url = `${service.url}/node/jsonrpc?api_key=w`;
    await until(
      "both workers up",
      async () => {
        const health = (await (await fetch(`${service.url}/health`)).json()) as any;
        return health.workers?.pool?.every((s: any) => s.state === "up") ? true : undefined;
      },
      30_000,
    );
    /** One call on a connection of its own: the kernel spreads them over the workers. */
    const fresh = async (method: string, params: unknown[]) => {
      const answer = await postFrom("127.0.0.1", url, { jsonrpc: "2.0", id: 1, method, params });
      expect(answer.json.error).toBeUndefined();
      return answer.json.result;
    };
    await followed(service.url, node, "w");
    const logs = await fresh("eth_newFilter", [{ address: token }]);
    const blocks = await fresh("eth_newBlockFilter", []);
    const start = Number(await node("eth_blockNumber"));
    const got = { logs: [] as any[], blocks: [] as any[] };
    for (let i = 0; i < 10; i++) {
      await mint(BOB, BigInt(i + 1));
      for (let j = 0; j < 3; j++) {
        got.logs.push(...(await fresh("eth_getFilterChanges", [logs])));
        got.blocks.push(...(await fresh("eth_getFilterChanges", [blocks])));
      }
    }
    const expectedLogs = await node("eth_getLogs", [
      { address: token, fromBlock: hex(start + 1), toBlock: "latest" },
    ]);
    await until("every change", async () => {
      got.logs.push(...(await fresh("eth_getFilterChanges", [logs])));
      got.blocks.push(...(await fresh("eth_getFilterChanges", [blocks])));
      return got.blocks.length >= 10 && got.logs.length >= 10 ? true : undefined;
    });
    expect(got.logs).toEqual(expectedLogs);
    const hashes = [];
    for (let n = start + 1; n <= start + 10; n++)
      hashes.push((await node("eth_getBlockByNumber", [hex(n), false])).hash);
    expect(got.blocks).toEqual(hashes);
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const perWorker = [0, 1].map(
      (w) =>
        metric(text, "gateway_requests_total", {
          operation: "eth_getFilterChanges",
          transport: "jsonrpc",
          outcome: "ok",
          worker: String(w),
        }) ?? 0,
    );
    expect(Math.min(...perWorker)).toBeGreaterThan(0);
    await service.stop();
  }, 90_000);
});

describe("pending filters", () => {
  test("the hashes of transactions entering the node's pool, once each, polled on any instance", async () => {
    const { anvil, node } = await tokenChain();
    const a = await startTestService({ upstreamUrls: [anvil.url] });
    const b = await startTestService({ upstreamUrls: [anvil.url], databaseUrl: a.databaseUrl });
    await node("evm_setAutomine", [false]);
    try {
      const onA = await result(a.url, "eth_newPendingTransactionFilter");
      const onB = await result(b.url, "eth_newPendingTransactionFilter", [false]);
      expect(await result(b.url, "eth_getFilterChanges", [onA])).toEqual([]);
      // Sent to anvil itself, not through the service.
      const sent = [];
      for (const [from, to] of [
        [ALICE, BOB],
        [BOB, CAROL],
        [CAROL, ALICE],
      ]) {
        sent.push(await node("eth_sendTransaction", [{ from, to, value: "0x1" }]));
      }
      const collect = async (url: string, id: string) => {
        const seen: string[] = [];
        await until("every pending hash", async () => {
          seen.push(...(await result(url, "eth_getFilterChanges", [id])));
          return seen.length >= 3 ? true : undefined;
        });
        await Bun.sleep(200);
        seen.push(...(await result(url, "eth_getFilterChanges", [id])));
        return seen;
      };
      // Both instances feed the shared list: each hash is there once.
      expect(await collect(b.url, onA)).toEqual(sent);
      expect(await collect(a.url, onB)).toEqual(sent);
      expect(await result(a.url, "eth_getFilterChanges", [onA])).toEqual([]);
      // Its block mined: no more pending hashes.
      await node("evm_mine", []);
      await Bun.sleep(200);
      expect(await result(a.url, "eth_getFilterChanges", [onA])).toEqual([]);
    } finally {
      await node("evm_setAutomine", [true]);
    }
    await b.stop();
    await a.stop();
  }, 30_000);

  test("without an upstream WebSocket there are no pending hashes to keep: -32601", async () => {
    const { anvil } = await tokenChain();
    const service = await startTestService({ upstreamUrls: [anvil.url], env: { UPSTREAM_WS_URLS: "off" } });
    expect((await call(service.url, "eth_newPendingTransactionFilter")).error).toEqual({
      code: -32601,
      message:
        "the method newPendingTransactions for a pending filter (no upstream WebSocket is live) does not exist or is not available",
    });
    await service.stop();
  }, 30_000);
});
