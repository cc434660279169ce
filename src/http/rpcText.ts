/**
 * The JSON-RPC fast path's reader: a request's envelope read from its text in one pass, without building a
 * value: the method's name, the exact text of its params, and the `jsonrpc` and `id` its answer echoes, in
 * the very forms `rpcIdentity` (http/answer.ts) gives for the parsed request. Whatever it cannot judge for
 * certain is `undefined`, and the request takes the full path, which parses it: an escape in the method or
 * the id, an id that JSON would write back differently (`1.0`, `1e3`, a number past 2^53, an object), a
 * member other than the four of the envelope, a member twice, params that are not a list, anything
 * malformed. What it accepts is valid JSON throughout (params are checked by the strict scanner of
 * json.ts).
 */
import { skipValue, skipWhitespace } from "../json";
import type { RpcIdentity } from "./answer";

export interface CallText {
  method: string;
  /** The params member's text, exactly as sent; "" when the member is absent. */
  params: string;
  identity: RpcIdentity;
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const ZERO = 48;
const NINE = 57;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const N = 110;

/** The default `jsonrpc` echo, and the `id` of a request without one (http/answer.ts). */
const JSONRPC_2 = '"2.0"';
const NO_ID = "0";
/** Integers with more digits may pass 2^53, where JSON.parse rounds them: the full path reads those. */
const MAX_ID_DIGITS = 15;

// Members, one bit each, so a member sent twice (where JSON.parse keeps the last) goes to the full path.
const JSONRPC = 1;
const ID = 2;
const METHOD = 4;
const PARAMS = 8;

/**
 * Index just past the string at `start` when it holds no escape, no control character and no surrogate (its
 * text is then its value, and JSON.stringify writes it back the same); -1 otherwise, and for anything at
 * `start` but a quote: a value that only ends like a string (`Xeth_chainId"`, `[1,{2:3}]"`) is not JSON.
 */
function plainStringEnd(text: string, start: number): number {
  if (text.charCodeAt(start) !== QUOTE) return -1;
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH || c < 32 || (c >= 0xd800 && c <= 0xdfff)) return -1;
  }
  return -1;
}

/** Index just past an id that JSON.stringify(JSON.parse(id)) writes back unchanged; -1 for any other. */
function canonicalIdEnd(text: string, start: number): number {
  const c = text.charCodeAt(start);
  if (c === QUOTE) return plainStringEnd(text, start);
  if (c === N) return text.startsWith("null", start) ? start + 4 : -1;
  let i = c === MINUS ? start + 1 : start;
  const first = text.charCodeAt(i);
  if (first < ZERO || first > NINE) return -1;
  // A leading zero is the whole number (and "-0" is written back as 0).
  if (first === ZERO) {
    if (c === MINUS) return -1;
    i++;
  } else {
    const digitsFrom = i;
    while (i < text.length && text.charCodeAt(i) >= ZERO && text.charCodeAt(i) <= NINE) i++;
    if (i - digitsFrom > MAX_ID_DIGITS) return -1;
  }
  // A fraction or an exponent makes a number JSON writes otherwise.
  const next = text.charCodeAt(i);
  return next === 46 || next === 101 || next === 69 || (next >= ZERO && next <= NINE) ? -1 : i;
}

/** The member a key names (its bit), when it is one of the envelope's. */
function memberOf(text: string, start: number, end: number): number {
  switch (end - start) {
    case 4:
      return text.startsWith('"id"', start) ? ID : 0;
    case 8:
      return text.startsWith('"method"', start) ? METHOD : text.startsWith('"params"', start) ? PARAMS : 0;
    case 9:
      return text.startsWith('"jsonrpc"', start) ? JSONRPC : 0;
    default:
      return 0;
  }
}

/** The request object at `start` (no leading whitespace) and the index just past it; undefined: full path. */
function readCall(text: string, start: number): { call: CallText; end: number } | undefined {
  if (text.charCodeAt(start) !== LBRACE) return undefined;
  let i = skipWhitespace(text, start + 1);
  let seen = 0;
  let method: string | undefined;
  let params = "";
  let jsonrpc = JSONRPC_2;
  let id = NO_ID;
  for (;;) {
    const keyEnd = plainStringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const member = memberOf(text, i, keyEnd);
    if (member === 0 || seen & member) return undefined;
    seen |= member;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const from = skipWhitespace(text, i + 1);
    let end: number;
    switch (member) {
      case JSONRPC:
        end = plainStringEnd(text, from);
        if (end < 0) return undefined;
        if (end - from !== 5 || !text.startsWith(JSONRPC_2, from)) jsonrpc = text.slice(from, end);
        break;
      case ID:
        end = canonicalIdEnd(text, from);
        if (end < 0) return undefined;
        id = text.slice(from, end);
        break;
      case METHOD:
        end = plainStringEnd(text, from);
        if (end < 0) return undefined;
        method = text.slice(from + 1, end - 1);
        break;
      default:
        if (text.charCodeAt(from) !== LBRACKET) return undefined;
        try {
          end = skipValue(text, from);
        } catch {
          return undefined;
        }
        params = text.slice(from, end);
    }
    i = skipWhitespace(text, end);
    const c = text.charCodeAt(i);
    if (c === RBRACE) {
      if (method === undefined) return undefined;
      return { call: { method, params, identity: { jsonrpc, id } }, end: i + 1 };
    }
    if (c !== COMMA) return undefined;
    i = skipWhitespace(text, i + 1);
  }
}

/**
 * A body's calls read from its text: one for a single request, each element's for a batch (`batch`), or
 * undefined when the full path must read it (also an empty batch, and one longer than `maxBatch`).
 */
export function readCalls(text: string, maxBatch: number): { batch: boolean; calls: CallText[] } | undefined {
  let i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) !== LBRACKET) {
    const one = readCall(text, i);
    if (!one || skipWhitespace(text, one.end) !== text.length) return undefined;
    return { batch: false, calls: [one.call] };
  }
  const calls: CallText[] = [];
  i = skipWhitespace(text, i + 1);
  for (;;) {
    const one = readCall(text, i);
    if (!one || calls.length === maxBatch) return undefined;
    calls.push(one.call);
    i = skipWhitespace(text, one.end);
    const c = text.charCodeAt(i);
    if (c === RBRACKET) break;
    if (c !== COMMA) return undefined;
    i = skipWhitespace(text, i + 1);
  }
  return skipWhitespace(text, i + 1) === text.length ? { batch: true, calls } : undefined;
}
