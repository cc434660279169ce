/**
 * The OpenAPI 3.1 document, built from the operation table and the route specs, and a Swagger UI page
 * whose assets come from the swagger-ui-dist package, so the docs render with no internet access.
 */
import { dirname, join } from "node:path";
import { Type as T, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { ChainFollower } from "../engine/chainFollower";
import type { NodePaths } from "../operations/nodePaths";
import type { Operation, StreamSpec } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { ErrorDetail, type ExampleRole, type FamilyExamples, HTTPValidationError } from "../schemas";
import { json } from "./answer";
import type { EsploraRouteDoc } from "./esplora/esploraRoutes";
import type { RouteSpec } from "./routes";
import { StreamBody } from "./stream";
import type { TronGridRouteDoc } from "./tronGrid/tronGridRoutes";

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

// ---------------------------------------------------------------------------------------------------
// Examples: "Try it out" sends a request about data the chain has (schemas.ts ExampleRole)

/** Where a role's value goes in the document; filled in as the document is served (docsRoutes). */
const roleToken = (role: string) => `@example:${role}@`;
const ROLE_TOKEN = /"@example:(\w+)@"/g;

/** The roles the followed head fills (roleValues below): every instance has them. */
const HEAD_ROLES: readonly ExampleRole[] = ["blockHash", "unixTime", "date"];

/**
 * Whether an example names only roles the served document fills: one the instance has no value for (an
 * account on a family with no dev chain seed to name) would reach the caller as its token, which no
 * operation takes, so that example is left out, as for params only the caller has.
 */
function fillable(value: unknown, roles: ReadonlySet<string>): boolean {
  for (const [, role] of JSON.stringify(value).matchAll(ROLE_TOKEN)) if (!roles.has(role!)) return false;
  return true;
}

const ownExample = (schema: Record<string, unknown>) =>
  typeof schema["x-example"] === "string" || (Array.isArray(schema.examples) && schema.examples.length > 0);

/** An example value with its `{"x-example": role}` members as their roles' tokens. */
function withRoles(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withRoles);
  if (typeof value !== "object" || value === null) return value;
  const role = (value as Record<string, unknown>)["x-example"];
  if (typeof role === "string") return roleToken(role);
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, withRoles(v)]));
}

/** An object's example: its required members'; undefined when one of them has none. */
function objectExample(schema: Record<string, any>): unknown {
  const out: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) {
    const value = exampleOf(schema.properties?.[name]);
    if (value === undefined) return undefined;
    out[name] = value;
  }
  return out;
}

/**
 * An example of a schema: its role, its first `examples`, else one made of its parts (an object's required
 * members, an array of one item where it needs one, a union's first branch that has one); undefined where
 * none can be made (a string with no example).
 */
function exampleOf(schema: TSchema | undefined): unknown {
  if (!schema) return undefined;
  const s = schema as Record<string, any>;
  if (ownExample(s)) return withRoles(s["x-example"] ? { "x-example": s["x-example"] } : s.examples[0]);
  if (s.const !== undefined) return s.const;
  for (const branch of s.anyOf ?? []) {
    const value = exampleOf(branch);
    if (value !== undefined) return value;
  }
  switch (s.type) {
    case "object":
      return objectExample(s);
    case "array": {
      if (!s.minItems) return [];
      const item = exampleOf(s.items);
      return item === undefined ? undefined : [item];
    }
    case "boolean":
      return false;
    case "integer":
    case "number":
      return s.minimum ?? 0;
    case "null":
      return null;
  }
  return undefined;
}

/**
 * An operation's example params: its REST example's (the same question), else its params' examples, the
 * optional ones while they carry one of their own; undefined where a required param has none.
 */
function paramsExample(op: Operation): unknown[] | undefined {
  if (op.rest) {
    const body = op.rest.body ? exampleOf(op.rest.body) : undefined;
    return op.rest.body && body === undefined ? undefined : op.rest.toParams(body);
  }
  const params: unknown[] = [];
  for (const param of op.params) {
    if (param.optional && !ownExample(param.schema as Record<string, unknown>)) break;
    const value = exampleOf(param.schema);
    if (value === undefined) return undefined;
    params.push(value);
  }
  return params;
}

