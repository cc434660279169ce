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

export async function postJsonRpc(url: string, body: string, timeoutMs: number): Promise<string> {
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
    throw new UpstreamUnavailableError(`${where} unreachable (${code})`, "unreachable", error);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
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
