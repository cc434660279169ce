/**
 * A loopback HTTP proxy in front of a real node, to inject what a real node cannot do on demand
 * (lack a method, fail, hang, answer garbage). It records every JSON-RPC call it forwards.
 */
import type { Server } from "bun";
import { onTeardown } from "./shared";

export interface ProxyCall {
  method: string;
  params: unknown[];
}

export interface NodeProxy {
  url: string;
  /** Every call seen, in order (batch elements one by one). */
  calls: ProxyCall[];
  /** HTTP requests seen. */
  httpRequests: number;
  /** Replaces how requests are answered; undefined forwards to the node. */
  mode: ((body: string, parsed: any) => Response | Promise<Response> | undefined) | undefined;
  stop(): void;
}

export function startProxy(target: string, options: { hide?: string[] } = {}): NodeProxy {
  const hidden = new Set(options.hide ?? []);
  const proxy: NodeProxy = {
    url: "",
    calls: [],
    httpRequests: 0,
    mode: undefined,
    stop: () => server.stop(true),
  };
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      proxy.httpRequests++;
      const body = await request.text();
      let parsed: any;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      const list = Array.isArray(parsed) ? parsed : [parsed];
      for (const c of list) if (c?.method) proxy.calls.push({ method: c.method, params: c.params });
      const custom = proxy.mode?.(body, parsed);
      if (custom) return custom;
      if (!Array.isArray(parsed) && hidden.has(parsed?.method)) {
        return Response.json({
          jsonrpc: "2.0",
          id: parsed.id,
          error: { code: -32601, message: `the method ${parsed.method} does not exist/is not available` },
        });
      }
      const upstream = await fetch(target, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      return new Response(await upstream.text(), {
        status: upstream.status,
        headers: { "content-type": "application/json" },
      });
    },
  });
  proxy.url = `http://127.0.0.1:${server.port}`;
  onTeardown(async () => proxy.stop());
  return proxy;
}
