/**
 * The OpenAPI 3.1 document, built from the operation table and the route specs, and a Swagger UI page
 * whose assets come from the swagger-ui-dist package, so the docs render with no internet access.
 */
import { dirname, join } from "node:path";
import { Type as T, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { StreamSpec } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { ErrorDetail, HTTPValidationError } from "../schemas";
import { json } from "./answer";
import type { RouteSpec } from "./routes";
import { StreamBody } from "./stream";

export const API_VERSION = "0.1.0";

/**
 * The files served under /swagger/assets, by name, with their content types. A Map: the name comes from the
 * path, and a plain object would answer `constructor` or `__proto__` with what it inherits.
 */
const ASSETS = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Blockchain data access service - API</title>
<link rel="stylesheet" href="/swagger/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/swagger/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: "/swagger/json", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true });
</script>
</body>
</html>`;

/** Replaces every titled schema by a $ref to components.schemas, so each resource is named once. */
function hoist(schema: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hoist(s, components));
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = hoist(value, components);
  const title = (schema as { title?: unknown }).title;
  if (typeof title === "string") {
    components[title] = out;
    return { $ref: `#/components/schemas/${title}` };
  }
  return out;
}

const jsonContent = (schema: TSchema) => ({ "application/json": { schema } });

const errorResponses = {
  "401": { description: "Missing or invalid API key", content: jsonContent(ErrorDetail) },
  "422": { description: "Validation Error", content: jsonContent(HTTPValidationError) },
};

const security = [{ api_key_query: [] }, { api_key_header: [] }];

/** The path items of the document, by path: each item's operations by HTTP method. */
type Paths = Record<string, Record<string, unknown>>;

