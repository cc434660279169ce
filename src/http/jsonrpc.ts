/**
 * JSON-RPC 2.0 (docs/interface.md §3, §7): a parsed body is first planned (each request's envelope checked
 * and its params prepared, so what it costs is known before it is charged), then run, whatever carries it
 * (the POST /node/jsonrpc route below goes through the guard like every route; the WebSocket transport
 * too). A single HTTP request whose envelope is malformed is a 422; a method not served is -32601 (HTTP
 * 200, as nodes answer it); a batch is answered 200 with one response per element, in order. Results are
 * spliced in as the raw JSON text or bytes the engine holds.
 */
import { createCollector } from "../collector";
import type { ResultSource } from "../engine/engineApi";
import {
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  NodeError,
  PayloadTooLargeError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
  type ValidationIssue,
} from "../errors";
import { joinParts, MAX_JSON_DEPTH, nestedDeeperThan, partsText, type RawJson } from "../json";
import type { Logger } from "../log";
import { type Metrics, outcomeLabel } from "../metrics";
import type { Operation, OperationResult } from "../operations/operation";
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
import { createGather } from "./gather";
import type { Guard, Handler, RequestContext } from "./guard";
import { createParamsMemo } from "./paramsMemo";
import { type CallText, readCalls } from "./rpcText";

export interface RpcAnswer {
  /** 200, or 422 for a single request whose envelope is malformed. */
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
const SOURCE_RANK: Record<ResultSource, number> = { memory: 0, disk: 1, shared: 2, coalesced: 3, miss: 4 };

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

/** The response of a single request: its one answer as it is. */
const single = (answer: Answer): RpcAnswer => ({
  status: 200,
  parts: answer.parts,
  source: answer.source,
  upstream: answer.upstream,
});

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
   * HTTP answers a single request whose envelope is malformed with FastAPI's 422; a WebSocket has no
   * status to give, so it answers a JSON-RPC error object, as for a batch element.
   */
  envelope422: boolean;
  local?: LocalMethods;
}

export const HTTP_RPC: AnswerOptions = { transport: "jsonrpc", envelope422: true };

/** One request, checked: what runs it and with which params, or the error it earns. */
interface Call {
  identity: RpcIdentity;
  /** The method name (for metrics), or "unknown". */
  method: string;
  op?: Operation;
  local?: LocalMethods;
  params: unknown[];
  error?: ServiceError;
}

/** A body, planned: its calls and what they cost. */
export interface RpcPlan {
  batch: boolean;
  calls: Call[];
  /** A Promise where a call's cost must be looked up first (operation.ts `cost`). */
  cost: number | Promise<number>;
  options: AnswerOptions;
}

/** What a batch's answer built as one text may hold (a WebSocket's: what its unsent data leaves). */
export interface TextBudget {
  /** False once the text would go nowhere (the connection is closing): the batch stops. */
  live(): boolean;
  /** Takes `chars` more; throws (an AnswerTooLargeError) when they do not fit; may end `live`. */
  take(chars: number): void;
  /** Gives back what `take` took, once the text is sent or dropped. */
  release(chars: number): void;
}

/**
 * A batch longer than this is streamed: its answers are written in order as they come, with at most this
 * many calls running (and held) at once, so a batch of any length holds bounded memory.
 */
export const STREAMED_BATCH_WINDOW = 16;

/**
 * Params memoized by a call's text are shared by every call that sends it, inside a batch too, where they sit
 * one level deeper: texts that would then nest deeper than MAX_JSON_DEPTH are not memoized.
 */
const MEMO_MAX_DEPTH = MAX_JSON_DEPTH - 2;

export interface JsonRpc {
  /**
   * Checks a parsed body and what it costs; 413 past MAX_BATCH_LENGTH, and over HTTP a 422 for a single
   * request whose envelope is malformed. With the body's text, the params it prepares are memoized by it.
   */
  plan(body: unknown, options?: AnswerOptions, text?: string): RpcPlan;
  /**
   * The fast path: the plan of a body whose every call sends a params text prepared before, read from its
   * text without parsing it (http/rpcText.ts); undefined sends the body to `plan`. Both plan the same.
   */
  planText(text: string, options?: AnswerOptions): RpcPlan | undefined;
  /** `context`: the request's id and caller (operations that answer per caller read it). */
  answer(plan: RpcPlan, context: RequestContext): RpcAnswer | Promise<RpcAnswer>;
  /**
   * The answer as one text, for a transport that sends whole messages (a WebSocket). A batch runs as a
   * streamed one does (at most STREAMED_BATCH_WINDOW calls at once) and its answers are appended in order as
   * they come, each charged to `budget`; undefined when the budget says the text would go nowhere.
   */
  answerText(
    plan: RpcPlan,
    context: RequestContext,
    budget: TextBudget,
  ): string | Promise<string | undefined>;
  /** A batch's answer as a stream of its JSON, in order (see STREAMED_BATCH_WINDOW). */
  stream(plan: RpcPlan, context: RequestContext): ReadableStream<Uint8Array>;
}

