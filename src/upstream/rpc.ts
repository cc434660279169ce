/**
 * The JSON-RPC wire format toward nodes. Responses are parsed once to check them and read their ids; the
 * `result` of each is kept as the exact text the node sent.
 */
import { NodeError, UpstreamUnavailableError } from "../errors";
import { arrayElements, objectMembers, type Span, toJson } from "../json";

export type Outcome = { ok: true; raw: string } | { ok: false; error: NodeError };

export function encodeRequest(id: number, method: string, params: unknown[]): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${toJson(params)}}`;
}

export class UpstreamProtocolError extends UpstreamUnavailableError {}

function outcomeOf(text: string, span: Span, parsed: any): Outcome {
  const members = objectMembers(text, span.start);
  const error = members.get("error");
  if (error && parsed.error !== null) {
    const e = parsed.error;
    if (typeof e !== "object" || typeof e.code !== "number" || typeof e.message !== "string") {
      throw new UpstreamProtocolError("upstream sent a malformed JSON-RPC error object");
    }
    return { ok: false, error: new NodeError(e.code, e.message, e.data, text.slice(error.start, error.end)) };
  }
  const result = members.get("result");
  if (!result) throw new UpstreamProtocolError("upstream response has neither result nor error");
  return { ok: true, raw: text.slice(result.start, result.end) };
}

/** Outcomes by request id, from a single response or a batch. */
export function decodeResponses(text: string): Map<unknown, Outcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamProtocolError("upstream sent invalid JSON");
  }
  const outcomes = new Map<unknown, Outcome>();
  if (Array.isArray(parsed)) {
    const spans = arrayElements(text, 0);
    for (let i = 0; i < parsed.length; i++) {
      const element = parsed[i];
      if (typeof element !== "object" || element === null) {
        throw new UpstreamProtocolError("upstream batch response holds a non-object");
      }
      outcomes.set(element.id, outcomeOf(text, spans[i]!, element));
    }
  } else if (typeof parsed === "object" && parsed !== null) {
    outcomes.set((parsed as any).id, outcomeOf(text, { start: 0, end: text.length }, parsed));
  } else {
    throw new UpstreamProtocolError("upstream sent a JSON value that is not a JSON-RPC response");
  }
  return outcomes;
}
