/**
 * The one guarded-request path every request takes, whatever carries it (REST, JSON-RPC over HTTP or
 * WebSocket, NDJSON streams, watch filters):
 *
 *   read the body within MAX_BODY_BYTES -> authenticate -> admit (a caller without a whole token left is
 *   refused before anything is parsed) -> parse the JSON -> accept (the route checks it and says what it
 *   costs) -> charge the cost -> run (charging more for work it finds as it goes) -> answer
 *
 * and one catch, where the route's transport turns any error into its answer (http/answer.ts). Over HTTP
 * each request does every step and is counted in the HTTP metrics; over a WebSocket the caller is
 * authenticated once, when the socket opens, and each message takes the steps from the size check on.
 */
import type { Server } from "bun";
import type { Caller } from "../caller";
import {
  InternalError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
} from "../errors";
import type { Logger } from "../log";
import type { Metrics, RefusalReason } from "../metrics";
import { jsonHeaders, parseBody, type Transport } from "./answer";
import type { Auth } from "./auth";
import type { RateLimiter } from "./rateLimit";

const REQUEST_ID = /^[\w.:-]{1,64}$/;

/** Why a body was refused, for /metrics: not JSON, nested too deep, or not what the route takes. */
function refusalOf(error: RequestValidationError): RefusalReason {
  const type = error.issues[0]?.type;
  return type === "json_invalid" || type === "missing"
    ? "malformed"
    : type === "json_too_deep"
      ? "too_deep"
      : "invalid";
}

export type Handler = (request: Request, server: Server<unknown>) => Promise<Response>;

/** Who a request comes from, once authenticated. */
export interface Session {
  caller: Caller;
  /** Its rate-limit bucket: its key, or its IP address in open mode. */
  identity: string;
}

export interface RequestContext {
  caller: Caller;
  /** Who the caller counts as (its Session's identity: its key, or its IP address in open mode). */
  readonly identity: string;
  requestId: string;
  /**
   * Charges tokens for work the route finds only while it runs (what it reads past what its cost covered),
   * as the charge step does: taken before that work, or a RateLimitedError (429) and the work not done.
   */
  charge(tokens: number): void | Promise<void>;
}

/** What a request got to before it was refused: its text once read, its value once parsed. */
export interface Seen {
  text?: string;
  body?: unknown;
  /** The HTTP request (absent for a WebSocket's message), for a route whose input is in its path. */
  request?: Request;
}

/** The steps a route adds to the path; `A` is its answer (a Response, or a WebSocket message). */
export interface Steps<I, A> {
  /** The route's name in metrics and logs. */
  name: string;
  /** Whether the route takes a JSON body; without one nothing is read or parsed. */
  body: boolean;
  /**
   * The fast path: the input and its cost straight from the body's text, when the route knows the text (it
   * has accepted it before), without parsing or checking it again; undefined sends it down the full path.
   * Both must give the same.
   */
  acceptText?(text: string): { input: I; cost: number | Promise<number> } | undefined;
  /**
   * The parsed body (undefined when the route takes none) checked and turned into the route's input, and
   * its cost in rate-limit tokens. Throws a ServiceError (a 422 naming what is wrong, a 413). `text` is the
   * body as read, for the fast path to learn it; `request` the HTTP request, for params in its path.
   */
  accept(
    body: unknown,
    text: string | undefined,
    request?: Request,
  ): { input: I; cost: number | Promise<number> };
  run(input: I, context: RequestContext): A | Promise<A>;
  /** The error as this route answers it. */
  refuse(error: ServiceError, seen: Seen, requestId: string): A;
  /** Told how each request ended (per-operation metrics): undefined when it was answered. */
  done?(error: ServiceError | undefined): void;
}

/** An HTTP route: its steps, answering errors through its transport. */
export interface GuardedRoute<I> extends Omit<Steps<I, Response>, "refuse"> {
  transport: Transport;
}

export interface Guard {
  route<I>(spec: GuardedRoute<I>): Handler;
  /** One message of a session already authenticated (a WebSocket's). */
  message<I, A>(steps: Steps<I, A>, session: Session, text: string, requestId: string): Promise<A>;
  /** The caller of an HTTP request (a WebSocket's upgrade), and its rate-limit bucket. */
  authenticate(request: Request, server: Server<unknown>): Session | Promise<Session>;
  /** A caller authenticated earlier, as the keys say now (http/auth.ts `recheck`); undefined: no longer. */
  recheck(caller: Caller): Caller | undefined;
  /** Called after every reading of the database's keys. */
  onKeysReloaded(listener: () => void): void;
  /** A new request id: the caller's `x-request-id` when sane. */
  requestId(request?: Request): string;
}

/** A caller without a key: its address is looked up only when asked for (a rate limit, a WebSocket's count). */
class AddressSession implements Session {
  #identity: string | undefined;
  constructor(
    readonly caller: Caller,
    private readonly request: Request,
    private readonly server: Server<unknown>,
  ) {}
  get identity(): string {
    this.#identity ??= `ip:${this.server.requestIP(this.request)?.address ?? "unknown"}`;
    return this.#identity;
  }
}

const sessionOf = (caller: Caller, request: Request, server: Server<unknown>): Session =>
  caller.keyHash !== null
    ? { caller, identity: caller.keyHash }
    : new AddressSession(caller, request, server);

/**
 * What a route's run is given: one object a request, its members on the prototype (no closures made per
 * request on the hot path). The identity is read only by a run that asks for it: a caller without a key has
 * its address looked up then.
 */
