/**
 * Compiled TypeBox checks whose failures read like FastAPI's: `{loc, msg, type}` with `loc` naming the
 * field. REST bodies, the JSON-RPC envelope and JSON-RPC params all go through here.
 */
import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Errors, type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { ADDRESS_FORMAT, type AddressCodec } from "./addresses";
import { readBlockRef } from "./blockRef";
import type { ValidationIssue } from "./errors";

interface Format {
  check(value: string): boolean;
  /** What a mismatch says the input should be, in place of the schema's description. */
  description?: string;
  /** The issue type of a mismatch. */
  type: string;
  /** What is wrong with this value, said after the description (the address codec's `problem`). */
  problem?(value: string): string | undefined;
}

/** The string formats the schemas use (schemas.ts), registered with TypeBox before the first compile. */
const FORMATS = new Map<string, Format>([
  ["block-ref", { check: (value) => readBlockRef(value) !== undefined, type: "value_error" }],
]);

/**
 * Addresses in requests (the `address` format) are checked by the served family's codec from now on. The
 * composition root calls it before any request: TypeBox's format registry is the process's. A mismatch
 * reads as the pattern FastAPI checked addresses with did.
 */
export function useAddressCodec(codec: AddressCodec): void {
  const format: Format = {
    check: (value) => codec.canonical(value) !== undefined,
    description: codec.description,
    type: "string_pattern_mismatch",
    problem: codec.problem?.bind(codec),
  };
  FORMATS.set(ADDRESS_FORMAT, format);
  FormatRegistry.Set(ADDRESS_FORMAT, format.check);
}

// A body can be wrong in thousands of places; the first few say enough.
const MAX_ISSUES = 20;

export type Loc = (string | number)[];

export interface Validator<T = unknown> {
  check(value: unknown): value is T;
  issues(value: unknown, loc: Loc): ValidationIssue[];
  readonly schema: TSchema;
}

export function compile<T = unknown>(schema: TSchema): Validator<T> {
  for (const [name, format] of FORMATS) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, format.check);
  const compiled = TypeCompiler.Compile(schema);
  return {
    schema,
    check: (value): value is T => compiled.Check(value),
    issues(value, loc) {
      const seen = new Set<string>();
      const issues: ValidationIssue[] = [];
      for (const error of compiled.Errors(value)) {
        if (issues.length >= MAX_ISSUES) break;
        const issue = toIssue(error, loc);
        const key = issue.loc.join("\u0000");
        // TypeBox reports a missing property twice (missing, then its type); the first says it.
        if (seen.has(key)) continue;
        seen.add(key);
        issues.push(issue);
      }
      return issues;
    },
  };
}

function pathSegments(path: string): (string | number)[] {
  if (path === "") return [];
  return path
    .slice(1)
    .split("/")
    .map((s) => {
      const key = s.replace(/~1/g, "/").replace(/~0/g, "~");
      return /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : key;
    });
}

/** "a valid integer", "a block number or tag", ... for a schema, from its description where it has one. */
export function expected(schema: TSchema): string {
  const format = typeof schema.format === "string" ? FORMATS.get(schema.format)?.description : undefined;
  if (format !== undefined) return format;
  if (typeof schema.description === "string") return schema.description;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) {
    const parts = (schema.anyOf as TSchema[]).map(expected);
    return parts.length <= 1
      ? (parts[0] ?? "nothing")
      : `${parts.slice(0, -1).join(", ")} or ${parts.at(-1)}`;
  }
  switch (schema.type) {
    case "integer":
      return "a valid integer";
    case "number":
      return "a valid number";
    case "string":
      return "a valid string";
    case "boolean":
      return "a valid boolean";
    case "array":
      return "a valid list";
    case "object":
      return "a valid object";
    case "null":
      return "null";
    default:
      return "a valid value";
  }
}

