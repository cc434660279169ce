/** The OpenAPI document comes from the operation table; the docs page needs no internet access. */
import { beforeAll, describe, expect, test } from "bun:test";
import { startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

let service: string;
let doc: any;

beforeAll(async () => {
  const { anvil } = await fixtureChain();
  service = (await startTestService({ upstreamUrls: [anvil.url] })).url;
  doc = await (await fetch(`${service}/swagger/json`)).json();
});

const REST_ROUTES = [
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_blockNumber",
  "watch_getBlockNumberByTimestamp",
  "net_version",
  "watch_getStatsByDay",
  "watch_getBlockNumbersByDay",
  "eth_getLogs",
  "eth_getTransactionByHash",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getBlockTransactionCountByNumber",
  "eth_getBlockTransactionCountByHash",
  "ext_getBlockReceipts",
  "eth_getTransactionReceipt",
  "get_token_balances",
  "get_token_metadata",
  "trace_block",
  "trace_transaction",
  "watch_getTransfersByAddress",
  "watch_getTransfers",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
];

function resolve(schema: any): any {
  if (schema?.$ref) return doc.components.schemas[schema.$ref.split("/").pop()];
  return schema;
}

describe("the OpenAPI document", () => {
  test("is OpenAPI 3.1.0, version 0.1.0, with the four tags", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("0.1.0");
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual([
      "node",
      "health",
      "watch_filters",
      "webhooks",
    ]);
  });

  test("has no TronGrid v1 routes, nor their key header, on an EVM instance", () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/v1/") || p.startsWith("/tron/"))).toEqual([]);
    expect(doc.components.securitySchemes.tron_pro_api_key).toBeUndefined();
  });

  test("has exactly the 23 REST routes, each a POST tagged node with its responses", () => {
    const rest = Object.keys(doc.paths).filter((p) => p.startsWith("/node/rest/"));
    expect(rest.sort()).toEqual(REST_ROUTES.map((r) => `/node/rest/${r}`).sort());
    for (const name of REST_ROUTES) {
      const op = doc.paths[`/node/rest/${name}`].post;
      expect(op.tags).toEqual(["node"]);
      expect(op.responses["200"].content["application/json"].schema).toBeDefined();
      expect(resolve(op.responses["422"].content["application/json"].schema).properties.detail).toBeDefined();
      const bodyless = name === "eth_blockNumber" || name === "net_version";
      expect(op.requestBody === undefined).toBe(bodyless);
    }
  });

  test("carries the REST body schemas (docs/interface.md §2)", () => {
    const body = (name: string) =>
      doc.paths[`/node/rest/${name}`].post.requestBody.content["application/json"].schema;
    expect(body("eth_getBlockByNumber").required).toEqual(["number", "is_full_trx"]);
    expect(body("watch_getBlockNumbersByDay").properties.date.pattern).toBe("^\\d{4}-\\d{2}-\\d{2}$");
    const transfers = body("watch_getTransfersByAddress");
    expect(transfers.additionalProperties).toBe(false);
    expect(transfers.required).toEqual(["addresses"]);
    expect(transfers.properties.limit.anyOf[0]).toMatchObject({ type: "integer", minimum: 0, maximum: 500 });
    expect(body("watch_getTransfers").required).toBeUndefined();
    expect(body("get_token_balances").required).toEqual(["address", "list_contract_address"]);
  });

  test("names the resources (docs/interface.md §4.3) once, in components", () => {
    for (const name of [
      "Block",
      "Transaction",
      "Receipt",
      "Log",
      "LogOut",
      "Trace",
      "Transfer",
      "TokenBalanceByAddress",
      "TokenMetadataOut",
      "FilterInfo",
      "FilterResult",
      "HTTPValidationError",
      "JsonRpcRequest",
      "JsonRpcResponse",
    ]) {
      expect(doc.components.schemas[name]).toBeDefined();
    }
    const receipt =
      doc.paths["/node/rest/eth_getTransactionReceipt"].post.responses["200"].content["application/json"]
        .schema;
    expect(receipt.anyOf[0]).toMatchObject({
      type: "array",
      items: { $ref: "#/components/schemas/Receipt" },
    });
  });

  test("describes JSON-RPC with both method lists, the watch filters and health", () => {
    const request = doc.components.schemas.JsonRpcRequest;
    expect(resolve(request.properties.method.anyOf[0]).anyOf).toHaveLength(23);
    expect(resolve(request.properties.method.anyOf[1]).anyOf).toHaveLength(38);
    for (const [path, method] of [
      ["/watch_filters/lastBlockNumber", "get"],
      ["/watch_filters/add", "post"],
      ["/watch_filters/check", "post"],
      ["/watch_filters/check_v2", "post"],
      ["/watch_filters/remove", "delete"],
      ["/watch_filters/info", "post"],
      ["/watch_filters/all", "post"],
    ] as const) {
      expect(doc.paths[path][method].tags).toEqual(["watch_filters"]);
    }
    expect(doc.paths["/health"].get.tags).toEqual(["health"]);
    expect(doc.paths["/health/"].get.tags).toEqual(["health"]);
    // A method not served is a JSON-RPC error, not a 422 (docs/interface.md §3.4).
    const post = doc.paths["/node/jsonrpc"].post;
    expect(post.description).toContain("HTTP 200 with the JSON-RPC error -32601");
    expect(post.responses["422"].description).toStartWith("A malformed single request");
  });

  test("describes the webhook routes (docs/interface.md §18.1): their params, statuses and examples", () => {
    const operations = [
      ["/webhooks", "post", "webhooks_create", "201"],
      ["/webhooks", "get", "webhooks_list", "200"],
      ["/webhooks/{id}", "get", "webhooks_get", "200"],
      ["/webhooks/{id}", "delete", "webhooks_delete", "200"],
      ["/webhooks/{id}/rotate", "post", "webhooks_rotate", "200"],
      ["/webhooks/{id}/test", "post", "webhooks_test", "202"],
      ["/webhooks/{id}/deliveries", "get", "webhooks_deliveries", "200"],
      ["/webhooks/{id}/deliveries/{delivery}/redeliver", "post", "webhooks_redeliver", "202"],
    ] as const;
    expect(
      Object.keys(doc.paths)
        .filter((p) => p.startsWith("/webhooks"))
        .sort(),
    ).toEqual([...new Set(operations.map(([path]) => path))].sort());
    for (const [path, method, operationId, status] of operations) {
      const operation = doc.paths[path][method];
      expect({ path, method, tags: operation.tags, operationId: operation.operationId }).toEqual({
        path,
        method,
        tags: ["webhooks"],
        operationId,
      });
      expect(Object.keys(operation.responses)[0]).toBe(status);
      const inPath = (operation.parameters ?? []).filter((p: { in: string }) => p.in === "path");
      expect(inPath.map((p: { name: string }) => p.name)).toEqual(
        [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
      );
    }
    const create = doc.paths["/webhooks"].post;
    expect(create.requestBody.content["application/json"].example).toEqual({
      url: "https://deposits.example.com/hooks/chain",
    });
    expect(create.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/WebhookWithSecret",
    });
    expect(Object.keys(create.responses).sort()).toEqual(["201", "401", "422", "429"]);
    const query = doc.paths["/webhooks/{id}/deliveries"].get.parameters.filter(
      (p: { in: string }) => p.in === "query",
    );
    expect(
      query.map((p: { name: string; schema: { maximum?: number } }) => [p.name, p.schema.maximum]),
    ).toEqual([
      ["limit", 100],
      ["before", undefined],
    ]);
    const delivery = doc.components.schemas.WebhookDelivery;
    expect(delivery.properties.id.examples).toEqual(["msg_01JDQ3W5M8K2N7P4R6T9V0X1YZ"]);
    expect(doc.components.schemas.Webhook.properties.secret).toBeUndefined();
  });

  test("describes the WebSocket on the JSON-RPC path, its subscriptions and limits", () => {
    const ws = doc.paths["/node/jsonrpc"].get;
    expect(Object.keys(ws.responses).sort()).toEqual(["101", "401", "404", "429"]);
    for (const kind of ["newHeads", "logs", "newPendingTransactions", "watch_filters", "eth_unsubscribe"]) {
      expect(ws.description).toContain(kind);
    }
    for (const limit of ["WS_MAX_SUBSCRIPTIONS", "WS_MAX_CONNECTIONS", "WS_MAX_BUFFER_BYTES"]) {
      expect(ws.description).toContain(limit);
    }
  });
});

describe("the docs page", () => {
  test("loads every asset from this service, none from the internet", async () => {
    const page = await (await fetch(`${service}/swagger`)).text();
    expect(page).toContain("SwaggerUIBundle");
    const refs = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref.startsWith("/")).toBe(true);
      const asset = await fetch(`${service}${ref}`);
      expect(asset.status).toBe(200);
      const file = Bun.file(`node_modules/swagger-ui-dist/${ref.split("/").pop()}`);
      expect((await asset.arrayBuffer()).byteLength).toBe(file.size);
    }
    expect(page).toContain('url: "/swagger/json"');
  });
});
