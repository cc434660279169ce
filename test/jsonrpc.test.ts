/** JSON-RPC 2.0 behaviour: ids echoed exactly, batches answered element by element, in order. */
import { beforeAll, describe, expect, test } from "bun:test";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

let service: string;
let head: string;

beforeAll(async () => {
  const { anvil, chain } = await fixtureChain();
  service = (await startTestService({ upstreamUrls: [anvil.url] })).url;
  head = `0x${chain.head.toString(16)}`;
});

const rpc = (body: unknown, raw = false) => post(`${service}/node/jsonrpc`, body, { raw });

describe("ids", () => {
  const ids: [string, string][] = [
    ["a string", '"abc-123"'],
    ["an empty string", '""'],
    ["zero", "0"],
    ["a negative number", "-42"],
    ["a number beyond 2^53, digit for digit", "12345678901234567890123"],
    ["a fraction", "1.5"],
    ["null", "null"],
    ["an object (JsonRpcRequest takes any id)", '{"n":1}'],
  ];
  for (const [title, id] of ids) {
    test(`${title} is echoed exactly`, async () => {
      const response = await rpc(`{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`, true);
      expect(response.status).toBe(200);
      expect(response.text).toBe(`{"jsonrpc":"2.0","id":${id},"result":"${head}"}`);
    });
  }
  test("an absent id defaults to 0, absent params to [], absent jsonrpc to 2.0", async () => {
    const response = await rpc({ method: "eth_blockNumber" });
    expect(response.text).toBe(`{"jsonrpc":"2.0","id":0,"result":"${head}"}`);
  });
  test("the jsonrpc value is echoed", async () => {
    const response = await rpc({ jsonrpc: "2.0-custom", id: 5, method: "eth_blockNumber" });
    expect(response.json).toEqual({ jsonrpc: "2.0-custom", id: 5, result: head });
  });
});

describe("batches", () => {
  test("each element gets its own answer or error, in order", async () => {
    const response = await rpc([
      { jsonrpc: "2.0", id: "first", method: "eth_blockNumber", params: [] },
      { jsonrpc: "2.0", id: 2, method: "eth_notAMethod", params: [] },
      7,
      { jsonrpc: "2.0", id: 4, method: "eth_getBlockByNumber", params: ["latest"] },
      { jsonrpc: "2.0", id: 5, method: "eth_blockNumber", params: { named: true } },
      { jsonrpc: 2, id: 6, method: "eth_blockNumber" },
      { jsonrpc: "2.0", id: null, method: "net_version" },
      { id: 8 },
      { jsonrpc: "2.0", id: 9, method: "watch_getTransfers", params: [{ limit: 0 }] },
    ]);
    expect(response.status).toBe(200);
    expect(response.json).toEqual([
      { jsonrpc: "2.0", id: "first", result: head },
      {
        jsonrpc: "2.0",
        id: 2,
        error: { code: -32601, message: "the method eth_notAMethod does not exist or is not available" },
      },
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "invalid request: element: Input should be a valid object" },
      },
      {
        jsonrpc: "2.0",
        id: 4,
        error: {
          code: -32602,
          message: "invalid params: eth_getBlockByNumber takes 2 params (block, hydrated), got 1",
        },
      },
      {
        jsonrpc: "2.0",
        id: 5,
        error: {
          code: -32602,
          message:
            "invalid params: eth_blockNumber takes its params by position (an array), not by name (an object)",
        },
      },
      {
        jsonrpc: "2.0",
        id: 6,
        error: { code: -32600, message: "invalid request: jsonrpc: Input should be a valid string" },
      },
      { jsonrpc: "2.0", id: null, result: "31337" },
      { jsonrpc: "2.0", id: 8, error: { code: -32600, message: "invalid request: method: Field required" } },
      { jsonrpc: "2.0", id: 9, result: [] },
    ]);
  });
  test("an empty batch is one Invalid Request error", async () => {
    const response = await rpc([]);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "invalid request: empty batch" },
    });
  });
  test("a batch of 100 identical calls with distinct ids", async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: "2.0",
      id: `n${i}`,
      method: "eth_chainId",
    }));
    const response = await rpc(batch);
    expect(response.json).toEqual(batch.map((b) => ({ jsonrpc: "2.0", id: b.id, result: "0x7a69" })));
  });
});
