/** `npm run keys`: what it prints and how it exits, against a real PostgreSQL and a running service. */
import { beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { post, startTestService } from "./support/service";
import { fixtureChain, postgresServer } from "./support/shared";

const CLI = join(import.meta.dir, "..", "src", "cli", "keys.ts");
/** Bound on one CLI run (start, migrate, one statement). */
const CLI_TIMEOUT_MS = 30_000;

let databaseUrl: string;

async function keys(args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, CLI, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "error", ...env },
    stdout: "pipe",
    stderr: "pipe",
    timeout: CLI_TIMEOUT_MS,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, code };
}

beforeAll(async () => {
  databaseUrl = await (await postgresServer()).createDatabase();
});

test("add prints the key alone on stdout; the service accepts it; list shows it with its rate; revoke ends it", async () => {
  const added = await keys(["add", "market maker", "--rate", "50/100"]);
  expect(added.code).toBe(0);
  expect(added.stdout).toMatch(/^[A-Za-z0-9_-]{32}\n$/);
  const key = added.stdout.trim();
  const hash = new Bun.CryptoHasher("sha256").update(key).digest("hex");
  expect(added.stderr).toBe(
    `added key "market maker" (hash ${hash.slice(0, 12)}, rate 50/s, burst 100). It is shown only this once; running services accept it within 30 s, or at once on its first use.\n`,
  );

  const { anvil } = await fixtureChain();
  const service = await startTestService({
    upstreamUrls: [anvil.url],
    databaseUrl,
    env: { API_KEYS: "an-environment-key-0123456789" },
  });
  const call = (k: string) =>
    post(
      `${service.url}/node/jsonrpc`,
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { headers: { "x-api-key": k } },
    );
  expect((await call(key)).status).toBe(200);

  const listed = await keys(["list"]);
  expect(listed.code).toBe(0);
  const lines = listed.stdout.trimEnd().split("\n");
  expect(lines[0]).toBe("hash          created                   rate        label");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(
    new RegExp(`^${hash.slice(0, 12)}  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  50/100      market maker$`),
  );

  const revoked = await keys(["revoke", hash.slice(0, 10).toUpperCase()]);
  expect(revoked).toEqual({ stdout: "revoked 1 key\n", stderr: "", code: 0 });
  const again = await keys(["revoke", hash.slice(0, 10)]);
  expect(again.code).toBe(1);
  expect(again.stdout).toBe("");
  expect(again.stderr).toBe(
    `no active key's hash starts with ${hash.slice(0, 10)} (see: npm run keys -- list)\n`,
  );
  const empty = await keys(["list"]);
  expect(empty).toEqual({
    stdout: "",
    stderr: "no API keys in the database (keys from API_KEYS are not stored there)\n",
    code: 0,
  });
  await service.stop();
}, 90_000);

test("wrong usage exits 2 with the reason and the usage, before touching the database", async () => {
  const cases: [string[], string][] = [
    [[], "keys: no command"],
    [["add"], "keys: add takes one label (quote it if it has spaces)"],
    [["add", "a", "b"], "keys: add takes one label (quote it if it has spaces)"],
    [
      ["add", "a", "--rate", "5"],
      "keys: --rate takes <per-second>/<burst>, both positive (e.g. 100/200), not 5",
    ],
    [["revoke", "abc"], "keys: revoke takes 6 to 64 hex digits of a key's hash (from list), not abc"],
    [["drop", "everything"], "keys: unknown command or arguments: drop everything"],
  ];
  for (const [args, reason] of cases) {
    // An unreachable database: usage errors must not need one.
    const out = await keys(args, { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect({ args, code: out.code, stdout: out.stdout, first: out.stderr.split("\n")[0] }).toEqual({
      args,
      code: 2,
      stdout: "",
      first: reason,
    });
    expect(out.stderr).toContain("usage: npm run keys -- add <label> [--rate <per-second>/<burst>]");
  }
}, 60_000);

test("an unreachable database or a bad setting is one clear line and exit 1, no stack trace", async () => {
  const down = await keys(["list"], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
  expect(down.code).toBe(1);
  expect(down.stdout).toBe("");
  expect(down.stderr).toBe(
    "keys: cannot reach the database (check DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1\n",
  );
  const bad = await keys(["list"], { PORT: "abc" });
  expect(bad).toEqual({
    stdout: "",
    stderr: 'keys: failed: PORT: expected an integer from 0 to 65535, got "abc"\n',
    code: 1,
  });
}, 60_000);
