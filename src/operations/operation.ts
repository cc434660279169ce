/**
 * One operation table drives the REST routes, JSON-RPC dispatch and the OpenAPI document. An operation
 * is a JSON-RPC method with positional params (and, where its family's nodes take them so, named ones,
 * mapped to positions by the params' names); its REST route, when it has one, maps a JSON body onto the
 * same params. Handlers return the result as raw JSON text, so node bytes pass through untouched.
 */
import { Type as T, type TObject, type TSchema } from "@sinclair/typebox";
import type { Caller } from "../caller";
import type { ChainFollower } from "../engine/chainFollower";
import type { Engine, EngineResult } from "../engine/engineApi";
import { InvalidParamsError, type ValidationIssue } from "../errors";
import type { RawJson } from "../json";
import { compile, type Validator } from "../validation";

/** `Methods` are the service's operations, `NodeMethods` plain pass-through node calls (docs/interface.md §2). */
export type MethodGroup = "Methods" | "NodeMethods";

export interface ParamSpec {
  name: string;
  /** Other names the param goes by, in params by name (a node version's older name: `verbose`). */
  aliases?: readonly string[];
  schema: TSchema;
  optional?: boolean;
  /** Turns a valid value into the node's form (hex quantities, lower-case hex, tags). */
  normalize?: (value: any) => unknown;
}

export interface RestSpec {
  /** The route is POST /node/rest/<name>. */
  name: string;
  /** null: the route takes no body. */
  body: TObject | null;
  /** A valid body as the operation's positional params, before normalization. */
  toParams: (body: any) => unknown[];
  /** What the route answers, for the OpenAPI document. */
  response: TSchema;
  /** Reshapes the JSON-RPC result for REST, where REST has another shape (as parts to join). */
  toRest?: (raw: RawJson) => RawJson[];
}

/**
 * A bulk stream of an operation (http/stream.ts): POST <path> with a range of blocks, answered as NDJSON,
 * one line per block holding the operation's answer for it.
 */
export interface StreamSpec {
  path: string;
  /** The operation run for each block, with the block as its only param. */
  operation: string;
  /** The member of each line that holds the block's answer. */
  member: string;
  summary: string;
}

/** What an operation answers: node results as the engine gives them, the others as JSON text. */
export type OperationResult = EngineResult;

/**
 * Who runs a call, where the answer depends on it: the filters the service keeps (eth_newFilter & co.)
 * belong to the caller's key, or in open mode to its address. JSON-RPC calls (HTTP and WebSocket) carry it;
 * an operation that needs it offers no REST route.
 */
export interface RunContext {
  caller: Caller;
  /** Who the caller counts as for what it may hold: its key's SHA-256, or `ip:<address>` in open mode. */
  readonly identity: string;
}

export interface OperationSpec {
  method: string;
  group: MethodGroup;
  summary: string;
  params: ParamSpec[];
  /** What the JSON-RPC result is, for the OpenAPI document. */
  result: TSchema;
  /**
   * It takes its params by name too (an object), as Bitcoin Core's nodes do: each named param goes to its
   * position, a position left out before the last named one is null (the node's default). Unsaid: params
   * by name are refused.
   */
  byName?: boolean;
  rest?: RestSpec;
  /** Synchronous when the answer is at hand (a cache hit), else a Promise. */
  run: (params: unknown[], context?: RunContext) => OperationResult | Promise<OperationResult>;
  /**
   * Hands the final answer already kept for these node-form params to `use` without running anything
   * (bulk streams); false when none is kept. Bytes are valid only during `use`.
   */
  readStored?: (params: unknown[], use: (raw: RawJson) => void) => boolean;
  /**
   * What a call costs in rate-limit tokens, from its params in the node's form (docs/interface.md §9);
   * without it, one token. A Promise where the cost must be looked up first (a kept filter's range, in the
   * database): the call is charged once it is known, before it runs.
   */
  cost?: (params: unknown[]) => number | Promise<number>;
}

export interface Operation extends OperationSpec {
  /** Checks JSON-RPC params and returns them in the node's form; throws InvalidParamsError. */
  prepare(params: unknown[]): unknown[];
  /**
   * Params by name as the positional params `prepare` takes (with `byName`); throws InvalidParamsError
   * naming the names it does not take.
   */
  fromNamed(named: Record<string, unknown>): unknown[];
  /** Returns REST params in the node's form; the body must already be valid against rest.body. */
  prepareRest(body: unknown): unknown[];
  readonly restBody: Validator | null;
}

/** `params[0].topics[1] (filter): Input should be ...` */
function describeIssues(issues: ValidationIssue[], name: string): string {
  const path = (loc: ValidationIssue["loc"]) =>
    loc.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
  return issues.map((i) => `${path(i.loc)} (${name}): ${i.msg}`).join("; ");
}