/** The JSON-RPC request of an operation's example, where it has one the document can fill. */
function requestExample(op: Operation, roles: ReadonlySet<string>) {
  const params = paramsExample(op);
  return params && fillable(params, roles) ? { jsonrpc: "2.0", id: 1, method: op.method, params } : undefined;
}

/** A JSON body's content with its schema's example, where it has one the document can fill. */
function bodyContent(schema: TSchema, roles: ReadonlySet<string>) {
  const example = exampleOf(schema);
  const shown = example !== undefined && fillable(example, roles);
  return { "application/json": { schema, ...(shown ? { example } : {}) } };
}

const errorResponses = {
  "401": { description: "Missing or invalid API key", content: jsonContent(ErrorDetail) },
  "422": { description: "Validation Error", content: jsonContent(HTTPValidationError) },
};

const security = [{ api_key_query: [] }, { api_key_header: [] }];

/** The path items of the document, by path: each item's operations by HTTP method. */
type Paths = Record<string, Record<string, unknown>>;

/** What the document says of the instance beyond its table: the family's words, its subscriptions. */
export interface DocsAbout {
  /** What the instance serves, one sentence (the chain family's); unsaid: one made of what it serves. */
  summary?: string;
  /** The kinds eth_subscribe serves, in order (realtime/subscriptions.ts). */
  subscriptionKinds: readonly string[];
  /** What the examples name of the dev node (the chain family's). */
  examples?: FamilyExamples;
  /** What the instance refuses naming its chain, one sentence (http/app.ts `Unserved`); unsaid: nothing. */
  notServed?: string;
  /** The Esplora API's routes (http/esplora/), where the instance serves it. */
  esplora?: readonly EsploraRouteDoc[];
  /** The family's node API at the node's own paths (http/nodePaths.ts), where it has one. */
  nodePaths?: NodePaths;
  /** TronGrid's v1 API's routes (http/tronGrid/), where the instance serves it. */
  tronGrid?: readonly TronGridRouteDoc[];
}

/** The route specs' tags, as the document lists them. */
const ROUTE_TAGS: Record<string, string> = {
  watch_filters: "Address watch filters, polled per block",
  webhooks: "Watch-filter results pushed to the caller's endpoint, signed as Standard Webhooks",
};

/** A sentence of what the instance serves, from its table and routes, where its family gives none. */
function servedSummary(table: OperationTable, routes: RouteSpec[]): string {
  const rest = table.list.some((op) => op.rest !== undefined);
  const watch = routes.some((route) => route.tag === "watch_filters");
  return `Node methods over JSON-RPC (HTTP and WebSocket)${rest ? " and REST" : ""}${watch ? ", and address watch filters" : ""}.`;
}

/** The OpenAPI document of what the instance serves: its table's operations, its streams and routes. */
export function buildOpenApi(
  table: OperationTable,
  routes: RouteSpec[],
  streams: readonly StreamSpec[],
  healthSchema: TSchema,
  about: DocsAbout = { subscriptionKinds: [] },
) {
  const paths: Paths = {};
  const roles = new Set<string>([...HEAD_ROLES, ...Object.keys(about.examples ?? {})]);
  for (const part of [
    restPaths(table, roles),
    jsonRpcPaths(table, about, roles),
    specRoutePaths(routes, roles),
    streamPaths(table, streams, roles),
    healthPaths(healthSchema),
    esploraPaths(about.esplora ?? []),
    nodeApiPaths(about.nodePaths),
    tronGridPaths(about.tronGrid ?? []),
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
      description: about.summary ?? servedSummary(table, routes),
    },
    tags: [
      {
        name: "node",
        description: table.list.some((op) => op.rest)
          ? "Node data over REST and JSON-RPC"
          : "Node data over JSON-RPC",
      },
      { name: "health", description: "Liveness and readiness" },
      ...Object.entries(ROUTE_TAGS)
        .filter(([tag]) => routes.some((route) => route.tag === tag))
        .map(([name, description]) => ({ name, description })),
      ...(about.esplora?.length ? [{ name: "esplora", description: ESPLORA_TAG }] : []),
      ...(about.nodePaths ? [{ name: "node api", description: NODE_API_TAG }] : []),
      ...(about.tronGrid?.length ? [{ name: "trongrid", description: TRONGRID_TAG }] : []),
    ],
    paths: hoistedPaths,
    components: {
      schemas: components,
      securitySchemes: {
        api_key_query: { type: "apiKey", in: "query", name: "api_key" },
        api_key_header: { type: "apiKey", in: "header", name: "x-api-key" },
        ...(about.nodePaths || about.tronGrid?.length
          ? { tron_pro_api_key: { type: "apiKey", in: "header", name: "TRON-PRO-API-KEY" } }
          : {}),
      },
    },
  };
}

