/**
 * Every failure the service reports is one of these classes. Each carries its JSON-RPC code, the HTTP
 * status a REST caller sees and whether retrying may help; only http/answer.ts turns them into answers.
 */

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

interface ServiceErrorOptions {
  code: number;
  status: number;
  retryable?: boolean;
  /** Seconds after which a retry may succeed (a Retry-After header); unsaid: none is given. */
  retryAfterSeconds?: number;
  data?: unknown;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly code: number;
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly data: unknown;

  constructor(message: string, options: ServiceErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.data = options.data;
  }

  /** The `detail` of a REST error body. */
  get detail(): unknown {
    return this.message;
  }

  /** The JSON text of the JSON-RPC `error` member. */
  rpcErrorJson(): string {
    const error: { code: number; message: string; data?: unknown } = {
      code: this.code,
      message: this.message,
    };
    if (this.data !== undefined) error.data = this.data;
    return JSON.stringify(error);
  }
}

/** A REST body, or a JSON-RPC envelope, that does not match its schema (FastAPI-style 422). */
export class RequestValidationError extends ServiceError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "), { code: -32600, status: 422 });
    this.issues = issues;
  }
  override get detail(): unknown {
    return this.issues;
  }
}

/** A WebSocket message that is not JSON (HTTP answers the same with a 422). */
export class ParseError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32700, status: 422 });
  }
}

/** A JSON-RPC element that is not a valid request object (inside a batch). */
export class InvalidRequestError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32600, status: 400 });
  }
}

export class MethodNotFoundError extends ServiceError {
  constructor(method: string) {
    super(`the method ${method} does not exist or is not available`, { code: -32601, status: 404 });
  }
}

/**
 * A method or route the service has, but not on this instance: another family's (`eth_*` on LTC), or one
 * that reads an index the chain's family does not keep. Refused as any method not served (-32601, 404),
 * naming the chain and why, so a caller pointed at the wrong instance learns it from the answer.
 */
export class NotServedError extends MethodNotFoundError {
  constructor(what: string, chain: string, why: string) {
    super(what);
    this.message = `${what} is not served on ${chain}: ${why}`;
  }
}

export class InvalidParamsError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32602, status: 422 });
  }
}

/**
 * A request whose path or body says something that cannot be answered (the Esplora API's 400s: "Invalid hex
 * string", an address of another chain, more unspent outputs than UTXO_MAX): its message is the answer.
 */
export class BadRequestError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32602, status: 400 });
  }
}

export class UnauthorizedError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32001, status: 401 });
  }
}

/** A request the service refuses on principle, whoever sends it (a node path that takes a private key). */
export class ForbiddenError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32003, status: 403 });
  }
}

export class NotFoundError extends ServiceError {
  constructor(message: string, code = -32001) {
    super(message, { code, status: 404 });
  }
}

/**
 * A filter id (eth_getFilterChanges, eth_getFilterLogs) the caller's key does not hold: unknown, another
 * key's, uninstalled or expired. Nodes answer it so (geth: -32000 "filter not found"), and clients look for it.
 */
export class FilterNotFoundError extends NotFoundError {
  constructor() {
    super("filter not found", -32000);
  }
}

export class RateLimitedError extends ServiceError {
  declare readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { code: -32005, status: 429, retryable: true, retryAfterSeconds });
  }
}

/** A caller past its rate (`perSecond`, `burst`: a key's Rate), as every limiter says it. */
export function rateExceeded(rate: { perSecond: number; burst: number }, retryAfterSeconds: number) {
  const calls = rate.perSecond === 1 ? "call" : "calls";
  return new RateLimitedError(
    `rate limit exceeded: ${rate.perSecond} ${calls} per second, bursts of ${rate.burst}`,
    Math.max(1, Math.ceil(retryAfterSeconds)),
  );
}

/** A quota that time does not refill (watch filters per key): 429 without Retry-After. */
export class QuotaExceededError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32005, status: 429 });
  }
}

export class PayloadTooLargeError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32600, status: 413 });
  }
}

/** A request whose answer would be larger than its transport may hold (a WebSocket batch's). */
export class AnswerTooLargeError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32600, status: 413 });
  }
}

/**
 * What a node's JSON-RPC error means to the service, read by upstream/nodeErrors.ts from its code first
 * and, only where nodes differ, from its message:
 * - rate_limited, internal, unavailable: the node's own trouble; another upstream may answer;
 * - block_not_found: the node has not (yet) got the block asked about; another upstream may have it;
 * - method_unsupported: this node lacks the method;
 * - batch_too_large: the node refused a batch for its size;
 * - already_known: a transaction sent again is already in the node's pool;
 * - request: anything else is about the request itself (invalid params, a reverted call): final.
 */
