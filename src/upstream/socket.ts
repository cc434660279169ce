/**
 * An upstream's WebSocket, for a family whose nodes have pub/sub (upstream/protocol.ts): one connection per
 * upstream, subscribed to new heads for as long as the service runs, and carrying the pass-through
 * subscriptions clients share (one node subscription per kind, whatever the number of clients). A dropped
 * connection is opened again with backoff, and every subscription is made again on the new one; `live`
 * says whether the node is pushing right now. Once the chain is known, each connection first asks the
 * node's identity: a node on another chain is dropped, and nothing it pushes is used.
 */

import type { BlockHeader } from "../blockHeader";
import { NodeError } from "../errors";
import type { Logger } from "../log";
import type { NodeProtocol, PubSubProtocol } from "./protocol";

/** Reconnection backoff: first wait, doubled per failed attempt, capped. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/** How long a subscription request, or a call of the chain check, may wait for the node's answer. */
const SUBSCRIBE_TIMEOUT_MS = 5_000;

export interface SocketSubscription {
  /**
   * Resolves once the node first accepted it (it is made again on each new connection); rejects with the
   * node's refusal, or when no answer came within SUBSCRIBE_TIMEOUT_MS.
   */
  readonly ready: Promise<void>;
  unsubscribe(): void;
}

export interface UpstreamSocket {
  readonly live: boolean;
  /** From now on (and on every new connection) the node must serve this chain (NodeProtocol.readIdentity). */
  expectChain(identity: string): void;
  /** Resolves once the first connection has subscribed to new heads (true), or has failed (false). */
  readonly ready: Promise<boolean>;
  /** A subscription on the node (the pub/sub's `subscribe` params); each item is the JSON text of one result. */
  subscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription;
  close(): void;
}

interface Registered {
  params: unknown[];
  onItem(result: string): void;
  /** Asked for on the current connection. */
  requested?: boolean;
  /** The node's id for it on the current connection. */
  nodeId?: string;
  settle?: { resolve(): void; reject(error: Error): void };
}

