/**
 * One upstream node: its batcher, its circuit breaker, its head, its WebSocket and what it has said it
 * cannot do. A failing upstream is taken out of rotation (the circuit opens) and probed back in the
 * background; its head is polled (the latest block's header, so a poll sees a reorg at the same height)
 * and pushed by its WebSocket, so calls about a block it has not reached go elsewhere. What it lacks (a
 * method, a block tag) is forgotten when it comes back after a failure: it may be another node behind the
 * same URL now.
 */

import type { BlockHeader } from "../blockHeader";
import { type NodeError, type ServiceError, UpstreamUnavailableError } from "../errors";
import type { Logger } from "../log";
import { type Batcher, createBatcher } from "./batcher";
import { postJsonRpc, redactUrl } from "./http";
import type { NodeProtocol } from "./protocol";
import { decodeResponses, encodeRequest, type Outcome } from "./rpc";
import { createUpstreamSocket, type UpstreamSocket } from "./socket";

/**
 * Consecutive failures that open the circuit; a refused connection opens it at once. A failure is one failed
 * HTTP exchange, poll or call: the calls of one failed batch, and one call's attempts (pool.ts), count once.
 */
const FAILURES_TO_OPEN = 3;
/** How long what an upstream said it lacks is believed before it is asked again (or until it reconnects). */
const LACKING_KEPT_MS = 10 * 60_000;
/** Recent HTTP round trips kept for the latency percentile that sets the hedging delay. */
const LATENCY_SAMPLES = 256;
/** The first wait before a probe, doubled after each failed probe up to the maximum. */
const MAX_COOLDOWN_MS = 30_000;

export type CircuitState = "closed" | "open";

export interface UpstreamOptions {
  index: number;
  url: string;
  /** Its WebSocket URL; undefined (or a protocol without pub/sub): heads are polled only. */
  socketUrl?: string;
  /** How its family's nodes name their chain, write headers and errors, and push heads. */
  protocol: NodeProtocol;
  log: Logger;
  /** Every head it reports, polled or pushed. */
  onHead?(header: BlockHeader): void;
  timeoutMs: number;
  batchWindowMs: number;
  batchMaxSize: number;
  maxInFlight: number;
  cooldownMs: number;
  /** The largest answer read from it (UPSTREAM_MAX_RESPONSE_MB). */
  maxResponseBytes: number;
  events?: UpstreamEvents;
}

export interface UpstreamEvents {
  httpRequest?(upstream: string, size: number, outcome: string, seconds: number): void;
  stateChange?(upstream: string, state: CircuitState, reason: string): void;
  head?(upstream: string, head: bigint): void;
  batchLimit?(upstream: string, limit: number, reason: string): void;
  /** Its WebSocket subscription came up (true) or went down (false). */
  pushing?(upstream: string, live: boolean): void;
}

