/**
 * JSON-RPC 2.0 (docs/interface.md §3, §7): a parsed body in, an answer out, whatever carries it (the POST
 * /node/jsonrpc route below goes through the guard like every route). A single request whose envelope is
 * wrong is a 422; a batch is answered 200 with one response per element, in order. Results are spliced in
 * as the raw JSON text or bytes the engine holds.
 */
import type { ResultSource } from "../engine/client";
import {
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  NodeError,
  PayloadTooLargeError,
  type ServiceError,
  toServiceError,
  type ValidationIssue,
} from "../errors";
import { joinParts, type RawJson, toJson } from "../json";
import type { Logger } from "../log";
import { type Metrics, outcomeLabel } from "../metrics";
import type { OperationResult } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import {
  JSON_RPC,
  jsonHeaders,
  NO_IDENTITY,
  type RpcIdentity,
  rawJson,
  rpcErrorText,
  rpcIdentity,
} from "./answer";
import type { Guard, Handler } from "./guard";

export interface RpcAnswer {
  /** 200, or 422 for a single request whose envelope is wrong. */
  status: number;
  /** The response as parts of JSON (a cached result stays the text or bytes it is stored as). */
  parts: RawJson[];
  /** The least cached of the results (a batch's `x-cache`). */
  source?: ResultSource;
  /** The upstreams that answered, comma-separated. */
  upstream?: string;
}

interface Answer {
  parts: RawJson[];
  source?: ResultSource;
  upstream?: string;
}

// Order of "how far the node was from the answer", for the x-cache header of a batch.
const SOURCE_RANK: Record<ResultSource, number> = { memory: 0, disk: 1, coalesced: 2, miss: 3 };

/** One response from the answers of a single request or of a batch's elements. */
function combine(answers: Answer[], parts: RawJson[]): RpcAnswer {
  let worst: ResultSource | undefined;
  const upstreams = new Set<string>();
  for (const answer of answers) {
    if (answer.source && (worst === undefined || SOURCE_RANK[answer.source] > SOURCE_RANK[worst]))
      worst = answer.source;
    if (answer.upstream !== undefined) upstreams.add(answer.upstream);
  }
  return {
    status: 200,
    parts,
    source: worst,
    upstream: upstreams.size === 0 ? undefined : [...upstreams].join(","),
  };
}

/** Methods a transport adds to the table's (the WebSocket's eth_subscribe and eth_unsubscribe). */
export interface LocalMethods {
  has(method: string): boolean;
  /** The method's result as JSON text; throws a ServiceError. */
  run(method: string, params: unknown[]): string | Promise<string>;
}

export interface AnswerOptions {
  /** The `transport` label of the request metrics. */
  transport: "jsonrpc" | "ws";
  /**
   * HTTP answers a single request whose envelope is wrong with FastAPI's 422; a WebSocket has no status to
   * give, so it answers a JSON-RPC error object, as for a batch element.
   */
  envelope422: boolean;
  local?: LocalMethods;
}

const HTTP: AnswerOptions = { transport: "jsonrpc", envelope422: true };

export interface JsonRpc {
  /** The calls a parsed body makes (its rate-limit cost); 413 past MAX_BATCH_LENGTH. */
  calls(body: unknown): number;
  answer(body: unknown, requestId: string, options?: AnswerOptions): RpcAnswer | Promise<RpcAnswer>;
}