/** POST /node/rest/<name> of each operation with a REST form. */
function restPaths(table: OperationTable, roles: ReadonlySet<string>): Paths {
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
        ...(op.rest.body
          ? { requestBody: { required: true, content: bodyContent(op.rest.body, roles) } }
          : {}),
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
  // Each group the instance has (a family without data operations has no `Methods`).
  const groups = (["Methods", "NodeMethods"] as const)
    .map((group) => ({ group, names: literals(group) }))
    .filter(({ names }) => names.length > 0)
    .map(({ group, names }) => T.Union(names, { title: group }));
  const positional = T.Array(T.Unknown(), { default: [], description: "positional params" });
  const JsonRpcRequest = T.Object(
    {
      jsonrpc: T.Optional(T.String({ default: "2.0" })),
      id: T.Optional(T.Unknown({ default: 0, description: "echoed exactly: string, number or null" })),
      method: T.Union(groups),
      params: T.Optional(
        table.list.some((op) => op.byName)
          ? T.Union([positional, T.Record(T.String(), T.Unknown(), { description: "params by name" })])
          : positional,
      ),
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

/** What each subscription kind pushes, by its name (eth_subscribe's first param). */
const KIND_LINES: Record<string, string[]> = {
  newHeads: [
    '- `eth_subscribe ["newHeads"]`: every new canonical head, in order, with no gap; after a reorg, the new',
    "  branch's heads from the fork point.",
  ],
  logs: [
    '- `eth_subscribe ["logs", {address?, topics?, fromBlock?, toBlock?}]`: the logs of each new canonical',
    '  block; on a reorg the logs of the dropped blocks come again with `"removed": true`, then the new',
    "  branch's. A past fromBlock, `latest` and `pending` change nothing; a bound above the head keeps out the",
    "  blocks beyond it; a toBlock below the head names only past blocks: -32602 (use eth_getLogs).",
  ],
  newPendingTransactions: [
    '- `eth_subscribe ["newPendingTransactions", full?]`: passed through from an upstream that offers it (else',
    "  -32601): hashes, or with `true` full transactions where the node gives them.",
  ],
  watch_filters: [
    '- `eth_subscribe ["watch_filters", {"version": "v1" | "v2"}]`: for each newly processed block, one',
    "  notification per result of the caller's filters, exactly what `/watch_filters/check` (or `check_v2`)",
    "  returns for it, in the same order.",
  ],
};

/** The WebSocket on the JSON-RPC path, with the subscription kinds this instance serves. */
function websocketDescription(kinds: readonly string[]): string {
  return [
    "The same URL as POST, upgraded: `ws://<host>/node/jsonrpc?api_key=<key>` (or the `x-api-key` header at",
    "the upgrade; a missing or wrong key is a 401 before upgrading). Every method above works, singles and",
    "batches, with the same errors, cache and rate limits (one token per call); text that is not JSON gets",
    "a -32700 error and the socket stays open. Plus:",
    "",
    ...kinds.flatMap((kind) => KIND_LINES[kind] ?? [`- \`eth_subscribe ["${kind}"]\`.`]),
    "- `eth_unsubscribe [id]`: `true`, or `false` for an id this socket does not hold.",
    "",
    'Notifications: `{jsonrpc, method: "eth_subscription", params: {subscription, result}}`. Limits:',
    "WS_MAX_SUBSCRIPTIONS per socket and WS_MAX_CONNECTIONS per key (429 at the upgrade); a reader with more",
    "than WS_MAX_BUFFER_BYTES unsent is closed with 1008. Pinged every 30 s.",
  ].join("\n");
}

const JSON_RPC_ERRORS = [
  "Any other method is answered HTTP 200 with the JSON-RPC error -32601 (`the method X does not exist or is",
  "not available`), alone as in a batch, and never reaches a node; params by name (an object) are -32602.",
  "Only a malformed envelope is a 422.",
].join("\n");

/** What is refused, and how params may be given: by position always, by name where the methods take it. */
function errorsNote(table: OperationTable): string {
  const named = table.list.filter((op) => op.byName).map((op) => `\`${op.method}\``);
  if (named.length === 0) return JSON_RPC_ERRORS;
  const byName =
    named.length === table.list.length
      ? "params are given by position (an array) or by name (an object of the names above)."
      : `params by name (an object of the names above) are taken by ${named.join(", ")}, and -32602 for any other method.`;
  return [
    "Any other method is answered HTTP 200 with the JSON-RPC error -32601 (`the method X does not exist or is",
    `not available\`), alone as in a batch, and never reaches a node; ${byName} Only a malformed envelope is a 422.`,
  ].join("\n");
}

/** What the examples ask about: the dev node's seed where the family names one, and the followed head. */
function examplesNote(examples: FamilyExamples | undefined): string {
  if (examples?.account && examples.token && examples.transaction) {
    return [
      "Examples: one a method (pick it above the request body). They ask about what the dev chain of `npm start`",
      "holds (an account, a token and a transaction of its seed) and about the followed head (its hash, its time,",
      "its day). A write's example goes through once (then the node refuses it, as any node would); a method",
      "whose only param is an id another method makes (a filter's) has none.",
    ].join("\n");
  }
  return [
    "Examples: one a method whose params can be given one (pick it above the request body), about what every",
    "chain has (its first block, the followed head); a method whose params only the caller has (a transaction",
    "to decode or send, its id) has none.",
  ].join("\n");
}

/** /node/jsonrpc: POST (one call or a batch of the table's methods) and GET (the WebSocket upgrade). */
function jsonRpcPaths(table: OperationTable, about: DocsAbout, roles: ReadonlySet<string>): Paths {
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
    description: `Methods and their positional params:\n\n${methodList}\n\n${errorsNote(table)}${about.notServed ? ` ${about.notServed}` : ""}\n\n${examplesNote(about.examples)}`,
    operationId: "jsonrpc",
    security,
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: T.Union([JsonRpcRequest, T.Array(JsonRpcRequest, { minItems: 1 })]),
          // One per method, for "Try it out" to pick from.
          examples: Object.fromEntries(
            table.list.flatMap((op) => {
              const value = requestExample(op, roles);
              return value ? [[op.method, { summary: op.method, value }]] : [];
            }),
          ),
        },
      },
    },
    responses: {
      "200": {
        description: "The JSON-RPC response (errors in `error`), or one per batch element",
        content: jsonContent(T.Union([JsonRpcResponse, T.Array(JsonRpcResponse)])),
      },
      "401": { description: "Missing or invalid API key", content: jsonContent(JsonRpcResponse) },
      "422": {
        ...errorResponses["422"],
        description:
          "A malformed single request: not JSON, not an object, `method` missing or not a string, `jsonrpc` not a string, `params` neither an array nor an object",
      },
    },
  };
  const get = {
    tags: ["node"],
    summary: "JSON-RPC 2.0 over WebSocket (Upgrade: websocket), with eth_subscribe",
    description: websocketDescription(about.subscriptionKinds),
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

/** A route's params: those of its path (`{name}`), then its query's. */
function routeParameters(route: RouteSpec) {
  const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const inQuery = Object.entries(route.query?.properties ?? {}).map(([name, schema]) => ({
    name,
    in: "query",
    required: false,
    schema,
  }));
  return [...inPath, ...inQuery];
}

const SUCCESS = { 200: "Successful Response", 201: "Created", 202: "Accepted" } as const;

/** The routes described by their specs (watch filters, webhooks). */
function specRoutePaths(routes: RouteSpec[], roles: ReadonlySet<string>): Paths {
  const paths: Paths = {};
  for (const route of routes) {
    const status = route.status ?? 200;
    const responses: Record<string, unknown> = {
      [status]: { description: SUCCESS[status], content: jsonContent(route.response) },
      "401": errorResponses["401"],
    };
    if (route.body || route.query) responses["422"] = errorResponses["422"];
    for (const [status, description] of Object.entries(route.errors ?? {})) {
      responses[status] = { description, content: jsonContent(ErrorDetail) };
    }
    const parameters = routeParameters(route);
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    item[route.method.toLowerCase()] = {
      tags: [route.tag],
      summary: route.summary,
      operationId: route.operationId ?? route.path.slice(1).replace(/\//g, "_"),
      security,
      ...(parameters.length ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: bodyContent(route.body, roles) } } : {}),
      responses,
    };
  }
  return paths;
}