class RunContext implements RequestContext {
  readonly caller: Caller;
  constructor(
    private readonly session: Session,
    readonly requestId: string,
    private readonly take: (session: Session, tokens: number) => void | Promise<void>,
  ) {
    this.caller = session.caller;
  }
  get identity(): string {
    return this.session.identity;
  }
  charge(tokens: number): void | Promise<void> {
    return this.take(this.session, tokens);
  }
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

  const requestId = (request?: Request) => {
    const given = request?.headers.get("x-request-id");
    return given != null && REQUEST_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
  };

  const tooLarge = () =>
    new PayloadTooLargeError(`request body exceeds the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES)`);

  /** Synchronous for a known key (the hot path); a Promise when an unknown key makes keys reload. */
  function authenticate(request: Request, server: Server<unknown>): Session | Promise<Session> {
    const authenticated = auth.authenticate(request);
    return authenticated instanceof Promise
      ? authenticated.then((caller) => sessionOf(caller, request, server))
      : sessionOf(authenticated, request, server);
  }

  function limited(caller: Caller, calls: number, work: () => void | Promise<void>): void | Promise<void> {
    const count = (error: unknown) => {
      if (error instanceof RateLimitedError)
        metrics.rateLimited.inc({ scope: caller.keyHash ? "key" : "ip" }, calls);
      throw error;
    };
    try {
      const done = work();
      return done instanceof Promise ? done.catch(count) : undefined;
    } catch (error) {
      count(error);
    }
  }

  /**
   * From admission to the answer: the steps after the body is read and the caller known. Synchronous
   * when the route answers at once (a cache hit): no microtask turns on the hot path.
   */
  function pass<I, A>(steps: Steps<I, A>, session: Session, seen: Seen, requestId: string): A | Promise<A> {
    const caller = session.caller;
    const rate = caller.rate;
    if (rate) limited(caller, 1, () => limiter.admit(session.identity, rate));
    let accepted = steps.body ? steps.acceptText?.(seen.text!) : undefined;
    if (accepted === undefined) {
      if (steps.body) seen.body = parseBody(seen.text!);
      accepted = steps.accept(seen.body, seen.text, seen.request);
    }
    const { input, cost } = accepted;
    // A cost looked up first (a kept filter's range, in the database) is charged once known.
    if (cost instanceof Promise) return cost.then((known) => charge(steps, session, input, known, requestId));
    return charge(steps, session, input, cost, requestId);
  }

  /** `tokens` taken from the session's bucket (none for a caller without a rate), or a RateLimitedError. */
  function take(session: Session, tokens: number): void | Promise<void> {
    const { caller } = session;
    const rate = caller.rate;
    return rate && limited(caller, tokens, () => limiter.take(session.identity, tokens, rate));
  }

  function charge<I, A>(
    steps: Steps<I, A>,
    session: Session,
    input: I,
    cost: number,
    requestId: string,
  ): A | Promise<A> {
    const charged = take(session, cost);
    // Buckets shared by the fleet answer later: the run waits for the charge.
    if (charged instanceof Promise) return charged.then(() => finish(steps, input, session, requestId));
    return finish(steps, input, session, requestId);
  }

  function finish<I, A>(steps: Steps<I, A>, input: I, session: Session, requestId: string): A | Promise<A> {
    const run = steps.run(input, new RunContext(session, requestId, take));
    if (run instanceof Promise) {
      return run.then((answer) => {
        steps.done?.(undefined);
        return answer;
      });
    }
    steps.done?.(undefined);
    return run;
  }

  function refused<A>(steps: Steps<unknown, A>, error: unknown, seen: Seen, requestId: string): A {
    const e = toServiceError(error);
    if (e instanceof InternalError) log.error("request failed", { route: steps.name, requestId, error });
    if (e instanceof PayloadTooLargeError) metrics.refusedBodies.inc({ reason: "too_large" });
    else if (e instanceof RequestValidationError) metrics.refusedBodies.inc({ reason: refusalOf(e) });
    steps.done?.(e);
    return steps.refuse(e, seen, requestId);
  }

  return {
    requestId,
    authenticate,
    recheck: (caller) => auth.recheck(caller),
    onKeysReloaded: (listener) => auth.onReload(listener),

    route(spec) {
      const steps: Steps<unknown, Response> = {
        ...(spec as GuardedRoute<unknown>),
        refuse: (error, seen, id) => spec.transport.refuse(error, seen, jsonHeaders(id)),
      };
      return async (request, server) => {
        const started = debug ? performance.now() : 0;
        const id = requestId(request);
        const seen: Seen = { request };
        let response: Response;
        try {
          if (spec.body) {
            // Bun refuses bodies past twice the limit before they are read (see listen() in app.ts); what
            // it lets through is measured here, after reading.
            let text: string;
            try {
              text = await request.text();
            } catch {
              throw tooLarge();
            }
            // A body refused for its size is not read for its id either.
            if (text.length > maxBodyBytes) throw tooLarge();
            seen.text = text;
          }
          const authenticated = authenticate(request, server);
          const session = authenticated instanceof Promise ? await authenticated : authenticated;
          const answered = pass(steps, session, seen, id);
          response = answered instanceof Promise ? await answered : answered;
        } catch (error) {
          response = refused(steps, error, seen, id);
        }
        httpRequests.labels(spec.name, String(response.status)).inc();
        if (debug) {
          log.debug("request", {
            requestId: id,
            route: spec.name,
            status: response.status,
            ms: Math.round((performance.now() - started) * 100) / 100,
            cache: response.headers.get("x-cache"),
          });
        }
        return response;
      };
    },

    async message(steps, session, text, id) {
      const seen: Seen = { text };
      try {
        if (text.length > maxBodyBytes) throw tooLarge();
        return await pass(steps, session, seen, id);
      } catch (error) {
        return refused(steps as Steps<unknown, never>, error, seen, id);
      }
    },
  };
}
