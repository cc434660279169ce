/** The Elysia app: one module per concern, and the mapping of framework-level errors to our bodies. */
import { Elysia } from "elysia";
import type { ChainHead } from "../chain/head";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { OperationTable } from "../operations/table";
import { buildOpenApi, docsRoutes } from "./docs";
import type { Edge } from "./edge";
import { type Health, HealthReport, healthRoutes } from "./health";
import { createJsonRpcHandler } from "./jsonrpc";
import { nodeRoutes } from "./node";
import { json } from "./respond";
import { type RouteSpec, specRoutes } from "./routes";
import { STREAMS, streamRoutes } from "./stream";

export function createApp(deps: {
  table: OperationTable;
  edge: Edge;
  health: Health;
  watchFilterRoutes: RouteSpec[];
  metrics: Metrics;
  head: ChainHead;
  log: Logger;
  maxBodyBytes: number;
  stream: { maxBlocks: number; prefetch: number };
}) {
  const { table, edge, health, watchFilterRoutes, metrics, head, log } = deps;
  const jsonRpc = createJsonRpcHandler({ table, log, metrics });
  // Bun's own limit answers an empty 413; ours (in the edge) answers a clear one, so Bun's sits above it.
  return new Elysia({ serve: { maxRequestBodySize: deps.maxBodyBytes * 2 + 1024 } })
    .onError(({ code, error, request }) => {
      // Handlers answer their own errors; these are the framework's: unknown routes, unread bodies.
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
    .use(docsRoutes(buildOpenApi(table, watchFilterRoutes, STREAMS, HealthReport)))
    .use(nodeRoutes({ table, edge, jsonRpc, metrics, log }))
    .use(streamRoutes({ table, edge, head, ...deps.stream, log }))
    .use(specRoutes({ name: "watch-filters", routes: watchFilterRoutes, edge, log }));
}
