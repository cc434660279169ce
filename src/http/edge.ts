/**
 * What every guarded route does around its handler: a request id, the body read within the size limit,
 * authentication, the caller's rate limit; and after, the HTTP metrics and a debug-level access log.
 */
import type { Server } from "bun";
import { PayloadTooLargeError, RateLimitedError } from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { Auth, Caller } from "./auth";
import type { RateLimiter } from "./rateLimit";

const REQUEST_ID = /^[\w.:-]{1,64}$/;

export type Handler = (request: Request, server: Server<unknown>) => Promise<Response>;

export interface Edge {
  /** The caller's x-request-id when sane, else a new one. */
  requestId(request: Request): string;
  readBody(request: Request): Promise<string>;
  authenticate(request: Request): Caller | Promise<Caller>;
  /** Takes `calls` tokens from the caller's bucket (keyed by its key, or its IP in open mode). */
  charge(caller: Caller, request: Request, server: Server<unknown>, calls: number): void;
  /** Wraps a handler with the request id, the HTTP metrics and the access log. */
  route(
    name: string,
    handle: (request: Request, server: Server<unknown>, requestId: string) => Promise<Response>,
  ): Handler;
  readonly maxBatchLength: number;
}

export function createEdge(options: {
  auth: Auth;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  maxBodyBytes: number;
  maxBatchLength: number;
}): Edge {
  const { auth, limiter, metrics, log, maxBodyBytes } = options;
  const debug = log.level === "debug";
  const prefix = Math.random().toString(36).slice(2, 8);
  const httpRequests = metrics.httpRequests;
  let counter = 0;

  const requestId = (request: Request) => {
    const given = request.headers.get("x-request-id");
    return given !== null && REQUEST_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
  };

  return {
    maxBatchLength: options.maxBatchLength,
    requestId,
    async readBody(request) {
      // Bun refuses bodies past twice the limit before they are read (see listen()); what it lets through
      // is measured here, after reading.
      const tooLarge = () =>
        new PayloadTooLargeError(`request body exceeds the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES)`);
      let text: string;
      try {
        text = await request.text();
      } catch {
        throw tooLarge();
      }
      if (text.length > maxBodyBytes) throw tooLarge();
      return text;
    },
    authenticate: (request) => auth.authenticate(request),
    charge(caller, request, server, calls) {
      if (!caller.rate) return;
      const identity = caller.keyHash ?? `ip:${server.requestIP(request)?.address ?? "unknown"}`;
      try {
        limiter.take(identity, calls, caller.rate);
      } catch (error) {
        if (error instanceof RateLimitedError)
          metrics.rateLimited.inc({ scope: caller.keyHash ? "key" : "ip" }, calls);
        throw error;
      }
    },
    route(name, handle) {
      return async (request, server) => {
        const started = debug ? performance.now() : 0;
        const id = requestId(request);
        const response = await handle(request, server, id);
        httpRequests.labels(name, String(response.status)).inc();
        if (debug) {
          const ms = Math.round((performance.now() - started) * 100) / 100;
          log.debug("request", {
            requestId: id,
            route: name,
            status: response.status,
            ms,
            cache: response.headers.get("x-cache"),
          });
        }
        return response;
      };
    },
  };
}
