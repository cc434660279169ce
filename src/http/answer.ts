/**
 * The one place where an error becomes an answer: a REST body `{detail}` (FastAPI's list of issues for a
 * 422) or a JSON-RPC error object inside an envelope that echoes the request's `jsonrpc` and `id`
 * (docs/interface.md §7). Also the JSON bodies every route answers with, headers set once.
 */
import { NodeError, RequestValidationError, type ServiceError, type ValidationIssue } from "../errors";
import {
  fastJson,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
  parseJson,
  skipValue,
  skipWhitespace,
  toJson,
} from "../json";

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

/**
 * Headers an error adds to any answer: Retry-After where the error says when a retry may succeed (a rate
 * limit, a mempool still being read); x-cache on a node's own error.
 */
function errorHeaders(error: ServiceError, headers: ResponseHeaders): ResponseHeaders {
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
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
 * The echo of a request refused before or while it was parsed: from its parsed body when it got that far,
 * else read from its text (identityOfText), else `null`.
 */
export function refusedIdentity(request: { text?: string; body?: unknown }): RpcIdentity {
  if (request.body !== undefined) return rpcIdentity(request.body);
  return request.text === undefined ? NO_IDENTITY : identityOfText(request.text);
}

const LBRACE = 123;
const RBRACE = 125;
const QUOTE = 34;
const COLON = 58;
const COMMA = 44;
/** A key's text longer than this cannot name `id` or `jsonrpc`, even with every character escaped (six characters each: a backslash, `u`, four hex digits). */
const MAX_ENVELOPE_KEY_TEXT = 2 + 6 * "jsonrpc".length;

/** The name of the key whose text (quotes included) is `text[from, to)`, when it may be `id` or `jsonrpc`. */
function shortKey(text: string, from: number, to: number): string | undefined {
  if (to - from > MAX_ENVELOPE_KEY_TEXT) return undefined;
  const raw = text.slice(from + 1, to - 1);
  return raw.includes("\\") ? (JSON.parse(text.slice(from, to)) as string) : raw;
}

/**
 * The text of the last `id` and `jsonrpc` members (JSON.parse keeps the last of a name) of the object at
 * `start`, checked with the rest of the text by json.ts's strict scanner, which builds nothing; throws
 * SyntaxError where JSON.parse would.
 */
function envelopeTexts(text: string, start: number): { id?: string; jsonrpc?: string } {
  const found: { id?: string; jsonrpc?: string } = {};
  let i = skipWhitespace(text, start + 1);
  if (text.charCodeAt(i) !== RBRACE) {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) throw new SyntaxError(`expected a key at ${i}`);
      const keyEnd = skipValue(text, i);
      const key = shortKey(text, i, keyEnd);
      i = skipWhitespace(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) throw new SyntaxError(`expected a colon at ${i}`);
      const from = skipWhitespace(text, i + 1);
      const end = skipValue(text, from);
      if (key === "id" || key === "jsonrpc") found[key] = text.slice(from, end);
      i = skipWhitespace(text, end);
      if (text.charCodeAt(i) === RBRACE) break;
      if (text.charCodeAt(i) !== COMMA) throw new SyntaxError(`expected a comma at ${i}`);
      i = skipWhitespace(text, i + 1);
    }
  }
  if (skipWhitespace(text, i + 1) !== text.length) throw new SyntaxError("unexpected data after the value");
  return found;
}

/** The echo of a `jsonrpc` member's text: a string but "2.0" as JSON writes it; anything else, unbuilt: "2.0". */
function jsonrpcEcho(text: string | undefined): string {
  if (text === undefined || text === DEFAULT_JSONRPC || text.charCodeAt(0) !== QUOTE) return DEFAULT_JSONRPC;
  const value = JSON.parse(text) as string;
  return value === "2.0" ? DEFAULT_JSONRPC : JSON.stringify(value);
}

/**
 * The echo of a request read from its text, exactly as rpcIdentity gives it for the parsed text, without
 * parsing the text: a refusal (401, 429, 413, a parse error) must not cost what parsing a large body would.
 * Only a single request object has an id to echo; a batch (an array) or anything else echoes `null` unread.
 * The id is echoed only when the whole text is valid JSON, as when it was parsed: a request broken past its
 * id (in its params, say) echoes `null`. Nothing is built but the id and `jsonrpc` values, which the answer
 * writes back as JSON writes them (`1.0` as 1, escapes resolved, integers past 2^53 exact).
 */
function identityOfText(text: string): RpcIdentity {
  const start = skipWhitespace(text, 0);
  // The scanner recurses into what it checks: nesting too deep to parse is not scanned either.
  if (text.charCodeAt(start) !== LBRACE || nestedDeeperThan(text)) return NO_IDENTITY;
  let found: { id?: string; jsonrpc?: string };
  try {
    found = envelopeTexts(text, start);
  } catch {
    return NO_IDENTITY;
  }
  return {
    jsonrpc: jsonrpcEcho(found.jsonrpc),
    // Inside a list, so parseJson keeps an integer past 2^53 exact as it does anywhere in a body.
    id: found.id === undefined ? "0" : (fastJson((parseJson(`[${found.id}]`) as unknown[])[0]) ?? "null"),
  };
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
  readonly name: "rest" | "jsonrpc" | "esplora" | "trongrid";
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
 * The Esplora API's errors (http/esplora/): plain text, the message alone, with the error's status, as
 * Blockstream's Esplora answers them ("Transaction not found", 404; "Invalid hex string", 400).
 */
export const ESPLORA: Transport = {
  name: "esplora",
  refuse(error, _request, headers) {
    headers["content-type"] = "text/plain";
    return new Response(error.message, { status: error.status, headers: errorHeaders(error, headers) });
  },
};

/**
 * TronGrid's v1 API's errors (http/tronGrid/): `{"success": false, "error": <message>, "statusCode": <status>}`
 * with that status, as TronGrid answers them (a bad address: 400 "A valid account address is required.").
 */
export const TRONGRID: Transport = {
  name: "trongrid",
  refuse(error, _request, headers) {
    const body = JSON.stringify({ success: false, error: error.message, statusCode: error.status });
    headers["content-type"] = "application/json";
    return rawJson(body, error.status, errorHeaders(error, headers));
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
