/**
 * The node routes: POST /node/rest/<name> for every operation with a REST form, and POST /node/jsonrpc.
 * Both check the API key, then hand over to the operation table.
 */
import { Elysia } from "elysia";
import {
  InternalError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
} from "../errors";
import { parseJson, toJson } from "../json";
import type { Logger } from "../log";
import type { Operation } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import type { Auth } from "./auth";
import type { JsonRpcHandler } from "./jsonrpc";
import { parseBody, rawJson, restError } from "./respond";

/** A JSON-RPC refusal before dispatch (401, 429), echoing the request's id where it can be read. */
function rpcRefusal(text: string, error: ServiceError): Response {
  let id = "null";
  let jsonrpc = '"2.0"';
  try {
    const body = parseJson(text) as Record<string, unknown>;
    if (body && typeof body === "object" && !Array.isArray(body)) {
      id = "id" in body ? toJson(body.id) : "0";
      if (typeof body.jsonrpc === "string") jsonrpc = JSON.stringify(body.jsonrpc);
    }
  } catch {
    // An unreadable body has no id to echo.
  }
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  return rawJson(`{"jsonrpc":${jsonrpc},"id":${id},"error":${error.rpcErrorJson()}}`, error.status, headers);
}

export function nodeRoutes(options: {
  table: OperationTable;
  auth: Auth;
  jsonRpc: JsonRpcHandler;
  log: Logger;
}) {
  const { table, auth, jsonRpc, log } = options;

  async function rest(op: Operation, request: Request): Promise<Response> {
    try {
      await auth.authenticate(request);
      let params: unknown[];
      if (op.restBody) {
        const body = parseBody(await request.text());
        if (!op.restBody.check(body)) throw new RequestValidationError(op.restBody.issues(body, ["body"]));
        params = op.prepareRest(body);
      } else {
        params = op.prepareRest(undefined);
      }
      const result = await op.run(params);
      const raw = op.rest!.toRest ? op.rest!.toRest(result.raw) : result.raw;
      return rawJson(raw, 200, result.source ? { "x-cache": result.source } : undefined);
    } catch (error) {
      const e = toServiceError(error);
      if (e instanceof InternalError) log.error("REST operation failed", { route: op.rest!.name, error });
      return restError(e);
    }
  }

  const app = new Elysia({ name: "node-routes" });
  for (const op of table.list) {
    if (!op.rest) continue;
    app.post(`/node/rest/${op.rest.name}`, ({ request }) => rest(op, request), { parse: "none" });
  }
  app.post(
    "/node/jsonrpc",
    async ({ request }) => {
      const text = await request.text();
      try {
        await auth.authenticate(request);
      } catch (error) {
        return rpcRefusal(text, toServiceError(error));
      }
      return jsonRpc.handle(text);
    },
    { parse: "none" },
  );
  return app;
}
