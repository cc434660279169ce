/**
 * One upstream node: its batcher, its circuit breaker, its head, its WebSocket or long-poll and what it has
 * said it cannot do. A failing upstream is taken out of rotation (the circuit opens) and probed back in the
 * background; its head is polled (the latest block's header, so a poll sees a reorg at the same height)
 * and pushed by its WebSocket (or read the moment its long-poll answers), so calls about a block it has not
 * reached go elsewhere. What it lacks (a
 * method, a block tag) is forgotten when it comes back after a failure: it may be another node behind the
 * same URL now.
 */

import type { BlockHeader } from "../blockHeader";
import { type NodeError, type ServiceError, UpstreamUnavailableError } from "../errors";
import { toJson } from "../json";
import type { Logger } from "../log";
import { type Batcher, createBatcher } from "./batcher";
import { createNodeHttp, type NodeHttp } from "./http";
import { createLongPoller, type LongPoller } from "./longPoll";
import type { LongPollProtocol, NodeProtocol } from "./protocol";
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
/** The percentile is worked out again after this many new samples, not per call. */
const LATENCY_RECOMPUTE_EVERY = 32;
/**
 * How long after a long-poll answered its latest block is read again: by then the node has taken the next
 * long-poll (sent at once), so a block between the two is seen here rather than at the next poll.
 */
const LONG_POLL_SETTLE_MS = 100;
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
  /** It began (true) or stopped (false) pushing heads: a live WebSocket subscription, or a long-poll. */
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
  /** The chain the node says it serves (NodeProtocol.readIdentity), asked now; throws when it cannot say. */
  readIdentity(): Promise<string>;
  /**
   * From now on the node must serve this chain (its identity, NodeProtocol.readIdentity): it is checked now,
   * and again before the upstream comes back after each failure; until it answers the right one the
   * upstream is not used.
   */
  expectChain(identity: string): Promise<void>;
  /** Checked to serve the expected chain (or no chain expected yet). */
  readonly usable: boolean;
  /** Its WebSocket, when it has one. */
  readonly socket: UpstreamSocket | undefined;
  /** Its heads are pushed now: its WebSocket subscription is live, or its long-poll is held open. */
  readonly pushing: boolean;
  /** The node's answer when it said it cannot do `feature` (a method, or a feature of one). */
  lacks(feature: string): NodeError | undefined;
  learnLacking(feature: string, answer: NodeError): void;
  stop(): void;
}

/**
 * Where an upstream's heads are pushed from: its WebSocket where its protocol has pub/sub, else a long-poll
 * (whose answers have the latest block read at once); neither where the node has none (polls only).
 */
function createHeadPushers(o: {
  options: UpstreamOptions;
  name: string;
  http: NodeHttp;
  onHead(header: BlockHeader): void;
  onLive(): void;
  ready(): boolean;
  news(block: { hash: string }): boolean;
  readLatest(): Promise<void>;
}): { socket?: UpstreamSocket; longPoll?: LongPoller } {
  const { options, name } = o;
  const { protocol } = options;
  if (options.socketUrl && protocol.pubsub) {
    const socket = createUpstreamSocket({
      url: options.socketUrl,
      name,
      log: options.log,
      protocol,
      pubsub: protocol.pubsub,
      onHead: o.onHead,
      onLive: o.onLive,
    });
    return { socket };
  }
  if (!protocol.longPoll) return {};
  const longPoll = createHeadLongPoll({
    name,
    protocol,
    longPoll: protocol.longPoll,
    http: o.http,
    log: options.log,
    ready: o.ready,
    news: o.news,
    readLatest: o.readLatest,
    onLive: o.onLive,
  });
  return { longPoll };
}