export interface Upstream {
  /** "upstream-1", "upstream-2", …: what clients and logs see, never the URL. */
  readonly name: string;
  readonly redactedUrl: string;
  readonly state: CircuitState;
  /** The last head block seen, and when. */
  readonly head: bigint | null;
  readonly headAt: number;
  readonly batchLimit: number;
  /** True when the open circuit's cooldown has run out: time for a probe. */
  probeDue(now: number): boolean;
  /**
   * When it last failed (a call, a poll or a probe), as performance.now(): failures a millisecond apart
   * must still be ordered. 0 before it ever did.
   */
  readonly failedAt: number;
  /**
   * True when its circuit is open and a call may probe it now, every circuit being open: not within
   * UPSTREAM_COOLDOWN_MS of a failed probe, so a dead upstream is not asked by every call.
   */
  fallbackDue(now: number): boolean;
  /** The 95th percentile of its recent good round trips, in ms; undefined before there are any. */
  latencyP95Ms(): number | undefined;
  call(method: string, params: unknown[]): Promise<Outcome>;
  recordSuccess(): void;
  recordFailure(error: ServiceError): void;
  /**
   * The latest block's header straight from the node: refreshes the head, closes or re-opens the circuit.
   * A failed `fallback` probe (a call's, every circuit being open) keeps the circuit open without doubling
   * its cooldown: calls must not push the background probe further away.
   */
  poll(fallback?: boolean): Promise<BlockHeader | undefined>;
  /**
   * From now on the node must serve this chain (its identity, NodeProtocol.identityOf): it is checked now,
   * and again before the upstream comes back after each failure; until it answers the right one the
   * upstream is not used.
   */
  expectChain(identity: bigint): Promise<void>;
  /** Checked to serve the expected chain (or no chain expected yet). */
  readonly usable: boolean;
  /** Its WebSocket, when it has one. */
  readonly socket: UpstreamSocket | undefined;
  /** The node's answer when it said it cannot do `feature` (a method, or a feature of one). */
  lacks(feature: string): NodeError | undefined;
  learnLacking(feature: string, answer: NodeError): void;
  stop(): void;
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { url, timeoutMs, events, protocol } = options;
  const name = `upstream-${options.index + 1}`;
  let state: CircuitState = "closed";
  let failures = 0;
  let cooldown = options.cooldownMs;
  let openedAt = 0;
  let failedAt = 0;
  /** No fallback probe before then: set by a failed probe. */
  let fallbackAfter = 0;
  /** Errors already counted: a failed exchange rejects every call of its batch with the same error. */
  const counted = new WeakSet<ServiceError>();
  let head: bigint | null = null;
  let headAt = 0;
  const lacking = new Map<string, { answer: NodeError; at: number }>();
  let expected: bigint | undefined;
  let verified = false;

  function sawHead(header: BlockHeader) {
    // A node may answer a lower head after a reorg, or a lagging one: its own head is what it says.
    head = header.number;
    headAt = Date.now();
    events?.head?.(name, header.number);
    options.onHead?.(header);
  }

  /** One call straight to the node, past the batcher: its result, or `failure` when it answers an error. */
  async function ask(method: string, params: unknown[], failure: string): Promise<string> {
    const text = await timedPost(encodeRequest(0, method, params), 1);
    const outcome = decodeResponses(text, protocol.errorKind).get(0);
    if (!outcome?.ok) throw new UpstreamUnavailableError(failure, "protocol");
    return outcome.raw;
  }

  /** The node's chain against the expected one; a node on another chain is taken out of rotation. */
  async function verify(): Promise<boolean> {
    if (expected === undefined || verified) return true;
    const { method, params } = protocol.identity;
    const result = await ask(method, params, `${method} failed`);
    const identity = protocol.identityOf(result);
    if (identity === undefined) throw new UpstreamUnavailableError(`${method} named no chain`, "protocol");
    if (identity !== expected) {
      open(`serves chain ${protocol.identityText(identity)}, not ${protocol.identityText(expected)}`);
      return false;
    }
    verified = true;
    return true;
  }

  const socket =
    options.socketUrl && protocol.pubsub
      ? createUpstreamSocket({
          url: options.socketUrl,
          name,
          log: options.log,
          protocol,
          pubsub: protocol.pubsub,
          onHead: sawHead,
          onLive: (live) => events?.pushing?.(name, live),
        })
      : undefined;

  const latencies = new Float64Array(LATENCY_SAMPLES);
  let samples = 0;
  let p95: number | undefined;
  const timedPost = async (body: string, size: number) => {
    const start = performance.now();
    try {
      const text = await postJsonRpc(url, body, timeoutMs, options.maxResponseBytes);
      const ms = performance.now() - start;
      latencies[samples++ % LATENCY_SAMPLES] = ms;
      // Worked out again every so often, not per call.
      if (samples % 32 === 1) p95 = undefined;
      events?.httpRequest?.(name, size, "ok", ms / 1000);
      return text;
    } catch (error) {
      events?.httpRequest?.(
        name,
        size,
        (error as ServiceError).status === 504 ? "timeout" : "error",
        (performance.now() - start) / 1000,
      );
      throw error;
    }
  };

