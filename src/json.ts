/**
 * JSON helpers shared by every layer:
 * - exact integers: numbers beyond 2^53 parse to bigint and bigints serialize as their full digits;
 * - RFC 3339 UTC date-times;
 * - a structural scanner that finds the raw text of members and elements, so node results are spliced
 *   into responses as the bytes the node sent, never re-serialized.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;
const COLON = 58;

// A JSON number with 16+ digits may exceed 2^53; below that JSON.parse is exact and needs no reviver. Only
// number tokens count (after `:`, `,` or `[`): digits inside hex strings (calldata is full of zeros) do not.
const LONG_DIGIT_RUN = /[:,[]\s*-?\d{16}/;

function exactIntegerReviver(this: unknown, _key: string, value: unknown, context?: { source?: string }) {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined) {
    const source = context.source;
    if (/^-?\d+$/.test(source)) return BigInt(source);
  }
  return value;
}

/** The deepest nesting a request may have: deeper values can be parsed but not serialized back. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, found in one pass without parsing (text
 * inside strings does not count). Malformed text is left to the parser.
 */
export function nestedDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Past the string: the next quote not escaped by an odd run of backslashes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === LBRACE || c === LBRACKET) {
      if (++depth > limit) return true;
    } else if (c === RBRACE || c === RBRACKET) {
      depth--;
    }
  }
  return false;
}

/** JSON.parse that keeps integers beyond Number.MAX_SAFE_INTEGER exact, as bigint. Throws SyntaxError. */
export function parseJson(text: string): unknown {
  return LONG_DIGIT_RUN.test(text) ? JSON.parse(text, exactIntegerReviver as never) : JSON.parse(text);
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? (JSON as any).rawJSON(value.toString()) : value;
}

/** JSON.stringify that writes bigints as exact digits. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, bigintReplacer);
}

/**
 * toJson for hot paths: a replacer slows JSON.stringify several times over, and values holding a bigint
 * are rare, so they take the second try.
 */
export function fastJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return toJson(value);
  }
}

/** JSON text as received or as stored: text, or its UTF-8 bytes (large answers splice faster as bytes). */
export type RawJson = string | Uint8Array;

const decoder = new TextDecoder();

export function rawText(raw: RawJson): string {
  return typeof raw === "string" ? raw : decoder.decode(raw);
}

/** Parts of JSON as one text, for a transport that sends whole messages (a WebSocket's). */
export function partsText(parts: readonly RawJson[]): string {
  let text = "";
  for (const part of parts) text += typeof part === "string" ? part : decoder.decode(part);
  return text;
}

/**
 * A response body from parts of JSON: one string when all are text; else a direct stream that writes each
 * part as it is, so a large cached answer goes out without being copied into a new buffer (measured on
 * 138 KB: 1.1x a raw Bun.serve sending prebuilt bytes, where a Blob of the parts made 0.8x).
 */
export function joinParts(parts: RawJson[]): string | ReadableStream {
  for (const part of parts) {
    if (typeof part !== "string") {
      return new ReadableStream({
        type: "direct",
        pull(controller) {
          for (const p of parts) controller.write(p);
          controller.close();
        },
      });
    }
  }
  return parts.join("");
}

