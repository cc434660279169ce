/** HTTP POST of JSON-RPC text to one node, with a deadline. */
import { UpstreamTimeoutError, UpstreamUnavailableError } from "../errors";

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

export async function postJsonRpc(url: string, body: string, timeoutMs: number): Promise<string> {
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
    if ((error as Error)?.name === "TimeoutError") {
      throw new UpstreamTimeoutError(`upstream ${redactUrl(url)} did not answer within ${timeoutMs} ms`);
    }
    const code = (error as { code?: string })?.code ?? (error as Error)?.name ?? "error";
    throw new UpstreamUnavailableError(`upstream ${redactUrl(url)} unreachable (${code})`, error);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if ((error as Error)?.name === "TimeoutError") {
      throw new UpstreamTimeoutError(`upstream ${redactUrl(url)} did not answer within ${timeoutMs} ms`);
    }
    throw new UpstreamUnavailableError(`upstream ${redactUrl(url)} broke off its response`, error);
  }
  // Some nodes send JSON-RPC errors about the request with a 4xx; 429 and 5xx are the node's own trouble.
  if (
    response.status === 429 ||
    response.status >= 500 ||
    (response.status >= 300 && !/^\s*[[{]/.test(text))
  ) {
    throw new UpstreamUnavailableError(`upstream ${redactUrl(url)} answered HTTP ${response.status}`);
  }
  return text;
}