  const batcher: Batcher = createBatcher({
    windowMs: options.batchWindowMs,
    maxSize: options.batchMaxSize,
    maxInFlight: options.maxInFlight,
    post: timedPost,
    errorKind: protocol.errorKind,
    onLimit: (limit, reason) => events?.batchLimit?.(name, limit, reason),
  });

  function open(reason: string) {
    verified = false;
    // Calls waiting for it would wait for nothing: another upstream may take them now.
    batcher.failQueued(`${name} left rotation: ${reason}`);
    openedAt = Date.now();
    failedAt = performance.now();
    if (state === "open") {
      // Opened again (a failed probe): the calls' own probes wait a cooldown too.
      cooldown = Math.min(cooldown * 2, MAX_COOLDOWN_MS);
      fallbackAfter = openedAt + options.cooldownMs;
    }
    state = "open";
    events?.stateChange?.(name, state, reason);
  }

  function close() {
    failures = 0;
    cooldown = options.cooldownMs;
    if (state !== "closed") {
      state = "closed";
      lacking.clear();
      events?.stateChange?.(name, state, "answered a probe");
    }
  }

  /** A probe of the open circuit failed: a background one backs off, a call's only holds calls back. */
  function failedProbe(error: Error, fallback: boolean) {
    if (!fallback) return open(error.message);
    failedAt = performance.now();
    fallbackAfter = Date.now() + options.cooldownMs;
  }

  function recordFailure(error: ServiceError) {
    failedAt = performance.now();
    if (counted.has(error)) return;
    counted.add(error);
    failures++;
    const unreachable = error instanceof UpstreamUnavailableError && error.reason === "unreachable";
    if (state === "closed" && (unreachable || failures >= FAILURES_TO_OPEN)) open(error.message);
  }

  return {
    name,
    redactedUrl: redactUrl(url),
    get state() {
      return state;
    },
    get head() {
      return head;
    },
    get headAt() {
      return headAt;
    },
    get batchLimit() {
      return batcher.limit;
    },
    probeDue: (now) => state === "open" && now - openedAt >= cooldown,
    get failedAt() {
      return failedAt;
    },
    fallbackDue: (now) => state === "open" && now >= fallbackAfter,
    latencyP95Ms() {
      if (samples === 0) return undefined;
      if (p95 === undefined) {
        const recent = latencies.slice(0, Math.min(samples, LATENCY_SAMPLES)).sort();
        p95 = recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.95))];
      }
      return p95;
    },
    call: (method, params) => batcher.call(method, params),
    recordSuccess() {
      failures = 0;
    },
    recordFailure,
    async poll(fallback = false) {
      try {
        if (!(await verify())) return undefined;
        const unread = "the latest block could not be read";
        const header = await protocol.readHeader(protocol.latest, (method, params) =>
          ask(method, params, unread),
        );
        if (!header) throw new UpstreamUnavailableError(unread, "protocol");
        close();
        sawHead(header);
        return header;
      } catch (error) {
        if (state === "open") failedProbe(error as Error, fallback);
        else recordFailure(error as ServiceError);
        return undefined;
      }
    },
    socket,
    get usable() {
      return expected === undefined || verified;
    },
    async expectChain(identity) {
      expected = identity;
      verified = false;
      socket?.expectChain(identity);
      try {
        await verify();
      } catch (error) {
        recordFailure(error as ServiceError);
      }
    },
    lacks(feature) {
      const known = lacking.get(feature);
      if (!known) return undefined;
      // Asked again after a while: a node can be upgraded, or its error have been a passing one.
      if (Date.now() - known.at > LACKING_KEPT_MS) {
        lacking.delete(feature);
        return undefined;
      }
      return known.answer;
    },
    learnLacking: (feature, answer) => void lacking.set(feature, { answer, at: Date.now() }),
    stop() {
      batcher.stop();
      socket?.close();
    },
  };
}
