/**
 * The HTTP server: an Elysia app for health, metrics, the docs and everything unmatched, and our own routes
 * (node REST and JSON-RPC, streams, watch filters) handed to Bun's router directly.
 *
 * Why two: on a cache hit the service does a few microseconds of work of its own, and Elysia's per-request
 * adapter (merging headers into the response, a cookie jar per request) cost ~12% of the CPU in profiles of
 * the hit path. Our handlers never use what it provides (they read the body, authenticate and answer
 * themselves), so Bun calls them straight; unknown paths and methods still fall through to Elysia.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { ChainHead } from "../chain/head";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { OperationTable } from "../operations/table";
import { buildOpenApi, docsRoutes } from "./docs";
import type { Edge, Handler } from "./edge";
import { type Health, HealthReport, healthRoutes } from "./health";
import { createJsonRpcHandler } from "./jsonrpc";
import { nodeRoutes } from "./node";
import { json } from "./respond";
import { type RouteSpec, specRoutes } from "./routes";
import { STREAMS, streamRoutes } from "./stream";

export type Routes = Record<string, Partial<Record<"GET" | "POST" | "DELETE", Handler>>>;

export interface HttpServer {
  readonly port: number;
  stop(): Promise<void>;
}

export function createApp(deps: {
  table: OperationTable;
  edge: Edge;
  health: Health;
  watchFilterRoutes: RouteSpec[];
  metrics: Metrics;
  head: ChainHead;
  log: Logger;
  stream: { maxBlocks: number; prefetch: number };
}): { elysia: Elysia; routes: Routes } {
  const { table, edge, health, watchFilterRoutes, metrics, head, log } = deps;
  const jsonRpc = createJsonRpcHandler({ table, log, metrics });
  const elysia = new Elysia()
    .onError(({ code, error, request }) => {
      // Unknown routes and framework-level failures; our handlers answer their own errors.
      if (code === "NOT_FOUND") return json({ detail: "Not Found" }, 404);
      if (code === "PARSE") {
        return json({ detail: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] }, 422);
      }
      log.error("unhandled error", { code, path: new URL(request.url).pathname, error });
      return json({ detail: "internal error" }, 500);
    })
    .use(healthRoutes(health))
    .get("/metrics", async () => {
      return new Response(await metrics.registry.metrics(), {
        headers: { "content-type": metrics.registry.contentType },
      });
    })
    .use(docsRoutes(buildOpenApi(table, watchFilterRoutes, STREAMS, HealthReport))) as unknown as Elysia;
  const routes: Routes = {
    ...nodeRoutes({ table, edge, jsonRpc, metrics, log }),
    ...streamRoutes({ table, edge, head, ...deps.stream, log }),
    ...specRoutes({ routes: watchFilterRoutes, edge, log }),
  };
  return { elysia, routes };
}

/** Bun.serve with our routes first and Elysia for the rest. */
export function listen(options: {
  app: { elysia: Elysia; routes: Routes };
  host: string;
  port: number;
  maxBodyBytes: number;
  log: Logger;
}): HttpServer {
  const { app, log } = options;
  const fallback = app.elysia.fetch;
  const server: Server<undefined> = Bun.serve({
    hostname: options.host,
    port: options.port,
    // Bun's own limit answers an empty 413; ours (in the edge) answers a clear one, so Bun's sits above it.
    maxRequestBodySize: options.maxBodyBytes * 2 + 1024,
    routes: app.routes as never,
    fetch: (request) => fallback(request),
    error(error) {
      log.error("unhandled server error", { error });
      return json({ detail: "internal error" }, 500);
    },
  });
  return {
    port: server.port!,
    stop: () => server.stop(true),
  };
}