/** Recent good round trips, and their 95th percentile (the hedging delay): worked out again every so often. */
function createLatencyWindow() {
  const latencies = new Float64Array(LATENCY_SAMPLES);
  let samples = 0;
  let p95: number | undefined;
  return {
    record(ms: number) {
      latencies[samples++ % LATENCY_SAMPLES] = ms;
      if (samples % LATENCY_RECOMPUTE_EVERY === 1) p95 = undefined;
    },
    p95(): number | undefined {
      if (samples === 0) return undefined;
      if (p95 === undefined) {
        const recent = latencies.slice(0, Math.min(samples, LATENCY_SAMPLES)).sort();
        p95 = recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.95))];
      }
      return p95;
    },
  };
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
  let expected: string | undefined;
  let verified = false;
  /** The hash of the last head it reported: a long-poll answering it again brings nothing new. */
  let headHash: string | undefined;
  /** Its heads are pushed now (its WebSocket's subscription, or its long-poll, is live). */
  let pushing = false;
  const endpoints = protocol.endpoints?.(url);
  const http = createNodeHttp({
    url: endpoints?.rpcUrl ?? url,
    maxResponseBytes: options.maxResponseBytes,
    errorsWithHttpStatus: protocol.errorsWithHttpStatus,
    busyAnswer: protocol.busyAnswer,
    headers: endpoints?.headers,
  });

  function sawHead(header: BlockHeader) {
    // A node may answer a lower head after a reorg, or a lagging one: its own head is what it says.
    head = header.number;
    headHash = header.hash;
    headAt = Date.now();
    events?.head?.(name, header.number);
    options.onHead?.(header);
  }

  /** One call straight to the node, past the batcher: its result, or `failure` when it answers an error. */
  async function ask(method: string, params: unknown[], failure: string): Promise<string> {
    const path = endpoints?.pathUrl(method);
    if (path !== undefined) return pathCall(path, params);
    const text = await timedPost(encodeRequest(0, method, params), 1);
    const outcome = decodeResponses(text, protocol.errorKind).get(0);
    if (!outcome) throw new UpstreamUnavailableError(failure, "protocol");
    if (!outcome.ok) throw new UpstreamUnavailableError(`${failure}: ${outcome.error.message}`, "protocol");
    return outcome.raw;
  }

  /** The chain the node names, asked straight (past the batcher). */
  async function readIdentity(): Promise<string> {
    const identity = await protocol.readIdentity((method, params) =>
      ask(method, params, `${name} could not say its chain (${method} failed)`),
    );
    if (identity === undefined) throw new UpstreamUnavailableError(`${name} named no chain`, "protocol");
    return identity;
  }

  /** The node's chain against the expected one; a node on another chain is taken out of rotation. */
  async function verify(): Promise<boolean> {
    if (expected === undefined || verified) return true;
    const identity = await readIdentity();
    if (identity !== expected) {
      open(`serves chain ${identity}, not ${expected}`);
      return false;
    }
    verified = true;
    // Its long-poll, held back while its chain was unchecked, goes out now.
    longPoll?.wake();
    return true;
  }

  const { socket, longPoll } = createHeadPushers({
    options,
    name,
    http,
    onHead: sawHead,
    onLive: () => pushingChanged(),
    ready: () => expected === undefined || verified,
    // A node that answers is alive: on an open circuit, the read is the probe that brings it back (rather
    // than waiting for the background one, up to its cooldown away).
    news: (block) => block.hash !== headHash || state !== "closed",
    readLatest: async () => {
      await poll();
    },
  });
  function pushingChanged() {
    const now = (socket?.live ?? false) || (longPoll?.live ?? false);
    if (now === pushing) return;
    pushing = now;
    events?.pushing?.(name, now);
  }

  const latency = createLatencyWindow();
  /** One HTTP exchange with the node, timed and counted. */
  const timed = async (size: number, send: () => Promise<string>) => {
    const start = performance.now();
    try {
      const text = await send();
      const ms = performance.now() - start;
      latency.record(ms);
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
  const timedPost = (body: string, size: number) => timed(size, () => http.post(body, timeoutMs));

  /**
   * A call of the node's own API at its path: its only param is the JSON body, and the answer is the body the
   * node wrote (its own error forms included: the family reads them). Never batched: the API has no batches.
   */
  const pathSlots = createSlots(options.maxInFlight, name);
  async function pathCall(path: string, params: unknown[]): Promise<string> {
    await pathSlots.take();
    try {
      return await timed(1, () => http.postTo(path, toJson(params[0] ?? {}), timeoutMs));
    } finally {
      pathSlots.release();
    }
  }

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

  async function poll(fallback = false): Promise<BlockHeader | undefined> {
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
  }

  return {
    name,
    redactedUrl: http.redactedUrl,
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
    latencyP95Ms: () => latency.p95(),
    call(method, params) {
      const path = endpoints?.pathUrl(method);
      if (path === undefined) return batcher.call(method, params);
      return pathCall(path, params).then((raw): Outcome => ({ ok: true, raw }));
    },
    recordSuccess() {
      failures = 0;
    },
    recordFailure,
    poll,
    socket,
    get pushing() {
      return pushing;
    },
    get usable() {
      return expected === undefined || verified;
    },
    readIdentity,
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
      pathSlots.stop();
      socket?.close();
      longPoll?.stop();
    },
  };
}

