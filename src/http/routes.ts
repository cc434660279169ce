/**
 * Routes outside the operation table (watch filters), declared once for both Elysia and the OpenAPI
 * document: method, path, body schema, response schema, handler.
 */
import type { TObject, TSchema } from "@sinclair/typebox";

import { InternalError, RequestValidationError, toServiceError } from "../errors";
import type { Logger } from "../log";
import { compile } from "../validation";
import type { Caller } from "./auth";
import type { Edge, Handler } from "./edge";
import { json, jsonHeaders, parseBody, restError } from "./respond";

export interface RouteSpec {
  method: "GET" | "POST" | "DELETE";
  path: string;
  tag: string;
  summary: string;
  /** null: no body. */
  body: TObject | null;
  response: TSchema;
  /** Status codes other than 200 and 422 the route may answer, for the document. */
  errors?: Record<number, string>;
  handle(body: any, caller: Caller): Promise<unknown>;
}

export function specRoutes(options: {
  routes: RouteSpec[];
  edge: Edge;
  log: Logger;
}): Record<string, Partial<Record<RouteSpec["method"], Handler>>> {
  const { edge, log } = options;
  const out: Record<string, Partial<Record<RouteSpec["method"], Handler>>> = {};
  for (const route of options.routes) {
    const validator = route.body ? compile(route.body) : null;
    const handler = edge.route(route.path, async (request, server, requestId) => {
      try {
        const text = validator ? await edge.readBody(request) : "";
        const caller = await edge.authenticate(request);
        edge.charge(caller, request, server, 1);
        let body: unknown;
        if (validator) {
          body = parseBody(text);
          if (!validator.check(body)) throw new RequestValidationError(validator.issues(body, ["body"]));
        }
        return json(await route.handle(body, caller), 200, jsonHeaders(requestId));
      } catch (error) {
        const e = toServiceError(error);
        if (e instanceof InternalError) log.error("route failed", { route: route.path, requestId, error });
        return restError(e, jsonHeaders(requestId));
      }
    });
    out[route.path] = { ...out[route.path], [route.method]: handler };
  }
  return out;
}
