/**
 * The fast path's reader (http/rpcText.ts) against JSON.parse: it accepts only texts JSON.parse accepts, and
 * what it reads of them (single or batch, each call's method, params text and the `jsonrpc` and `id` its
 * answer echoes) is what the full path takes from the parsed value. Hand-picked texts, the malformed ones a
 * reader that trusted a string's closing quote took among them, then mutations of valid requests from a
 * fixed seed: a failure names the text.
 */
import { describe, expect, test } from "bun:test";
import { type Random, seededRandom } from "../../test/support/random";
import { parseJson } from "../json";
import { rpcIdentity } from "./answer";
import { readCalls } from "./rpcText";

const MAX_BATCH = 1_000;
const SEED = 0x6a50e;
const MUTATIONS = 20_000;
/** At most this many edits make one mutant: a few keep most of a request readable. */
const MAX_EDITS = 3;
/** The members readCalls reads; it leaves any other to the full path. */
const ENVELOPE = new Set(["jsonrpc", "id", "method", "params"]);

/** Why readCalls disagrees with the full parse of `text`; undefined when it agrees or reads nothing. */
function disagreement(text: string): string | undefined {
  const read = readCalls(text, MAX_BATCH);
  if (!read) return undefined;
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    return `read a text JSON.parse refuses (${(error as Error).message})`;
  }
  if (read.batch !== Array.isArray(value)) return "read a batch as a single request, or the reverse";
  const elements = (read.batch ? value : [value]) as Record<string, unknown>[];
  if (elements.length !== read.calls.length) return `read ${read.calls.length} calls of ${elements.length}`;
  for (const [i, call] of read.calls.entries()) {
    const element = elements[i]!;
    if (typeof element !== "object" || element === null || Array.isArray(element))
      return `call ${i}: no object`;
    if (!Object.keys(element).every((key) => ENVELOPE.has(key))) return `call ${i}: a member beyond the four`;
    if (call.method !== element.method) return `call ${i}: method ${call.method}`;
    const params = call.params === "" ? undefined : parseJson(call.params);
    if (!Bun.deepEquals(params, element.params, true)) return `call ${i}: params ${call.params}`;
    const identity = rpcIdentity(element);
    if (call.identity.jsonrpc !== identity.jsonrpc || call.identity.id !== identity.id)
      return `call ${i}: echoes ${JSON.stringify(call.identity)}, not ${JSON.stringify(identity)}`;
  }
  return undefined;
}

const VALID = [
  '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  '{"jsonrpc":"2.0","id":"a-1","method":"eth_getBalance","params":["0xab",  "latest"]}',
  '{ "method" : "eth_getBlockByNumber" , "params" : [ "0x1" , false ] , "id" : null , "jsonrpc" : "1.0" }',
  '{"id":-12,"method":"eth_call","params":[{"to":"0x01","data":"0x"},"0x10"]}',
  '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"net_version","params":[]}]',
  '\n[ {"id":0,"method":"eth_blockNumber","params":[[1,2],{"a":[true,null]}]} ]\t',
];

/** Texts a JSON-significant edit away from each other: deleted, inserted, replaced or repeated characters. */
const ALPHABET = ['"', "{", "}", "[", "]", ",", ":", "0", "1", "-", "e", ".", "\\", " ", "n", "X", "\u0000"];

function mutate(text: string, r: Random): string {
  let out = text;
  const edits = 1 + r.int(MAX_EDITS);
  for (let n = 0; n < edits; n++) {
    const at = r.int(out.length);
    const kind = r.int(4);
    if (kind === 0) out = out.slice(0, at) + out.slice(at + 1);
    else if (kind === 1) out = out.slice(0, at) + r.pick(ALPHABET) + out.slice(at);
    else if (kind === 2) out = out.slice(0, at) + r.pick(ALPHABET) + out.slice(at + 1);
    else out = out.slice(0, at) + out.slice(at, at + 1 + r.int(8)) + out.slice(at);
  }
  return out;
}

describe("readCalls reads only what JSON.parse reads, and reads it as the full path does", () => {
  test("a value that only ends like a string is not a string: the two texts of the issue go the full way", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"method":Xeth_chainId","params":[]}',
      '{"jsonrpc":[1,{2:3}]","id":1,"method":"eth_chainId","params":[]}',
    ]) {
      expect(() => JSON.parse(text)).toThrow();
      expect(readCalls(text, MAX_BATCH)).toBeUndefined();
    }
  });

  test("hand-picked texts, valid and not", () => {
    const texts = [
      ...VALID,
      '{"jsonrpc":"2.0","id":1,"method":Xeth_chainId","params":[]}',
      '{"jsonrpc":[1,{2:3}]","id":1,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":2.0","id":1,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":eth_chainId,"params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":1"","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}x',
      '{"jsonrpc":"2.0","id":01,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":"2.0","id":1x,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":"2.0","id":nul,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[1,]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[],}',
      '{jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"',
      '[{"id":1,"method":"eth_chainId"},]',
      '[{"id":1,"method":"eth_chainId"}{"id":2,"method":"eth_chainId"}]',
      '{"id":1,"method":"eth\u0001chainId"}',
    ];
    const failures = texts.flatMap((text) => {
      const why = disagreement(text);
      return why ? [`${text}: ${why}`] : [];
    });
    expect(failures).toEqual([]);
    // The valid ones are read, so the comparison above is not empty.
    for (const text of VALID) expect(readCalls(text, MAX_BATCH)).toBeDefined();
  });

  test(`${MUTATIONS} mutants of valid requests, from a fixed seed`, () => {
    const r = seededRandom(SEED);
    const failures: string[] = [];
    let read = 0;
    for (let n = 0; n < MUTATIONS; n++) {
      const text = mutate(r.pick(VALID), r);
      if (readCalls(text, MAX_BATCH)) read++;
      const why = disagreement(text);
      if (why && failures.length < 10) failures.push(`${JSON.stringify(text)}: ${why}`);
    }
    expect(failures).toEqual([]);
    // Many mutants stay valid requests (an edit inside a string or params), so both sides are exercised.
    expect(read).toBeGreaterThan(MUTATIONS / 10);
  });
});
