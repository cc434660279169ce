/**
 * JSON-RPC over WebSocket on /node/jsonrpc (docs/interface.md §14): `GET /node/jsonrpc` with
 * `Upgrade: websocket`, the key in the query or a header, checked before the upgrade (401 otherwise).
 * Every message takes the guarded path of http/guard.ts (size, rate limit, JSON, batch length) and the
 * same JSON-RPC dispatch as HTTP (http/jsonrpc.ts), plus `eth_subscribe` and `eth_unsubscribe`, served
 * by realtime/subscriptions.ts.
 *
 * Hygiene: at most WS_MAX_CONNECTIONS sockets per key (per IP in open mode) and WS_MAX_SUBSCRIPTIONS
 * subscriptions per socket; a socket whose unsent data passes WS_MAX_BUFFER_BYTES (a client that does not
 * read) is closed with 1008 and a reason, and dropped if it does not go within a second; every socket is
 * pinged every 30 s and closed by Bun when it stays silent past WS_IDLE_SECONDS.
 */
import type { ServerWebSocket, WebSocketHandler } from "bun";
import {
  InvalidParamsError,
  ParseError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
} from "../errors";
import { type RawJson, rawText } from "../json";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { Subscriber, Subscriptions } from "../realtime/subscriptions";
import { json, refusedIdentity, restError, rpcErrorText } from "./answer";
import type { Guard, Handler, Session, Steps } from "./guard";
import type { JsonRpc, LocalMethods, RpcPlan } from "./jsonrpc";

/** How often every socket is pinged. */
const PING_INTERVAL_MS = 30_000;
/** Bun closes a socket silent (no message, no pong) this long. */
const WS_IDLE_SECONDS = 90;
/** How long a slow reader closed with 1008 may take to go before it is dropped. */
const CLOSE_GRACE_MS = 1_000;
/** The close reason's limit is 123 bytes. */
const SLOW_READER_REASON = "slow reader: more unsent data than WS_MAX_BUFFER_BYTES";

interface SocketData extends Session, Subscriber {
  id: string;
  messages: number;
  ws?: ServerWebSocket<SocketData>;
  closing: boolean;
}

export interface WebSocketTransport {
  /** GET /node/jsonrpc: the upgrade, or 404 for a GET that asks for none. */
  upgrade: Handler;
  handler: WebSocketHandler<SocketData>;
  stop(): void;
}

function joinText(parts: RawJson[]): string {
  let text = "";
  for (const part of parts) text += typeof part === "string" ? part : rawText(part);
  return text;
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

  function slowReader(socket: SocketData) {
    if (socket.closing) return;
    socket.closing = true;
    metrics.wsSlowReadersClosed.inc();
    log.warn("WebSocket closed: slow reader", {
      socket: socket.id,
      buffered: socket.ws?.getBufferedAmount(),
    });
    const ws = socket.ws!;
    ws.close(1008, SLOW_READER_REASON);
    setTimeout(() => {
      if (ws.readyState !== 3) ws.terminate();
    }, CLOSE_GRACE_MS).unref?.();
  }

  function send(socket: SocketData, text: string) {
    const ws = socket.ws;
    if (!ws || socket.closing) return;
    // 0: dropped (past Bun's backpressure limit); otherwise queued or sent.
    const status = ws.sendText(text);
    if (status === 0 || ws.getBufferedAmount() > maxBufferBytes) slowReader(socket);
  }

  /** eth_subscribe and eth_unsubscribe, for one socket. */
  const localMethods = (socket: SocketData): LocalMethods => ({
    has: (method) => method === "eth_subscribe" || method === "eth_unsubscribe",
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
  const steps = (socket: SocketData): Steps<RpcPlan, string> => {
    const options = { transport: "ws", envelope422: false, local: localMethods(socket) } as const;
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
      run(plan, { requestId }) {
        const answer = rpc.answer(plan, requestId);
        return answer instanceof Promise ? answer.then((a) => joinText(a.parts)) : joinText(answer.parts);
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
  const stepsOf = new WeakMap<SocketData, Steps<RpcPlan, string>>();

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
      const requestId = `${socket.id}-${(++socket.messages).toString(36)}`;
      let socketSteps = stepsOf.get(socket);
      if (!socketSteps) {
        socketSteps = steps(socket);
        stepsOf.set(socket, socketSteps);
      }
      void guard.message(socketSteps, socket, text, requestId).then((answer) => send(socket, answer));
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
      const held = perIdentity.get(session.identity) ?? 0;
      if (held >= maxConnections) {
        return restError(
          new RateLimitedError(
            `this key holds ${maxConnections} WebSockets, the most it may (WS_MAX_CONNECTIONS)`,
            1,
          ),
        );
      }
      const socket: SocketData = {
        ...session,
        id: guard.requestId(request),
        messages: 0,
        closing: false,
        send: (text) => send(socket, text),
      };
      if (!server.upgrade(request, { data: socket })) return notFound();
      perIdentity.set(session.identity, held + 1);
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
