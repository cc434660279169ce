/**
 * The one place where an error becomes an answer: a REST body `{detail}` (FastAPI's list of issues for a
 * 422) or a JSON-RPC error object inside an envelope that echoes the request's `jsonrpc` and `id`
 * (docs/interface.md §7). Also the JSON bodies every route answers with, headers set once.
 */
import {
  NodeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  type ValidationIssue,
} from "../errors";
import { fastJson, MAX_JSON_DEPTH, nestedDeeperThan, parseJson, toJson } from "../json";

export type ResponseHeaders = Record<string, string>;

/** The headers every JSON answer carries; handlers add x-cache, x-upstream and the like. */
export function jsonHeaders(requestId?: string): ResponseHeaders {
  return requestId === undefined
    ? { "content-type": "application/json" }
    : { "content-type": "application/json", "x-request-id": requestId };
}

export function rawJson(
  body: string | Uint8Array | ReadableStream,
  status: number,
  headers: ResponseHeaders,
): Response {
  return new Response(body, { status, headers });
}

export function json(value: unknown, status = 200, headers: ResponseHeaders = jsonHeaders()): Response {
  return new Response(toJson(value), { status, headers });
}

/** Headers an error adds to any answer: Retry-After on a rate limit; x-cache on a node's own error. */
function errorHeaders(error: ServiceError, headers: ResponseHeaders): ResponseHeaders {
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  // The node's own error is a node answer: it was asked (and errors are never cached).
  if (error instanceof NodeError) headers["x-cache"] = "miss";
  return headers;
}

/** REST error body: `{detail}`, a message or FastAPI's list of issues. */
export function restError(error: ServiceError, headers: ResponseHeaders = jsonHeaders()): Response {
  return json({ detail: error.detail }, error.status, errorHeaders(error, headers));
}

/** The `jsonrpc` and `id` members a response echoes, as JSON text. */
export interface RpcIdentity {
  jsonrpc: string;
  id: string;
}

const DEFAULT_JSONRPC = '"2.0"';
/** What answers a body that is not a request object (a batch refused whole, an element that is no object). */
export const NO_IDENTITY: RpcIdentity = { jsonrpc: DEFAULT_JSONRPC, id: "null" };

/** The echo of a request: its `id` exactly (absent: 0) and its `jsonrpc` when it is a string. */
export function rpcIdentity(value: unknown): RpcIdentity {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return NO_IDENTITY;
  const v = value as Record<string, unknown>;
  return {
    jsonrpc:
      typeof v.jsonrpc === "string" && v.jsonrpc !== "2.0" ? JSON.stringify(v.jsonrpc) : DEFAULT_JSONRPC,
    id: "id" in v ? (fastJson(v.id) ?? "null") : "0",
  };
}

/**
 * The echo of a request refused before or while it was parsed: from its parsed body, else from its text
 * when that is JSON, else `null`.
 */
export function refusedIdentity(request: { text?: string; body?: unknown }): RpcIdentity {
  let body = request.body;
  if (body === undefined && request.text !== undefined && !nestedDeeperThan(request.text)) {
    try {
      body = parseJson(request.text);
    } catch {}
  }
  return rpcIdentity(body);
}

/** A JSON-RPC error response. */
export function rpcErrorText(identity: RpcIdentity, error: ServiceError): string {
  return `{"jsonrpc":${identity.jsonrpc},"id":${identity.id},"error":${error.rpcErrorJson()}}`;
}

/**
 * How a transport answers an error that ends the whole request. `body` is the parsed request when it got
 * that far, else `text` is the raw body (or undefined when it was not read).
 */
export interface Transport {
  readonly name: "rest" | "jsonrpc";
  refuse(error: ServiceError, request: { text?: string; body?: unknown }, headers: ResponseHeaders): Response;
}

export const REST: Transport = {
  name: "rest",
  refuse: (error, _request, headers) => restError(error, headers),
};

export const JSON_RPC: Transport = {
  name: "jsonrpc",
  refuse(error, request, headers) {
    // A body that is not JSON, or a single request whose envelope is wrong: FastAPI's 422 as for REST.
    if (error instanceof RequestValidationError) return restError(error, headers);
    return rawJson(rpcErrorText(refusedIdentity(request), error), error.status, errorHeaders(error, headers));
  },
};

/**
 * A request body as JSON. Empty and malformed bodies are 422 issues at `["body"]`, as FastAPI gives them;
 * so is a body nested deeper than MAX_JSON_DEPTH, refused before it is parsed.
 */
export function parseBody(text: string): unknown {
  if (text.length === 0 || /^\s*$/.test(text)) {
    throw new RequestValidationError([{ loc: ["body"], msg: "Field required", type: "missing" }]);
  }
  if (nestedDeeperThan(text)) {
    throw new RequestValidationError([
      {
        loc: ["body"],
        msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused`,
        type: "json_too_deep",
      },
    ]);
  }
  try {
    return parseJson(text);
  } catch (error) {
    const issue: ValidationIssue = {
      loc: ["body"],
      msg: `JSON decode error: ${(error as Error).message.replace(/^JSON Parse error: /, "")}`,
      type: "json_invalid",
    };
    throw new RequestValidationError([issue]);
  }
}
