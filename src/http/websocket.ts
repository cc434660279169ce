/**
 * JSON-RPC over WebSocket on /node/jsonrpc (docs/interface.md §14): `GET /node/jsonrpc` with
 * `Upgrade: websocket`, the key in the query or a header, checked before the upgrade (401 otherwise).
 * Every message takes the guarded path of http/guard.ts (size, rate limit, JSON, batch length) and the
 * same JSON-RPC dispatch as HTTP (http/jsonrpc.ts), plus `eth_subscribe` and `eth_unsubscribe`, served
 * by realtime/subscriptions.ts.
 *
 * A socket is its caller's for as long as the keys allow: its identity (the key, or the IP address in open
 * mode) is the one its HTTP requests have, so they share one rate-limit bucket and one connection count; each
 * reading of the keys checks every open socket again, closing those whose key was revoked (or that were
 * opened while the service ran open, once it requires keys) and giving the others their new rate.
 *
 * Hygiene: at most WS_MAX_CONNECTIONS sockets per key (per IP in open mode) and WS_MAX_SUBSCRIPTIONS
 * subscriptions per socket; at most MAX_IN_FLIGHT messages of one socket are worked on at once (it is not
 * read further meanwhile: TCP's backpressure slows its client), a batch runs STREAMED_BATCH_WINDOW calls at
 * once, and the answers being built plus the unsent data stay within WS_MAX_BUFFER_BYTES. A socket whose
 * unsent data passes WS_MAX_BUFFER_BYTES (a client that does not read) is closed with 1008 and a reason,
 * and dropped if it does not go within a second; every socket is pinged every 30 s and closed by Bun when
 * it stays silent past WS_IDLE_SECONDS.
 */
import type { ServerWebSocket, WebSocketHandler } from "bun";
import type { Caller } from "../caller";
import {
  AnswerTooLargeError,
  InvalidParamsError,
  ParseError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
} from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { Subscriber, Subscriptions } from "../realtime/subscriptions";
import { json, refusedIdentity, restError, rpcErrorText } from "./answer";
import type { Guard, Handler, Session, Steps } from "./guard";
import type { JsonRpc, LocalMethods, RpcPlan, TextBudget } from "./jsonrpc";

/** The methods every instance serves on its WebSocket alone, whatever its family (subscriptions). */
export const SOCKET_METHODS: ReadonlySet<string> = new Set(["eth_subscribe", "eth_unsubscribe"]);

/** How often every socket is pinged. */
const PING_INTERVAL_MS = 30_000;
/** Bun closes a socket silent (no message, no pong) this long. */
const WS_IDLE_SECONDS = 90;
/** How long a slow reader closed with 1008 may take to go before it is dropped. */
const CLOSE_GRACE_MS = 1_000;
/**
 * Messages of one socket worked on at once; past it the socket is not read until one is answered. Hits are
 * answered as they are read, so this bounds what waits for the node, not a bot's pace.
 */
export const MAX_IN_FLIGHT = 64;
/** Close reasons (at most 123 bytes). */
const SLOW_READER_REASON = "slow reader: more unsent data than WS_MAX_BUFFER_BYTES";
const REVOKED_REASON = "the API key was revoked";
const KEYS_REQUIRED_REASON = "the service now requires an API key";
/** RFC 6455's policy violation: every close the service makes of a live socket. */
const POLICY_VIOLATION = 1008;

interface SocketData extends Session, Subscriber {
  id: string;
  /** Its caller as the keys said last: its rate changes with them. */
  caller: Caller;
  messages: number;
  /** Messages being worked on, and those read past MAX_IN_FLIGHT (the socket paused meanwhile). */
  inFlight: number;
  waiting: string[];
  /** Characters of batch answers being built (jsonrpc.ts TextBudget). */
  held: number;
  ws?: ServerWebSocket<SocketData>;
  closing: boolean;
}

export interface WebSocketTransport {
  /** GET /node/jsonrpc: the upgrade, or 404 for a GET that asks for none. */
  upgrade: Handler;
  handler: WebSocketHandler<SocketData>;
  stop(): void;
}

