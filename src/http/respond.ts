/**
 * The HTTP edge's answers: raw JSON bodies with every header set once, and the REST form of every error.
 */
import {
  NodeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  type ValidationIssue,
} from "../errors";
import { parseJson, toJson } from "../json";

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

/** REST error body: `{detail}`, a message or FastAPI's list of issues. */
export function restError(error: ServiceError, headers: ResponseHeaders = jsonHeaders()): Response {
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  // The node's own error is a node answer: it was asked (and errors are never cached).
  if (error instanceof NodeError) headers["x-cache"] = "miss";
  return json({ detail: error.detail }, error.status, headers);
}

/**
 * A request body as JSON. Empty and malformed bodies are 422 issues at `["body"]`, as FastAPI gives them.
 */
export function parseBody(text: string): unknown {
  if (text.length === 0 || /^\s*$/.test(text)) {
    throw new RequestValidationError([{ loc: ["body"], msg: "Field required", type: "missing" }]);
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