const ESPLORA_TAG =
  "An Esplora-compatible API (Blockstream's Esplora: its paths, shapes, status codes and plain-text errors; amounts in satoshis). The key may also ride in the path: /esplora/key/<KEY>/... (clients take a base URL only). Each route's cost in rate-limit tokens is in its description.";
const ESPLORA_CONTENT = {
  text: { "text/plain": { schema: { type: "string" } } },
  json: { "application/json": { schema: {} } },
  bytes: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
} as const;
const plainError = (description: string) => ({ description, content: ESPLORA_CONTENT.text });

/** The Esplora API's routes: their answers are Esplora's (API.md), plain text errors. */
function esploraPaths(routes: readonly EsploraRouteDoc[]): Paths {
  const paths: Paths = {};
  for (const route of routes) {
    const parameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    paths[route.path] = {
      ...paths[route.path],
      [route.method.toLowerCase()]: {
        tags: ["esplora"],
        summary: route.summary,
        description: `Costs ${route.cost} rate-limit token${route.cost === 1 ? "" : "s"}.`,
        operationId: `esplora_${route.method.toLowerCase()}${route.path.slice("/esplora".length).replace(/[^\w]+/g, "_")}`,
        security,
        ...(parameters.length ? { parameters } : {}),
        ...(route.method === "POST"
          ? { requestBody: { required: true, content: { "text/plain": { schema: { type: "string" } } } } }
          : {}),
        responses: {
          "200": { description: "Successful Response", content: ESPLORA_CONTENT[route.type] },
          "400": plainError('Esplora\'s refusal of the request ("Invalid hex string", ...), as plain text'),
          "401": plainError("No valid API key"),
          "404": plainError('Esplora\'s not found ("Transaction not found", ...), as plain text'),
          "429": plainError("Rate limited"),
        },
      },
    };
  }
  return paths;
}