/** The position of each name a method's params go by (a Map: no name finds what an object inherits). */
function positionsOf(params: readonly ParamSpec[]): Map<string, number> {
  const positions = new Map<string, number>();
  params.forEach((p, i) => {
    for (const name of [p.name, ...(p.aliases ?? [])]) positions.set(name, i);
  });
  return positions;
}

/** Params by name in their positions; gaps before the last one are null, as Bitcoin Core fills them. */
function namedToPositions(spec: OperationSpec, positions: Map<string, number>, named: object): unknown[] {
  const out: unknown[] = [];
  const unknownNames: string[] = [];
  for (const [name, value] of Object.entries(named)) {
    const index = positions.get(name);
    if (index === undefined) unknownNames.push(JSON.stringify(name));
    else if (index < out.length && out[index] !== undefined) {
      throw new InvalidParamsError(
        `invalid params: ${spec.method}'s param ${spec.params[index]!.name} named twice`,
      );
    } else out[index] = value;
  }
  if (unknownNames.length > 0) {
    const names = spec.params.map((p) => p.name).join(", ") || "none";
    throw new InvalidParamsError(
      `invalid params: ${spec.method} has no param named ${unknownNames.join(", ")} (its params: ${names})`,
    );
  }
  return Array.from(out, (value) => (value === undefined ? null : value));
}

export function defineOperation(spec: OperationSpec): Operation {
  const validators = spec.params.map((p) => compile(p.schema));
  const required = spec.params.filter((p) => !p.optional).length;
  const max = spec.params.length;
  const positions = positionsOf(spec.params);

  function normalize(params: unknown[]): unknown[] {
    const out = new Array(params.length);
    for (let i = 0; i < params.length; i++) {
      const normalizeParam = spec.params[i]!.normalize;
      out[i] = normalizeParam ? normalizeParam(params[i]) : params[i];
    }
    return out;
  }

  return {
    ...spec,
    restBody: spec.rest?.body ? compile(spec.rest.body) : null,
    prepare(params) {
      if (params.length < required || params.length > max) {
        const names = spec.params.map((p) => (p.optional ? `[${p.name}]` : p.name)).join(", ");
        throw new InvalidParamsError(
          `invalid params: ${spec.method} takes ${required === max ? max : `${required} to ${max}`} params (${names || "none"}), got ${params.length}`,
        );
      }
      for (let i = 0; i < params.length; i++) {
        const validator = validators[i]!;
        if (!validator.check(params[i])) {
          const issues = validator.issues(params[i], ["params", i]);
          throw new InvalidParamsError(`invalid params: ${describeIssues(issues, spec.params[i]!.name)}`);
        }
      }
      return normalize(params);
    },
    prepareRest(body) {
      return normalize(spec.rest!.toParams(body));
    },
    fromNamed(named) {
      if (!spec.byName) {
        throw new InvalidParamsError(
          `invalid params: ${spec.method} takes its params by position (an array), not by name (an object)`,
        );
      }
      return namedToPositions(spec, positions, named);
    },
  };
}

/** The REST form of a node method's row: the route is named after the method unless `name` says. */
export interface RestRow extends Omit<RestSpec, "name"> {
  name?: string;
}

/**
 * A node method as one row of its family's table (the EVM's: families/evm/methods.ts): what callers see of
 * it (JSON-RPC name, group, params, result, REST form, cost) and the node method it calls. Its operation is
 * `nodeOperation(row)`; the family derives the engine's policies from the same rows.
 */
export interface NodeMethodRow {
  method: string;
  group: MethodGroup;
  summary: string;
  params: ParamSpec[];
  /** What the JSON-RPC result is; unsaid: anything (a pass-through NodeMethod). */
  result?: TSchema;
  /** Its params may be given by name too (OperationSpec `byName`). */
  byName?: boolean;
  rest?: RestRow;
  /** The node method called, where it is not `method` (ext_getBlockReceipts calls eth_getBlockReceipts). */
  calls?: string;
  /** Final answers the cache keeps may be read as stored (bulk streams). */
  readStored?: boolean;
  /** Rate-limit tokens a call costs, from its node-form params and the followed head; unsaid: one. */
  cost?: (params: unknown[], head: ChainFollower) => number;
}

/** A node method's operation: its params checked, then passed to the node (the engine) in the node's form. */
export function nodeOperation(row: NodeMethodRow, deps: { engine: Engine; head: ChainFollower }): Operation {
  const { engine, head } = deps;
  const calls = row.calls ?? row.method;
  const { rest, cost } = row;
  const spec: OperationSpec = {
    method: row.method,
    group: row.group,
    summary: row.summary,
    params: row.params,
    result: row.result ?? T.Unknown(),
    byName: row.byName,
    run: (params) => engine.call(calls, params),
  };
  if (rest) {
    const { name = row.method, ...form } = rest;
    spec.rest = { name, ...form };
  }
  if (row.readStored) spec.readStored = (params, use) => engine.readStored(calls, params, use);
  if (cost) spec.cost = (params) => cost(params, head);
  return defineOperation(spec);
}
