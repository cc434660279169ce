/**
 * Every 422 path, with the exact FastAPI-style body; and no input, however hostile, gives a 500.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

let service: string;

beforeAll(async () => {
  const { anvil } = await fixtureChain();
  service = (await startTestService({ upstreamUrls: [anvil.url] })).url;
});

const rest = (name: string, body: unknown, raw = false) =>
  post(`${service}/node/rest/${name}`, body, { raw });
const BLOCK_STRING =
  "Input should be a block number (0x-hex or decimal string below 2^64) or a tag: latest, earliest, pending, safe, finalized";
const BLOCK_ANY =
  "Input should be a block number (integer, 0x-hex or decimal string) or a tag: latest, earliest, pending, safe, finalized";
const HASH = "Input should be a 32-byte hash: 0x followed by 64 hex digits";
const ADDRESS = "Input should be a 20-byte address: 0x followed by 40 hex digits";

/** Every REST route that takes a body, with one valid body. */
const ROUTES_WITH_BODY: Record<string, Record<string, unknown>> = {
  eth_getBlockByNumber: { number: 1, is_full_trx: false },
  eth_getBlockByHash: { hash: `0x${"1".repeat(64)}`, is_full_trx: false },
  watch_getBlockNumberByTimestamp: { timestamp: 1 },
  watch_getStatsByDay: { timestamp: 1 },
  watch_getBlockNumbersByDay: { date: "2024-01-01" },
  eth_getLogs: {},
  eth_getTransactionByHash: { trx_hash: `0x${"1".repeat(64)}` },
  eth_getTransactionByBlockNumberAndIndex: { block_number: 1, trx_index: 0 },
  eth_getTransactionByBlockHashAndIndex: { block_hash: `0x${"1".repeat(64)}`, trx_index: 0 },
  eth_getBlockTransactionCountByNumber: { number: 1 },
  eth_getBlockTransactionCountByHash: { hash: `0x${"1".repeat(64)}` },
  ext_getBlockReceipts: { number: 1 },
  eth_getTransactionReceipt: { trx_hash: `0x${"1".repeat(64)}` },
  get_token_balances: { address: `0x${"1".repeat(40)}`, list_contract_address: [] },
  get_token_metadata: { token_address: `0x${"1".repeat(40)}` },
  trace_block: { number: 1 },
  trace_transaction: { trx_hash: `0x${"1".repeat(64)}` },
  watch_getTransfersByAddress: { addresses: `0x${"1".repeat(40)}` },
  watch_getTransfers: {},
  eth_getUncleCountByBlockHash: { hash: `0x${"1".repeat(64)}` },
  eth_getUncleCountByBlockNumber: { number: 1 },
};

