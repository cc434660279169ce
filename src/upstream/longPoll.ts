/**
 * One call held open on a node until it has a new block (NodeProtocol.longPoll: Bitcoin Core's
 * `waitfornewblock`), for nodes without pub/sub: its own HTTP request, outside the batcher (it waits for
 * seconds, and must neither hold a batch's calls nor count in the latency that sets the hedging delay),
 * sent again the moment it answers, so a new block is seen within a round trip of the node having it. A
 * failure is retried with backoff; `stop()` ends the loop and the request in flight.
 */
import { NodeError, type ServiceError, UpstreamProtocolError } from "../errors";
import type { Logger } from "../log";
import type { NodeHttp } from "./http";
import type { LongPollProtocol, NodeErrorClassifier } from "./protocol";
import { decodeResponses, encodeRequest } from "./rpc";

/** The HTTP deadline beyond the time the node is asked to hold the call: it answers at its timeout. */
const DEADLINE_MARGIN_MS = 5_000;
/** Backoff after a failed long-poll: first wait, doubled per failure, capped. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
/** The node's wait in the first call after a start or a failure: it answers at once (0 would wait for ever). */
const FIRST_CALL_MS = 1;
/** How long before a node that lacks the long-poll's method is asked again (it may have been upgraded). */
const LACKING_RETRY_MS = 10 * 60_000;
/** How often a long-poll not allowed yet (its node's chain unchecked) looks again. */
const NOT_READY_WAIT_MS = 250;

export interface LongPoller {
  /** True while a call is held open on the node and the one before it was answered. */
  readonly live: boolean;
  /** `ready()` may have become true: look now rather than at the end of the wait. */
  wake(): void;
  stop(): void;
}

export function createLongPoller(options: {
  name: string;
  protocol: LongPollProtocol;
  http: NodeHttp;
  errorKind: NodeErrorClassifier;
  log: Logger;
  /** Whether the node may be asked now (its chain checked, if one is expected). */
  ready(): boolean;
  /** The node answered: its head is this block (a new one, or the same one at the node's timeout). */
  onBlock(block: { number: bigint; hash: string }): void;
  onLive(live: boolean): void;
}): LongPoller {
  const { protocol, log, name } = options;
  /** Ends the call in flight when stopped. */
  let current: AbortController | undefined;
  /** Ends the pause under way when stopped. */
  let wake: (() => void) | undefined;
  let live = false;
  let stopped = false;
  /** The node answered the call before: the next one is held open (else it answers at once). */
  let armed = false;

  function setLive(value: boolean) {
    if (live === value) return;
    live = value;
    options.onLive(value);
  }

  /** Waits `ms`, or less when stopped. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /** One call held open: the block the node answered, or a thrown failure (transport, or its error). */
  async function once(): Promise<{ number: bigint; hash: string } | undefined> {
    // The first call after a start or a failure answers at once: live means a node that answered it.
    const timeoutMs = armed ? protocol.timeoutMs : FIRST_CALL_MS;
    const { method, params } = protocol.call(timeoutMs);
    current = new AbortController();
    const text = await options.http.post(
      encodeRequest(0, method, params),
      timeoutMs + DEADLINE_MARGIN_MS,
      current.signal,
    );
    const outcome = decodeResponses(text, options.errorKind).get(0);
    if (!outcome) throw new UpstreamProtocolError(`${method}: the node answered another request id`);
    if (!outcome.ok) throw outcome.error;
    return protocol.blockOf(outcome.raw);
  }

  /** How long to wait after a failed long-poll: a node without the method is asked again much later. */
  function failed(error: ServiceError, backoff: number): number {
    if (error instanceof NodeError && error.kind === "method_unsupported") {
      log.warn("upstream has no long-poll method: its heads are polled only", {
        upstream: name,
        method: protocol.call(0).method,
        retryMs: LACKING_RETRY_MS,
      });
      return LACKING_RETRY_MS;
    }
    log.debug("upstream long-poll failed; retrying", {
      upstream: name,
      error: error.message,
      retryMs: backoff,
    });
    return backoff * (0.5 + Math.random() / 2);
  }

  async function run() {
    let backoff = RETRY_MIN_MS;
    while (!stopped) {
      if (!options.ready()) {
        setLive(false);
        await pause(NOT_READY_WAIT_MS);
        continue;
      }
      // Live while a call is held open on a node that answered the one before (its chain checked, if asked).
      setLive(armed);
      try {
        const block = await once();
        if (stopped) break;
        backoff = RETRY_MIN_MS;
        armed = true;
        // The next call goes out at once (the loop goes round), held open.
        setLive(true);
        if (block) options.onBlock(block);
      } catch (error) {
        if (stopped) break;
        armed = false;
        setLive(false);
        await pause(failed(error as ServiceError, backoff));
        backoff = Math.min(backoff * 2, RETRY_MAX_MS);
      }
    }
    setLive(false);
  }

  void run();

  return {
    get live() {
      return live;
    },
    wake: () => wake?.(),
    stop() {
      stopped = true;
      current?.abort();
      wake?.();
    },
  };
}
