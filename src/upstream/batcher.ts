/**
 * Batching toward one upstream: distinct calls made within a short window go out as one JSON-RPC batch
 * (up to a size limit). Ids are rewritten, so answers are matched by id, never by position. An upstream
 * that refuses batches, or caps their size, is learned from its answers and served accordingly.
 */
import {
  BatchTooLargeError,
  type NodeError,
  type ServiceError,
  toServiceError,
  UpstreamProtocolError,
  UpstreamUnavailableError,
} from "../errors";
import type { NodeErrorClassifier } from "./protocol";
import { decodeResponses, encodeRequest, type Outcome } from "./rpc";

/** Calls one upstream may have waiting, per in-flight slot: beyond, a call goes to another upstream. */
const QUEUED_PER_SLOT = 4;
/**
 * The fewest calls that may wait, whatever the slots: a node taken a few small batches at a time (the
 * Bitcoin family: 8 of 8) still holds a few busy pages' and the mempool follower's reads in its queue.
 */
const MIN_QUEUED_CALLS = 2_048;

export interface BatcherOptions {
  /** How long the first call of a batch may wait for company; 0 sends what one event-loop turn made. */
  windowMs: number;
  maxSize: number;
  /** HTTP requests in flight at once; further calls wait (and so fill larger batches). */
  maxInFlight: number;
  /** One HTTP round trip with the upstream carrying `size` calls: request text in, response text out. */
  post(body: string, size: number): Promise<string>;
  /** What the node's errors mean (its family's classifier). */
  errorKind: NodeErrorClassifier;
  /** Told when the upstream's batch limit is learned to be lower. */
  onLimit?(limit: number, reason: string): void;
}

interface Pending {
  method: string;
  params: unknown[];
  /** When it was queued (performance.now()). */
  at: number;
  resolve(outcome: Outcome): void;
  reject(error: ServiceError): void;
}

export interface Batcher {
  call(method: string, params: unknown[]): Promise<Outcome>;
  /** The largest batch this upstream is currently sent. */
  readonly limit: number;
  /** Fails the calls still waiting to be sent (retryably: another upstream may take them). */
  failQueued(reason: string): void;
  /** Stops the timers; calls still queued fail, calls in flight end with their requests. */
  stop(): void;
}

export function createBatcher(options: BatcherOptions): Batcher {
  const { windowMs, post } = options;
  let limit = Math.max(1, options.maxSize);
  let queue: Pending[] = [];
  let inFlight = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate: ReturnType<typeof setImmediate> | undefined;
  let nextId = 1;
  let stopped = false;
  const stopping = () => new UpstreamUnavailableError("the service is stopping", "stopped");

  /** `to` is below the size of the batch that failed, so the retry is smaller and progress is certain. */
  function lowerLimit(to: number, reason: string) {
    const next = Math.max(1, Math.min(to, limit));
    if (next < limit) {
      limit = next;
      options.onLimit?.(limit, reason);
    }
  }

  /** Sends full batches now, and the rest once its oldest call has waited the window. */
  function schedule() {
    if (stopped || queue.length === 0 || inFlight >= options.maxInFlight) return;
    if (queue.length >= limit) flush(false);
    if (queue.length === 0 || inFlight >= options.maxInFlight) return;
    const waited = performance.now() - queue[0]!.at;
    if (windowMs > 0 && waited >= windowMs) {
      flush(true);
    } else if (timer === undefined && immediate === undefined) {
      if (windowMs > 0) timer = setTimeout(() => flush(true), windowMs - waited);
      else immediate = setImmediate(() => flush(true));
    }
  }

  /** Sends full batches, and with `all` the partial one too, while in-flight slots are free. */
  function flush(all: boolean) {
    if (all) {
      if (timer !== undefined) clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      timer = undefined;
      immediate = undefined;
    }
    while ((all ? queue.length > 0 : queue.length >= limit) && inFlight < options.maxInFlight) {
      const chunk = queue.slice(0, limit);
      queue = queue.slice(chunk.length);
      inFlight++;
      void send(chunk)
        // A fault of ours after the exchange must still answer every call (resolved ones ignore it).
        .catch((error) => {
          for (const call of chunk) call.reject(toServiceError(error));
        })
        .finally(() => {
          inFlight--;
          // Calls that waited for a free slot may have waited their window already.
          schedule();
        });
    }
    if (!all && queue.length > 0 && timer === undefined && immediate === undefined) schedule();
  }

  async function send(calls: Pending[]): Promise<void> {
    const ids = calls.map(() => nextId++);
    const single = calls.length === 1;
    const body = single
      ? encodeRequest(ids[0]!, calls[0]!.method, calls[0]!.params)
      : `[${calls.map((c, i) => encodeRequest(ids[i]!, c.method, c.params)).join(",")}]`;
    let outcomes: Map<unknown, Outcome>;
    try {
      outcomes = decodeResponses(await post(body, calls.length), options.errorKind);
    } catch (error) {
      const e = toServiceError(error);
      // A batch refused at the HTTP level (413) is retried smaller rather than failed.
      if (!single && e instanceof BatchTooLargeError) {
        lowerLimit(Math.floor(calls.length / 2), e.message);
        return requeue(calls);
      }
      for (const c of calls) c.reject(e);
      return;
    }
    if (!single && outcomes.size === 1 && outcomes.has(null) && !outcomes.get(null)!.ok) {
      // One error for the whole batch: the upstream takes no batches (or none this large).
      const error = (outcomes.get(null) as { error: NodeError }).error;
      lowerLimit(error.kind === "batch_too_large" ? Math.floor(calls.length / 2) : 1, error.message);
      return requeue(calls);
    }
    const unanswered: Pending[] = [];
    for (let i = 0; i < calls.length; i++) {
      const outcome =
        outcomes.get(ids[i]) ?? (single && outcomes.size === 1 ? outcomes.get(null) : undefined);
      if (outcome === undefined) unanswered.push(calls[i]!);
      else if (
        !single &&
        !outcome.ok &&
        outcome.error.kind === "batch_too_large" &&
        outcome.error.code === -32600
      ) {
        unanswered.push(calls[i]!);
      } else calls[i]!.resolve(outcome);
    }
    if (unanswered.length > 0) {
      if (single) {
        calls[0]!.reject(new UpstreamProtocolError("upstream answered another request id"));
        return;
      }
      // A capped batch: only the first so many calls were answered.
      lowerLimit(
        calls.length - unanswered.length,
        `upstream answered ${calls.length - unanswered.length} of ${calls.length} batched calls`,
      );
      requeue(unanswered);
    }
  }

  function requeue(calls: Pending[]) {
    if (stopped) {
      for (const call of calls) call.reject(stopping());
      return;
    }
    queue = calls.concat(queue);
    schedule();
  }

  return {
    get limit() {
      return limit;
    },
    call(method, params) {
      if (stopped) return Promise.reject(stopping());
      if (queue.length >= Math.max(MIN_QUEUED_CALLS, options.maxInFlight * limit * QUEUED_PER_SLOT)) {
        return Promise.reject(
          new UpstreamUnavailableError(`${queue.length} calls already wait for this upstream`, "saturated"),
        );
      }
      return new Promise<Outcome>((resolve, reject) => {
        queue.push({ method, params, at: performance.now(), resolve, reject });
        schedule();
      });
    },
    failQueued(reason) {
      const waiting = queue;
      queue = [];
      for (const call of waiting) call.reject(new UpstreamUnavailableError(reason, "saturated"));
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      timer = undefined;
      immediate = undefined;
      const waiting = queue;
      queue = [];
      for (const call of waiting) call.reject(stopping());
    },
  };
}