describe("every REST route with a body", () => {
  for (const [name, valid] of Object.entries(ROUTES_WITH_BODY)) {
    test(`${name}: empty body, malformed JSON, and each required field missing`, async () => {
      const empty = await rest(name, "", true);
      expect(empty.status).toBe(422);
      expect(empty.json).toEqual({ detail: [{ loc: ["body"], msg: "Field required", type: "missing" }] });

      const malformed = await rest(name, '{"number": 1,', true);
      expect(malformed.status).toBe(422);
      expect(malformed.json.detail).toHaveLength(1);
      expect(malformed.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
      expect(malformed.json.detail[0].msg).toStartWith("JSON decode error");

      const notAnObject = await rest(name, [valid]);
      expect(notAnObject.status).toBe(422);
      expect(notAnObject.json).toEqual({
        detail: [{ loc: ["body"], msg: "Input should be a valid object", type: "dict_type" }],
      });

      for (const field of Object.keys(valid)) {
        if (name === "eth_getLogs" || name === "watch_getTransfers") continue;
        const { [field]: _, ...rest_ } = valid;
        const missing = await rest(name, rest_);
        expect(missing.status).toBe(422);
        expect(missing.json).toEqual({
          detail: [{ loc: ["body", field], msg: "Field required", type: "missing" }],
        });
      }
    });
  }
});

describe("field errors name the field and say what was expected", () => {
  const cases: [string, string, unknown, { loc: (string | number)[]; msg: string; type: string }[]][] = [
    [
      "block tag unknown",
      "eth_getBlockByNumber",
      { number: "newest", is_full_trx: true },
      [{ loc: ["body", "number"], msg: BLOCK_STRING, type: "value_error" }],
    ],
    [
      "block hex not hex",
      "eth_getBlockByNumber",
      { number: "0xzz", is_full_trx: true },
      [{ loc: ["body", "number"], msg: BLOCK_STRING, type: "value_error" }],
    ],
    [
      "block hex over 64 bits",
      "eth_getBlockByNumber",
      { number: "0x1ffffffffffffffff", is_full_trx: true },
      [{ loc: ["body", "number"], msg: BLOCK_STRING, type: "value_error" }],
    ],
    [
      "block decimal over 64 bits",
      "ext_getBlockReceipts",
      { number: "18446744073709551616" },
      [{ loc: ["body", "number"], msg: BLOCK_STRING, type: "value_error" }],
    ],
    [
      "block negative",
      "trace_block",
      { number: -1 },
      [
        {
          loc: ["body", "number"],
          msg: "Input should be greater than or equal to 0",
          type: "greater_than_equal",
        },
      ],
    ],
    [
      "block fractional",
      "trace_block",
      { number: 1.5 },
      [{ loc: ["body", "number"], msg: "Input should be a valid integer", type: "int_type" }],
    ],
    [
      "block boolean",
      "eth_getUncleCountByBlockNumber",
      { number: true },
      [{ loc: ["body", "number"], msg: BLOCK_ANY, type: "union_type" }],
    ],
    [
      "block beyond 2^53 as a JSON number",
      "eth_getBlockTransactionCountByNumber",
      { number: 12345678901234567890123n },
      [
        {
          loc: ["body", "number"],
          msg: `${BLOCK_ANY}; 12345678901234567890123 is out of range`,
          type: "value_error",
        },
      ],
    ],
    [
      "is_full_trx a string",
      "eth_getBlockByNumber",
      { number: 1, is_full_trx: "true" },
      [{ loc: ["body", "is_full_trx"], msg: "Input should be a valid boolean", type: "bool_type" }],
    ],
    [
      "hash too short",
      "eth_getBlockByHash",
      { hash: "0x1234", is_full_trx: true },
      [{ loc: ["body", "hash"], msg: HASH, type: "string_pattern_mismatch" }],
    ],
    [
      "transaction index negative",
      "eth_getTransactionByBlockHashAndIndex",
      { block_hash: `0x${"a".repeat(64)}`, trx_index: -1 },
      [
        {
          loc: ["body", "trx_index"],
          msg: "Input should be greater than or equal to 0",
          type: "greater_than_equal",
        },
      ],
    ],
    [
      "date pattern",
      "watch_getBlockNumbersByDay",
      { date: "2024-1-1" },
      [
        {
          loc: ["body", "date"],
          msg: "String should match pattern '^\\d{4}-\\d{2}-\\d{2}$'",
          type: "string_pattern_mismatch",
        },
      ],
    ],
    [
      "timestamp a string",
      "watch_getBlockNumberByTimestamp",
      { timestamp: "noon" },
      [{ loc: ["body", "timestamp"], msg: "Input should be a valid integer", type: "int_type" }],
    ],
    [
      "log address not a list",
      "eth_getLogs",
      { address: `0x${"1".repeat(40)}` },
      [{ loc: ["body", "address"], msg: "Input should be a valid list or null", type: "union_type" }],
    ],
    [
      "log topic malformed",
      "eth_getLogs",
      { topics: [null, "0x12"] },
      [{ loc: ["body", "topics", 1], msg: HASH, type: "string_pattern_mismatch" }],
    ],
    [
      "limit 501",
      "watch_getTransfers",
      { limit: 501 },
      [{ loc: ["body", "limit"], msg: "Input should be less than or equal to 500", type: "less_than_equal" }],
    ],
    [
      "offset -1",
      "watch_getTransfersByAddress",
      { addresses: [`0x${"1".repeat(40)}`], offset: -1 },
      [
        {
          loc: ["body", "offset"],
          msg: "Input should be greater than or equal to 0",
          type: "greater_than_equal",
        },
      ],
    ],
    [
      "unknown field on watch_getTransfers",
      "watch_getTransfers",
      { page: 2 },
      [{ loc: ["body", "page"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }],
    ],
    [
      "unknown field on watch_getTransfersByAddress",
      "watch_getTransfersByAddress",
      { addresses: `0x${"1".repeat(40)}`, sort: "desc" },
      [{ loc: ["body", "sort"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }],
    ],
    [
      "transfer type unknown",
      "watch_getTransfers",
      { transferType: "erc1155" },
      [
        {
          loc: ["body", "transferType"],
          msg: 'Input should be "erc20transfer", "erc721transfer", "trx" or null',
          type: "enum",
        },
      ],
    ],
    [
      "direction unknown",
      "watch_getTransfersByAddress",
      { addresses: `0x${"1".repeat(40)}`, transferDirection: "both" },
      [{ loc: ["body", "transferDirection"], msg: 'Input should be "to", "from" or null', type: "enum" }],
    ],
    [
      "address list empty",
      "watch_getTransfersByAddress",
      { addresses: [] },
      [{ loc: ["body", "addresses"], msg: "List should have at least 1 items", type: "too_short" }],
    ],
    [
      "address in a list malformed",
      "get_token_balances",
      { address: `0x${"1".repeat(40)}`, list_contract_address: ["0xnope"] },
      [{ loc: ["body", "list_contract_address", 0], msg: ADDRESS, type: "string_pattern_mismatch" }],
    ],
  ];
  for (const [title, route, body, detail] of cases) {
    test(title, async () => {
      const text = JSON.stringify(body, (_, v) =>
        typeof v === "bigint" ? (JSON as any).rawJSON(v.toString()) : v,
      );
      const response = await rest(route, text, true);
      expect(response.status).toBe(422);
      expect(response.json).toEqual({ detail });
    });
  }

  test("several errors are all reported", async () => {
    const response = await rest("watch_getTransfers", { limit: 501, offset: -1, extra: 1 });
    expect(response.status).toBe(422);
    expect(response.json.detail).toHaveLength(3);
    expect(response.json.detail.map((d: { loc: string[] }) => d.loc[1]).sort()).toEqual([
      "extra",
      "limit",
      "offset",
    ]);
  });
});

describe("the JSON-RPC envelope", () => {
  const rpc = (body: unknown, raw = false) => post(`${service}/node/jsonrpc`, body, { raw });
  test("an unknown method is a 200 JSON-RPC error -32601 naming it, as a node answers", async () => {
    const response = await rpc({ jsonrpc: "2.0", id: 1, method: "eth_mine", params: [] });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "the method eth_mine does not exist or is not available" },
    });
  });
  test("params by name are well formed: -32602 naming the problem, HTTP 200", async () => {
    const response = await rpc({ jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: { a: 1 } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message:
          "invalid params: eth_blockNumber takes its params by position (an array), not by name (an object)",
      },
    });
  });
  test("a missing method, a method that is not a string, params neither a list nor an object", async () => {
    expect((await rpc({ id: 1 })).json).toEqual({
      detail: [{ loc: ["body", "method"], msg: "Field required", type: "missing" }],
    });
    expect((await rpc({ method: 5 })).json).toEqual({
      detail: [{ loc: ["body", "method"], msg: "Input should be a valid string", type: "string_type" }],
    });
    for (const params of [5, "a", true]) {
      const malformed = await rpc({ method: "eth_blockNumber", params });
      expect(malformed.status).toBe(422);
      expect(malformed.json).toEqual({
        detail: [{ loc: ["body", "params"], msg: "Input should be a valid list", type: "list_type" }],
      });
    }
    expect((await rpc({ method: "eth_blockNumber", jsonrpc: 2 })).json).toEqual({
      detail: [{ loc: ["body", "jsonrpc"], msg: "Input should be a valid string", type: "string_type" }],
    });
  });
  test("empty body, malformed JSON, a scalar", async () => {
    expect((await rpc("", true)).json).toEqual({
      detail: [{ loc: ["body"], msg: "Field required", type: "missing" }],
    });
    const malformed = await rpc('{"method":', true);
    expect(malformed.status).toBe(422);
    expect(malformed.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    expect((await rpc(42)).json).toEqual({
      detail: [{ loc: ["body"], msg: "Input should be a valid object", type: "dict_type" }],
    });
  });
  test("bad params of a known method: -32602 naming the param", async () => {
    const cases: [unknown[], string][] = [
      [["0x1"], "invalid params: eth_getBlockByNumber takes 2 params (block, hydrated), got 1"],
      [["0x1", false, 3], "invalid params: eth_getBlockByNumber takes 2 params (block, hydrated), got 3"],
      [["soon", false], `invalid params: params[0] (block): ${BLOCK_STRING}`],
      [["latest", "yes"], "invalid params: params[1] (hydrated): Input should be a valid boolean"],
    ];
    for (const [params, message] of cases) {
      const response = await rpc({ jsonrpc: "2.0", id: 3, method: "eth_getBlockByNumber", params });
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message } });
    }
    const logs = await rpc({ id: 4, method: "eth_getLogs", params: [{ topics: [null, ["0x12"]] }] });
    expect(logs.json.error).toEqual({
      code: -32602,
      message: `invalid params: params[0].topics[1][0] (filter): ${HASH}`,
    });
  });
});

