/**
 * The node routes: POST /node/rest/<name> for every operation with a REST form, and POST /node/jsonrpc.
 * Each reads its body within the size limit, authenticates, charges the rate limit (a batch one token per
 * call), then hands over to the operation table. They are Bun routes (see app.ts): the hottest paths of
 * the service go straight from Bun to these handlers.
 */
import {
  InternalError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
} from "../errors";
import { joinParts, parseJson, toJson } from "../json";
import type { Logger } from "../log";
import { type Metrics, outcomeLabel } from "../metrics";
import type { Operation } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import type { Caller } from "./auth";
import type { Edge, Handler } from "./edge";
import type { JsonRpcHandler } from "./jsonrpc";
import { jsonHeaders, parseBody, rawJson, restError } from "./respond";

/** The id of a JSON-RPC body, to echo in a refusal made before dispatch; null when it has none. */
function requestIdentity(body: unknown): { id: string; jsonrpc: string } {
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    return {
      id: "id" in b ? toJson(b.id) : "0",
      jsonrpc: typeof b.jsonrpc === "string" ? JSON.stringify(b.jsonrpc) : '"2.0"',
    };
  }
  return { id: "null", jsonrpc: '"2.0"' };
}

/** A JSON-RPC refusal before dispatch (401, 413, 429). */
function rpcRefusal(body: unknown, error: ServiceError, requestId: string): Response {
  const { id, jsonrpc } = requestIdentity(body);
  const headers = jsonHeaders(requestId);
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  return rawJson(`{"jsonrpc":${jsonrpc},"id":${id},"error":${error.rpcErrorJson()}}`, error.status, headers);
}

function tryParse(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

export function nodeRoutes(options: {
  table: OperationTable;
  edge: Edge;
  jsonRpc: JsonRpcHandler;
  metrics: Metrics;
  log: Logger;
}): Record<string, { POST: Handler }> {
  const { table, edge, jsonRpc, metrics, log } = options;
  const requests = metrics.requests;

  function rest(op: Operation, route: string): Handler {
    return edge.route(route, async (request, server, requestId) => {
      try {
        const text = op.restBody ? await edge.readBody(request) : "";
        edge.charge(await edge.authenticate(request), request, server, 1);
        let params: unknown[];
        if (op.restBody) {
          const body = parseBody(text);
          if (!op.restBody.check(body)) throw new RequestValidationError(op.restBody.issues(body, ["body"]));
          params = op.prepareRest(body);
        } else {
          params = op.prepareRest(undefined);
        }
        const run = op.run(params);
        const result = run instanceof Promise ? await run : run;
        requests.labels(op.method, "rest", "ok").inc();
        const headers = jsonHeaders(requestId);
        if (result.source) headers["x-cache"] = result.source;
        if (result.upstream) headers["x-upstream"] = result.upstream;
        return rawJson(op.rest!.toRest ? joinParts(op.rest!.toRest(result.raw)) : result.raw, 200, headers);
      } catch (error) {
        const e = toServiceError(error);
        if (e instanceof InternalError) log.error("REST operation failed", { route, requestId, error });
        requests.labels(op.method, "rest", outcomeLabel(e)).inc();
        return restError(e, jsonHeaders(requestId));
      }
    });
  }

  const jsonrpc = edge.route("/node/jsonrpc", async (request, server, requestId) => {
    let text: string;
    try {
      text = await edge.readBody(request);
    } catch (error) {
      return rpcRefusal(undefined, toServiceError(error), requestId);
    }
    let caller: Caller;
    try {
      caller = await edge.authenticate(request);
    } catch (error) {
      return rpcRefusal(tryParse(text), toServiceError(error), requestId);
    }
    const parsed = jsonRpc.parse(text, requestId);
    if ("response" in parsed) return parsed.response;
    const { body } = parsed;
    const calls = Array.isArray(body) ? body.length : 1;
    try {
      if (calls > edge.maxBatchLength) {
        throw new PayloadTooLargeError(
          `a batch of ${calls} calls exceeds the limit of ${edge.maxBatchLength} (MAX_BATCH_LENGTH)`,
        );
      }
      edge.charge(caller, request, server, Math.max(1, calls));
    } catch (error) {
      return rpcRefusal(body, toServiceError(error), requestId);
    }
    return jsonRpc.execute(body, requestId);
  });

  const routes: Record<string, { POST: Handler }> = { "/node/jsonrpc": { POST: jsonrpc } };
  for (const op of table.list) {
    if (!op.rest) continue;
    const route = `/node/rest/${op.rest.name}`;
    routes[route] = { POST: rest(op, route) };
  }
  return routes;
}