/** Calls of a node's own API that may wait for a slot, per slot: beyond, a call goes to another upstream. */
const PATH_QUEUED_PER_SLOT = 4;

/**
 * The in-flight bound of the calls to a node's own API, which the batcher does not carry: UPSTREAM_MAX_IN_FLIGHT
 * at once, a few more waiting per slot (as the batcher queues its calls), the rest refused as saturated so
 * the pool asks another upstream. A slot freed goes to the longest waiting call.
 */
function createSlots(max: number, name: string) {
  let busy = 0;
  const waiting: { resolve(): void; reject(error: Error): void }[] = [];
  return {
    take(): Promise<void> | void {
      if (busy < max) {
        busy++;
        return;
      }
      if (waiting.length >= max * PATH_QUEUED_PER_SLOT) {
        throw new UpstreamUnavailableError(`${waiting.length} calls already wait for ${name}`, "saturated");
      }
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
    },
    release() {
      const next = waiting.shift();
      if (next) next.resolve();
      else busy--;
    },
    stop() {
      for (const w of waiting.splice(0))
        w.reject(new UpstreamUnavailableError("the service is stopping", "stopped"));
    },
  };
}

/**
 * An upstream's long-poll (longPoll.ts) and what its answers set going: the latest block read at once when
 * one names a new block (or the upstream is out of rotation), and again once the node has surely taken the
 * next long-poll, so a block between the two is seen too. The reads run one after the other: a slower one
 * must not land last.
 */
function createHeadLongPoll(options: {
  name: string;
  protocol: NodeProtocol;
  longPoll: LongPollProtocol;
  http: NodeHttp;
  log: Logger;
  ready(): boolean;
  /** Whether an answer calls for a read now. */
  news(block: { number: bigint; hash: string }): boolean;
  readLatest(): Promise<void>;
  onLive(): void;
}): LongPoller {
  let reading: Promise<unknown> = Promise.resolve();
  const read = () => {
    reading = reading.then(() => options.readLatest());
  };
  let settling: ReturnType<typeof setTimeout> | undefined;
  const poller = createLongPoller({
    name: options.name,
    protocol: options.longPoll,
    http: options.http,
    errorKind: options.protocol.errorKind,
    log: options.log,
    ready: options.ready,
    onBlock(block) {
      if (options.news(block)) read();
      clearTimeout(settling);
      settling = setTimeout(read, LONG_POLL_SETTLE_MS);
    },
    onLive: options.onLive,
  });
  return {
    get live() {
      return poller.live;
    },
    wake: () => poller.wake(),
    stop() {
      poller.stop();
      clearTimeout(settling);
    },
  };
}
