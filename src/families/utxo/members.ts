/**
 * Reading a few top-level members of a node's JSON text without parsing it: the raw scanner of json.ts finds
 * their spans, stopping once it has found them all (a block's `hash` and `height` come before its
 * transactions, so a 3 MB block is not walked for them), and their values are read from those spans alone.
 * Amounts stay text: a decimal is never read through a float here.
 */
import { skipValue, skipWhitespace } from "../../json";

const QUOTE = 34;
const LBRACE = 123;
const RBRACE = 125;
const COMMA = 44;
const COLON = 58;

/** Where a member sits in the text: its key's opening quote, and its value. */
export interface MemberSpan {
  keyStart: number;
  start: number;
  end: number;
}

/**
 * The spans of the members named `wanted` of the object at `start` (strictly checked JSON up to the last one
 * found; the whole object when one is missing). Throws SyntaxError when there is no object there.
 */
export function membersOf(text: string, wanted: readonly string[], start = 0): Map<string, MemberSpan> {
  const found = new Map<string, MemberSpan>();
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== LBRACE) throw new SyntaxError("expected an object");
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === RBRACE) return found;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new SyntaxError(`expected a key at ${i}`);
    const keyStart = i;
    const keyEnd = skipValue(text, i);
    const rawKey = text.slice(i + 1, keyEnd - 1);
    const key = rawKey.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : rawKey;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new SyntaxError(`expected a colon at ${i}`);
    const valueStart = skipWhitespace(text, i + 1);
    const valueEnd = skipValue(text, valueStart);
    if (!found.has(key) && wanted.includes(key)) {
      found.set(key, { keyStart, start: valueStart, end: valueEnd });
      if (found.size === wanted.length) return found;
    }
    i = skipWhitespace(text, valueEnd);
    const c = text.charCodeAt(i);
    if (c === RBRACE) return found;
    if (c !== COMMA) throw new SyntaxError(`expected a comma at ${i}`);
    i = skipWhitespace(text, i + 1);
  }
}

/** Whether the JSON text is a string (a node's hex answer: a block or transaction at verbosity 0). */
export function isJsonString(text: string): boolean {
  return text.charCodeAt(skipWhitespace(text, 0)) === QUOTE;
}

/** A member's string value; undefined when absent or not a string. */
export function stringAt(text: string, span: MemberSpan | undefined): string | undefined {
  if (span === undefined || text.charCodeAt(span.start) !== QUOTE) return undefined;
  const value = text.slice(span.start + 1, span.end - 1);
  return value.includes("\\") ? (JSON.parse(text.slice(span.start, span.end)) as string) : value;
}

const INTEGER = /^-?(0|[1-9][0-9]{0,15})$/;

/** A member's integer value (a height, a count of confirmations); undefined when absent or not one. */
export function integerAt(text: string, span: MemberSpan | undefined): bigint | undefined {
  if (span === undefined) return undefined;
  const value = text.slice(span.start, span.end);
  return INTEGER.test(value) ? BigInt(value) : undefined;
}

/** One change to a text: `[start, end)` replaced by `text`. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The text with its edits made (they must not overlap); the unchanged stretches are sliced, not copied. */
export function splice(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const edit of sorted) {
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

/** Where a member's removal starts: the comma before its key (members after the first only). */
export function memberRemovalStart(text: string, span: MemberSpan): number | undefined {
  let i = span.keyStart - 1;
  while (i >= 0 && text.charCodeAt(i) <= 32) i--;
  return text.charCodeAt(i) === COMMA ? i : undefined;
}