export function createUpstreamSocket(options: {
  url: string;
  name: string;
  log: Logger;
  /** The node's identity and headers. */
  protocol: NodeProtocol;
  pubsub: PubSubProtocol;
  onHead(header: BlockHeader): void;
  onLive?(live: boolean): void;
}): UpstreamSocket {
  const { url, name, log, protocol, pubsub } = options;
  let socket: WebSocket | undefined;
  let live = false;
  let closed = false;
  let backoff = RECONNECT_MIN_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let nextId = 1;
  let expected: string | undefined;
  /** The current connection's node answered the expected identity. */
  let checked = false;
  const registered = new Set<Registered>();
  let settleReady: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => {
    settleReady = (ok) => {
      settleReady = () => {};
      resolve(ok);
    };
  });
  /** Requests in flight on the current connection, by id. */
  const requests = new Map<number, Registered>();
  /** Calls of the chain check in flight on the current connection, by id. */
  const calls = new Map<number, { resolve(result: string): void; reject(error: Error): void }>();
  const byNodeId = new Map<string, Registered>();

  const heads: Registered = {
    params: pubsub.newHeads,
    onItem(result) {
      if (expected !== undefined && !checked) return;
      const header = protocol.parseHeader(result);
      if (header) options.onHead(header);
    },
    settle: { resolve: () => settleReady(true), reject: () => settleReady(false) },
  };
  registered.add(heads);

  function setLive(value: boolean) {
    if (live === value) return;
    live = value;
    options.onLive?.(value);
  }

  /** One call on the current connection: its result's JSON text, or its error. */
  function callOnSocket(ws: WebSocket, method: string, params: unknown[]): Promise<string> {
    return new Promise((resolve, reject) => {
      if (ws.readyState !== WebSocket.OPEN) return reject(new Error("the WebSocket closed"));
      const id = nextId++;
      const timeout = setTimeout(() => {
        calls.delete(id);
        reject(new Error(`the node did not answer ${method} within ${SUBSCRIBE_TIMEOUT_MS} ms`));
      }, SUBSCRIBE_TIMEOUT_MS);
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timeout);
          fn(value);
        };
      calls.set(id, { resolve: settle(resolve), reject: settle(reject) });
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** The node's identity, asked first on a connection once the chain is known. */
  function checkChain() {
    checked = false;
    setLive(false);
    const ws = socket;
    if (!ws) return;
    void protocol
      .readIdentity((method, params) => callOnSocket(ws, method, params))
      .then(
        (identity) => onIdentity(ws, identity, undefined),
        (error: Error) => onIdentity(ws, undefined, error),
      );
  }

  function subscribeAll() {
    setLive(true);
    for (const entry of registered) if (!entry.requested) send(entry);
  }

  function send(entry: Registered) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const id = nextId++;
    entry.requested = true;
    requests.set(id, entry);
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method: pubsub.subscribe, params: entry.params }));
  }

  function unsubscribeOnNode(nodeId: string) {
    byNodeId.delete(nodeId);
    if (socket?.readyState !== WebSocket.OPEN) return;
    socket.send(
      JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: pubsub.unsubscribe, params: [nodeId] }),
    );
  }

  /** The node's answer to the identity check: the expected chain subscribes, another is dropped. */
  function onIdentity(ws: WebSocket, identity: string | undefined, error: Error | undefined) {
    // A check of a connection since replaced, or of a chain expected before: the current one decides.
    if (socket !== ws || checked) return;
    if (identity !== undefined && identity === expected) {
      checked = true;
      subscribeAll();
      return;
    }
    log.warn(
      error
        ? "upstream WebSocket could not say its chain; dropped"
        : "upstream WebSocket serves another chain; dropped",
      { upstream: name, identity: identity ?? null, expected: expected ?? null, error: error?.message },
    );
    backoff = RECONNECT_MAX_MS;
    ws.close();
  }

  function onMessage(text: string) {
    let message: {
      id?: number;
      result?: unknown;
      error?: { code: number; message: string };
      method?: string;
      params?: { subscription?: string; result?: unknown };
    };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method === pubsub.notification && message.params?.subscription !== undefined) {
      const entry = byNodeId.get(message.params.subscription);
      if (entry) {
        try {
          entry.onItem(JSON.stringify(message.params.result));
        } catch (error) {
          log.error("upstream subscription listener failed", { upstream: name, error });
        }
      }
      return;
    }
    if (typeof message.id !== "number") return;
    const call = calls.get(message.id);
    if (call) {
      calls.delete(message.id);
      if (message.error) call.reject(new Error(`${message.error.code}: ${message.error.message}`));
      else call.resolve(JSON.stringify(message.result ?? null));
      return;
    }
    const entry = requests.get(message.id);
    requests.delete(message.id);
    if (!entry) return;
    if (typeof message.result === "string") {
      // Ended while the node was answering: it must not go on on the node, unseen.
      if (!registered.has(entry)) unsubscribeOnNode(message.result);
      else {
        entry.nodeId = message.result;
        byNodeId.set(message.result, entry);
      }
      entry.settle?.resolve();
    } else if (message.error && registered.has(entry)) {
      const { code, message: reason } = message.error;
      registered.delete(entry);
      entry.settle?.reject(
        new NodeError(
          code,
          reason,
          undefined,
          JSON.stringify(message.error),
          protocol.errorKind(code, reason),
        ),
      );
    }
  }

  function connect() {
    timer = undefined;
    if (closed) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch (error) {
      log.warn("upstream WebSocket cannot be opened", { upstream: name, error: (error as Error).message });
      settleReady(false);
      return;
    }
    socket = ws;
    ws.onopen = () => {
      backoff = RECONNECT_MIN_MS;
      log.info("upstream WebSocket open", { upstream: name });
      if (expected === undefined) subscribeAll();
      else checkChain();
    };
    ws.onmessage = (event) => {
      if (typeof event.data === "string") onMessage(event.data);
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = undefined;
      checked = false;
      requests.clear();
      for (const call of calls.values()) call.reject(new Error("the WebSocket closed"));
      calls.clear();
      byNodeId.clear();
      for (const entry of registered) {
        entry.nodeId = undefined;
        entry.requested = false;
      }
      if (live) log.warn("upstream WebSocket lost; reconnecting", { upstream: name });
      setLive(false);
      settleReady(false);
      if (closed) return;
      timer = setTimeout(connect, backoff * (0.5 + Math.random() / 2));
      backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
    };
    ws.onerror = () => {
      // onclose follows, and reconnects.
    };
  }

  connect();

  return {
    ready,
    get live() {
      return live;
    },
    expectChain(identity) {
      expected = identity;
      if (socket?.readyState === WebSocket.OPEN) checkChain();
    },
    subscribe(params, onItem) {
      const entry: Registered = { params, onItem };
      const ready = new Promise<void>((resolve, reject) => {
        const timeout = setTimeout(
          () =>
            reject(new Error(`the node did not accept the subscription within ${SUBSCRIBE_TIMEOUT_MS} ms`)),
          SUBSCRIBE_TIMEOUT_MS,
        );
        entry.settle = {
          resolve: () => {
            clearTimeout(timeout);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timeout);
            reject(error);
          },
        };
      });
      ready.catch(() => {});
      registered.add(entry);
      if (live) send(entry);
      return {
        ready,
        unsubscribe() {
          registered.delete(entry);
          if (entry.nodeId !== undefined) unsubscribeOnNode(entry.nodeId);
        },
      };
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      const ws = socket;
      socket = undefined;
      setLive(false);
      settleReady(false);
      ws?.close();
    },
  };
}

/**
 * The WebSocket URL of an upstream: the configured one, or derived from its HTTP URL (ws:// for http://,
 * wss:// for https://, same host, port and path); undefined when turned off.
 */
export function socketUrlOf(httpUrl: string, configured: string | undefined): string | undefined {
  if (configured === "off") return undefined;
  if (configured !== undefined && configured !== "") return configured;
  return httpUrl.replace(/^http/, "ws");
}