export function createJsonRpc(options: {
  table: OperationTable;
  log: Logger;
  metrics: Metrics;
  maxBatchLength: number;
  /**
   * The refusal of a method the service has but this instance does not serve (another family's, or one
   * reading an index its family does not keep), naming the chain; undefined: the plain -32601.
   */
  unserved?: (method: string) => ServiceError | undefined;
}): JsonRpc {
  const { table, log, metrics, maxBatchLength, unserved } = options;
  const requests = metrics.requests;
  const memo = createParamsMemo();
  const memoKey = (call: CallText) => `${call.method}\u0000${call.params}`;

  /** The params each call of the body prepared, by its method and params text. */
  function remember(text: string, calls: Call[]): void {
    const read = readCalls(text, maxBatchLength);
    if (!read || read.calls.length !== calls.length) return;
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      const sent = read.calls[i]!;
      if (!call.op || call.error || sent.method !== call.method) continue;
      if (nestedDeeperThan(sent.params, MEMO_MAX_DEPTH)) continue;
      memo.set(memoKey(sent), call.params);
    }
  }

  /**
   * What makes a request malformed, as FastAPI issues (a single HTTP request's 422; a batch element's and a
   * WebSocket's codes come from them). A well-formed request for a method not served, or with params by
   * name, is no envelope problem: it is answered -32601 or -32602, as nodes answer it.
   */
  function envelopeIssues(value: unknown): ValidationIssue[] {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return [{ loc: ["body"], msg: "Input should be a valid object", type: "dict_type" }];
    }
    const v = value as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    if ("jsonrpc" in v && typeof v.jsonrpc !== "string") {
      issues.push({ loc: ["body", "jsonrpc"], msg: "Input should be a valid string", type: "string_type" });
    }
    if (v.method === undefined) {
      issues.push({ loc: ["body", "method"], msg: "Field required", type: "missing" });
    } else if (typeof v.method !== "string") {
      issues.push({ loc: ["body", "method"], msg: "Input should be a valid string", type: "string_type" });
    }
    if (v.params !== undefined && v.params !== null && typeof v.params !== "object") {
      issues.push({ loc: ["body", "params"], msg: "Input should be a valid list", type: "list_type" });
    }
    return issues;
  }

  /** A request object checked: envelope, method, params. */
  function check(value: unknown, local: LocalMethods | undefined): Call {
    const identity = rpcIdentity(value);
    const issues = envelopeIssues(value);
    const v = value as Record<string, unknown>;
    const named = typeof v === "object" && v !== null && typeof v.method === "string" ? v.method : undefined;
    const known = named !== undefined && (table.byMethod(named) !== undefined || local?.has(named) === true);
    const refused = (error: ServiceError): Call => ({
      identity,
      method: known ? named! : "unknown",
      params: [],
      error,
    });
    if (issues.length > 0) {
      return refused(
        issues[0]!.loc[1] === "params"
          ? new InvalidParamsError("invalid params: params must be a positional array")
          : new InvalidRequestError(
              `invalid request: ${issues[0]!.loc.slice(1).join(".") || "element"}: ${issues[0]!.msg}`,
            ),
      );
    }
    const method = named!;
    if (!known) return refused(unserved?.(method) ?? new MethodNotFoundError(method));
    // Params by name: mapped to positions by a method that takes them so (a Bitcoin-family node's); well
    // formed but refused by any other, which takes its params by position (a row's own `fromNamed` says
    // so; here, the service's local methods, which have no row).
    const byName = v.params !== undefined && v.params !== null && !Array.isArray(v.params);
    const op = table.byMethod(method);
    if (byName && !op) {
      return refused(
        new InvalidParamsError(
          `invalid params: ${method} takes its params by position (an array), not by name (an object)`,
        ),
      );
    }
    if (!op) return { identity, method, local, params: (v.params as unknown[] | null | undefined) ?? [] };
    try {
      const params = byName
        ? op.fromNamed(v.params as object as Record<string, unknown>)
        : ((v.params as unknown[] | null | undefined) ?? []);
      return { identity, method, op, params: op.prepare(params) };
    } catch (error) {
      return { identity, method, params: [], error: toServiceError(error) };
    }
  }

  const costOf = (call: Call) => (call.op?.cost && !call.error ? call.op.cost(call.params) : 1);

  function batchPlan(calls: Call[], answerOptions: AnswerOptions): RpcPlan {
    let cost = 0;
    const later: Promise<number>[] = [];
    for (const call of calls) {
      const c = costOf(call);
      if (typeof c === "number") cost += c;
      else later.push(c);
    }
    if (later.length === 0) return { batch: true, calls, cost: Math.max(1, cost), options: answerOptions };
    const looked = Promise.all(later).then((costs) => {
      let total = cost;
      for (const c of costs) total += c;
      return Math.max(1, total);
    });
    return { batch: true, calls, cost: looked, options: answerOptions };
  }

  const errorAnswer = (identity: RpcIdentity, error: ServiceError): Answer => ({
    parts: [rpcErrorText(identity, error)],
  });

  function run(
    call: Call,
    context: RequestContext,
    transport: AnswerOptions["transport"],
  ): Answer | Promise<Answer> {
    const { identity, method } = call;
    const fail = (error: unknown): Answer => {
      const e = toServiceError(error);
      if (e instanceof InternalError)
        log.error("operation failed", { method, requestId: context.requestId, error });
      requests.labels(method, transport, outcomeLabel(e)).inc();
      // The node's own error is a node answer too: it was asked (and errors are never cached).
      return e instanceof NodeError
        ? { ...errorAnswer(identity, e), source: "miss" }
        : errorAnswer(identity, e);
    };
    if (call.error) return fail(call.error);
    const succeed = (result: OperationResult): Answer => {
      requests.labels(method, transport, "ok").inc();
      return {
        parts: [`{"jsonrpc":${identity.jsonrpc},"id":${identity.id},"result":`, result.raw, "}"],
        source: result.source,
        upstream: result.upstream,
      };
    };
    try {
      const result = call.op
        ? call.op.run(call.params, context)
        : Promise.resolve(call.local!.run(method, call.params)).then((raw): OperationResult => ({ raw }));
      // A cache hit comes back at once: no microtask turns on the hot path.
      return result instanceof Promise ? result.then(succeed, fail) : succeed(result);
    } catch (error) {
      return fail(error);
    }
  }

  function answer(plan: RpcPlan, context: RequestContext): RpcAnswer | Promise<RpcAnswer> {
    const { transport } = plan.options;
    if (!plan.batch) {
      const one = run(plan.calls[0]!, context, transport);
      return one instanceof Promise ? one.then(single) : single(one);
    }
    if (plan.calls.length === 0) {
      const error = new InvalidRequestError("invalid request: empty batch");
      return { status: 200, parts: [rpcErrorText(NO_IDENTITY, error)] };
    }
    return Promise.all(plan.calls.map((call) => run(call, context, transport))).then((answers) => {
      const parts: RawJson[] = ["["];
      for (let i = 0; i < answers.length; i++) {
        if (i > 0) parts.push(",");
        for (const part of answers[i]!.parts) parts.push(part);
      }
      parts.push("]");
      return combine(answers, parts);
    });
  }

  /** A batch's answer text, in order, with at most STREAMED_BATCH_WINDOW calls running at once. */
  async function batchText(
    plan: RpcPlan,
    context: RequestContext,
    budget: TextBudget,
  ): Promise<string | undefined> {
    const { calls, options } = plan;
    const running: (Answer | Promise<Answer>)[] = [];
    let next = 0;
    let text = "[";
    let taken = 0;
    try {
      for (let i = 0; i < calls.length; i++) {
        while (running.length < STREAMED_BATCH_WINDOW && next < calls.length) {
          running.push(run(calls[next++]!, context, options.transport));
        }
        const head = running.shift()!;
        const answer = head instanceof Promise ? await head : head;
        const part = i === 0 ? partsText(answer.parts) : `,${partsText(answer.parts)}`;
        budget.take(part.length);
        taken += part.length;
        if (!budget.live()) return undefined;
        text += part;
      }
      return `${text}]`;
    } finally {
      budget.release(taken);
    }
  }

  return {
    answerText(plan, context, budget) {
      if (plan.batch && plan.calls.length > 0) return batchText(plan, context, budget);
      const answered = answer(plan, context);
      return answered instanceof Promise
        ? answered.then((a) => partsText(a.parts))
        : partsText(answered.parts);
    },

    stream(plan, context) {
      const { calls, options } = plan;
      const running: (Answer | Promise<Answer>)[] = [];
      let next = 0;
      const fill = () => {
        while (running.length < STREAMED_BATCH_WINDOW && next < calls.length) {
          running.push(run(calls[next++]!, context, options.transport));
        }
      };
      // A direct stream, written through a gather (http/gather.ts); it waits for the reader when the
      // response's buffer is full. As in an NDJSON stream (http/stream.ts), a final answer the cache holds is
      // written as stored when its turn comes; after a miss the next calls run STREAMED_BATCH_WINDOW ahead.
      return new ReadableStream<Uint8Array>({
        type: "direct",
        async pull(controller: ReadableStreamDirectController) {
          const out = createGather(controller);
          const collect = createCollector();
          let call: Call | undefined;
          const writeStored = (raw: RawJson) => {
            out.text(`{"jsonrpc":${call!.identity.jsonrpc},"id":${call!.identity.id},"result":`);
            out.raw(raw);
            out.ascii("}");
          };
          for (let i = 0; next < calls.length || running.length > 0; i++) {
            out.ascii(i === 0 ? "[" : ",");
            call = running.length === 0 ? calls[next] : undefined;
            if (call?.op?.readStored && !call.error && call.op.readStored(call.params, writeStored)) {
              requests.labels(call.method, options.transport, "ok").inc();
              next++;
            } else {
              if (running.length === 0) fill();
              const head = running.shift()!;
              let answer: Answer;
              if (head instanceof Promise) {
                // What is gathered goes out while the call runs; the window stays full past a miss, and
                // drains (back to reading as stored) past a run of hits.
                fill();
                out.flush();
                answer = await head;
              } else answer = head;
              for (const part of answer.parts) {
                out.raw(part);
                // A memory hit is kept anyway; anything else was made for this answer (collector.ts).
                if (answer.source !== "memory") collect(part.length);
              }
            }
            const drained = out.drained();
            if (drained !== true && !(await drained)) {
              next = calls.length;
              running.length = 0;
              return;
            }
          }
          out.ascii("]");
          out.flush();
          controller.close();
        },
        cancel() {
          next = calls.length;
          running.length = 0;
        },
      } as never);
    },

    plan(body, answerOptions = HTTP_RPC, text) {
      if (Array.isArray(body)) {
        if (body.length > maxBatchLength) {
          throw new PayloadTooLargeError(
            `a batch of ${body.length} calls exceeds the limit of ${maxBatchLength} (MAX_BATCH_LENGTH)`,
          );
        }
        const calls = body.map((value) => check(value, answerOptions.local));
        if (text !== undefined) remember(text, calls);
        return batchPlan(calls, answerOptions);
      }
      if (answerOptions.envelope422) {
        const issues = envelopeIssues(body);
        if (issues.length > 0) throw new RequestValidationError(issues);
      }
      const call = check(body, answerOptions.local);
      if (text !== undefined) remember(text, [call]);
      return { batch: false, calls: [call], cost: costOf(call), options: answerOptions };
    },

    planText(text, answerOptions = HTTP_RPC) {
      const read = readCalls(text, maxBatchLength);
      if (!read) return undefined;
      const calls: Call[] = new Array(read.calls.length);
      for (let i = 0; i < calls.length; i++) {
        const sent = read.calls[i]!;
        const params = memo.get(memoKey(sent));
        if (params === undefined) return undefined;
        calls[i] = { identity: sent.identity, method: sent.method, op: table.byMethod(sent.method), params };
      }
      return read.batch
        ? batchPlan(calls, answerOptions)
        : { batch: false, calls, cost: costOf(calls[0]!), options: answerOptions };
    },

    answer,
  };
}

