/**
 * The one way deliveries leave the service: a POST to the endpoint's URL, with nothing a receiver can use to
 * reach inside the network or to hold the service's memory.
 *
 * - Without WEBHOOK_ALLOW_PRIVATE only `https://` to public addresses (addressRanges.ts). A literal address is
 *   checked before anything is sent; a name is checked where node:http connects, through our own `lookup`,
 *   so every connection's addresses are the ones checked: a name that resolved to a public address at
 *   registration and to 127.0.0.1 now (DNS rebinding) is refused at the connection.
 * - Redirects are never followed (node:http does not): a 3xx is a failure.
 * - At most `maxAnswerBytes` of the answer's body are read, then the socket is destroyed; the answer's
 *   headers are bounded by node:http's parser (a header flood fails the attempt).
 * - The whole attempt (lookup, connect, TLS, headers and body) ends within `timeoutMs`.
 * - Connections are kept alive between attempts to the same host, a bounded number of them.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { withTimeout } from "../timeout";
import { isPublicAddress } from "./addressRanges";

export type SendResult = "success" | "http_error" | "timeout" | "refused" | "network";

export interface SendOutcome {
  /** A 2xx within the time allowed. */
  ok: boolean;
  /** The answer's HTTP status, when one came. */
  status?: number;
  result: SendResult;
  /** Why it failed, for the endpoint's owner (webhook_deliveries.last_error). */
  error?: string;
  /** How long the attempt took. */
  ms: number;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}
/** A host name's addresses (default: the system resolver, every address). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DeliveryClientOptions {
  /** WEBHOOK_ALLOW_PRIVATE: `http://`, private, loopback and reserved addresses allowed. */
  allowPrivate: boolean;
  /** WEBHOOK_TIMEOUT_MS: the bound on one attempt, and on the resolution urlProblem does. */
  timeoutMs: number;
  /** The most of an answer's body read (default 4 KiB). */
  maxAnswerBytes?: number;
  lookup?: ResolveHost;
}

export interface DeliveryClient {
  /** Why `url` cannot be an endpoint (a sentence naming it), or undefined when it can. */
  urlProblem(url: string): Promise<string | undefined>;
  /** One attempt; never throws. */
  send(request: { url: string; headers: Record<string, string>; body: string }): Promise<SendOutcome>;
  /** Closes the kept connections. */
  close(): void;
}

const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024;
const MAX_URL_LENGTH = 2048;
/** The most of an answer's headers read; a receiver sending more fails the attempt (HPE_HEADER_OVERFLOW). */
const MAX_ANSWER_HEADER_BYTES = 16 * 1024;
/** Kept connections: per host (attempts to one host beyond it wait, within their time), and in all. */
const MAX_SOCKETS_PER_HOST = 16;
const MAX_SOCKETS = 256;
const MAX_IDLE_SOCKETS_PER_HOST = 4;
const IDLE_SOCKET_MS = 30_000;
/** How much of an answer's text an error quotes. */
const QUOTED_ANSWER_CHARS = 200;
const USER_AGENT = "chain-gateway-webhooks/1";
const REFUSED = "EWEBHOOKREFUSED";

/** A connection refused by our own check; node:http hands it back as the request's error. */
class RefusedAddressError extends Error {
  readonly code = REFUSED;
}

const systemLookup: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family,
  }));