const NODE_API_TAG =
  "The node's own HTTP API at its own paths (java-tron's /wallet/... and /walletsolidity/...), so its clients (tronweb) take this service's URL as the node's: an allow-list, answered as the node writes its answers (its errors too: HTTP 200 {\"Error\": ...}, {} for none), cached by the solidified block. The key may ride in TronGrid's TRON-PRO-API-KEY header. Paths that take or make a private key are refused (403), node administration too (404).";

/** The family's node API: POST with a JSON body, or GET with its members in the query (not writes). */
function nodeApiPaths(nodePaths: NodePaths | undefined): Paths {
  const paths: Paths = {};
  for (const path of nodePaths?.paths ?? []) {
    const operation = (method: "get" | "post") => ({
      tags: ["node api"],
      summary: path.summary,
      description: `Costs ${path.costNote ?? `${path.cost([{}])} rate-limit token(s)`}.`,
      operationId: `${method}${path.path.replace(/[^\w]+/g, "_")}`,
      security: [...security, { tron_pro_api_key: [] }],
      ...(method === "post"
        ? { requestBody: { content: { "application/json": { schema: { type: "object" } } } } }
        : {}),
      responses: {
        "200": {
          description: "The node's answer, as it writes it",
          content: { "application/json": { schema: {} } },
        },
        "400": { description: "A body the node could not take, named" },
        "401": { description: "No valid API key" },
        "429": { description: "Rate limited" },
      },
    });
    paths[path.path] = path.write
      ? { post: operation("post") }
      : { get: operation("get"), post: operation("post") };
  }
  return paths;
}

const TRONGRID_TAG =
  "TronGrid's v1 API (its paths, query parameters, envelope {data, success, meta}, fingerprint paging and errors {success: false, error, statusCode}), answered from the service's index of the chain and its node, so TronGrid's clients (tronweb's event calls) take this service's URL. The key may ride in TronGrid's TRON-PRO-API-KEY header, or in the path: /tron/key/<KEY>/v1/... (clients that take a base URL only). Each route's cost in rate-limit tokens is in its description.";
