/**
 * COPY in its binary format (src/families/copyBinary.ts, indexRows.ts `copyRows`: how a bulk load writes its
 * rows) on a real PostgreSQL: every column type the index tables use, at its limits and null, reads back as
 * the values given, as their text and as the `unnest` path's text would have made them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { type Cell, copyRows, indexTable } from "../src/families/indexRows";
import { postgresServer } from "./support/shared";

let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(await (await postgresServer()).createDatabase(), { max: 1, onnotice: () => {} });
  await sql`create table copied (n bigint, a bigint, b integer, c smallint, d numeric(30), e boolean, f date,
    g text, h text[], i bytea)`;
});

afterAll(async () => {
  await sql?.end();
});

const TABLE = indexTable<{ number: bigint; rows: Cell[][] }>(
  "copied",
  [
    ["n", "bigint"],
    ["a", "bigint"],
    ["b", "integer"],
    ["c", "smallint"],
    ["d", "numeric"],
    ["e", "boolean"],
    ["f", "date"],
    ["g", "text"],
    ["h", "text[]"],
    ["i", "hex"],
  ],
  (block, n) => block.rows.map((row) => [n, ...row]),
);

test("every column type, at its limits and null, reads back as given", async () => {
  const rows: Cell[][] = [
    [
      "9223372036854775807",
      -5,
      7,
      "123456789012345678901234567890",
      true,
      "2026-11-28",
      'héllo\t"x\\\n',
      ["ltc1qxyz", 'b"c', ""],
      "00ff10",
    ],
    [-9_007_199_254_740_993n, 2_147_483_647, -32_768, "-10000", false, "1999-12-31", "", [], ""],
    [2_100_000_000_000_000n, -2_147_483_648, 32_767, "0", "false", "2000-01-01", null, ["a"], "DEADbeef"],
    [null, null, null, "100000000", null, null, "x", null, null],
    ["-1", "12", "3", 5n, "true", "1970-01-01", "y", ["z"], "ab"],
  ];
  const written = await sql.begin((tx) => copyRows(tx as never, TABLE, [{ number: 7n, rows }]));
  expect(written).toBe(5);
  const read = await sql`select n::text, a::text, b, c, d::text, e, f::text, g, h, encode(i, 'hex') as i
    from copied order by ctid`;
  expect(read.map((r) => [r.n, r.a, r.b, r.c, r.d, r.e, r.f, r.g, r.h, r.i])).toEqual([
    [
      "7",
      "9223372036854775807",
      -5,
      7,
      "123456789012345678901234567890",
      true,
      "2026-11-28",
      'héllo\t"x\\\n',
      ["ltc1qxyz", 'b"c', ""],
      "00ff10",
    ],
    ["7", "-9007199254740993", 2_147_483_647, -32_768, "-10000", false, "1999-12-31", "", [], ""],
    ["7", "2100000000000000", -2_147_483_648, 32_767, "0", false, "2000-01-01", null, ["a"], "deadbeef"],
    ["7", null, null, null, "100000000", null, null, "x", null, null],
    ["7", "-1", 12, 3, "5", true, "1970-01-01", "y", ["z"], "ab"],
  ]);
});

test("a cell that is not its column's form fails the COPY, writing nothing", async () => {
  await sql`truncate copied`;
  for (const bad of [
    [1, 1, 1, "1", true, "2026-01-01", "", [], "abc"],
    [1, 1, 1, "1.5", true, "2026-01-01", "", [], ""],
    [1, 1, 1, "1", true, "28.11.2026", "", [], ""],
  ] as Cell[][]) {
    await expect(
      sql.begin((tx) => copyRows(tx as never, TABLE, [{ number: 1n, rows: [bad] }])),
    ).rejects.toThrow(/not hex digits|not an integer|not YYYY-MM-DD/);
  }
  expect((await sql`select count(*)::int as n from copied`)[0]!.n).toBe(0);
});
