/**
 * A node made of recorded answers, for the execution-apis fixtures (test/fixtures/execution-apis/): their
 * chain ran on hive and cannot run here, so a loopback server answers each request the fixtures hold with
 * the response recorded for it. The service asks in the node's form what callers asked otherwise (tags
 * resolved to the head, an omitted block named, hex lower-cased), so requests are matched in a canonical
 * form both sides reduce to. A block asked without full transactions is the recorded one with full
 * transactions, reduced to their hashes (the service's head polls ask that way). Anything else is answered
 * -32000 "no recorded answer" and kept in `misses`, for the test to assert.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { onTeardown } from "./shared";

export interface Exchange {
  request: { jsonrpc: string; id: unknown; method: string; params?: unknown[] };
  response: { jsonrpc: string; id: unknown; result?: unknown; error?: unknown };
}

export interface Fixture {
  /** Its path under the fixtures' `tests/` folder: `<method>/<name>.io`. */
  name: string;
  exchanges: Exchange[];
}

/** Every `.io` file under `tests`: its `>>` requests, each with the `<<` response that follows it. */
export function readFixtures(tests: string): Fixture[] {
  const fixtures: Fixture[] = [];
  for (const method of readdirSync(tests, { withFileTypes: true })) {
    if (!method.isDirectory()) continue;
    for (const file of readdirSync(join(tests, method.name))
      .filter((f) => f.endsWith(".io"))
      .sort()) {
      const path = join(tests, method.name, file);
      const lines = readFileSync(path, "utf8").split("\n");
      const exchanges: Exchange[] = [];
      let request: Exchange["request"] | undefined;
      for (const line of lines) {
        if (line.startsWith(">> ")) request = JSON.parse(line.slice(3));
        else if (line.startsWith("<< ")) {
          if (!request) throw new Error(`${path}: a response before its request`);
          exchanges.push({ request, response: JSON.parse(line.slice(3)) });
          request = undefined;
        }
      }
      fixtures.push({ name: relative(tests, path), exchanges });
    }
  }
  return fixtures.sort((a, b) => a.name.localeCompare(b.name));
}

const MOVING_TAGS = new Set(["latest", "safe", "finalized"]);

/**
 * The form a request and the service's version of it share: hex lower-case, the tags that name the head as
 * its number, `earliest` as 0x0, and a last param naming the head left out (what an omitted block means).
 */
export function canonical(method: string, params: unknown[] | undefined, head: string): string {
  const reduce = (value: unknown): unknown => {
    if (typeof value === "string") {
      const lower = value.toLowerCase();
      if (MOVING_TAGS.has(lower)) return head;
      return lower === "earliest" ? "0x0" : lower;
    }
    if (Array.isArray(value)) return value.map(reduce);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reduce(v)]));
    }
    return value;
  };
  const reduced = (params ?? []).map(reduce);
  if (reduced.length > 0 && reduced[reduced.length - 1] === head) reduced.pop();
  return `${method}\u0000${JSON.stringify(reduced)}`;
}

export interface RecordedNode {
  url: string;
  /** Every call received, in order (batch elements one by one). */
  calls: { method: string; params: unknown[] }[];
  /** The calls no recording answered. */
  misses: { method: string; params: unknown[] }[];
}

type Answer = Omit<Exchange["response"], "jsonrpc" | "id">;

/** Serves the fixtures' recorded answers; `head` is the recorded chain's head block number (hex). */
export function startRecordedNode(fixtures: Fixture[], head: string): RecordedNode {
  const answers = new Map<string, Answer>();
  for (const { name, exchanges } of fixtures) {
    for (const { request, response } of exchanges) {
      const key = canonical(request.method, request.params, head);
      const { jsonrpc: _, id: __, ...answer } = response;
      const known = answers.get(key);
      if (known && JSON.stringify(known) !== JSON.stringify(answer)) {
        throw new Error(`${name}: ${request.method} recorded twice with different answers`);
      }
      answers.set(key, answer);
    }
  }

  const node: RecordedNode = { url: "", calls: [], misses: [] };

  function answerOf(method: string, params: unknown[]): Answer | undefined {
    const found = answers.get(canonical(method, params, head));
    if (found || !method.startsWith("eth_getBlockBy") || params[1] !== false) return found;
    // The block with full transactions, as the hashes a block without them lists.
    const full = answers.get(canonical(method, [params[0], true], head));
    if (!full?.result) return full;
    const block = full.result as { transactions: { hash: string }[] };
    return { result: { ...block, transactions: block.transactions.map((t) => t.hash) } };
  }

  function reply(call: { id?: unknown; method?: string; params?: unknown[] }): unknown {
    const method = String(call.method);
    const params = call.params ?? [];
    node.calls.push({ method, params });
    const found = answerOf(method, params);
    if (found) return { jsonrpc: "2.0", id: call.id ?? null, ...found };
    node.misses.push({ method, params });
    return { jsonrpc: "2.0", id: call.id ?? null, error: { code: -32000, message: "no recorded answer" } };
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as Parameters<typeof reply>[0] | Parameters<typeof reply>[0][];
      return Response.json(Array.isArray(body) ? body.map(reply) : reply(body));
    },
  });
  node.url = `http://127.0.0.1:${server.port}`;
  onTeardown(async () => void server.stop(true));
  return node;
}
