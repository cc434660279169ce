/**
 * The one guarded-request path every route of ours takes, whatever its transport (REST, JSON-RPC, NDJSON
 * streams, watch filters):
 *
 *   request id -> read the body within MAX_BODY_BYTES -> authenticate -> admit (a caller without a whole
 *   token left is refused before anything is parsed) -> parse the JSON -> accept (the route checks it and
 *   says what it costs) -> charge the cost -> run -> answer
 *
 * and one catch, where the route's transport turns any error into its answer (http/answer.ts). Then the
 * HTTP metrics and, at debug level, an access log line.
 */
import type { Server } from "bun";
import type { Caller } from "../caller";
import {
  InternalError,
  PayloadTooLargeError,
  RateLimitedError,
  type ServiceError,
  toServiceError,
} from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import { jsonHeaders, parseBody, type Transport } from "./answer";
import type { Auth } from "./auth";
import type { RateLimiter } from "./rateLimit";

const REQUEST_ID = /^[\w.:-]{1,64}$/;

export type Handler = (request: Request, server: Server<unknown>) => Promise<Response>;

export interface RequestContext {
  caller: Caller;
  requestId: string;
}

export interface GuardedRoute<I> {
  /** The route's name in metrics and logs (its path). */
  name: string;
  transport: Transport;
  /** Whether the route takes a JSON body; without one nothing is read or parsed. */
  body: boolean;
  /**
   * The parsed body (undefined when the route takes none) checked and turned into the route's input, and
   * its cost in rate-limit tokens. Throws a ServiceError (a 422 naming what is wrong, a 413).
   */
  accept(body: unknown): { input: I; cost: number };
  run(input: I, context: RequestContext): Response | Promise<Response>;
  /** Told how each request ended (per-operation metrics): undefined when it was answered. */
  done?(error: ServiceError | undefined): void;
}

export interface Guard {
  route<I>(spec: GuardedRoute<I>): Handler;
}

export function createGuard(options: {
  auth: Auth;
  limiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  maxBodyBytes: number;
}): Guard {
  const { auth, limiter, metrics, log, maxBodyBytes } = options;
  const debug = log.level === "debug";
  const prefix = Math.random().toString(36).slice(2, 8);
  const httpRequests = metrics.httpRequests;
  let counter = 0;

  const requestIdOf = (request: Request) => {
    const given = request.headers.get("x-request-id");
    return given !== null && REQUEST_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
  };

  const tooLarge = () =>
    new PayloadTooLargeError(`request body exceeds the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES)`);

  async function readBody(request: Request): Promise<string> {
    // Bun refuses bodies past twice the limit before they are read (see listen() in app.ts); what it lets
    // through is measured here, after reading.
    let text: string;
    try {
      text = await request.text();
    } catch {
      throw tooLarge();
    }
    if (text.length > maxBodyBytes) throw tooLarge();
    return text;
  }

  /** The caller's bucket: its key, or its IP address in open mode. */
  const identityOf = (caller: Caller, request: Request, server: Server<unknown>) =>
    caller.keyHash ?? `ip:${server.requestIP(request)?.address ?? "unknown"}`;

  function limited<T>(caller: Caller, calls: number, work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof RateLimitedError)
        metrics.rateLimited.inc({ scope: caller.keyHash ? "key" : "ip" }, calls);
      throw error;
    }
  }

  return {
    route(spec) {
      return async (request, server) => {
        const started = debug ? performance.now() : 0;
        const requestId = requestIdOf(request);
        const seen: { text?: string; body?: unknown } = {};
        let response: Response;
        try {
          if (spec.body) seen.text = await readBody(request);
          const authenticated = auth.authenticate(request);
          const caller = authenticated instanceof Promise ? await authenticated : authenticated;
          const rate = caller.rate;
          const identity = rate ? identityOf(caller, request, server) : "";
          if (rate) limited(caller, 1, () => limiter.admit(identity, rate));
          if (spec.body) seen.body = parseBody(seen.text!);
          const { input, cost } = spec.accept(seen.body);
          if (rate) limited(caller, cost, () => limiter.take(identity, cost, rate));
          const run = spec.run(input, { caller, requestId });
          response = run instanceof Promise ? await run : run;
          spec.done?.(undefined);
        } catch (error) {
          const e = toServiceError(error);
          if (e instanceof InternalError) log.error("request failed", { route: spec.name, requestId, error });
          spec.done?.(e);
          response = spec.transport.refuse(e, seen, jsonHeaders(requestId));
        }
        httpRequests.labels(spec.name, String(response.status)).inc();
        if (debug) {
          log.debug("request", {
            requestId,
            route: spec.name,
            status: response.status,
            ms: Math.round((performance.now() - started) * 100) / 100,
            cache: response.headers.get("x-cache"),
          });
        }
        return response;
      };
    },
  };
}
