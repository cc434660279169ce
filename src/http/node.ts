/**
 * The node routes: POST /node/rest/<name> for every operation with a REST form, and POST /node/jsonrpc.
 * Each reads its body within the size limit, authenticates, charges the rate limit (a batch one token per
 * call), then hands over to the operation table.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
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
import type { Edge } from "./edge";
import type { JsonRpcHandler } from "./jsonrpc";
import { parseBody, rawJson, restError } from "./respond";

type Context = { request: Request; server: Server<unknown> | null };

const clientIp = ({ request, server }: Context) => server?.requestIP(request)?.address;

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
function rpcRefusal(body: unknown, error: ServiceError): Response {
  const { id, jsonrpc } = requestIdentity(body);
  const headers: Record<string, string> = {};
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
}) {
  const { table, edge, jsonRpc, metrics, log } = options;

  async function rest(op: Operation, ctx: Context, requestId: string): Promise<Response> {
    const { request } = ctx;
    try {
      const text = op.restBody ? await edge.readBody(request) : "";
      edge.charge(await edge.authenticate(request), clientIp(ctx), 1);
      let params: unknown[];
      if (op.restBody) {
        const body = parseBody(text);
        if (!op.restBody.check(body)) throw new RequestValidationError(op.restBody.issues(body, ["body"]));
        params = op.prepareRest(body);
      } else {
        params = op.prepareRest(undefined);
      }
      const result = await op.run(params);
      metrics.requests.inc({ operation: op.method, transport: "rest", outcome: "ok" });
      const raw = op.rest!.toRest ? joinParts(op.rest!.toRest(result.raw)) : result.raw;
      const headers: Record<string, string> = {};
      if (result.source) headers["x-cache"] = result.source;
      if (result.upstream) headers["x-upstream"] = result.upstream;
      return rawJson(raw, 200, headers);
    } catch (error) {
      const e = toServiceError(error);
      if (e instanceof InternalError)
        log.error("REST operation failed", { route: op.rest!.name, requestId, error });
      metrics.requests.inc({ operation: op.method, transport: "rest", outcome: outcomeLabel(e) });
      return restError(e);
    }
  }

  async function jsonrpc(ctx: Context, requestId: string): Promise<Response> {
    const { request } = ctx;
    let text: string;
    try {
      text = await edge.readBody(request);
    } catch (error) {
      return rpcRefusal(undefined, toServiceError(error));
    }
    let caller: Awaited<ReturnType<Edge["authenticate"]>>;
    try {
      caller = await edge.authenticate(request);
    } catch (error) {
      return rpcRefusal(tryParse(text), toServiceError(error));
    }
    const parsed = jsonRpc.parse(text);
    if ("response" in parsed) return parsed.response;
    const { body } = parsed;
    const calls = Array.isArray(body) ? body.length : 1;
    try {
      if (calls > edge.maxBatchLength) {
        throw new PayloadTooLargeError(
          `a batch of ${calls} calls exceeds the limit of ${edge.maxBatchLength} (MAX_BATCH_LENGTH)`,
        );
      }
      edge.charge(caller, clientIp(ctx), Math.max(1, calls));
    } catch (error) {
      return rpcRefusal(body, toServiceError(error));
    }
    return jsonRpc.execute(body, requestId);
  }

  const app = new Elysia({ name: "node-routes" });
  for (const op of table.list) {
    if (!op.rest) continue;
    const route = `/node/rest/${op.rest.name}`;
    app.post(
      route,
      async (ctx) => {
        const started = performance.now();
        const requestId = edge.requestId(ctx.request);
        return edge.finish(route, requestId, started, await rest(op, ctx as Context, requestId));
      },
      { parse: "none" },
    );
  }
  app.post(
    "/node/jsonrpc",
    async (ctx) => {
      const started = performance.now();
      const requestId = edge.requestId(ctx.request);
      return edge.finish("/node/jsonrpc", requestId, started, await jsonrpc(ctx as Context, requestId));
    },
    { parse: "none" },
  );
  return app;
}
