/**
 * Routes outside the operation table (watch filters), declared once for Bun's router and the OpenAPI
 * document: method, path, body schema, response schema, handler. Each goes through the guard.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import type { Caller } from "../caller";
import { RequestValidationError } from "../errors";
import { compile } from "../validation";
import { json, jsonHeaders, REST } from "./answer";
import type { Guard, Handler } from "./guard";

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
  /**
   * The answer as a value, or as a stream of JSON text for answers too large to hold whole. A stream is
   * handed over once its first part is read: a failure before that is an ordinary error answer, where one
   * after the status line is sent can only end the stream.
   */
  handle(body: any, caller: Caller): Promise<unknown>;
}

export function specRoutes(options: {
  routes: RouteSpec[];
  guard: Guard;
}): Record<string, Partial<Record<RouteSpec["method"], Handler>>> {
  const out: Record<string, Partial<Record<RouteSpec["method"], Handler>>> = {};
  for (const route of options.routes) {
    const validator = route.body ? compile(route.body) : null;
    const handler = options.guard.route<unknown>({
      name: route.path,
      transport: REST,
      body: validator !== null,
      accept(body) {
        if (validator && !validator.check(body))
          throw new RequestValidationError(validator.issues(body, ["body"]));
        return { input: body, cost: 1 };
      },
      async run(body, { caller, requestId }) {
        const answer = await route.handle(body, caller);
        if (answer instanceof ReadableStream)
          return new Response(answer, { headers: jsonHeaders(requestId) });
        return json(answer, 200, jsonHeaders(requestId));
      },
    });
    out[route.path] = { ...out[route.path], [route.method]: handler };
  }
  return out;
}
