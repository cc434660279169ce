/**
 * A family's node API at the node's own paths (operations/nodePaths.ts: java-tron's `/wallet/...`), so that
 * the node's clients (tronweb) take the service's URL as the node's. Each path is a Bun route through the
 * guard (authenticate, admit, check, charge, run), answered with the node's JSON as the engine gives it, by
 * POST with a JSON body or by GET with the body's members in the query (java-tron takes both; writes only by
 * POST). A path under the API's prefixes without a row is refused there, naming why, without a node call.
 * The service's own errors are answered as on REST (`{"detail": ...}` with their status); the node's are its
 * answers, passed through.
 */

import type { EngineResult } from "../engine/engineApi";
import { BadRequestError, type ServiceError } from "../errors";
import { type Metrics, outcomeLabel } from "../metrics";
import type { NodePath, NodePaths } from "../operations/nodePaths";
import { jsonHeaders, REST, rawJson } from "./answer";
import type { Guard, Handler } from "./guard";
import { createParamsMemo } from "./paramsMemo";

type Methods = Partial<Record<"GET" | "POST", Handler>>;

/** A POST's body as an object (an empty one never gets here: `acceptText`), anything else a 400. */
function bodyObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequestError(`${path}: the body must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A GET's query as a body: every member once (a member given twice is refused: the node would take one). */
function queryObject(request: Request | undefined, path: string): Record<string, unknown> {
  const url = request?.url ?? "";
  const q = url.indexOf("?");
  const body: Record<string, unknown> = {};
  if (q < 0) return body;
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    if (name === "api_key") continue;
    if (Object.hasOwn(body, name)) throw new BadRequestError(`${path}: ${name} is given twice`);
    body[name] = value;
  }
  return body;
}

export function nodePathRoutes(options: {
  paths: NodePaths;
  guard: Guard;
  metrics: Metrics;
}): Record<string, Methods> {
  const { paths, guard, metrics } = options;
  // The params each body text prepared (the fast path: http/paramsMemo.ts).
  const memo = createParamsMemo();

  function route(spec: NodePath, get: boolean): Handler {
    const { path } = spec;
    const accepted = (params: unknown[]) => ({ input: params, cost: spec.cost(params) });
    return guard.route<unknown[]>({
      name: path,
      transport: REST,
      body: !get,
      acceptText(text) {
        const params = memo.get(`${path}\u0000${text}`);
        if (params) return accepted(params);
        // java-tron takes an empty POST as `{}` (tronweb and curl send them): no JSON to parse.
        if (text.trim() !== "") return undefined;
        const empty = spec.params({}, false);
        memo.set(`${path}\u0000${text}`, empty);
        return accepted(empty);
      },
      accept(value, text, request) {
        const body = get ? queryObject(request, path) : bodyObject(value, path);
        const params = spec.params(body, get);
        if (text !== undefined) memo.set(`${path}\u0000${text}`, params);
        return accepted(params);
      },
      run(params, { requestId }) {
        const answer = (result: EngineResult) => {
          const headers = jsonHeaders(requestId);
          if (result.source) headers["x-cache"] = result.source;
          if (result.upstream) headers["x-upstream"] = result.upstream;
          return rawJson(result.raw, 200, headers);
        };
        const run = spec.answer(params);
        return run instanceof Promise ? run.then(answer) : answer(run);
      },
      done: (error) => metrics.requests.labels(path, "node_path", outcomeLabel(error)).inc(),
    });
  }

  /** A path of the API with no row: refused as the family says, no node call. */
  function refuse(error: (path: string) => ServiceError): Handler {
    return guard.route<undefined>({
      name: "node_path_refused",
      transport: REST,
      body: false,
      accept(_body, _text, request) {
        throw error(new URL(request!.url).pathname);
      },
      run: () => new Response(null, { status: 500 }),
    });
  }

  const routes: Record<string, Methods> = {};
  for (const spec of paths.paths) {
    const get = spec.write
      ? refuse(() => new BadRequestError(`${spec.path} changes the chain: POST only`))
      : route(spec, true);
    routes[spec.path] = { GET: get, POST: route(spec, false) };
  }
  const refused = refuse((path) => paths.refusal(path));
  for (const prefix of paths.prefixes) routes[`${prefix}*`] = { GET: refused, POST: refused };
  return routes;
}
