/**
 * Routes outside the operation table (watch filters), declared once for both Elysia and the OpenAPI
 * document: method, path, body schema, response schema, handler.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { InternalError, RequestValidationError, toServiceError } from "../errors";
import type { Logger } from "../log";
import { compile } from "../validation";
import type { Auth, Caller } from "./auth";
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

export function specRoutes(options: { name: string; routes: RouteSpec[]; auth: Auth; log: Logger }) {
  const { auth, log } = options;
  const app = new Elysia({ name: options.name });
  for (const route of options.routes) {
    const validator = route.body ? compile(route.body) : null;
    const handler = async ({ request }: { request: Request }) => {
      try {
        const caller = await auth.authenticate(request);
        let body: unknown;
        if (validator) {
          body = parseBody(await request.text());
          if (!validator.check(body)) throw new RequestValidationError(validator.issues(body, ["body"]));
        }
        return json(await route.handle(body, caller));
      } catch (error) {
        const e = toServiceError(error);
        if (e instanceof InternalError) log.error("route failed", { route: route.path, error });
        return restError(e);
      }
    };
    app.route(route.method, route.path, handler, { parse: "none" });
  }
  return app;
}
