/**
 * POST /node/rest/<name> for every operation of the table with a REST form: the body checked against its
 * schema and mapped onto the operation's params, the result answered bare (docs/interface.md §4). They are
 * Bun routes (see app.ts): the hottest paths of the service go straight from Bun to these handlers.
 */
import { RequestValidationError } from "../errors";
import { joinParts } from "../json";
import { type Metrics, outcomeLabel } from "../metrics";
import type { Operation, OperationResult } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { jsonHeaders, REST, rawJson } from "./answer";
import type { Guard, Handler } from "./guard";
import { createParamsMemo } from "./paramsMemo";

export function restRoutes(options: {
  table: OperationTable;
  guard: Guard;
  metrics: Metrics;
}): Record<string, { POST: Handler }> {
  const { table, guard, metrics } = options;
  // The params each body text prepared, by route and text (the fast path: http/paramsMemo.ts).
  const memo = createParamsMemo();

  function route(op: Operation, rest: NonNullable<Operation["rest"]>, name: string): Handler {
    const body = op.restBody;
    const accepted = (params: unknown[]) => ({ input: params, cost: op.cost?.(params) ?? 1 });
    return guard.route<unknown[]>({
      name,
      transport: REST,
      body: body !== null,
      acceptText(text) {
        const params = memo.get(`${name}\u0000${text}`);
        return params && accepted(params);
      },
      accept(value, text) {
        if (body && !body.check(value)) throw new RequestValidationError(body.issues(value, ["body"]));
        const params = op.prepareRest(value);
        if (text !== undefined) memo.set(`${name}\u0000${text}`, params);
        return accepted(params);
      },
      run(params, { requestId }) {
        const answer = (result: OperationResult) => {
          const headers = jsonHeaders(requestId);
          if (result.source) headers["x-cache"] = result.source;
          if (result.upstream) headers["x-upstream"] = result.upstream;
          return rawJson(rest.toRest ? joinParts(rest.toRest(result.raw)) : result.raw, 200, headers);
        };
        // A cache hit comes back at once: no microtask turns on the hot path.
        const run = op.run(params);
        return run instanceof Promise ? run.then(answer) : answer(run);
      },
      done: (error) => metrics.requests.labels(op.method, "rest", outcomeLabel(error)).inc(),
    });
  }

  const routes: Record<string, { POST: Handler }> = {};
  for (const op of table.list) {
    if (!op.rest) continue;
    const name = `/node/rest/${op.rest.name}`;
    routes[name] = { POST: route(op, op.rest, name) };
  }
  return routes;
}
