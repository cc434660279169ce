/**
 * A loopback HTTP proxy in front of a node that counts the JSON-RPC calls passing through it (a batch's
 * elements one by one), by method: what the service asks of the node, read without asking the service (its
 * /metrics walks the whole JavaScript heap for the default process metrics, blocking it for as long as that
 * takes). Requests go on with their own headers (the credentials the service sends); answers stream back
 * as they come, without a copy.
 */

/** Long-polls (`waitfornewblock`) are held open for longer than Bun's default idle timeout (10 s). */
const IDLE_TIMEOUT_S = 255;

export interface CountingProxy {
  /** The proxy's URL with the node URL's credentials, as UPSTREAM_URLS takes it. */
  url: string;
  /** Calls seen so far, by method. */
  readonly calls: ReadonlyMap<string, number>;
  /** Calls seen so far, the methods in `leaveOut` left out. */
  total(leaveOut?: ReadonlySet<string>): number;
  stop(): void;
}

export function startCountingProxy(nodeUrl: string): CountingProxy {
  const target = new URL(nodeUrl);
  const bare = `${target.protocol}//${target.host}${target.pathname}`;
  const calls = new Map<string, number>();
  const count = (body: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return;
    }
    for (const call of [parsed].flat() as { method?: unknown }[]) {
      const method = typeof call?.method === "string" ? call.method : "?";
      calls.set(method, (calls.get(method) ?? 0) + 1);
    }
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: IDLE_TIMEOUT_S,
    async fetch(request) {
      const body = await request.text();
      count(body);
      const headers = new Headers();
      for (const name of ["authorization", "content-type"]) {
        const value = request.headers.get(name);
        if (value !== null) headers.set(name, value);
      }
      const answer = await fetch(bare, { method: request.method, body, headers });
      return new Response(answer.body, {
        status: answer.status,
        headers: { "content-type": answer.headers.get("content-type") ?? "application/json" },
      });
    },
  });
  const credentials = target.username ? `${target.username}:${target.password}@` : "";
  return {
    url: `http://${credentials}127.0.0.1:${server.port}${target.pathname}`,
    calls,
    total(leaveOut = new Set()) {
      let n = 0;
      for (const [method, c] of calls) if (!leaveOut.has(method)) n += c;
      return n;
    },
    stop() {
      server.stop(true);
    },
  };
}
