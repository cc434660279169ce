/**
 * Routes outside the operation table (watch filters, webhooks), declared once for Bun's router and the
 * OpenAPI document: method, path (its params as `{name}`), body and query schemas, response schema, handler.
 * Each goes through the guard.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import type { Caller } from "../caller";
import { RequestValidationError } from "../errors";
import { compile } from "../validation";
import { json, jsonHeaders, REST } from "./answer";
import type { Guard, Handler } from "./guard";

/** What a route reads besides its body: the params of its path, and its query as its schema took it. */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
}

export interface RouteSpec {
  method: "GET" | "POST" | "DELETE";
  /** Its params written `{name}` (`/webhooks/{id}`): the document's form; Bun's router is given `:name`. */
  path: string;
  tag: string;
  summary: string;
  /** The document's name of it; unsaid: made of its path (one method a path). */
  operationId?: string;
  /** null: no body. */
  body: TObject | null;
  /** Its query parameters (integers given as digits); any other in the query (`api_key`) is ignored. */
  query?: TObject;
  /** The status of its answer: 200 unless said (201: made, 202: queued). */
  status?: 200 | 201 | 202;
  response: TSchema;
  /** Status codes other than 200 and 422 the route may answer, for the document. */
  errors?: Record<number, string>;
  /**
   * The answer as a value, or as a stream of JSON text for answers too large to hold whole. A stream is
   * handed over once its first part is read: a failure before that is an ordinary error answer, where one
   * after the status line is sent can only end the stream.
   */
  handle(body: any, caller: Caller, input: RouteInput): Promise<unknown>;
}

/** The path as Bun's router takes it: `{name}` as `:name`. */
const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/** The route's query parameters, as its schema names them: digits read as integers where it takes one. */
function queryOf(request: Request | undefined, schema: TObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!request) return out;
  const given = new URL(request.url).searchParams;
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = given.get(name);
    if (value === null) continue;
    out[name] = property.type === "integer" && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
  }
  return out;
}

export function specRoutes(options: {
  routes: RouteSpec[];
  guard: Guard;
}): Record<string, Partial<Record<RouteSpec["method"], Handler>>> {
  const out: Record<string, Partial<Record<RouteSpec["method"], Handler>>> = {};
  for (const route of options.routes) {
    const path = routerPath(route.path);
    const validator = route.body ? compile(route.body) : null;
    const queryValidator = route.query ? compile(route.query) : null;
    const handler = options.guard.route<{ body: unknown; input: RouteInput }>({
      name: path,
      transport: REST,
      body: validator !== null,
      accept(body, _text, request) {
        if (validator && !validator.check(body))
          throw new RequestValidationError(validator.issues(body, ["body"]));
        const query = route.query ? queryOf(request, route.query) : {};
        if (queryValidator && !queryValidator.check(query))
          throw new RequestValidationError(queryValidator.issues(query, ["query"]));
        const params = (request as (Request & { params?: Record<string, string> }) | undefined)?.params ?? {};
        return { input: { body, input: { params, query } }, cost: 1 };
      },
      async run({ body, input }, { caller, requestId }) {
        const answer = await route.handle(body, caller, input);
        if (answer instanceof ReadableStream)
          return new Response(answer, { headers: jsonHeaders(requestId) });
        return json(answer, route.status ?? 200, jsonHeaders(requestId));
      },
    });
    out[path] = { ...out[path], [route.method]: handler };
  }
  return out;
}
