/**
 * JSON-RPC 2.0 over POST /node/jsonrpc (SPEC.md §4.2, DESIGN.md §4). Independent of the web framework:
 * a parsed body in, a Response out. A single request whose envelope is wrong is a 422; a batch is answered
 * 200 with one response per element, in order. Results are spliced in as raw JSON text or bytes.
 */
import {
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  NodeError,
  type RequestValidationError,
  type ServiceError,
  toServiceError,
  type ValidationIssue,
} from "../errors";
import { fastJson, joinParts, type RawJson, toJson } from "../json";
import type { Logger } from "../log";
import { type Metrics, outcomeLabel } from "../metrics";
import type { Operation, OperationResult, ResultSource } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { jsonHeaders, parseBody, rawJson } from "./respond";

const DEFAULT_JSONRPC = '"2.0"';

interface Envelope {
  jsonrpc: string;
  id: string;
  op: Operation;
  params: unknown[];
}

interface Answer {
  /** The response object as parts of JSON (a cached result stays the text or bytes it is stored as). */
  parts: RawJson[];
  source?: ResultSource;
  upstream?: string;
}

// Order of "how far the node was from the answer", for the x-cache header of a batch.
const SOURCE_RANK: Record<ResultSource, number> = { memory: 0, disk: 1, coalesced: 2, miss: 3 };

function idJson(value: Record<string, unknown>): string {
  return "id" in value ? (fastJson(value.id) ?? "null") : "0";
}

function errorAnswer(jsonrpc: string, id: string, error: ServiceError): Answer {
  return { parts: [`{"jsonrpc":${jsonrpc},"id":${id},"error":${error.rpcErrorJson()}}`] };
}

/** Adds the headers naming where a response's results came from. */
function provenance(answers: Answer[], headers: Record<string, string>): Record<string, string> {
  let worst: ResultSource | undefined;
  let upstream: string | undefined;
  let several: Set<string> | undefined;
  for (const answer of answers) {
    if (answer.source && (worst === undefined || SOURCE_RANK[answer.source] > SOURCE_RANK[worst]))
      worst = answer.source;
    if (answer.upstream === undefined || answer.upstream === upstream) continue;
    if (upstream === undefined) {
      upstream = answer.upstream;
    } else {
      several ??= new Set([upstream]);
      several.add(answer.upstream);
    }
  }
  if (worst !== undefined) headers["x-cache"] = worst;
  if (upstream !== undefined) headers["x-upstream"] = several ? [...several].join(",") : upstream;
  return headers;
}

export interface JsonRpcHandler {
  /** The body as JSON, or the 422 that answers it. */
  parse(text: string, requestId: string): { body: unknown } | { response: Response };
  execute(body: unknown, requestId: string): Promise<Response>;
}

export function createJsonRpcHandler(options: {
  table: OperationTable;
  log: Logger;
  metrics: Metrics;
}): JsonRpcHandler {
  const { table, log, metrics } = options;
  const requests = metrics.requests;

  /** Envelope problems as FastAPI issues (single request); the batch path turns them into codes. */
  function envelopeIssues(value: unknown): { issues: ValidationIssue[]; unknownMethod?: string } {
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
    } else if (!table.byMethod(v.method)) {
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

  function toEnvelope(v: Record<string, unknown>): Envelope {
    return {
      jsonrpc:
        typeof v.jsonrpc === "string"
          ? v.jsonrpc === "2.0"
            ? DEFAULT_JSONRPC
            : JSON.stringify(v.jsonrpc)
          : DEFAULT_JSONRPC,
      id: idJson(v),
      op: table.byMethod(v.method as string)!,
      params: (v.params as unknown[] | null | undefined) ?? [],
    };
  }

  const count = (operation: string, error?: ServiceError) =>
    requests.labels(operation, "jsonrpc", error ? outcomeLabel(error) : "ok").inc();

  function execute(envelope: Envelope, requestId: string): Answer | Promise<Answer> {
    const { jsonrpc, id, op } = envelope;
    const fail = (error: unknown): Answer => {
      const e = toServiceError(error);
      if (e instanceof InternalError) log.error("operation failed", { method: op.method, requestId, error });
      count(op.method, e);
      // The node's own error is a node answer too: it was asked (and errors are never cached).
      return e instanceof NodeError
        ? { ...errorAnswer(jsonrpc, id, e), source: "miss" }
        : errorAnswer(jsonrpc, id, e);
    };
    const succeed = (result: OperationResult): Answer => {
      count(op.method);
      return {
        parts: [`{"jsonrpc":${jsonrpc},"id":${id},"result":`, result.raw, "}"],
        source: result.source,
        upstream: result.upstream,
      };
    };
    try {
      const run = op.run(op.prepare(envelope.params));
      // A cache hit comes back at once: no microtask turns on the hot path.
      return run instanceof Promise ? run.then(succeed, fail) : succeed(run);
    } catch (error) {
      return fail(error);
    }
  }

  function batchElement(value: unknown, requestId: string): Promise<Answer> | Answer {
    const { issues, unknownMethod } = envelopeIssues(value);
    if (issues.length === 0) return execute(toEnvelope(value as Record<string, unknown>), requestId);
    const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
    const v = (isObject ? value : {}) as Record<string, unknown>;
    const jsonrpc = typeof v.jsonrpc === "string" ? JSON.stringify(v.jsonrpc) : DEFAULT_JSONRPC;
    const id = isObject ? idJson(v) : "null";
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
    count(typeof v.method === "string" && table.byMethod(v.method) ? v.method : "unknown", error);
    return errorAnswer(jsonrpc, id, error);
  }

  return {
    parse(text, requestId) {
      try {
        return { body: parseBody(text) };
      } catch (error) {
        const detail = toJson({ detail: (error as RequestValidationError).issues });
        return { response: rawJson(detail, 422, jsonHeaders(requestId)) };
      }
    },

    async execute(body, requestId) {
      if (Array.isArray(body)) {
        if (body.length === 0) {
          const error = new InvalidRequestError("invalid request: empty batch").rpcErrorJson();
          return rawJson(`{"jsonrpc":"2.0","id":null,"error":${error}}`, 200, jsonHeaders(requestId));
        }
        const answers = await Promise.all(body.map((element) => batchElement(element, requestId)));
        const parts: RawJson[] = ["["];
        for (let i = 0; i < answers.length; i++) {
          if (i > 0) parts.push(",");
          for (const part of answers[i]!.parts) parts.push(part);
        }
        parts.push("]");
        return rawJson(joinParts(parts), 200, provenance(answers, jsonHeaders(requestId)));
      }
      const { issues } = envelopeIssues(body);
      if (issues.length > 0) return rawJson(toJson({ detail: issues }), 422, jsonHeaders(requestId));
      const run = execute(toEnvelope(body as Record<string, unknown>), requestId);
      const answer = run instanceof Promise ? await run : run;
      return rawJson(joinParts(answer.parts), 200, provenance([answer], jsonHeaders(requestId)));
    },
  };
}
