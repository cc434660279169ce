/**
 * The JSON-RPC wire format toward nodes. An answer is read with the strict raw scanner: ids and errors
 * (small) are parsed, results only checked and sliced, so a node's result is kept as the exact text it
 * sent and a large one is never parsed.
 */
import { NodeError, UpstreamProtocolError } from "../errors";
import { objectMembersAt, type Span, skipWhitespace, toJson } from "../json";
import type { NodeErrorClassifier } from "./protocol";

export type Outcome = { ok: true; raw: string } | { ok: false; error: NodeError };

export function encodeRequest(id: number, method: string, params: unknown[]): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${toJson(params)}}`;
}

const slice = (text: string, span: Span) => text.slice(span.start, span.end);

function outcomeOf(text: string, members: Map<string, Span>, errorKind: NodeErrorClassifier): Outcome {
  const error = members.get("error");
  if (error && slice(text, error) !== "null") {
    const raw = slice(text, error);
    const e = JSON.parse(raw) as { code?: unknown; message?: unknown; data?: unknown };
    if (typeof e !== "object" || e === null || typeof e.code !== "number" || typeof e.message !== "string") {
      throw new UpstreamProtocolError("upstream sent a malformed JSON-RPC error object");
    }
    return {
      ok: false,
      error: new NodeError(e.code, e.message, e.data, raw, errorKind(e.code, e.message)),
    };
  }
  const result = members.get("result");
  if (!result) throw new UpstreamProtocolError("upstream response has neither result nor error");
  return { ok: true, raw: slice(text, result) };
}

function idOf(text: string, members: Map<string, Span>): unknown {
  const id = members.get("id");
  return id ? JSON.parse(slice(text, id)) : undefined;
}

/** Outcomes by request id, from a single response or a batch; node errors classified by `errorKind`. */
export function decodeResponses(text: string, errorKind: NodeErrorClassifier): Map<unknown, Outcome> {
  const outcomes = new Map<unknown, Outcome>();
  try {
    let i = skipWhitespace(text, 0);
    const first = text.charCodeAt(i);
    if (first === 91) {
      i = skipWhitespace(text, i + 1);
      while (text.charCodeAt(i) !== 93) {
        if (text.charCodeAt(i) !== 123)
          throw new UpstreamProtocolError("upstream batch response holds a non-object");
        const { members, end } = objectMembersAt(text, i);
        outcomes.set(idOf(text, members), outcomeOf(text, members, errorKind));
        i = skipWhitespace(text, end);
        if (text.charCodeAt(i) === 44) i = skipWhitespace(text, i + 1);
        else if (text.charCodeAt(i) !== 93) throw new SyntaxError(`expected a comma at ${i}`);
      }
      i++;
    } else if (first === 123) {
      const { members, end } = objectMembersAt(text, i);
      outcomes.set(idOf(text, members), outcomeOf(text, members, errorKind));
      i = end;
    } else {
      throw new UpstreamProtocolError("upstream sent a JSON value that is not a JSON-RPC response");
    }
    if (skipWhitespace(text, i) !== text.length) throw new SyntaxError("data after the response");
  } catch (error) {
    if (error instanceof UpstreamProtocolError) throw error;
    throw new UpstreamProtocolError("upstream sent invalid JSON");
  }
  return outcomes;
}
