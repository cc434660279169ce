import { describe, expect, test } from "bun:test";
import {
  arrayElements,
  checkJson,
  nestedDeeperThan,
  objectMembers,
  parseJson,
  rfc3339,
  skipValue,
  toJson,
} from "./json";

describe("exact integers", () => {
  test("integers beyond 2^53 parse to bigint and write back digit for digit", () => {
    const text =
      '{"a":115792089237316195423570985008687907853269984665640564039457584007913129639935,"b":9007199254740993,"c":1,"d":1.5}';
    const value = parseJson(text) as Record<string, unknown>;
    expect(value.a).toBe(2n ** 256n - 1n);
    expect(value.b).toBe(9007199254740993n);
    expect(value.c).toBe(1);
    expect(value.d).toBe(1.5);
    expect(toJson(value)).toBe(text);
  });
  test("a digit run inside a string stays a string", () => {
    expect(parseJson('{"h":"0x12345678901234567890"}')).toEqual({ h: "0x12345678901234567890" });
  });
  test("toJson writes bigints nested anywhere", () => {
    expect(toJson([{ v: 1234567890123456789012n }, 2n ** 64n])).toBe(
      '[{"v":1234567890123456789012},18446744073709551616]',
    );
  });
});

test("rfc3339 is UTC with Z and whole seconds", () => {
  expect(rfc3339(1709294405)).toBe("2024-03-01T12:00:05Z");
  expect(rfc3339(0n)).toBe("1970-01-01T00:00:00Z");
  expect(rfc3339(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)))).toBe("2024-01-02T03:04:05Z");
});

describe("raw scanner", () => {
  test("finds member spans, around escapes, nesting and whitespace", () => {
    const text = ' { "id" : 7 , "r\\"x" : "a\\\\" , "result" : {"k":["}",{"\\"":1}],"e":null} } ';
    const members = objectMembers(text, 0);
    const slice = (k: string) => text.slice(members.get(k)!.start, members.get(k)!.end);
    expect(slice("id")).toBe("7");
    expect(slice('r"x')).toBe('"a\\\\"');
    expect(slice("result")).toBe('{"k":["}",{"\\"":1}],"e":null}');
  });
  test("finds array elements", () => {
    const text = '[1, "two", {"three":[3]}, [4], null, -5.5e3]';
    expect(arrayElements(text, 0).map((s) => text.slice(s.start, s.end))).toEqual([
      "1",
      '"two"',
      '{"three":[3]}',
      "[4]",
      "null",
      "-5.5e3",
    ]);
    expect(arrayElements("[ ]", 0)).toEqual([]);
  });
  test("agrees with JSON.parse on every member of a realistic response", () => {
    const value = {
      jsonrpc: "2.0",
      id: 1,
      result: { hash: "0xab", logs: [{ data: "0x", topics: ["0x1", "0x2"] }], n: null, s: 'q"uote\\' },
    };
    const text = JSON.stringify(value);
    const span = objectMembers(text, 0).get("result")!;
    expect(JSON.parse(text.slice(span.start, span.end))).toEqual(value.result);
    expect(skipValue(text, 0)).toBe(text.length);
  });
  test("throws on truncated input rather than running on", () => {
    expect(() => objectMembers('{"a":"unterminated', 0)).toThrow(SyntaxError);
    expect(() => skipValue('{"a":[1,2', 0)).toThrow(SyntaxError);
  });
});

describe("checkJson refuses exactly what JSON.parse refuses", () => {
  const samples = [
    '{"jsonrpc":"2.0","id":1,"result":{"hash":"0xab","n":[1,-2.5e3,true,false,null],"s":"a\\"b\\\\c\\u00e9\\n"}}',
    '[{"id":1,"result":"0x1"},{"id":2,"error":{"code":-32000,"message":"x","data":{"k":[]}}}]',
    ' { "a" : [ 1 , 2 ] } ',
    "0",
    '"x"',
  ];
  const mutations = [
    "",
    "}",
    "]",
    '"',
    ",",
    ":",
    "\\",
    "\u0001",
    "\n",
    "tru",
    "01",
    "-",
    "1.",
    "e5",
    " ",
    "\\u12",
    "\\x",
  ];
  // A fixed-seed generator: the cases are the same on every run.
  let seed = 12345;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  test("on 5,000 mutated samples", () => {
    let refused = 0;
    for (let i = 0; i < 5000; i++) {
      const base = samples[random(samples.length)]!;
      const at = random(base.length + 1);
      const cut = random(3);
      const text = base.slice(0, at) + mutations[random(mutations.length)] + base.slice(at + cut);
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      let checks = true;
      try {
        checkJson(text);
      } catch (error) {
        expect(error).toBeInstanceOf(SyntaxError);
        checks = false;
      }
      if (checks !== parses)
        throw new Error(`checkJson ${checks ? "accepts" : "refuses"} ${JSON.stringify(text)}`);
      if (!parses) refused++;
    }
    expect(refused).toBeGreaterThan(1000);
  });
});

test("nesting deeper than the limit is found without parsing; brackets inside strings do not count", () => {
  const deep = (n: number) => `${"[".repeat(n)}1${"]".repeat(n)}`;
  expect(nestedDeeperThan(deep(64))).toBe(false);
  expect(nestedDeeperThan(deep(65))).toBe(true);
  expect(nestedDeeperThan(`{"id":${deep(100_000)}}`)).toBe(true);
  expect(nestedDeeperThan(`{"a":"${"[".repeat(1000)}","b":"\\"[[[["}`)).toBe(false);
  expect(nestedDeeperThan(`[${'{"a":1},'.repeat(10_000)}1]`)).toBe(false);
});
