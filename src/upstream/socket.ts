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
/** The request id of the chain check on a new connection (subscriptions count from 1). */
const CHAIN_CHECK_ID = 0;
/** How long a subscription request may wait for the node's answer. */
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
  /** From now on (and on every new connection) the node must serve this chain (NodeProtocol.identityOf). */
  expectChain(identity: bigint): void;
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
  let expected: bigint | undefined;
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

  /** The node's identity, asked first on a connection once the chain is known (request id 0). */
  function checkChain() {
    checked = false;
    setLive(false);
    const { method, params } = protocol.identity;
    socket?.send(JSON.stringify({ jsonrpc: "2.0", id: CHAIN_CHECK_ID, method, params }));
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
  function onIdentity(result: unknown) {
    const identity = result === undefined ? undefined : protocol.identityOf(JSON.stringify(result));
    if (identity !== undefined && identity === expected) {
      checked = true;
      subscribeAll();
      return;
    }
    log.warn("upstream WebSocket serves another chain; dropped", {
      upstream: name,
      identity: result ?? null,
      expected: expected === undefined ? null : protocol.identityText(expected),
    });
    backoff = RECONNECT_MAX_MS;
    socket?.close();
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
    if (message.id === CHAIN_CHECK_ID) return onIdentity(message.result);
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
