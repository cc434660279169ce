/**
 * A loopback HTTP proxy in front of a real node, to inject what a real node cannot do on demand (lack a
 * method, refuse batches, fail, hang, answer garbage, answer slowly, lose its WebSockets). It records every
 * call it sees, and forwards WebSockets to the node's.
 */
import type { Server, ServerWebSocket } from "bun";
import { onTeardown } from "./shared";

export interface ProxyCall {
  method: string;
  params: unknown[];
}

interface Relay {
  upstream: WebSocket;
}

export type ProxyMode = (body: string, parsed: any) => Response | undefined | Promise<Response | undefined>;

export interface NodeProxy {
  url: string;
  port: number;
  /** Every call seen, in order (batch elements one by one). */
  calls: ProxyCall[];
  /** The HTTP request bodies seen, parsed. */
  requests: any[];
  /** Replaces how requests are answered; returning undefined forwards to the node. */
  mode: ProxyMode | undefined;
  /** Delay before forwarding, in ms. */
  delayMs: number;
  /** Methods answered "does not exist" (-32601), as a node without them answers. */
  hidden: Set<string>;
  /**
   * The JSON-RPC error a call is answered with instead of the node's (alone: with HTTP 500, as Bitcoin
   * Core answers its errors; in a batch: that element, the others the node's); undefined: the node answers.
   */
  fail: ((call: any) => { code: number; message: string } | undefined) | undefined;
  /** The most calls of each method it had waiting for their answer at once (clear it to measure anew). */
  peakInFlight: Map<string, number>;
  /** The most HTTP requests holding a call of each method it had waiting at once (clear it to measure anew). */
  peakRequests: Map<string, number>;
  /** While true, WebSocket upgrades are refused (503). */
  refuseSockets: boolean;
  /** A message sent to the node over a WebSocket waits for the Promise this gives it (undefined: none). */
  holdSocketMessage: ((call: any) => Promise<void> | undefined) | undefined;
  /** Closes every WebSocket it forwards (the node's side too). */
  dropSockets(): void;
  /** WebSockets it forwards now. */
  readonly sockets: number;
  /** Stops listening: connections are refused until restart(). */
  stop(): void;
  restart(): void;
  callsOf(method: string): ProxyCall[];
}

/** Counts one more in flight for each key, keeping the most seen at once in `peaks`. */
function enter(counts: Map<string, number>, peaks: Map<string, number>, keys: readonly string[]) {
  for (const key of keys) {
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n > (peaks.get(key) ?? 0)) peaks.set(key, n);
  }
}

function leave(counts: Map<string, number>, keys: readonly string[]) {
  for (const key of keys) counts.set(key, counts.get(key)! - 1);
}

/** Upper bound of a simulated hang, so no test waits forever. */
export const HANG_MS = 20_000;

