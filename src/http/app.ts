/** The Elysia app: one module per concern, and the mapping of framework-level errors to our bodies. */
import { Elysia } from "elysia";
import type { Logger } from "../log";
import type { OperationTable } from "../operations/table";
import type { Auth } from "./auth";
import { buildOpenApi, docsRoutes } from "./docs";
import { type Health, HealthReport, healthRoutes } from "./health";
import { createJsonRpcHandler } from "./jsonrpc";
import { nodeRoutes } from "./node";
import { json } from "./respond";
import { type RouteSpec, specRoutes } from "./routes";

export function createApp(deps: {
  table: OperationTable;
  auth: Auth;
  health: Health;
  watchFilterRoutes: RouteSpec[];
  log: Logger;
}) {
  const { table, auth, health, watchFilterRoutes, log } = deps;
  const jsonRpc = createJsonRpcHandler({ table, log });
  return new Elysia()
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
    .use(docsRoutes(buildOpenApi(table, watchFilterRoutes, HealthReport)))
    .use(nodeRoutes({ table, auth, jsonRpc, log }))
    .use(specRoutes({ name: "watch-filters", routes: watchFilterRoutes, auth, log }));
}
