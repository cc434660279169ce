/**
 * What every guarded route does before its handler: read the body within the size limit, authenticate,
 * charge the caller's rate limit; and after: a request id and the HTTP metrics.
 */
import { PayloadTooLargeError, RateLimitedError } from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { Auth, Caller } from "./auth";
import type { RateLimiter } from "./rateLimit";

const REQUEST_ID = /^[\w.:-]{1,64}$/;

export interface Edge {
  /** The caller's x-request-id when sane, else a new one. */
  requestId(request: Request): string;
  readBody(request: Request): Promise<string>;
  authenticate(request: Request): Promise<Caller>;
  /** Takes `calls` tokens from the caller's bucket; throws RateLimitedError. */
  charge(caller: Caller, ip: string | undefined, calls: number): void;
  /** Stamps the request id, counts the answer and logs it (debug level). */
  finish(route: string, requestId: string, started: number, response: Response): Response;
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
  let counter = 0;

  return {
    maxBatchLength: options.maxBatchLength,
    requestId(request) {
      const given = request.headers.get("x-request-id");
      return given !== null && REQUEST_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
    },
    async readBody(request) {
      const length = Number(request.headers.get("content-length") ?? 0);
      const tooLarge = () =>
        new PayloadTooLargeError(`request body exceeds the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES)`);
      if (length > maxBodyBytes) throw tooLarge();
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
    charge(caller, ip, calls) {
      try {
        limiter.take(caller.keyHash ?? `ip:${ip ?? "unknown"}`, calls, caller.rate);
      } catch (error) {
        if (error instanceof RateLimitedError)
          metrics.rateLimited.inc({ scope: caller.keyHash ? "key" : "ip" }, calls);
        throw error;
      }
    },
    finish(route, requestId, started, response) {
      response.headers.set("x-request-id", requestId);
      metrics.httpRequests.inc({ route, status: response.status });
      if (debug) {
        const ms = Math.round((performance.now() - started) * 100) / 100;
        log.debug("request", {
          requestId,
          route,
          status: response.status,
          ms,
          cache: response.headers.get("x-cache"),
        });
      }
      return response;
    },
  };
}
