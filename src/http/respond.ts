/** The HTTP edge's answers: raw JSON bodies and the REST form of every error. */
import {
  NodeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  type ValidationIssue,
} from "../errors";
import { parseJson, toJson } from "../json";

export const JSON_CONTENT_TYPE = "application/json";
const JSON_HEADERS = { "content-type": JSON_CONTENT_TYPE };

export function rawJson(
  raw: string | Uint8Array | Blob,
  status = 200,
  headers?: Record<string, string>,
): Response {
  return new Response(raw, { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS });
}

export function json(value: unknown, status = 200, headers?: Record<string, string>): Response {
  return rawJson(toJson(value), status, headers);
}

/** REST error body: `{detail}`, a message or FastAPI's list of issues. */
export function restError(error: ServiceError): Response {
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  if (error instanceof NodeError) headers["x-cache"] = "miss";
  return json({ detail: error.detail }, error.status, headers);
}

/**
 * A request body as JSON. Empty and malformed bodies are 422 issues at `["body"]`, as FastAPI gives them.
 */
export function parseBody(text: string): unknown {
  if (text.trim() === "") {
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
