/**
 * The echo of a refused request (http/answer.ts, refusedIdentity): read from the body's text without
 * parsing it, it is exactly what parsing the text gave (rpcIdentity of JSON.parse, `null` for anything
 * JSON.parse refuses), for every text; and the params are never parsed.
 */
import { describe, expect, test } from "bun:test";
import { seededRandom } from "../../test/support/random";
import { nestedDeeperThan, parseJson } from "../json";
import { type RpcIdentity, refusedIdentity, rpcIdentity } from "./answer";

/** What a refusal echoed when it parsed the whole text. */
function parsedIdentity(text: string): RpcIdentity {
  let body: unknown;
  if (!nestedDeeperThan(text)) {
    try {
      body = parseJson(text);
    } catch {}
  }
  return rpcIdentity(body);
}

const IDS = [
  undefined,
  "1",
  "0",
  "-0",
  "-12",
  "1.0",
  "1.5",
  "1e3",
  "1E+2",
  "-1e-7",
  "1e400",
  "9007199254740993",
  "-9007199254740993",
  "123456789012345678901234567890",
  "12345678901234567.5",
  '"a"',
  '""',
  '"\\u0041\\n\\"q\\"\\/"',
  '"\\ud83d\\ude00"',
  '"\\ud800"',
  '"h\u00e9llo \ud83d\ude00"',
  "null",
  "true",
  "false",
  "{}",
  '{"b":1,"b":2}',
  '{ "n" : [1, 2.50, {"x": null}], "s": "t" }',
  '{"__proto__":{"id":1}}',
  "[]",
  "[1, 9007199254740993, [true]]",
];

const JSONRPCS = [undefined, '"2.0"', '"1.0"', '"2\\u002e0"', '"\\u0032.1"', "2.0", "null", "[1]", '""'];

/** A request with this id and jsonrpc, in one of a few layouts (spacing, order, escaped keys, twins). */
function request(id: string | undefined, jsonrpc: string | undefined, layout: number): string {
  const members: string[] = [];
  if (jsonrpc !== undefined) members.push(`"jsonrpc":${jsonrpc}`);
  if (id !== undefined) members.push(layout === 2 ? `"\\u0069d" : ${id}` : `"id":${id}`);
  members.push('"method":"eth_call"', '"params":[{"to":"0x01","data":"0x"},"latest"]');
  if (layout === 1) members.reverse();
  if (layout === 3 && id !== undefined) members.unshift('"id":"first of two"');
  if (layout === 4) members.push('"extra":{"id":5,"jsonrpc":"9"}');
  const body = `{${members.join(layout === 1 ? " ,\n\t" : ",")}}`;
  return layout === 1 ? ` \r\n${body}\n` : body;
}

const OTHER_TEXTS = [
  "",
  " ",
  "null",
  "1",
  '"text"',
  "[]",
  "{}",
  "{ }",
  '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]',
  '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[1,}',
  '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[]',
  '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[]}x',
  '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[]} {}',
  '{"jsonrpc":"2.0","id":7,,"method":"eth_call"}',
  '{"jsonrpc":"2.0","id":7,"method":"eth_call",}',
  '{"jsonrpc":"2.0","id":07}',
  '{"jsonrpc":"2.0","id":"tab\there"}',
  '{"jsonrpc":"2.0","id":"\\x"}',
  '{"jsonrpc":"2.0" "id":7}',
  '{"id":7:1}',
  "{id:7}",
  '\ufeff{"id":7}',
  '{"id":7,"method":Xeth_chainId"}',
  '{"jsonrpc":[1,{2:3}]","id":1}',
  `{"id":7,"params":${"[".repeat(64)}${"]".repeat(64)}}`,
  `{"id":7,"params":${"[".repeat(65)}${"]".repeat(65)}}`,
  `{"id":7,"params":${"[".repeat(100_000)}}`,
];

const SEED = 0x1d1d;
const MUTANTS = 10_000;
const EDIT_CHARS = ['"', "{", "}", "[", "]", ",", ":", "0", "9", "-", "e", ".", "\\", "u", " ", "x"];