/** A union of constants (and maybe null): an enumeration. */
function isLiteralUnion(schema: TSchema): boolean {
  return (
    Array.isArray(schema.anyOf) &&
    (schema.anyOf as TSchema[]).every((s) => s.const !== undefined || s.type === "null")
  );
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function matchesType(schema: TSchema, type: string): boolean {
  if (schema.type === "integer" || schema.type === "number") return type === "number";
  return schema.type === type;
}

/** The one union member of the value's own JSON type, whose error is more telling than the union's. */
function unionMemberFor(schema: TSchema, value: unknown): TSchema | undefined {
  const type = jsonType(value);
  const members = (schema.anyOf as TSchema[]).filter((m) => matchesType(m, type));
  return members.length === 1 ? members[0] : undefined;
}

function toIssue(error: ValueError, prefix: Loc): ValidationIssue {
  const loc = [...prefix, ...pathSegments(error.path)];
  const { schema, value } = error;
  if (error.type === ValueErrorType.Union && !isLiteralUnion(schema)) {
    const member = unionMemberFor(schema, value);
    const inner = member && Errors(member, value).First();
    if (inner) return toIssue({ ...inner, path: error.path + inner.path }, prefix);
  }
  if (typeof value === "bigint") {
    return { loc, msg: `Input should be ${expected(schema)}; ${value} is out of range`, type: "value_error" };
  }
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { loc, msg: "Field required", type: "missing" };
    case ValueErrorType.ObjectAdditionalProperties:
      return { loc, msg: "Extra inputs are not permitted", type: "extra_forbidden" };
    case ValueErrorType.Integer:
      return { loc, msg: "Input should be a valid integer", type: "int_type" };
    case ValueErrorType.Number:
      return { loc, msg: "Input should be a valid number", type: "float_type" };
    case ValueErrorType.String:
      return { loc, msg: "Input should be a valid string", type: "string_type" };
    case ValueErrorType.Boolean:
      return { loc, msg: "Input should be a valid boolean", type: "bool_type" };
    case ValueErrorType.Array:
      return { loc, msg: "Input should be a valid list", type: "list_type" };
    case ValueErrorType.Object:
      return { loc, msg: "Input should be a valid object", type: "dict_type" };
    case ValueErrorType.Null:
      // A described null says why nothing else is taken (a family's field it has no use for).
      return { loc, msg: `Input should be ${expected(schema)}`, type: "none_required" };
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return {
        loc,
        msg: `Input should be greater than or equal to ${schema.minimum}`,
        type: "greater_than_equal",
      };
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum: {
      // What a value past the maximum should do instead, where the schema says (`x-past-maximum`).
      const past = typeof schema["x-past-maximum"] === "string" ? `: ${schema["x-past-maximum"]}` : "";
      return {
        loc,
        msg: `Input should be less than or equal to ${schema.maximum}${past}`,
        type: "less_than_equal",
      };
    }
    case ValueErrorType.StringMinLength:
      return {
        loc,
        msg: `String should have at least ${schema.minLength} characters`,
        type: "string_too_short",
      };
    case ValueErrorType.StringMaxLength:
      return {
        loc,
        msg: `String should have at most ${schema.maxLength} characters`,
        type: "string_too_long",
      };
    case ValueErrorType.ArrayMinItems:
      return { loc, msg: `List should have at least ${schema.minItems} items`, type: "too_short" };
    case ValueErrorType.ArrayMaxItems:
      return schema.description
        ? { loc, msg: `Input should be ${schema.description}`, type: "too_long" }
        : { loc, msg: `List should have at most ${schema.maxItems} items`, type: "too_long" };
    case ValueErrorType.StringPattern:
      return schema.description
        ? { loc, msg: `Input should be ${schema.description}`, type: "string_pattern_mismatch" }
        : { loc, msg: `String should match pattern '${schema.pattern}'`, type: "string_pattern_mismatch" };
    case ValueErrorType.StringFormat: {
      const format = FORMATS.get(schema.format as string);
      const problem = typeof value === "string" ? format?.problem?.(value) : undefined;
      return {
        loc,
        msg: `Input should be ${expected(schema)}${problem === undefined ? "" : `; ${problem}`}`,
        type: format?.type ?? "value_error",
      };
    }
    case ValueErrorType.Literal:
      return { loc, msg: `Input should be ${JSON.stringify(schema.const)}`, type: "literal_error" };
    case ValueErrorType.Union:
      return isLiteralUnion(schema)
        ? { loc, msg: `Input should be ${expected(schema)}`, type: "enum" }
        : { loc, msg: `Input should be ${expected(schema)}`, type: "union_type" };
    default:
      return { loc, msg: error.message, type: "value_error" };
  }
}