/** The OpenAPI document of what the instance serves: its table's operations, its streams and routes. */
export function buildOpenApi(
  table: OperationTable,
  routes: RouteSpec[],
  streams: readonly StreamSpec[],
  healthSchema: TSchema,
) {
  const paths: Paths = {};
  for (const part of [
    restPaths(table),
    jsonRpcPaths(table),
    specRoutePaths(routes),
    streamPaths(table, streams),
    healthPaths(healthSchema),
  ]) {
    for (const [path, item] of Object.entries(part)) paths[path] = { ...paths[path], ...item };
  }
  const components: Record<string, unknown> = {};
  const hoistedPaths = hoist(paths, components);
  return {
    openapi: "3.1.0",
    info: {
      title: "Blockchain data access service",
      version: API_VERSION,
      description:
        "Blocks, transactions, receipts, logs, traces, transfers, token balances and metadata over REST and JSON-RPC, and address watch filters.",
    },
    tags: [
      { name: "node", description: "Node data over REST and JSON-RPC" },
      { name: "health", description: "Liveness and readiness" },
      { name: "watch_filters", description: "Address watch filters, polled per block" },
    ],
    paths: hoistedPaths,
    components: {
      schemas: components,
      securitySchemes: {
        api_key_query: { type: "apiKey", in: "query", name: "api_key" },
        api_key_header: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
  };
}

/** POST /node/rest/<name> of each operation with a REST form. */
function restPaths(table: OperationTable): Paths {
  const paths: Paths = {};
  for (const op of table.list) {
    if (!op.rest) continue;
    paths[`/node/rest/${op.rest.name}`] = {
      post: {
        tags: ["node"],
        summary: op.rest.name,
        description: op.summary,
        operationId: op.rest.name,
        security,
        ...(op.rest.body ? { requestBody: { required: true, content: jsonContent(op.rest.body) } } : {}),
        responses: {
          "200": { description: "Successful Response", content: jsonContent(op.rest.response) },
          "400": {
            description: "The node refused the request; detail quotes it",
            content: jsonContent(ErrorDetail),
          },
          ...errorResponses,
          "502": { description: "No upstream node could answer", content: jsonContent(ErrorDetail) },
          "504": { description: "The upstream node timed out", content: jsonContent(ErrorDetail) },
        },
      },
    };
  }
  return paths;
}

/** A JSON-RPC request naming one of the table's methods, and the response. */
function jsonRpcSchemas(table: OperationTable) {
  const literals = (group: string) =>
    table.list.filter((op) => op.group === group).map((op) => T.Literal(op.method));
  const JsonRpcRequest = T.Object(
    {
      jsonrpc: T.Optional(T.String({ default: "2.0" })),
      id: T.Optional(T.Unknown({ default: 0, description: "echoed exactly: string, number or null" })),
      method: T.Union([
        T.Union(literals("Methods"), { title: "Methods" }),
        T.Union(literals("NodeMethods"), { title: "NodeMethods" }),
      ]),
      params: T.Optional(T.Array(T.Unknown(), { default: [], description: "positional params" })),
    },
    { title: "JsonRpcRequest" },
  );
  const JsonRpcResponse = T.Object(
    {
      jsonrpc: T.Optional(T.String({ default: "2.0" })),
      id: T.Optional(T.Unknown({ default: 0 })),
      result: T.Optional(T.Unknown()),
      error: T.Optional(
        T.Union([
          T.Object({ code: T.Integer(), message: T.String(), data: T.Optional(T.Unknown()) }),
          T.Null(),
        ]),
      ),
    },
    { title: "JsonRpcResponse" },
  );
  return { JsonRpcRequest, JsonRpcResponse };
}

const WEBSOCKET_DESCRIPTION = [
  "The same URL as POST, upgraded: `ws://<host>/node/jsonrpc?api_key=<key>` (or the `x-api-key` header at",
  "the upgrade; a missing or wrong key is a 401 before upgrading). Every method above works, singles and",
  "batches, with the same errors, cache and rate limits (one token per call); text that is not JSON gets",
  "a -32700 error and the socket stays open. Plus:",
  "",
  '- `eth_subscribe ["newHeads"]`: every new canonical head, in order, with no gap; after a reorg, the new',
  "  branch's heads from the fork point.",
  '- `eth_subscribe ["logs", {address?, topics?}]`: the logs of each new canonical block; on a reorg the',
  '  logs of the dropped blocks come again with `"removed": true`, then the new branch\'s.',
  '- `eth_subscribe ["newPendingTransactions"]`: passed through from an upstream that offers it (else',
  "  -32601).",
  '- `eth_subscribe ["watch_filters", {"version": "v1" | "v2"}]`: for each newly processed block, one',
  "  notification per result of the caller's filters, exactly what `/watch_filters/check` (or `check_v2`)",
  "  returns for it, in the same order.",
  "- `eth_unsubscribe [id]`: `true`, or `false` for an id this socket does not hold.",
  "",
  'Notifications: `{jsonrpc, method: "eth_subscription", params: {subscription, result}}`. Limits:',
  "WS_MAX_SUBSCRIPTIONS per socket and WS_MAX_CONNECTIONS per key (429 at the upgrade); a reader with more",
  "than WS_MAX_BUFFER_BYTES unsent is closed with 1008. Pinged every 30 s.",
].join("\n");

/** /node/jsonrpc: POST (one call or a batch of the table's methods) and GET (the WebSocket upgrade). */
function jsonRpcPaths(table: OperationTable): Paths {
  const { JsonRpcRequest, JsonRpcResponse } = jsonRpcSchemas(table);
  const methodList = table.list
    .map(
      (op) =>
        `- \`${op.method}(${op.params.map((p) => (p.optional ? `[${p.name}]` : p.name)).join(", ")})\`: ${op.summary}`,
    )
    .join("\n");
  const post = {
    tags: ["node"],
    summary: "JSON-RPC 2.0: one request, or a batch (an array) answered element by element",
    description: `Methods and their positional params:\n\n${methodList}`,
    operationId: "jsonrpc",
    security,
    requestBody: {
      required: true,
      content: jsonContent(T.Union([JsonRpcRequest, T.Array(JsonRpcRequest, { minItems: 1 })])),
    },
    responses: {
      "200": {
        description: "The JSON-RPC response (errors in `error`), or one per batch element",
        content: jsonContent(T.Union([JsonRpcResponse, T.Array(JsonRpcResponse)])),
      },
      "401": { description: "Missing or invalid API key", content: jsonContent(JsonRpcResponse) },
      "422": errorResponses["422"],
    },
  };
  const get = {
    tags: ["node"],
    summary: "JSON-RPC 2.0 over WebSocket (Upgrade: websocket), with eth_subscribe",
    description: WEBSOCKET_DESCRIPTION,
    operationId: "jsonrpc_websocket",
    security,
    responses: {
      "101": { description: "Switching Protocols: the socket is open" },
      "401": { description: "Missing or invalid API key", content: jsonContent(ErrorDetail) },
      "404": { description: "A GET that asks for no upgrade", content: jsonContent(ErrorDetail) },
      "429": {
        description: "The key already holds WS_MAX_CONNECTIONS sockets",
        content: jsonContent(ErrorDetail),
      },
    },
  };
  return { "/node/jsonrpc": { post, get } };
}

/** The routes described by their specs (watch filters). */
function specRoutePaths(routes: RouteSpec[]): Paths {
  const paths: Paths = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {
      "200": { description: "Successful Response", content: jsonContent(route.response) },
      "401": errorResponses["401"],
    };
    if (route.body) responses["422"] = errorResponses["422"];
    for (const [status, description] of Object.entries(route.errors ?? {})) {
      responses[status] = { description, content: jsonContent(ErrorDetail) };
    }
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    item[route.method.toLowerCase()] = {
      tags: [route.tag],
      summary: route.summary,
      operationId: route.path.slice(1).replace(/\//g, "_"),
      security,
      ...(route.body ? { requestBody: { required: true, content: jsonContent(route.body) } } : {}),
      responses,
    };
  }
  return paths;
}

/** The family's bulk streams: each line holds its operation's result for one block. */
function streamPaths(table: OperationTable, streams: readonly StreamSpec[]): Paths {
  const paths: Paths = {};
  for (const stream of streams) {
    const op = table.byMethod(stream.operation)!;
    const line = T.Object(
      {
        number: T.Integer(),
        [stream.member]: T.Optional(op.result),
        error: T.Optional(T.Object({ code: T.Integer(), message: T.String() })),
      },
      { description: "one line per block, in order; an error line ends the stream" },
    );
    paths[stream.path] = {
      post: {
        tags: ["node"],
        summary: stream.summary,
        description:
          "An extension for indexers. Lines come from the cache where present, else from the node, fetched a few blocks ahead of the reader (backpressure). Each block counts as one call against the rate limit.",
        operationId: stream.path.slice(1).replace(/\//g, "_"),
        security,
        requestBody: { required: true, content: jsonContent(StreamBody) },
        responses: {
          "200": {
            description: "NDJSON, one line per block",
            content: { "application/x-ndjson": { schema: line } },
          },
          ...errorResponses,
        },
      },
    };
  }
  return paths;
}

function healthPaths(healthSchema: TSchema): Paths {
  const paths: Paths = {};
  for (const path of ["/health", "/health/"]) {
    paths[path] = {
      get: {
        tags: ["health"],
        summary: "Service health: upstream, database and indexer (no key needed)",
        operationId: path === "/health" ? "health" : "health_slash",
        responses: { "200": { description: "Successful Response", content: jsonContent(healthSchema) } },
      },
    };
  }
  return paths;
}

export function docsRoutes(document: unknown) {
  const assetDir = dirname(require.resolve("swagger-ui-dist/package.json"));
  const documentJson = JSON.stringify(document);
  const app = new Elysia({ name: "docs" })
    .get("/swagger", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }))
    .get(
      "/swagger/json",
      () => new Response(documentJson, { headers: { "content-type": "application/json" } }),
    )
    .get("/swagger/assets/:file", ({ params }) => {
      const type = ASSETS.get(params.file);
      if (!type) return json({ detail: "Not Found" }, 404);
      return new Response(Bun.file(join(assetDir, params.file)), {
        headers: { "content-type": type, "cache-control": "public, max-age=86400" },
      });
    });
  return app;
}