export function createJsonRpc(options: {
  table: OperationTable;
  log: Logger;
  metrics: Metrics;
  maxBatchLength: number;
}): JsonRpc {
  const { table, log, metrics, maxBatchLength } = options;
  const requests = metrics.requests;

  /** Envelope problems as FastAPI issues (single request); the batch path turns them into codes. */
  function envelopeIssues(
    value: unknown,
    local: LocalMethods | undefined,
  ): { issues: ValidationIssue[]; unknownMethod?: string } {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { issues: [{ loc: ["body"], msg: "Input should be a valid object", type: "dict_type" }] };
    }
    const v = value as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    let unknownMethod: string | undefined;
    if ("jsonrpc" in v && typeof v.jsonrpc !== "string") {
      issues.push({ loc: ["body", "jsonrpc"], msg: "Input should be a valid string", type: "string_type" });
    }
    if (v.method === undefined) {
      issues.push({ loc: ["body", "method"], msg: "Field required", type: "missing" });
    } else if (typeof v.method !== "string") {
      issues.push({ loc: ["body", "method"], msg: "Input should be a valid string", type: "string_type" });
    } else if (!table.byMethod(v.method) && !local?.has(v.method)) {
      unknownMethod = v.method;
      issues.push({
        loc: ["body", "method"],
        msg: `Input should be one of the supported methods (Methods or NodeMethods, see /swagger); got ${JSON.stringify(v.method)}`,
        type: "enum",
      });
    }
    if (v.params !== undefined && v.params !== null && !Array.isArray(v.params)) {
      issues.push({ loc: ["body", "params"], msg: "Input should be a valid list", type: "list_type" });
    }
    return { issues, unknownMethod };
  }

  const errorAnswer = (identity: RpcIdentity, error: ServiceError): Answer => ({
    parts: [rpcErrorText(identity, error)],
  });

  /** Runs one valid request object. */
  function execute(
    value: Record<string, unknown>,
    requestId: string,
    options: AnswerOptions,
  ): Answer | Promise<Answer> {
    const identity = rpcIdentity(value);
    const method = value.method as string;
    const params = (value.params as unknown[] | null | undefined) ?? [];
    const fail = (error: unknown): Answer => {
      const e = toServiceError(error);
      if (e instanceof InternalError) log.error("operation failed", { method, requestId, error });
      requests.labels(method, options.transport, outcomeLabel(e)).inc();
      // The node's own error is a node answer too: it was asked (and errors are never cached).
      return e instanceof NodeError
        ? { ...errorAnswer(identity, e), source: "miss" }
        : errorAnswer(identity, e);
    };
    const succeed = (result: OperationResult): Answer => {
      requests.labels(method, options.transport, "ok").inc();
      return {
        parts: [`{"jsonrpc":${identity.jsonrpc},"id":${identity.id},"result":`, result.raw, "}"],
        source: result.source,
        upstream: result.upstream,
      };
    };
    try {
      const op = table.byMethod(method);
      const run = op
        ? op.run(op.prepare(params))
        : Promise.resolve(options.local!.run(method, params)).then((raw): OperationResult => ({ raw }));
      // A cache hit comes back at once: no microtask turns on the hot path.
      return run instanceof Promise ? run.then(succeed, fail) : succeed(run);
    } catch (error) {
      return fail(error);
    }
  }

  /** A request object of a batch (or a WebSocket's single one), or the error object it earns. */
  function element(value: unknown, requestId: string, options: AnswerOptions): Promise<Answer> | Answer {
    const { issues, unknownMethod } = envelopeIssues(value, options.local);
    if (issues.length === 0) return execute(value as Record<string, unknown>, requestId, options);
    const v = value as Record<string, unknown>;
    let error: ServiceError;
    if (issues.length === 1 && unknownMethod !== undefined) {
      error = new MethodNotFoundError(unknownMethod);
    } else if (issues[0]!.loc[1] === "params") {
      error = new InvalidParamsError("invalid params: params must be a positional array");
    } else {
      error = new InvalidRequestError(
        `invalid request: ${issues[0]!.loc.slice(1).join(".") || "element"}: ${issues[0]!.msg}`,
      );
    }
    const method = typeof v === "object" && v !== null ? v.method : undefined;
    const known = typeof method === "string" && (table.byMethod(method) || options.local?.has(method));
    requests.labels(known ? (method as string) : "unknown", options.transport, outcomeLabel(error)).inc();
    return errorAnswer(rpcIdentity(value), error);
  }

  return {
    calls(body) {
      const calls = Array.isArray(body) ? body.length : 1;
      if (calls > maxBatchLength) {
        throw new PayloadTooLargeError(
          `a batch of ${calls} calls exceeds the limit of ${maxBatchLength} (MAX_BATCH_LENGTH)`,
        );
      }
      return Math.max(1, calls);
    },

    answer(body, requestId, options = HTTP) {
      if (Array.isArray(body)) {
        if (body.length === 0) {
          const error = new InvalidRequestError("invalid request: empty batch");
          return { status: 200, parts: [rpcErrorText(NO_IDENTITY, error)] };
        }
        return Promise.all(body.map((value) => element(value, requestId, options))).then((answers) => {
          const parts: RawJson[] = ["["];
          for (let i = 0; i < answers.length; i++) {
            if (i > 0) parts.push(",");
            for (const part of answers[i]!.parts) parts.push(part);
          }
          parts.push("]");
          return combine(answers, parts);
        });
      }
      if (options.envelope422) {
        const { issues } = envelopeIssues(body, options.local);
        if (issues.length > 0) return { status: 422, parts: [toJson({ detail: issues })] };
      }
      const run = element(body, requestId, options);
      return run instanceof Promise
        ? run.then((answer) => combine([answer], answer.parts))
        : combine([run], run.parts);
    },
  };
}

/** POST /node/jsonrpc: a single request or a batch, one token per call. */
export function jsonRpcRoute(options: { rpc: JsonRpc; guard: Guard }): Handler {
  const { rpc, guard } = options;
  const respond = (answer: RpcAnswer, requestId: string) => {
    const headers = jsonHeaders(requestId);
    if (answer.source !== undefined) headers["x-cache"] = answer.source;
    if (answer.upstream !== undefined) headers["x-upstream"] = answer.upstream;
    return rawJson(joinParts(answer.parts), answer.status, headers);
  };
  return guard.route<unknown>({
    name: "/node/jsonrpc",
    transport: JSON_RPC,
    body: true,
    accept: (body) => ({ input: body, cost: rpc.calls(body) }),
    run(body, { requestId }) {
      const answer = rpc.answer(body, requestId);
      return answer instanceof Promise
        ? answer.then((a) => respond(a, requestId))
        : respond(answer, requestId);
    },
  });
}