export function createWebSocketTransport(options: {
  guard: Guard;
  rpc: JsonRpc;
  subscriptions: Subscriptions;
  metrics: Metrics;
  log: Logger;
  maxSubscriptions: number;
  maxConnections: number;
  maxBufferBytes: number;
  maxBodyBytes: number;
}): WebSocketTransport {
  const { guard, rpc, subscriptions, metrics, log, maxSubscriptions, maxConnections, maxBufferBytes } =
    options;
  const open = new Set<SocketData>();
  const perIdentity = new Map<string, number>();
  let sockets = 0;
  let stopping = false;

  const pinger = setInterval(() => {
    for (const socket of open) socket.ws?.ping();
  }, PING_INTERVAL_MS);

  /** Closes a socket the service will not serve any more: its subscriptions end now, not at the close. */
  function shut(socket: SocketData, reason: string) {
    const ws = socket.ws;
    if (socket.closing || !ws) return;
    socket.closing = true;
    socket.waiting.length = 0;
    subscriptions.drop(socket);
    ws.close(POLICY_VIOLATION, reason);
    setTimeout(() => {
      if (ws.readyState !== 3) ws.terminate();
    }, CLOSE_GRACE_MS).unref?.();
  }

  function slowReader(socket: SocketData) {
    if (socket.closing) return;
    metrics.wsSlowReadersClosed.inc();
    log.warn("WebSocket closed: slow reader", {
      socket: socket.id,
      buffered: socket.ws?.getBufferedAmount(),
    });
    shut(socket, SLOW_READER_REASON);
  }

  function send(socket: SocketData, text: string) {
    const ws = socket.ws;
    if (!ws || socket.closing) return;
    // 0: dropped (past Bun's backpressure limit); otherwise queued or sent.
    const status = ws.sendText(text);
    if (status === 0 || ws.getBufferedAmount() > maxBufferBytes) slowReader(socket);
  }

  // Revoked keys and changed rates reach the sockets opened with them.
  guard.onKeysReloaded(() => {
    for (const socket of open) {
      const now = guard.recheck(socket.caller);
      if (now === undefined) {
        log.info("WebSocket closed: its caller may no longer call", { socket: socket.id });
        shut(socket, socket.caller.keyHash === null ? KEYS_REQUIRED_REASON : REVOKED_REASON);
      } else socket.caller = now;
    }
  });

  /**
   * A batch's answer held while it is built. The answers being built on a socket may take WS_MAX_BUFFER_BYTES
   * (past it the batch is refused: it could not be sent), and with its unsent data no more (past it, a
   * client that does not read is closed as a slow reader, and the batch stops).
   */
  const budgetOf = (socket: SocketData): TextBudget => ({
    live: () => !socket.closing,
    take(chars) {
      socket.held += chars;
      if (socket.held > maxBufferBytes) {
        throw new AnswerTooLargeError(
          `the batches answered on this socket would hold more than ${maxBufferBytes} bytes (WS_MAX_BUFFER_BYTES): send smaller batches`,
        );
      }
      if (socket.held + (socket.ws?.getBufferedAmount() ?? 0) > maxBufferBytes) slowReader(socket);
    },
    release(chars) {
      socket.held -= chars;
    },
  });

  /** eth_subscribe and eth_unsubscribe, for one socket. */
  const localMethods = (socket: SocketData): LocalMethods => ({
    has: (method) => SOCKET_METHODS.has(method),
    async run(method, params) {
      if (method === "eth_unsubscribe") {
        if (params.length !== 1 || typeof params[0] !== "string") {
          throw new InvalidParamsError("invalid params: eth_unsubscribe takes [subscription id]");
        }
        return String(subscriptions.unsubscribe(socket, params[0]));
      }
      return JSON.stringify(await subscriptions.subscribe(socket, params, maxSubscriptions));
    },
  });

  /** One message: the guarded path, then the JSON-RPC dispatch with this socket's methods. */
  const steps = (socket: SocketData): Steps<RpcPlan, string | undefined> => {
    const options = { transport: "ws", envelope422: false, local: localMethods(socket) } as const;
    const budget = budgetOf(socket);
    return {
      name: "ws:/node/jsonrpc",
      body: true,
      acceptText(text) {
        const plan = rpc.planText(text, options);
        return plan && { input: plan, cost: plan.cost };
      },
      accept(body, text) {
        const plan = rpc.plan(body, options, text);
        return { input: plan, cost: plan.cost };
      },
      run(plan, context) {
        return rpc.answerText(plan, context, budget);
      },
      refuse(error: ServiceError, seen) {
        // Text that is not JSON: JSON-RPC's parse error (JSON nested too deep: an invalid request), and the
        // socket stays open.
        const e =
          error instanceof RequestValidationError && error.issues[0]?.type !== "json_too_deep"
            ? new ParseError(`parse error: ${error.message}`)
            : error;
        return rpcErrorText(refusedIdentity(seen), e);
      },
    };
  };
  const stepsOf = new WeakMap<SocketData, Steps<RpcPlan, string | undefined>>();

  /** One message through the guarded path; the next one read meanwhile is taken when it is answered. */
  function handle(socket: SocketData, text: string) {
    const requestId = `${socket.id}-${(++socket.messages).toString(36)}`;
    let socketSteps = stepsOf.get(socket);
    if (!socketSteps) {
      socketSteps = steps(socket);
      stepsOf.set(socket, socketSteps);
    }
    socket.inFlight++;
    void guard.message(socketSteps, socket, text, requestId).then((answer) => {
      socket.inFlight--;
      if (answer !== undefined) send(socket, answer);
      if (socket.closing) return;
      const next = socket.waiting.shift();
      if (next !== undefined) handle(socket, next);
      else if (socket.ws?.isPaused) socket.ws.resume();
    });
  }

  const handler: WebSocketHandler<SocketData> = {
    // Bun's own limits sit above ours, so ours answer (an error the client can read) before Bun closes
    // the socket (1009 past twice MAX_BODY_BYTES, as for HTTP bodies).
    maxPayloadLength: options.maxBodyBytes * 2 + 1024,
    backpressureLimit: maxBufferBytes + 1024 * 1024,
    closeOnBackpressureLimit: false,
    idleTimeout: WS_IDLE_SECONDS,
    sendPings: true,
    open(ws) {
      const socket = ws.data;
      socket.ws = ws;
      open.add(socket);
      metrics.wsConnections.set(++sockets);
    },
    message(ws, message) {
      const socket = ws.data;
      if (socket.closing) return;
      const text = typeof message === "string" ? message : message.toString("utf8");
      if (socket.inFlight < MAX_IN_FLIGHT) handle(socket, text);
      else {
        // Messages already read when the socket paused still come: they wait their turn.
        socket.waiting.push(text);
        if (!ws.isPaused) ws.pause();
      }
    },
    close(ws) {
      const socket = ws.data;
      socket.closing = true;
      socket.ws = undefined;
      if (!open.delete(socket)) return;
      metrics.wsConnections.set(--sockets);
      subscriptions.drop(socket);
      const left = (perIdentity.get(socket.identity) ?? 1) - 1;
      if (left === 0) perIdentity.delete(socket.identity);
      else perIdentity.set(socket.identity, left);
    },
  };

  const notFound = () => json({ detail: "Not Found" }, 404);

  return {
    handler,
    async upgrade(request, server) {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || stopping) return notFound();
      let session: Session;
      try {
        const authenticated = guard.authenticate(request, server);
        session = authenticated instanceof Promise ? await authenticated : authenticated;
      } catch (error) {
        return restError(toServiceError(error));
      }
      // Its address is read now, while the request is at hand: the socket's calls and its count are charged
      // to the identity its HTTP requests have.
      const identity = session.identity;
      const held = perIdentity.get(identity) ?? 0;
      if (held >= maxConnections) {
        return restError(
          new RateLimitedError(
            `this key holds ${maxConnections} WebSockets, the most it may (WS_MAX_CONNECTIONS)`,
            1,
          ),
        );
      }
      const socket: SocketData = {
        caller: session.caller,
        identity,
        id: guard.requestId(request),
        messages: 0,
        inFlight: 0,
        waiting: [],
        held: 0,
        closing: false,
        send: (text) => send(socket, text),
      };
      if (!server.upgrade(request, { data: socket })) return notFound();
      perIdentity.set(identity, held + 1);
      return undefined as unknown as Response;
    },
    stop() {
      stopping = true;
      clearInterval(pinger);
      for (const socket of [...open]) {
        socket.closing = true;
        socket.ws?.close(1001, "the service is shutting down");
      }
    },
  };
}
