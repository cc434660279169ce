/**
 * HTTP POST of JSON-RPC text to one node, with a deadline. Transport failures are typed here: unreachable,
 * broken off, HTTP 413 (a batch too large), HTTP 429 (the node's rate limit), other HTTP errors, timeouts.
 */
import {
  BatchTooLargeError,
  UpstreamRateLimitedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from "../errors";

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

/**
 * Fetch error codes of a connection that could not be made at all (refused, no such host or route): the
 * node is down, and its circuit opens at once. Anything else (a reset, a connection closed early) may be
 * one bad connection of a pool and counts as one failure.
 */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "FailedToOpenSocket",
]);

/** The URL with credentials and path hidden: node URLs often carry API keys. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? "/…" : ""}`;
  } catch {
    return "(invalid url)";
  }
}

const timedOut = (error: unknown) => (error as Error)?.name === "TimeoutError";

/** The body as text, refused past `maxBytes` (by its Content-Length, else as it is read). */
async function boundedText(response: Response, maxBytes: number, where: string): Promise<string> {
  const tooLarge = () =>
    new UpstreamUnavailableError(
      `${where} answered more than ${maxBytes} bytes (UPSTREAM_MAX_RESPONSE_MB)`,
      "protocol",
    );
  const length = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(length)) {
    if (length > maxBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    return response.text();
  }
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function postJsonRpc(
  url: string,
  body: string,
  timeoutMs: number,
  maxResponseBytes: number,
): Promise<string> {
  const where = `upstream ${redactUrl(url)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      body,
      headers: JSON_HEADERS,
      signal: AbortSignal.timeout(timeoutMs),
      // Pooled keep-alive connections; nodes are long-lived peers.
      keepalive: true,
    });
  } catch (error) {
    if (timedOut(error)) throw new UpstreamTimeoutError(`${where} did not answer within ${timeoutMs} ms`);
    const code = (error as { code?: string })?.code ?? (error as Error)?.name ?? "error";
    if (UNREACHABLE_CODES.has(code)) {
      throw new UpstreamUnavailableError(`${where} unreachable (${code})`, "unreachable", error);
    }
    throw new UpstreamUnavailableError(`${where} dropped the connection (${code})`, "broken", error);
  }
  let text: string;
  try {
    text = await boundedText(response, maxResponseBytes, where);
  } catch (error) {
    if (error instanceof UpstreamUnavailableError) throw error;
    if (timedOut(error)) throw new UpstreamTimeoutError(`${where} did not answer within ${timeoutMs} ms`);
    throw new UpstreamUnavailableError(`${where} broke off its response`, "broken", error);
  }
  const status = response.status;
  if (status === 413) throw new BatchTooLargeError(`${where} answered HTTP 413: the request is too large`);
  if (status === 429) throw new UpstreamRateLimitedError(`${where} answered HTTP 429: over its rate limit`);
  // Some nodes send JSON-RPC errors about the request with a 4xx; 5xx are the node's own trouble.
  if (status >= 500 || (status >= 300 && !/^\s*[[{]/.test(text))) {
    throw new UpstreamUnavailableError(`${where} answered HTTP ${status}`, "http");
  }
  return text;
}