export function startProxy(target: string, options: { hide?: string[] } = {}): NodeProxy {
  let server: Server<Relay> | undefined;
  const relays = new Set<ServerWebSocket<Relay>>();
  const inFlight = new Map<string, number>();
  const requestsInFlight = new Map<string, number>();

  const proxy: NodeProxy = {
    url: "",
    port: 0,
    calls: [],
    requests: [],
    mode: undefined,
    delayMs: 0,
    hidden: new Set(options.hide ?? []),
    fail: undefined,
    peakInFlight: new Map(),
    peakRequests: new Map(),
    refuseSockets: false,
    holdSocketMessage: undefined,
    dropSockets() {
      for (const ws of [...relays]) {
        ws.data.upstream.close();
        ws.close(1012, "proxy dropped the socket");
      }
    },
    get sockets() {
      return relays.size;
    },
    stop() {
      proxy.dropSockets();
      server?.stop(true);
      server = undefined;
    },
    restart() {
      if (!server) listen(proxy.port);
    },
    callsOf: (method) => proxy.calls.filter((c) => c.method === method),
  };

  async function handle(request: Request, bunServer: Server<Relay>): Promise<Response | undefined> {
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      if (proxy.refuseSockets) return new Response("sockets refused", { status: 503 });
      const upstream = new WebSocket(target.replace(/^http/, "ws"));
      const relay: Relay = { upstream };
      await new Promise<void>((resolve) => {
        upstream.onopen = () => resolve();
        upstream.onerror = () => resolve();
      });
      if (upstream.readyState !== WebSocket.OPEN) return new Response("node socket down", { status: 502 });
      return bunServer.upgrade(request, { data: relay })
        ? undefined
        : new Response("no upgrade", { status: 400 });
    }
    const body = await request.text();
    let parsed: any;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    proxy.requests.push(parsed);
    for (const c of Array.isArray(parsed) ? parsed : [parsed]) {
      if (c?.method) proxy.calls.push({ method: c.method, params: c.params });
    }
    const methods = [parsed].flat().flatMap((c) => (c?.method ? [c.method as string] : []));
    const held = [...new Set(methods)];
    enter(inFlight, proxy.peakInFlight, methods);
    enter(requestsInFlight, proxy.peakRequests, held);
    try {
      return await answer(body, parsed);
    } finally {
      leave(requestsInFlight, held);
      leave(inFlight, methods);
    }
  }

  async function answer(body: string, parsed: any): Promise<Response> {
    const custom = await proxy.mode?.(body, parsed);
    if (custom) return custom;
    if (proxy.delayMs > 0) await Bun.sleep(proxy.delayMs);
    const hidden = proxy.hidden;
    const errorOf = (c: any) =>
      hidden.has(c?.method)
        ? { code: -32601, message: `the method ${c.method} does not exist/is not available` }
        : proxy.fail?.(c);
    const single = Array.isArray(parsed) ? undefined : errorOf(parsed);
    if (single) {
      const status = hidden.has(parsed.method) ? 200 : 500;
      return Response.json({ jsonrpc: "2.0", id: parsed.id, error: single }, { status });
    }
    if (Array.isArray(parsed)) {
      // Refused inside a batch too: those elements answered here, the rest by the node.
      const errors = parsed.map(errorOf);
      if (errors.some((e) => e !== undefined)) {
        const rest = parsed.filter((_c, i) => errors[i] === undefined);
        let answered: unknown = [];
        if (rest.length > 0) {
          const forwarded = await forward(JSON.stringify(rest));
          const text = await forwarded.text();
          // The node's refusal of the whole request (its work queue full, say) is the answer.
          if (forwarded.status !== 200) return new Response(text, { status: forwarded.status });
          answered = JSON.parse(text);
        }
        return Response.json([
          ...(answered as unknown[]),
          ...parsed.flatMap((c, i) =>
            errors[i] === undefined ? [] : [{ jsonrpc: "2.0", id: c.id, error: errors[i] }],
          ),
        ]);
      }
    }
    const upstream = await forward(body);
    return new Response(await upstream.text(), {
      status: upstream.status,
      headers: { "content-type": "application/json" },
    });
  }

  function forward(body: string) {
    return fetch(target, { method: "POST", body, headers: { "content-type": "application/json" } });
  }

  function listen(port: number) {
    server = Bun.serve<Relay>({
      hostname: "127.0.0.1",
      port,
      fetch: handle as never,
      idleTimeout: 60,
      websocket: {
        open(ws) {
          relays.add(ws);
          ws.data.upstream.onmessage = (event) => ws.send(String(event.data));
          ws.data.upstream.onclose = () => ws.close(1012, "node socket closed");
        },
        async message(ws, message) {
          const text = String(message);
          const parsed = JSON.parse(text);
          for (const c of [parsed].flat())
            if (c?.method) proxy.calls.push({ method: c.method, params: c.params });
          const hold = proxy.holdSocketMessage?.(parsed);
          if (hold) await hold;
          ws.data.upstream.send(text);
        },
        close(ws) {
          relays.delete(ws);
          ws.data.upstream.close();
        },
      },
    });
    proxy.port = server.port!;
    proxy.url = `http://127.0.0.1:${proxy.port}`;
  }

  listen(0);
  onTeardown(async () => proxy.stop());
  return proxy;
}

/** Modes for fault injection. */
export const faults = {
  /** `fault` for requests holding a call `which` picks, alone or in a batch; the node answers the rest. */
  forCalls:
    (which: (call: any) => boolean, fault: ProxyMode): ProxyMode =>
    (body, parsed) =>
      [parsed].flat().some(which) ? fault(body, parsed) : undefined,
  http500: (): ProxyMode => () => new Response("internal error", { status: 500 }),
  garbage: (): ProxyMode => () => new Response("<html>not json", { status: 200 }),
  hang: (): ProxyMode => async () => {
    await Bun.sleep(HANG_MS);
    return new Response("late", { status: 504 });
  },
};
