/**
 * What callers see of database failures (docs/interface.md §7): a statement past DB_STATEMENT_TIMEOUT_MS
 * is a 504, a lost connection or a restarting server a 503, never a 500. Failures are told apart by their
 * SQLSTATE or connection error code, never by their message. A call that is safe to repeat (a read, an
 * idempotent write) is tried once more when its connection was lost: postgres.js reconnects for it. A call
 * waits for the database at most DB_STATEMENT_TIMEOUT_MS (and a margin), retry included: one queued while
 * the server is down (postgres.js holds it until a connection opens) is a 503 then, not a wait for the end
 * of the outage.
 */
import { DatabaseTimeoutError, DatabaseUnavailableError, type ServiceError } from "../errors";
import { withTimeout } from "../timeout";

/**
 * How much longer than DB_STATEMENT_TIMEOUT_MS a call may wait in all: the server's own timeout cancels a
 * statement that runs too long first (a 504); past this, the call never got a connection (a 503).
 */
const CALL_MARGIN_MS = 1_000;

class NoConnection extends Error {
  readonly code = "CONNECTION_WAIT";
}

/** SQLSTATE of a statement cancelled by statement_timeout. */
const QUERY_CANCELED = "57014";
/** SQLSTATE classes and codes that mean the server went away or will not take connections now. */
const CONNECTION_LOST = /^(08|57P0[123])/;
/** postgres.js and socket error codes of a connection that could not be made or was lost. */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECTION_WAIT",
]);

export interface DatabaseEvents {
  /** A statement ran past the timeout. */
  timeout?(): void;
  /** A call was tried again after its connection was lost. */
  retry?(): void;
  /** A call ended, answered or failed, after this long (retry included). */
  done?(seconds: number): void;
}

/** The service's error for a database failure; undefined for anything else (a bug, passed on as it is). */
export function databaseFailure(error: unknown, timeoutMs: number): ServiceError | undefined {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return undefined;
  if (code === QUERY_CANCELED) return new DatabaseTimeoutError(timeoutMs);
  if (CONNECTION_CODES.has(code) || CONNECTION_LOST.test(code)) return new DatabaseUnavailableError(error);
  return undefined;
}

/**
 * The same API with its database failures made ServiceErrors, and the methods named in `retry` tried once
 * more when the connection was lost.
 */
export function guardDatabase<T extends object>(
  api: T,
  options: { timeoutMs: number; retry?: readonly (keyof T)[] | "all"; events?: DatabaseEvents },
): T {
  const { timeoutMs, events } = options;
  const out = {} as T;
  for (const [name, value] of Object.entries(api)) {
    if (typeof value !== "function") {
      (out as Record<string, unknown>)[name] = value;
      continue;
    }
    const retry = options.retry === "all" || (options.retry ?? []).includes(name as keyof T);
    (out as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const started = performance.now();
      const deadline = started + timeoutMs + CALL_MARGIN_MS;
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            const left = deadline - performance.now();
            return await withTimeout(value.apply(api, args), left, () => new NoConnection());
          } catch (error) {
            const failure = databaseFailure(error, timeoutMs);
            if (!failure) throw error;
            if (failure instanceof DatabaseTimeoutError) events?.timeout?.();
            else if (retry && attempt === 0 && !(error instanceof NoConnection)) {
              events?.retry?.();
              continue;
            }
            throw failure;
          }
        }
      } finally {
        events?.done?.((performance.now() - started) / 1000);
      }
    };
  }
  return out;
}
