/**
 * The upstream nodes of UPSTREAM_URLS, first preferred. A call goes to the first healthy upstream that has
 * reached the block it is about and has not said it lacks the method; a transient failure (refused or
 * reset connection, timeout, HTTP 429/5xx, invalid JSON, the node's own trouble) moves it to the next,
 * with backoff when it must come back to one already tried. An upstream that answers it lacks the method
 * is remembered as lacking it (until it reconnects) and the call moves on; when every healthy upstream
 * lacks it, that answer is the call's. The node's other answers, errors included, are final. Every call
 * ends within the deadline.
 *
 * A call's failures on one upstream count once against its circuit, however many times it asks it: one bad
 * moment of the only upstream must not open it. When every circuit is open, a call probes the upstream that
 * failed least recently (as the background probe does: its identity, latest block) and, if it answers, goes
 * there, rather than being refused for the cooldown. Such a probe is shared by the calls that arrive while it
 * runs, and one that fails holds further ones back for UPSTREAM_COOLDOWN_MS (upstream.ts): a dead upstream
 * sees one probe a cooldown from the calls, whatever their number, and those calls fail at once.
 */

import type { BlockHeader } from "../blockHeader";
import {
  NodeError,
  type ServiceError,
  toServiceError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from "../errors";
import type { Logger } from "../log";
import { withTimeout } from "../timeout";
import type { NodeProtocol } from "./protocol";
import type { SocketSubscription } from "./socket";
import { createUpstream, type Upstream, type UpstreamEvents } from "./upstream";

/** Backoff before asking an upstream again within one call: base doubled per attempt, capped. */
const BACKOFF_BASE_MS = 25;
const BACKOFF_MAX_MS = 1_000;
/** Attempts per call beyond one per upstream. */
const EXTRA_ATTEMPTS = 2;
/** The shortest hedging delay: below it, a second upstream would be asked for most calls. */
const MIN_HEDGE_MS = 50;
/** Nothing tried yet: a pass over every upstream again. */
const NONE: ReadonlySet<never> = new Set();

/**
 * Of two failures of one call, the one its caller is told: a timeout (some node was asked and kept
 * silent: 504), else the node's own error, else the later one. An attempt failed without being sent (its
 * upstream left rotation while the call waited in its queue) says less than a node that was asked, so it
 * must not hide what that node did, whichever came last.
 */
function telling(earlier: ServiceError | undefined, later: ServiceError): ServiceError {
  return earlier !== undefined && weight(earlier) > weight(later) ? earlier : later;
}
const weight = (e: ServiceError) => (e instanceof UpstreamTimeoutError ? 2 : e instanceof NodeError ? 1 : 0);

export interface PoolOptions {
  urls: string[];
  /** How the family's nodes name their chain, write headers and errors, and push heads. */
  protocol: NodeProtocol;
  /** The WebSocket URL of each upstream, in the same order; undefined: that one is polled only. */
  socketUrls?: (string | undefined)[];
  /** Deadline of one HTTP request to an upstream. */
  timeoutMs: number;
  /** Deadline of one call, retries included. */
  deadlineMs: number;
  batchWindowMs: number;
  batchMaxSize: number;
  /** HTTP requests in flight to one upstream at once. */
  maxInFlight: number;
  /** How often heads are polled (and failed upstreams probed, once their cooldown ran out). */
  headPollMs: number;
  /** The first cooldown of an open circuit. */
  cooldownMs: number;
  /** The largest answer read from an upstream. */
  maxResponseBytes: number;
  /** How long a call waits for an upstream before it also asks the next one; undefined: its p95 latency. */
  hedgeAfterMs?: number;
  log: Logger;
  events?: UpstreamEvents & {
    attempt?(upstream: string, method: string, outcome: "ok" | "node_error" | "retry" | "error"): void;
    /** A call waited too long for `upstream` and was sent to `other` too. */
    hedged?(upstream: string, other: string): void;
  };
}

export interface PoolCallResult {
  raw: string;
  upstream: string;
  /** The upstream that answered was known to be behind the block asked: its answer is not to be kept. */
  behind?: boolean;
}

export interface CallOptions {
  /** false: never ask a second upstream while the first has not answered (a write). */
  hedge?: boolean;
  /** The block the call is about: upstreams that have not reached it are asked last. */
  minBlock?: bigint;
  /**
   * Only upstreams not known to be behind minBlock may answer (a range of logs: one behind would answer
   * part of it); with none, the call fails as retryable.
   */
  reached?: boolean;
  /**
   * A feature of the method the call needs (a block tag, say): an upstream that refuses the call as a
   * request error lacks it. Without one, only "method unsupported" answers mark the method as lacking.
   */
  feature?: string;
}

export interface UpstreamPool {
  /** The node's result as raw JSON text; throws NodeError or an Upstream*Error. */
  call(method: string, params: unknown[], options?: CallOptions): Promise<PoolCallResult>;
  readonly upstreams: readonly Upstream[];
  /** The highest head among healthy upstreams, and when it was seen. */
  head(): { number: bigint; at: number } | null;
  /** Polls every upstream now (start-up, and after a write that will move the head). */
  pollNow(): Promise<void>;
  /**
   * The chain the first upstream (in order) able to say serves (NodeProtocol.readIdentity), and which
   * upstream said it; rejects with the last upstream's failure when none could.
   */
  readIdentity(): Promise<{ identity: string; upstream: Upstream }>;
  /** Every upstream must serve this chain (NodeProtocol.readIdentity): checked now and after each failure. */
  expectChain(identity: string): Promise<void>;
  /** Called with every head an upstream reports, polled or pushed, and the upstream's name. */
  onHead(listener: (header: BlockHeader, upstream: string) => void): void;
  /** True while at least one upstream pushes its heads (a live WebSocket, or a long-poll held open). */
  pushing(): boolean;
  /** Waits (at most `ms`) until every upstream WebSocket has subscribed to new heads or failed once. */
  socketsReady(ms: number): Promise<void>;
  /**
   * A subscription on the first healthy upstream whose WebSocket is live; undefined when there is none.
   * It follows that upstream's reconnections.
   */
  subscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription | undefined;
  stop(): void;
}

/** Node errors that say "try another node": its own trouble, or behind the block asked about. */
function isTransient(error: NodeError, aboutBlock: boolean): boolean {
  return error.retryable || (aboutBlock && error.kind === "block_not_found");
}

/** Whether an upstream's head is known to have reached `block`. */
const hasReached = (upstream: Upstream, block: bigint) => upstream.head !== null && upstream.head >= block;

/** The node says it cannot do what the call needs: the method, or for a feature call, the request. */
function isLacking(error: NodeError, feature: boolean): boolean {
  return error.kind === "method_unsupported" || (feature && error.kind === "request");
}

export function createUpstreamPool(options: PoolOptions): UpstreamPool {
  const { log, events } = options;
  if (options.urls.length === 0) throw new Error("createUpstreamPool: no upstream URLs");
  const headListeners: ((header: BlockHeader, upstream: string) => void)[] = [];
  const upstreams = options.urls.map((url, index) =>
    createUpstream({
      index,
      url,
      socketUrl: options.socketUrls?.[index],
      protocol: options.protocol,
      log,
      onHead(header) {
        for (const listener of headListeners) {
          try {
            listener(header, `upstream-${index + 1}`);
          } catch (error) {
            log.error("head listener failed", { error });
          }
        }
      },
      timeoutMs: options.timeoutMs,
      batchWindowMs: options.batchWindowMs,
      batchMaxSize: options.batchMaxSize,
      maxInFlight: options.maxInFlight,
      cooldownMs: options.cooldownMs,
      maxResponseBytes: options.maxResponseBytes,
      events: {
        ...events,
        stateChange(name, state, reason) {
          (state === "open" ? log.warn : log.info)("upstream circuit", { upstream: name, state, reason });
          events?.stateChange?.(name, state, reason);
        },
        batchLimit(name, limit, reason) {
          log.warn("upstream batch limit lowered", { upstream: name, limit, reason });
          events?.batchLimit?.(name, limit, reason);
        },
      },
    }),
  );

  const polling = new Map<Upstream, Promise<void>>();
  /**
   * One poll of an upstream at a time. `fresh`: the poll must start after the call (a write has just been
   * answered), so one in flight is waited for and another made. `fallback`: a call's probe (upstream.ts).
   */
  function poll(upstream: Upstream, fresh: boolean, fallback = false): Promise<void> {
    const running = polling.get(upstream);
    if (running && !fresh) return running;
    const next = (running ?? Promise.resolve()).then(async () => {
      await upstream.poll(fallback);
    });
    polling.set(upstream, next);
    void next.finally(() => {
      if (polling.get(upstream) === next) polling.delete(upstream);
    });
    return next;
  }
  const timer = setInterval(() => {
    const now = Date.now();
    for (const u of upstreams) if (u.state === "closed" || u.probeDue(now)) void poll(u, false);
  }, options.headPollMs);

  /**
   * The first healthy upstream (in `order`) not yet tried, not lacking `feature`, that has reached minBlock
   * (or the first such one behind it).
   */
  function pick(
    minBlock: bigint | undefined,
    tried: { has(u: Upstream): boolean },
    feature: string,
    reached = false,
    order: readonly Upstream[] = upstreams,
  ): Upstream | undefined {
    let fallback: Upstream | undefined;
    for (const u of order) {
      if (u.state !== "closed" || !u.usable || tried.has(u) || u.lacks(feature)) continue;
      if (minBlock === undefined || u.head === null || u.head >= minBlock) return u;
      if (!reached) fallback ??= u;
    }
    return fallback;
  }

  /**
   * Every healthy upstream was tried by this call: the one it asked least recently, so its retries go round
   * them rather than back to the first each time (one call's failures alone no longer open a circuit).
   */
  function pickAgain(
    minBlock: bigint | undefined,
    tried: ReadonlyMap<Upstream, number>,
    feature: string,
    reached: boolean | undefined,
  ): Upstream | undefined {
    const order = [...upstreams].sort((a, b) => (tried.get(a) ?? -1) - (tried.get(b) ?? -1));
    return pick(minBlock, NONE, feature, reached, order);
  }

  /**
   * Every circuit open: probes the one that failed least recently among those not probed by this call yet
   * (and not held back by a failed probe), waiting at most until the call's deadline. False when there was
   * none to probe; else the call looks again (the probe may have closed its circuit).
   */
  async function probeFallback(probed: Set<Upstream>, feature: string, deadline: number): Promise<boolean> {
    const now = Date.now();
    let oldest: Upstream | undefined;
    for (const u of upstreams) {
      if (probed.has(u) || !u.fallbackDue(now) || u.lacks(feature)) continue;
      if (oldest === undefined || u.failedAt < oldest.failedAt) oldest = u;
    }
    if (!oldest || deadline - now <= 0) return false;
    probed.add(oldest);
    const probe = poll(oldest, false, true);
    await withTimeout(probe, deadline - now, () => new Error("deadline")).catch(() => {});
    return true;
  }

  /** What the first healthy upstream said when every healthy one lacks `feature`. */
  function lackedByAll(feature: string): NodeError | undefined {
    let first: NodeError | undefined;
    for (const u of upstreams) {
      if (u.state !== "closed" || !u.usable) continue;
      const answer = u.lacks(feature);
      if (!answer) return undefined;
      first ??= answer;
    }
    return first;
  }

  interface Attempt {
    method: string;
    params: unknown[];
    minBlock: bigint | undefined;
    feature: string;
    callOptions: CallOptions;
    deadline: number;
    /** Another upstream to hedge with, when there is one. */
    hedge?: () => Upstream | undefined;
    /** The upstreams whose failure this call has counted already. */
    counted: Set<Upstream>;
  }

  type Result =
    | { kind: "ok"; answer: PoolCallResult }
    /** The node's own answer: final, whatever another upstream would say. */
    | { kind: "final"; error: ServiceError }
    /** Worth asking another upstream. */
    | { kind: "retry"; error: ServiceError };

  /** A call's first failure on an upstream counts against its circuit; its later ones there do not. */
  function countFailure(upstream: Upstream, a: Attempt, error: ServiceError) {
    const unreachable = error instanceof UpstreamUnavailableError && error.reason === "unreachable";
    // A refused connection still opens the circuit at once.
    if (a.counted.has(upstream) && !unreachable) return;
    a.counted.add(upstream);
    upstream.recordFailure(error);
  }

  /**
   * One upstream asked once, within UPSTREAM_TIMEOUT_MS (and the call's deadline), the time it waits in
   * the upstream's queue included; its outcome classified and recorded.
   */
  async function tryOn(upstream: Upstream, a: Attempt): Promise<Result> {
    const { method, minBlock } = a;
    const budget = Math.min(options.timeoutMs, a.deadline - Date.now());
    try {
      const outcome = await withTimeout(
        upstream.call(method, a.params),
        budget,
        () => new UpstreamTimeoutError(`${upstream.name} did not answer within ${budget} ms`),
      );
      if (outcome.ok) {
        upstream.recordSuccess();
        events?.attempt?.(upstream.name, method, "ok");
        const behind = minBlock !== undefined && upstream.head !== null && upstream.head < minBlock;
        return { kind: "ok", answer: { raw: outcome.raw, upstream: upstream.name, behind } };
      }
      if (isLacking(outcome.error, a.callOptions.feature !== undefined)) {
        upstream.recordSuccess();
        upstream.learnLacking(a.feature, outcome.error);
        events?.attempt?.(upstream.name, method, "node_error");
        log.info("upstream lacks a method or feature; asking others", {
          upstream: upstream.name,
          feature: a.feature,
        });
        return { kind: "retry", error: outcome.error };
      }
      if (!isTransient(outcome.error, minBlock !== undefined)) {
        upstream.recordSuccess();
        events?.attempt?.(upstream.name, method, "node_error");
        return { kind: "final", error: outcome.error };
      }
      const { kind, retryable } = outcome.error;
      if (
        kind === "block_not_found" &&
        !retryable &&
        minBlock !== undefined &&
        !hasReached(upstream, minBlock)
      ) {
        // No fault of the node's (a client asking the next block must not take it out of rotation): an
        // upstream known to have reached the block is asked; past every head known, this answer is the call's.
        upstream.recordSuccess();
        events?.attempt?.(upstream.name, method, "node_error");
        const elsewhere = upstreams.some((u) => u.state === "closed" && hasReached(u, minBlock));
        return { kind: elsewhere ? "retry" : "final", error: outcome.error };
      }
      countFailure(upstream, a, outcome.error);
      events?.attempt?.(upstream.name, method, "retry");
      return { kind: "retry", error: outcome.error };
    } catch (error) {
      const e = toServiceError(error);
      if (!e.retryable) return { kind: "final", error: e };
      // A full queue of ours is no fault of the node's.
      if (!(e instanceof UpstreamUnavailableError && e.reason === "saturated")) countFailure(upstream, a, e);
      events?.attempt?.(upstream.name, method, "error");
      log.debug("upstream attempt failed", { upstream: upstream.name, method, error: e.message });
      return { kind: "retry", error: e };
    }
  }

  /**
   * Asks `first`; if it has not answered after the hedging delay (HEDGE_AFTER_MS, else its p95 latency, at
   * least MIN_HEDGE_MS), asks the next healthy upstream too: the first answer wins, the other is left to
   * finish on its own. A retryable failure before then ends the race at once, so the caller moves on.
   */
  function race(first: Upstream, a: Attempt): Promise<Result> {
    return new Promise((resolve) => {
      let running = 0;
      let settled = false;
      let failure: ServiceError | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const launch = (upstream: Upstream) => {
        running++;
        void tryOn(upstream, a).then((result) => {
          running--;
          if (settled) return;
          if (result.kind === "retry") failure = telling(failure, result.error);
          if (result.kind !== "retry" || running === 0) {
            settled = true;
            clearTimeout(timer);
            resolve(result.kind === "retry" ? { kind: "retry", error: failure! } : result);
          }
        });
      };
      launch(first);
      if (a.hedge) {
        const delay = options.hedgeAfterMs ?? Math.max(MIN_HEDGE_MS, first.latencyP95Ms() ?? MIN_HEDGE_MS);
        timer = setTimeout(() => {
          if (settled) return;
          const other = a.hedge!();
          if (!other) return;
          events?.hedged?.(first.name, other.name);
          launch(other);
        }, delay);
      }
    });
  }

  return {
    upstreams,
    head() {
      let best: Upstream | undefined;
      for (const u of upstreams) {
        if (u.state === "closed" && u.head !== null && (best === undefined || u.head > best.head!)) best = u;
      }
      return best ? { number: best.head!, at: best.headAt } : null;
    },
    pollNow: () => Promise.all(upstreams.map((u) => poll(u, true))).then(() => undefined),
    async readIdentity() {
      let last: unknown;
      for (const upstream of upstreams) {
        try {
          return { identity: await upstream.readIdentity(), upstream };
        } catch (error) {
          last = error;
        }
      }
      throw last;
    },
    expectChain: (identity) =>
      Promise.all(upstreams.map((u) => u.expectChain(identity))).then(() => undefined),
    onHead: (listener) => void headListeners.push(listener),
    pushing: () => upstreams.some((u) => u.pushing),
    async socketsReady(ms) {
      const all = Promise.all(upstreams.map((u) => u.socket?.ready));
      await withTimeout(all, ms, () => new Error("upstream WebSockets not ready")).catch(() => {});
    },
    subscribe(params, onItem) {
      const upstream = upstreams.find((u) => u.state === "closed" && u.socket?.live);
      return upstream?.socket?.subscribe(params, onItem);
    },
    stop() {
      clearInterval(timer);
      for (const u of upstreams) u.stop();
    },

    async call(method, params, callOptions = {}) {
      const { minBlock } = callOptions;
      const feature = callOptions.feature ?? method;
      const deadline = Date.now() + options.deadlineMs;
      /** Each upstream this call asked, with when (how many asks came before its last). */
      const tried = new Map<Upstream, number>();
      let asks = 0;
      const ask = (u: Upstream) => void tried.set(u, asks++);
      const probed = new Set<Upstream>();
      const counted = new Set<Upstream>();
      const maxAttempts = upstreams.length + EXTRA_ATTEMPTS;
      let last: ServiceError | undefined;
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        const lacked = lackedByAll(feature);
        if (lacked) throw lacked;
        let upstream = pick(minBlock, tried, feature, callOptions.reached);
        if (!upstream) {
          // Every healthy upstream was tried: back off, then ask the one this call asked least recently.
          upstream = pickAgain(minBlock, tried, feature, callOptions.reached);
          if (!upstream) {
            // None healthy: probe one rather than refuse (each at most once a call).
            if (await probeFallback(probed, feature, deadline)) continue;
            break;
          }
          const wait = Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS, deadline - Date.now());
          if (wait <= 0) break;
          await Bun.sleep(wait * (0.5 + Math.random() / 2));
          if (upstream.state !== "closed") continue;
        }
        ask(upstream);
        if (deadline - Date.now() <= 0) break;
        const hedge =
          callOptions.hedge === false
            ? undefined
            : () => {
                const next = pick(minBlock, tried, feature, callOptions.reached);
                if (next) ask(next);
                return next;
              };
        const result = await race(upstream, {
          method,
          params,
          minBlock,
          feature,
          callOptions,
          deadline,
          hedge,
          counted,
        });
        if (result.kind === "ok") return result.answer;
        if (result.kind === "final") throw result.error;
        last = telling(last, result.error);
      }
      if (last instanceof UpstreamTimeoutError || last instanceof NodeError) throw last;
      throw new UpstreamUnavailableError(
        last
          ? `no upstream could answer: ${last.message}`
          : callOptions.reached && upstreams.some((u) => u.state === "closed")
            ? `no upstream has reached block ${minBlock} yet; retry`
            : `no upstream available: all ${upstreams.length} are failing`,
        "exhausted",
      );
    },
  };
}
