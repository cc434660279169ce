/**
 * Routes outside the operation table (watch filters), declared once for both Elysia and the OpenAPI
 * document: method, path, body schema, response schema, handler.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import type { Server } from "bun";
import { Elysia } from "elysia";
import { InternalError, RequestValidationError, toServiceError } from "../errors";
import type { Logger } from "../log";
import { compile } from "../validation";
import type { Caller } from "./auth";
import type { Edge } from "./edge";
import { json, parseBody, restError } from "./respond";

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

export function specRoutes(options: { name: string; routes: RouteSpec[]; edge: Edge; log: Logger }) {
  const { edge, log } = options;
  const app = new Elysia({ name: options.name });
  for (const route of options.routes) {
    const validator = route.body ? compile(route.body) : null;
    const answer = async (request: Request, ip: string | undefined, requestId: string) => {
      try {
        const text = validator ? await edge.readBody(request) : "";
        const caller = await edge.authenticate(request);
        edge.charge(caller, ip, 1);
        let body: unknown;
        if (validator) {
          body = parseBody(text);
          if (!validator.check(body)) throw new RequestValidationError(validator.issues(body, ["body"]));
        }
        return json(await route.handle(body, caller));
      } catch (error) {
        const e = toServiceError(error);
        if (e instanceof InternalError) log.error("route failed", { route: route.path, requestId, error });
        return restError(e);
      }
    };
    const handler = async ({ request, server }: { request: Request; server: Server<unknown> | null }) => {
      const started = performance.now();
      const requestId = edge.requestId(request);
      const response = await answer(request, server?.requestIP(request)?.address, requestId);
      return edge.finish(route.path, requestId, started, response);
    };
    app.route(route.method, route.path, handler, { parse: "none" });
  }
  return app;
}
