/**
 * An upstream's WebSocket: one connection per upstream, subscribed to `newHeads` for as long as the service
 * runs, and carrying the pass-through subscriptions clients share (one node subscription per kind,
 * whatever the number of clients). A dropped connection is opened again with backoff, and every
 * subscription is made again on the new one; `live` says whether the node is pushing right now. Once the
 * chain is known, each connection first asks the node's chain id: a node on another chain is dropped, and
 * nothing it pushes is used.
 */

import type { BlockHeader } from "../blockHeader";
import { NodeError } from "../errors";
import { parseHeader } from "../families/evm/blockHeader";
import { nodeErrorKind } from "../families/evm/nodeErrors";
import type { Logger } from "../log";

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
  /** From now on (and on every new connection) the node must serve this chain (0x-hex chain id). */
  expectChain(chainId: string): void;
  /** Resolves once the first connection has subscribed to newHeads (true), or has failed (false). */
  readonly ready: Promise<boolean>;
  /** A subscription on the node (`eth_subscribe` params); each item is the JSON text of one result. */
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
  onHead(header: BlockHeader): void;
  onLive?(live: boolean): void;
}): UpstreamSocket {
  const { url, name, log } = options;
  let socket: WebSocket | undefined;
  let live = false;
  let closed = false;
  let backoff = RECONNECT_MIN_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let nextId = 1;
  let expected: string | undefined;
  /** The current connection's node answered the expected chain id. */
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
    params: ["newHeads"],
    onItem(result) {
      if (expected !== undefined && !checked) return;
      const header = parseHeader(result);
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

  /** The node's chain id, asked first on a connection once the chain is known (request id 0). */
  function checkChain() {
    checked = false;
    setLive(false);
    socket?.send(JSON.stringify({ jsonrpc: "2.0", id: CHAIN_CHECK_ID, method: "eth_chainId", params: [] }));
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
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method: "eth_subscribe", params: entry.params }));
  }

  function unsubscribeOnNode(nodeId: string) {
    byNodeId.delete(nodeId);
    if (socket?.readyState !== WebSocket.OPEN) return;
    socket.send(
      JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "eth_unsubscribe", params: [nodeId] }),
    );
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
    if (message.method === "eth_subscription" && message.params?.subscription !== undefined) {
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
    if (message.id === CHAIN_CHECK_ID) {
      if (typeof message.result === "string" && message.result.toLowerCase() === expected) {
        checked = true;
        subscribeAll();
      } else {
        log.warn("upstream WebSocket serves another chain; dropped", {
          upstream: name,
          chainId: message.result ?? null,
          expected,
        });
        backoff = RECONNECT_MAX_MS;
        socket?.close();
      }
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
        new NodeError(code, reason, undefined, JSON.stringify(message.error), nodeErrorKind(code, reason)),
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
    expectChain(chainId) {
      expected = chainId.toLowerCase();
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