/** POST /node/jsonrpc: a single request or a batch, each call costing what its operation says. */
export function jsonRpcRoute(options: { rpc: JsonRpc; guard: Guard }): Handler {
  const { rpc, guard } = options;
  const respond = (answer: RpcAnswer, requestId: string) => {
    const headers = jsonHeaders(requestId);
    if (answer.source !== undefined) headers["x-cache"] = answer.source;
    if (answer.upstream !== undefined) headers["x-upstream"] = answer.upstream;
    return rawJson(joinParts(answer.parts), answer.status, headers);
  };
  return guard.route<RpcPlan>({
    name: "/node/jsonrpc",
    transport: JSON_RPC,
    body: true,
    acceptText(text) {
      const plan = rpc.planText(text);
      return plan && { input: plan, cost: plan.cost };
    },
    accept(body, text) {
      const plan = rpc.plan(body, HTTP_RPC, text);
      return { input: plan, cost: plan.cost };
    },
    run(plan, context) {
      const { requestId } = context;
      // A long batch is written as it is answered: no x-cache or x-upstream, which would need every answer.
      if (plan.batch && plan.calls.length > STREAMED_BATCH_WINDOW) {
        return new Response(rpc.stream(plan, context), { headers: jsonHeaders(requestId) });
      }
      const answer = rpc.answer(plan, context);
      return answer instanceof Promise
        ? answer.then((a) => respond(a, requestId))
        : respond(answer, requestId);
    },
  });
}