const TRONGRID_ERROR = {
  type: "object",
  properties: {
    success: { const: false },
    error: { type: "string" },
    statusCode: { type: "integer" },
  },
  required: ["success", "error", "statusCode"],
};
const TRONGRID_PAGE = {
  type: "object",
  properties: {
    data: { type: "array", items: { type: "object" } },
    success: { const: true },
    meta: {
      type: "object",
      properties: {
        at: { type: "integer", description: "when it answered, in ms" },
        page_size: { type: "integer" },
        fingerprint: { type: "string", description: "where there is a next page: its fingerprint" },
        links: { type: "object", properties: { next: { type: "string" } } },
      },
      required: ["at", "page_size"],
    },
  },
  required: ["data", "success", "meta"],
};
const tronGridError = (description: string) => ({
  description,
  content: { "application/json": { schema: TRONGRID_ERROR } },
});

/** What a TronGrid route costs, in words. */
function tronGridCost(route: TronGridRouteDoc): string {
  const tokens = (n: number) => `${n} rate-limit token${n === 1 ? "" : "s"}`;
  const byLimit =
    route.maxCost === route.cost ? "" : ` at the default limit, up to ${route.maxCost} at the largest`;
  return `Costs ${tokens(route.cost)}${byLimit}${route.charges ? `, and ${route.charges}` : ""}.`;
}

/** TronGrid's v1 API's routes: GET, TronGrid's envelope, TronGrid's error form. */
function tronGridPaths(routes: readonly TronGridRouteDoc[]): Paths {
  const paths: Paths = {};
  for (const route of routes) {
    const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const inQuery = route.query.map(({ name, description }) => ({
      name,
      in: "query",
      description,
      schema: { type: "string" },
    }));
    paths[route.path] = {
      get: {
        tags: ["trongrid"],
        summary: route.summary,
        description: tronGridCost(route),
        operationId: `trongrid${route.path.slice("/v1".length).replace(/[^\w]+/g, "_")}`,
        security: [...security, { tron_pro_api_key: [] }],
        parameters: [...inPath, ...inQuery],
        responses: {
          "200": {
            description: "TronGrid's envelope: the page's rows in data",
            content: { "application/json": { schema: TRONGRID_PAGE } },
          },
          "400": tronGridError(
            'A parameter TronGrid refuses, named ("A valid account address is required.", ...)',
          ),
          "401": tronGridError("No valid API key"),
          "404": tronGridError("Not found (a block the index does not hold)"),
          "429": tronGridError("Rate limited"),
        },
      },
    };
  }
  return paths;
}

/** The family's bulk streams: each line holds its operation's result for one block. */
function streamPaths(
  table: OperationTable,
  streams: readonly StreamSpec[],
  roles: ReadonlySet<string>,
): Paths {
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
        requestBody: { required: true, content: bodyContent(StreamBody, roles) },
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

/** What the document's examples name by role, now: the family's values and the followed head's. */
function roleValues(examples: {
  head: ChainFollower;
  family?: FamilyExamples;
}): Partial<Record<ExampleRole, string | number>> {
  const top = examples.head.headBlock();
  const values: Partial<Record<ExampleRole, string | number>> = { ...examples.family };
  if (top) values.blockHash = top.hash;
  // A time and a day the chain has blocks at: the head's (else now, which answers the head too).
  const time = top?.timestamp ?? Math.floor(Date.now() / 1000);
  values.unixTime = time;
  values.date = new Date(time * 1000).toISOString().slice(0, 10);
  return values;
}

export function docsRoutes(document: unknown, examples: { head: ChainFollower; family?: FamilyExamples }) {
  const assetDir = dirname(require.resolve("swagger-ui-dist/package.json"));
  const documentJson = JSON.stringify(document);
  /** The document with its examples' roles filled: the head moves, so at each request (a few replaces). */
  const served = () => {
    const values = roleValues(examples);
    return documentJson.replace(ROLE_TOKEN, (token, role: ExampleRole) =>
      values[role] === undefined ? token : JSON.stringify(values[role]),
    );
  };
  const app = new Elysia({ name: "docs" })
    .get("/swagger", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }))
    .get("/swagger/json", () => new Response(served(), { headers: { "content-type": "application/json" } }))
    .get("/swagger/assets/:file", ({ params }) => {
      const type = ASSETS.get(params.file);
      if (!type) return json({ detail: "Not Found" }, 404);
      return new Response(Bun.file(join(assetDir, params.file)), {
        headers: { "content-type": type, "cache-control": "public, max-age=86400" },
      });
    });
  return app;
}