describe("no input gives a 500", () => {
  const hostile: string[] = [
    "null",
    "true",
    '"text"',
    "0",
    "-0",
    "1e999",
    "[]",
    "[[]]",
    "{}",
    '{"__proto__":{"number":1,"is_full_trx":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    `{"number":"${"9".repeat(5000)}","is_full_trx":true}`,
    `{"number":"0x${"f".repeat(5000)}","is_full_trx":true}`,
    `${"[".repeat(20000)}${"]".repeat(20000)}`,
    `{"a":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`,
    '{"number":"\\u0000","is_full_trx":false}',
    "\u0000\u0001\u0002",
    "\uFEFF{}",
    '{"method":"eth_getBlockByNumber","params":[{"$gt":1},null]}',
    '[{"method":"eth_blockNumber"},null,7,"x",[],{"method":null}]',
    '{"hash":null,"trx_hash":[],"number":{},"date":"9999-99-99","timestamp":-1,"addresses":[1]}',
  ];
  const paths = [
    ...Object.keys(ROUTES_WITH_BODY).map((n) => `/node/rest/${n}`),
    "/node/rest/eth_blockNumber",
    "/node/rest/net_version",
    "/node/jsonrpc",
    "/watch_filters/add",
    "/watch_filters/check",
    "/watch_filters/info",
  ];
  test(`${hostile.length} hostile bodies on ${paths.length} routes`, async () => {
    const statuses = new Map<number, number>();
    for (const path of paths) {
      for (const body of hostile) {
        const response = await post(`${service}${path}`, body, { raw: true });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status >= 500 && response.status !== 501) {
          throw new Error(
            `${path} answered ${response.status} to ${body.slice(0, 80)}: ${response.text.slice(0, 200)}`,
          );
        }
        expect(response.json).toBeDefined();
      }
    }
    expect([...statuses.keys()].every((s) => s < 500 || s === 501)).toBe(true);
  });
  test("wrong HTTP method and unknown paths: 404 JSON", async () => {
    const unknown = await post(`${service}/node/rest/eth_mine`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ detail: "Not Found" });
    const get = await fetch(`${service}/node/jsonrpc`);
    expect(get.status).toBe(404);
    expect(await get.json()).toEqual({ detail: "Not Found" });
  });
});