describe("a refusal echoes the id and jsonrpc it echoed when it parsed the body, without parsing it", () => {
  test("every id and jsonrpc form, in every layout, and texts that are no single request", () => {
    const texts = [...OTHER_TEXTS];
    for (const id of IDS)
      for (const jsonrpc of JSONRPCS) for (let l = 0; l < 5; l++) texts.push(request(id, jsonrpc, l));
    const differ = texts.filter((text) => {
      const echoed = refusedIdentity({ text });
      const parsed = parsedIdentity(text);
      return echoed.id !== parsed.id || echoed.jsonrpc !== parsed.jsonrpc;
    });
    expect(differ).toEqual([]);
    // Not all null: the comparison covers ids echoed as they were parsed.
    expect(refusedIdentity({ text: request("123456789012345678901234567890", '"1.0"', 2) })).toEqual({
      jsonrpc: '"1.0"',
      id: "123456789012345678901234567890",
    });
    expect(refusedIdentity({ text: request("1.0", undefined, 0) })).toEqual({ jsonrpc: '"2.0"', id: "1" });
    expect(refusedIdentity({ text: request(undefined, '"2.0"', 0) })).toEqual({ jsonrpc: '"2.0"', id: "0" });
    expect(refusedIdentity({ text: request("7", undefined, 3) })).toEqual({ jsonrpc: '"2.0"', id: "7" });
    expect(refusedIdentity({ text: '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[1,}' })).toEqual({
      jsonrpc: '"2.0"',
      id: "null",
    });
  });

  test(`${MUTANTS} mutants of requests, from a fixed seed`, () => {
    const { int } = seededRandom(SEED);
    const differ: string[] = [];
    let echoedIds = 0;
    for (let n = 0; n < MUTANTS; n++) {
      let text = request(IDS[int(IDS.length)], JSONRPCS[int(JSONRPCS.length)], int(5));
      for (let edits = 1 + int(3); edits > 0; edits--) {
        const at = int(text.length);
        const cut = int(2);
        text = text.slice(0, at) + EDIT_CHARS[int(EDIT_CHARS.length)] + text.slice(at + cut);
      }
      const echoed = refusedIdentity({ text });
      const parsed = parsedIdentity(text);
      if (echoed.id !== "null") echoedIds++;
      if ((echoed.id !== parsed.id || echoed.jsonrpc !== parsed.jsonrpc) && differ.length < 10)
        differ.push(text);
    }
    expect(differ).toEqual([]);
    // Many mutants stay valid requests (an edit inside a string), so ids are compared, not only nulls.
    expect(echoedIds).toBeGreaterThan(MUTANTS / 10);
  });

  test("a parsed body is echoed as before", () => {
    expect(refusedIdentity({ body: { id: 5n, jsonrpc: "1.0" } })).toEqual({ jsonrpc: '"1.0"', id: "5" });
    expect(refusedIdentity({ body: [{ id: 5 }] })).toEqual({ jsonrpc: '"2.0"', id: "null" });
    expect(refusedIdentity({})).toEqual({ jsonrpc: '"2.0"', id: "null" });
  });

  test("the params are never parsed: JSON.parse sees at most the id, and nothing of a batch", () => {
    const params = JSON.stringify(
      Array.from({ length: 20_000 }, (_, i) => ({ to: `0x${i}`, data: "0xabcdef" })),
    );
    const single = `{"jsonrpc":"2.0","id":{"n":[7]},"method":"eth_call","params":${params}}`;
    const batch = `[${single},${single}]`;
    const parsed: string[] = [];
    const parse = JSON.parse;
    JSON.parse = ((text: string, reviver?: never) => {
      parsed.push(text);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    let echoes: RpcIdentity[];
    try {
      echoes = [refusedIdentity({ text: single }), refusedIdentity({ text: batch })];
    } finally {
      JSON.parse = parse;
    }
    expect(echoes).toEqual([
      { jsonrpc: '"2.0"', id: '{"n":[7]}' },
      { jsonrpc: '"2.0"', id: "null" },
    ]);
    const SHOWN_CHARS = 40;
    expect(parsed.map((t) => (t.length > SHOWN_CHARS ? `${t.length} characters` : t))).toEqual([
      '[{"n":[7]}]',
    ]);
  });
});