/** RFC 3339 UTC with a `Z` and whole seconds, e.g. `2024-03-01T12:00:05Z`. */
export function rfc3339(unixSeconds: number | bigint | Date): string {
  const ms = unixSeconds instanceof Date ? unixSeconds.getTime() : Number(unixSeconds) * 1000;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

// ---------------------------------------------------------------------------------------------------
// Raw scanner: the spans of members and elements, found without building any value. It is strict (it
// throws SyntaxError on anything JSON.parse would refuse: structure, tokens, escapes, control characters
// in strings), so an upstream answer can be checked and sliced without being parsed.

function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export function skipWhitespace(text: string, i: number): number {
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: JSON strings may not hold them.
const CONTROL = /[\u0000-\u001f]/;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/g;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function skipString(text: string, start: number): number {
  let from = start + 1;
  let escaped = false;
  let end: number;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new SyntaxError("unterminated string");
    let backslashes = 0;
    for (let b = quote - 1; text.charCodeAt(b) === BACKSLASH; b--) backslashes++;
    if (backslashes > 0) escaped = true;
    if (backslashes % 2 === 0) {
      end = quote;
      break;
    }
    from = quote + 1;
  }
  const body = text.slice(start + 1, end);
  if (CONTROL.test(body)) throw new SyntaxError(`control character in string at ${start}`);
  if ((escaped || body.includes("\\")) && body.replace(ESCAPE, "").includes("\\")) {
    throw new SyntaxError(`bad escape in string at ${start}`);
  }
  return end + 1;
}

function checkToken(text: string, start: number, end: number): void {
  const token = text.slice(start, end);
  if (token === "true" || token === "false" || token === "null" || NUMBER.test(token)) return;
  throw new SyntaxError(`unexpected token at ${start}`);
}

/** Index just past the value at `start`, checked strictly (see skipValue) including all it contains. */
function skipContainer(text: string, start: number): number {
  return text.charCodeAt(start) === LBRACE ? endOfObject(text, start) : endOfArray(text, start);
}

function endOfObject(text: string, start: number): number {
  let i = skipWhitespace(text, start + 1);
  if (text.charCodeAt(i) === RBRACE) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new SyntaxError(`expected a key at ${i}`);
    i = skipWhitespace(text, skipString(text, i));
    if (text.charCodeAt(i) !== COLON) throw new SyntaxError(`expected a colon at ${i}`);
    i = skipWhitespace(text, skipValue(text, skipWhitespace(text, i + 1)));
    const c = text.charCodeAt(i);
    if (c === RBRACE) return i + 1;
    if (c !== COMMA) throw new SyntaxError(`expected a comma at ${i}`);
    i = skipWhitespace(text, i + 1);
  }
}

function endOfArray(text: string, start: number): number {
  let i = skipWhitespace(text, start + 1);
  if (text.charCodeAt(i) === RBRACKET) return i + 1;
  for (;;) {
    i = skipWhitespace(text, skipValue(text, i));
    const c = text.charCodeAt(i);
    if (c === RBRACKET) return i + 1;
    if (c !== COMMA) throw new SyntaxError(`expected a comma at ${i}`);
    i = skipWhitespace(text, i + 1);
  }
}

/** Index just past the JSON value that starts at `start` (no leading whitespace); throws if malformed. */
export function skipValue(text: string, start: number): number {
  if (start >= text.length) throw new SyntaxError("unexpected end of input");
  const c = text.charCodeAt(start);
  if (c === QUOTE) return skipString(text, start);
  if (c === LBRACE || c === LBRACKET) return skipContainer(text, start);
  let i = start;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === RBRACE || d === RBRACKET || d === COLON || isWhitespace(d)) break;
    i++;
  }
  checkToken(text, start, i);
  return i;
}

/** Throws SyntaxError unless `text` is exactly one JSON value (with optional surrounding whitespace). */
export function checkJson(text: string): void {
  const end = skipWhitespace(text, skipValue(text, skipWhitespace(text, 0)));
  if (end !== text.length) throw new SyntaxError(`unexpected data after the value at ${end}`);
}

export interface Span {
  start: number;
  end: number;
}

/** The raw value span of each member of the object that starts at `start`. */
export function objectMembers(text: string, start: number): Map<string, Span> {
  return objectMembersAt(text, start).members;
}

/** The members of the object at `start`, and the index just past it. */
export function objectMembersAt(text: string, start: number): { members: Map<string, Span>; end: number } {
  const members = new Map<string, Span>();
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== LBRACE) throw new SyntaxError("expected an object");
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === RBRACE) return { members, end: i + 1 };
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new SyntaxError(`expected a key at ${i}`);
    const keyEnd = skipString(text, i);
    const rawKey = text.slice(i + 1, keyEnd - 1);
    const key = rawKey.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : rawKey;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new SyntaxError("expected a colon");
    const valueStart = skipWhitespace(text, i + 1);
    const valueEnd = skipValue(text, valueStart);
    members.set(key, { start: valueStart, end: valueEnd });
    i = skipWhitespace(text, valueEnd);
    const c = text.charCodeAt(i);
    if (c === RBRACE) return { members, end: i + 1 };
    if (c !== COMMA) throw new SyntaxError("expected a comma");
    i = skipWhitespace(text, i + 1);
  }
}

/** The raw span of each element of the array that starts at `start`. */
export function arrayElements(text: string, start: number): Span[] {
  const elements: Span[] = [];
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== LBRACKET) throw new SyntaxError("expected an array");
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === RBRACKET) return elements;
  for (;;) {
    const end = skipValue(text, i);
    elements.push({ start: i, end });
    i = skipWhitespace(text, end);
    const c = text.charCodeAt(i);
    if (c === RBRACKET) return elements;
    if (c !== COMMA) throw new SyntaxError("expected a comma");
    i = skipWhitespace(text, i + 1);
  }
}