/** A URL's host as an address or name: IPv6 without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function isLocalhost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/** What is wrong with `text` as an endpoint without resolving its host; the URL when nothing is. */
function parseEndpoint(text: string, allowPrivate: boolean): { problem: string } | { url: URL } {
  if (text.length > MAX_URL_LENGTH) return { problem: `the url is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "the url is not an absolute URL" };
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return {
      problem: allowPrivate
        ? "the url's scheme must be https or http"
        : "the url's scheme must be https (http:// is allowed only with WEBHOOK_ALLOW_PRIVATE=1)",
    };
  }
  if (url.username !== "" || url.password !== "") {
    return {
      problem: "the url must not hold credentials (user:password@): verify deliveries by their signature",
    };
  }
  if (allowPrivate) return { url };
  const host = hostOf(url);
  if (isLocalhost(host)) return { problem: `the url's host ${host} is this machine` };
  if (isIP(host) !== 0 && !isPublicAddress(host)) {
    return { problem: `the url's address ${host} is private, loopback or reserved` };
  }
  return { url };
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** An answer's text fit to quote: what was read of it, control characters out, cut short. */
function quote(bytes: Buffer): string {
  const text = bytes
    .toString("utf8")
    .replace(/\p{Cc}+/gu, " ")
    .trim();
  return text.length > QUOTED_ANSWER_CHARS ? `${text.slice(0, QUOTED_ANSWER_CHARS)}...` : text;
}

function answerOutcome(status: number, body: Buffer): Omit<SendOutcome, "ms"> {
  if (status >= 200 && status < 300) return { ok: true, status, result: "success" };
  const redirect = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
  const text = quote(body);
  return {
    ok: false,
    status,
    result: "http_error",
    error: `HTTP ${status}${redirect}${text ? `: ${text}` : ""}`,
  };
}

export function createDeliveryClient(options: DeliveryClientOptions): DeliveryClient {
  const { allowPrivate, timeoutMs } = options;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const resolve = options.lookup ?? systemLookup;
  const agentOptions = {
    keepAlive: true,
    maxSockets: MAX_SOCKETS_PER_HOST,
    maxTotalSockets: MAX_SOCKETS,
    maxFreeSockets: MAX_IDLE_SOCKETS_PER_HOST,
    timeout: IDLE_SOCKET_MS,
  };
  const agents = { "http:": new http.Agent(agentOptions), "https:": new https.Agent(agentOptions) };

  /** A name's addresses, every one of them public unless private ones are allowed. */
  async function resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    const addresses = await resolve(hostname);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
    }
    const refused = allowPrivate ? undefined : addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) {
      throw new RefusedAddressError(
        `${hostname} resolves to ${refused.address}, a private, loopback or reserved address`,
      );
    }
    return addresses;
  }

  /** node:http's `lookup`: called for each new connection to a name (Bun and Node ask with {all: true}). */
  const connectionLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolveChecked(hostname).then(
      (addresses) =>
        lookupOptions.all
          ? callback(null, addresses)
          : callback(null, addresses[0]!.address, addresses[0]!.family),
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };

  async function urlProblem(text: string): Promise<string | undefined> {
    const parsed = parseEndpoint(text, allowPrivate);
    if ("problem" in parsed) return parsed.problem;
    const host = hostOf(parsed.url);
    if (allowPrivate || isIP(host) !== 0) return undefined;
    try {
      await withTimeout(resolveChecked(host), timeoutMs, () => new Error("timed out"));
      return undefined;
    } catch (error) {
      if (error instanceof RefusedAddressError) return `the url's host ${error.message}`;
      return `the url's host ${host} does not resolve (${errorCode(error) ?? (error as Error).message})`;
    }
  }

  /** Sends `body` to `url` (already judged by parseEndpoint) and reads the answer, all within the deadline. */
  function attempt(
    url: URL,
    headers: Record<string, string>,
    body: string,
  ): Promise<Omit<SendOutcome, "ms">> {
    return new Promise((settle) => {
      let settled = false;
      let status: number | undefined;
      const kept: Buffer[] = [];
      let read = 0;
      let outgoing: http.ClientRequest | undefined;
      const finish = (outcome: Omit<SendOutcome, "ms">, keepConnection = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        // Whatever is left unread is not wanted: the connection goes with it.
        if (!keepConnection) outgoing?.destroy();
        settle(outcome);
      };
      /** The answer as far as it came: its status decides, when it has one. */
      const answered = (cut: string) => {
        if (status === undefined) return finish({ ok: false, result: "network", error: cut });
        const outcome = answerOutcome(status, Buffer.concat(kept));
        finish(outcome.ok ? outcome : { ...outcome, error: `${outcome.error} (${cut})` });
      };
      const deadline = setTimeout(() => {
        if (status === undefined)
          finish({ ok: false, result: "timeout", error: `no answer within ${timeoutMs} ms` });
        else answered(`answer not finished within ${timeoutMs} ms`);
      }, timeoutMs);
      outgoing = (url.protocol === "https:" ? https : http).request(
        {
          protocol: url.protocol,
          hostname: hostOf(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: "POST",
          agent: agents[url.protocol as "http:" | "https:"],
          lookup: connectionLookup,
          maxHeaderSize: MAX_ANSWER_HEADER_BYTES,
          headers: {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            ...headers,
            "content-length": Buffer.byteLength(body),
          },
        },
        (answer) => {
          status = answer.statusCode ?? 0;
          answer.on("data", (chunk: Buffer) => {
            if (settled) return;
            const room = maxAnswerBytes - read;
            // A copy of what is kept, so that a large chunk is not held by the part of it kept.
            if (room > 0) kept.push(Buffer.from(chunk.subarray(0, room)));
            read += chunk.length;
            if (read > maxAnswerBytes) answered(`answer cut at ${maxAnswerBytes} bytes`);
          });
          answer.on("end", () => finish(answerOutcome(status!, Buffer.concat(kept)), true));
          answer.on("error", () => answered("answer broken off"));
          answer.on("close", () => answered("answer broken off"));
        },
      );
      outgoing.on("error", (error: Error) => {
        const code = errorCode(error);
        if (code === REFUSED) return finish({ ok: false, result: "refused", error: error.message });
        if (status !== undefined) return answered("answer broken off");
        finish({ ok: false, result: "network", error: code ? `${code}: ${error.message}` : error.message });
      });
      outgoing.on("close", () => answered("connection closed"));
      outgoing.end(body);
    });
  }

  async function send(request: {
    url: string;
    headers: Record<string, string>;
    body: string;
  }): Promise<SendOutcome> {
    const started = performance.now();
    const parsed = parseEndpoint(request.url, allowPrivate);
    const outcome: Omit<SendOutcome, "ms"> =
      "problem" in parsed
        ? { ok: false, result: "refused", error: parsed.problem }
        : await attempt(parsed.url, request.headers, request.body);
    return { ...outcome, ms: Math.round(performance.now() - started) };
  }

  return {
    urlProblem,
    send,
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}