export type NodeErrorKind =
  | "rate_limited"
  | "internal"
  | "unavailable"
  | "block_not_found"
  | "method_unsupported"
  | "batch_too_large"
  | "already_known"
  | "request";

const NODE_SIDE: ReadonlySet<NodeErrorKind> = new Set(["rate_limited", "internal", "unavailable"]);

/**
 * The node answered with a JSON-RPC error. It passes through unchanged over JSON-RPC; over REST an
 * error about the request itself is a 400 quoting the node, and the node's own trouble a 502.
 */
export class NodeError extends ServiceError {
  /** The node's `error` member exactly as it sent it. */
  readonly rawError: string;
  readonly kind: NodeErrorKind;
  constructor(code: number, message: string, data: unknown, rawError: string, kind: NodeErrorKind) {
    const nodeSide = NODE_SIDE.has(kind);
    super(message, { code, status: nodeSide ? 502 : 400, retryable: nodeSide, data });
    this.rawError = rawError;
    this.kind = kind;
  }
  override rpcErrorJson(): string {
    return this.rawError;
  }
}

/**
 * Why no upstream answered: it could not be reached (refused, no route, DNS), it broke off its answer,
 * answered an HTTP error, answered something that is not JSON-RPC, its queue here is full (or its circuit
 * opened while the call waited in it), or none was left to ask.
 */
export type UpstreamFailure =
  | "unreachable"
  | "broken"
  | "http"
  | "protocol"
  | "saturated"
  | "exhausted"
  | "stopped";

/** No upstream could be reached, or none answered sensibly. */
export class UpstreamUnavailableError extends ServiceError {
  readonly reason: UpstreamFailure;
  constructor(message: string, reason: UpstreamFailure = "exhausted", cause?: unknown) {
    super(message, { code: -32002, status: 502, retryable: true, cause });
    this.reason = reason;
  }
}

/** The upstream's answer is not JSON-RPC (invalid JSON, no result and no error, another id). */
export class UpstreamProtocolError extends UpstreamUnavailableError {
  constructor(message: string) {
    super(message, "protocol");
  }
}

/** The upstream refused a request at the HTTP level for its size (413): a batch to send smaller. */
export class BatchTooLargeError extends UpstreamUnavailableError {
  constructor(message: string) {
    super(message, "http");
  }
}

/** The upstream said it is over its own rate limit (HTTP 429). */
export class UpstreamRateLimitedError extends UpstreamUnavailableError {
  constructor(message: string) {
    super(message, "http");
  }
}

export class UpstreamTimeoutError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32002, status: 504, retryable: true });
  }
}

/** A database statement ran past DB_STATEMENT_TIMEOUT_MS. */
export class DatabaseTimeoutError extends ServiceError {
  constructor(timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms (DB_STATEMENT_TIMEOUT_MS)`, {
      code: -32603,
      status: 504,
      retryable: true,
    });
  }
}

/** The database cannot be reached, or dropped the connection (a restart): worth retrying shortly. */
export class DatabaseUnavailableError extends ServiceError {
  constructor(cause?: unknown) {
    super("the database is unavailable; retry shortly", {
      code: -32603,
      status: 503,
      retryable: true,
      cause,
    });
  }
}

/**
 * An answer that waits for the index to reach it (a Bitcoin-family block time far past the index's last
 * block, while it catches up): worth retrying shortly.
 */
export class IndexBehindError extends ServiceError {
  constructor(message: string) {
    super(message, { code: -32603, status: 503, retryable: true });
  }
}

/**
 * An answer that reads the node's mempool while the service's view of it is still being read (it has not
 * read every transaction of the node's latest listing: a start, a flood of new transactions, reads that
 * failed and wait for their retry): a part of the mempool would be answered as the whole. Worth retrying
 * after `retryAfterSeconds`.
 */
export class MempoolBehindError extends ServiceError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { code: -32603, status: 503, retryable: true, retryAfterSeconds });
  }
}

/**
 * An answer the index cannot give truthfully while a bulk load is under way (the Bitcoin family's: its
 * blocks' rows are there, but the address totals, scripthashes and daily figures they add are made, and the
 * lookups by address and by block indexed, only when it ends): refused rather than answered wrong or by a
 * scan of the whole chain. Worth retrying after `retryAfterSeconds`.
 */
export class IndexBulkLoadError extends ServiceError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { code: -32603, status: 503, retryable: true, retryAfterSeconds });
  }
}

/** A bug of ours. The message given to callers never carries internals. */
export class InternalError extends ServiceError {
  constructor(cause?: unknown) {
    super("internal error", { code: -32603, status: 500, cause });
  }
}

export function toServiceError(error: unknown): ServiceError {
  return error instanceof ServiceError ? error : new InternalError(error);
}
