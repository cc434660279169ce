/**
 * HTTP POST of JSON-RPC text to one node, with a deadline. Transport failures are typed here: unreachable,
 * broken off, HTTP 413 (a batch too large), HTTP 429 (the node's rate limit), HTTP 401/403 (credentials),
 * other HTTP errors, timeouts. Credentials in the URL are sent as HTTP Basic auth and never shown.
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

/** HTTP toward one node: its URL without credentials, which go in an Authorization header instead. */
export interface NodeHttp {
  /** The URL as logs, /health and errors may show it (redactUrl). */
  readonly redactedUrl: string;
  /**
   * POSTs JSON-RPC text and gives the answer's text: a JSON-RPC response (or batch) the caller decodes, or
   * a typed failure. `signal` ends it early (a long-poll stopped).
   */
  post(body: string, timeoutMs: number, signal?: AbortSignal): Promise<string>;
  /**
   * POSTs a JSON body to another URL of the same node (a path of its own API: NodeEndpoints.pathUrl) with
   * the same headers, and gives the answer's JSON text as the node wrote it, or a typed failure.
   */
  postTo(url: string, body: string, timeoutMs: number): Promise<string>;
}

/**
 * The URL without its userinfo, and that userinfo as an HTTP Basic Authorization header (Bitcoin Core's
 * `-rpcuser`/`-rpcpassword`). Done here rather than left to fetch: what fetch does with userinfo is its
 * own choice, and a URL that still carries it could show up in a fetch error.
 */
export function splitCredentials(url: string): { url: string; authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  if (parsed.username === "" && parsed.password === "") return { url };
  // The URL escapes them (an "@" in a password is %40); Basic auth sends them as written.
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  return {
    url: parsed.href,
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
  };
}

/** A JSON object or array: what a JSON-RPC response (or batch) starts with. */
const JSON_BODY = /^\s*[[{]/;
/** How much of a busy node's refusal goes into the error's message. */
const BUSY_TEXT_MAX = 80;

export function createNodeHttp(options: {
  url: string;
  /** The largest answer read (UPSTREAM_MAX_RESPONSE_MB). */
  maxResponseBytes: number;
  /** The node answers its JSON-RPC errors with HTTP error statuses (NodeProtocol.errorsWithHttpStatus). */
  errorsWithHttpStatus?: boolean;
  /** The body of the node's refusal when its request queue is full (NodeProtocol.busyAnswer). */
  busyAnswer?: RegExp;
  /** Headers every request carries (a provider's key: NodeEndpoints.headers). */
  headers?: Readonly<Record<string, string>>;
}): NodeHttp {
  const { url, authorization } = splitCredentials(options.url);
  const headers: Record<string, string> = { ...JSON_HEADERS, ...options.headers };
  if (authorization) headers.authorization = authorization;
  const where = `upstream ${redactUrl(url)}`;

  function post(body: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    return exchange(url, body, timeoutMs, signal);
  }

  async function exchange(
    target: string,
    body: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<string> {
    const deadline = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(target, {
        method: "POST",
        body,
        headers,
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
        // Pooled keep-alive connections; nodes are long-lived peers.
        keepalive: true,
      });
    } catch (error) {
      throw fetchFailure(error, where, timeoutMs);
    }
    let text: string;
    try {
      text = await boundedText(response, options.maxResponseBytes, where);
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) throw error;
      if (timedOut(error)) throw new UpstreamTimeoutError(`${where} did not answer within ${timeoutMs} ms`);
      throw new UpstreamUnavailableError(`${where} broke off its response`, "broken", error);
    }
    const status = response.status;
    // The node's own JSON-RPC answer, whatever the status it came with.
    if (status >= 300 && options.errorsWithHttpStatus && JSON_BODY.test(text)) return text;
    if (status === 413) throw new BatchTooLargeError(`${where} answered HTTP 413: the request is too large`);
    if (status === 429) throw new UpstreamRateLimitedError(`${where} answered HTTP 429: over its rate limit`);
    if (status === 401 || status === 403) {
      throw new UpstreamUnavailableError(
        `${where} answered HTTP ${status}: check the credentials of this upstream in UPSTREAM_URLS`,
        "http",
      );
    }
    if (status >= 500 && options.busyAnswer?.test(text)) {
      throw new UpstreamUnavailableError(`${where} is busy: ${text.slice(0, BUSY_TEXT_MAX)}`, "saturated");
    }
    // Some nodes send JSON-RPC errors about the request with a 4xx; 5xx are the node's own trouble.
    if (status >= 500 || (status >= 300 && !JSON_BODY.test(text))) {
      throw new UpstreamUnavailableError(`${where} answered HTTP ${status}`, "http");
    }
    return text;
  }

  return {
    redactedUrl: redactUrl(url),
    post,
    postTo: (target, body, timeoutMs) => exchange(splitCredentials(target).url, body, timeoutMs),
  };
}

/** A fetch that failed before any answer, typed: timed out, never connected, or dropped. */
function fetchFailure(error: unknown, where: string, timeoutMs: number): Error {
  if (timedOut(error)) return new UpstreamTimeoutError(`${where} did not answer within ${timeoutMs} ms`);
  const code = (error as { code?: string })?.code ?? (error as Error)?.name ?? "error";
  if (UNREACHABLE_CODES.has(code)) {
    return new UpstreamUnavailableError(`${where} unreachable (${code})`, "unreachable", error);
  }
  return new UpstreamUnavailableError(`${where} dropped the connection (${code})`, "broken", error);
}
