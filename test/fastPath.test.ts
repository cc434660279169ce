/**
 * The fast path (http/rpcText.ts, http/paramsMemo.ts) against the full path, differentially: every generated
 * request is sent twice, once as a text no request sent before (its params spaced uniquely, so the memo cannot
 * know them and the full path parses and checks it) and once with params as sent before (the fast path, where
 * the rest of the text lets it judge). Both must answer the same status and the same bytes: ids of every JSON
 * type, whitespace, key order, escapes, duplicate and extra members, errors, singles and batches, over HTTP
 * JSON-RPC, the WebSocket and REST. Generated from a fixed seed: a failure names the request.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readCalls } from "../src/http/rpcText";
import type { ChainFixture } from "./support/chain";
import { type Random, seededRandom } from "./support/random";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

const SEED = 0x5eed13;
const HTTP_REQUESTS = 3_000;
const WS_REQUESTS = 1_000;
const REST_REQUESTS = 1_000;
const LONGEST_BATCH = 24;

let service: string;
let chain: ChainFixture;

beforeAll(async () => {
  const fixture = await fixtureChain();
  chain = fixture.chain;
  service = (await startTestService({ upstreamUrls: [fixture.anvil.url] })).url;
});

const hex = (n: number) => `0x${n.toString(16)}`;

let sent = 0;
/** Whitespace no text sent before holds: a count's binary digits as spaces and tabs, then a newline. */
function uniqueSpace(): string {
  return `${(++sent).toString(2).replaceAll("0", " ").replaceAll("1", "\t")}\n`;
}

/** Params that name a final block of the fixture chain, or something the node or the service refuses. */
function paramsFor(r: Random): { method: string; params: unknown[] | undefined } {
  const block = r.int(chain.head + 1);
  const tx = r.pick(Object.values(chain.tx));
  const account = r.pick(chain.accounts);
  return r.pick([
    () => ({ method: "eth_getBlockByNumber", params: [hex(block), r.next() < 0.5] }),
    () => ({
      method: "eth_getBlockByNumber",
      params: [r.pick(["latest", "earliest", "finalized", "0x0"]), false],
    }),
    () => ({ method: "eth_getTransactionByHash", params: [tx] }),
    () => ({ method: "eth_getTransactionReceipt", params: [tx] }),
    () => ({ method: "eth_getBlockReceipts", params: [hex(block)] }),
    () => ({ method: "eth_getBalance", params: [account, hex(block)] }),
    () => ({ method: "eth_getTransactionCount", params: [account, hex(block)] }),
    () => ({ method: "eth_chainId", params: [] }),
    () => ({ method: "eth_chainId", params: undefined }),
    () => ({ method: "eth_blockNumber", params: [] }),
    () => ({ method: "net_version", params: [] }),
    // Refused: a bad block, a bad hash, an unknown method, params that are not a list.
    () => ({ method: "eth_getBlockByNumber", params: ["0xzz", false] }),
    () => ({ method: "eth_getTransactionByHash", params: ["0x1234"] }),
    () => ({ method: "eth_notAMethod", params: [1] }),
    () => ({ method: "eth_getBlockByNumber", params: { number: "0x1" } as never }),
  ])();
}

/** An id of every JSON type and form, as text; most often the forms clients send. */
function idText(r: Random): string | undefined {
  if (r.next() < 0.6) return r.next() < 0.7 ? String(1 + r.int(1_000_000)) : `"${r.int(1e9).toString(36)}"`;
  return r.pick([
    () => String(r.int(1_000_000)),
    () => String(-r.int(1_000)),
    () => "0",
    () => "-0",
    () => "12345678901234567890123",
    () => "9007199254740993",
    () => "1.5",
    () => "1e3",
    () => "10.0",
    () => `"req-${r.int(1_000)}"`,
    () => '""',
    () => '"h\\u00e9llo"',
    () => '"quote\\"d"',
    () => '"héllo 😀"',
    () => '"tab\\tbed"',
    () => "null",
    () => "true",
    () => '{"n":1,"s":"x"}',
    () => "[1,2]",
    () => undefined,
  ])();
}

const space = (r: Random) => r.pick(["", "", "", " ", "\n", "\t", "  ", "\r\n "]);

/**
 * One call's text in two forms: `full` with its params spaced as never before, `fast` with them as
 * JSON.stringify writes them. Members in any order, sometimes doubled or joined by one more.
 */
function callTexts(r: Random): { full: string; fast: string } {
  const { method, params } = paramsFor(r);
  const id = idText(r);
  const methodText =
    r.next() < 0.05 ? JSON.stringify(method).replace("_", "\\u005f") : JSON.stringify(method);
  const members: [string, string][] = [];
  const jsonrpc = r.next();
  if (jsonrpc < 0.85) members.push(['"jsonrpc"', '"2.0"']);
  else if (jsonrpc < 0.9) members.push(['"jsonrpc"', '"2\\u002e0"']);
  else if (jsonrpc < 0.95) members.push(['"jsonrpc"', '"1.0"']);
  if (id !== undefined) members.push(['"id"', id]);
  members.push(['"method"', methodText]);
  const PARAMS = "\u0000params";
  if (params !== undefined) members.push(['"params"', PARAMS]);
  if (r.next() < 0.04) members.push(['"id"', String(r.int(100))]);
  if (r.next() < 0.04) members.push(['"extra"', "1"]);
  if (r.next() < 0.03) members.push(['"par\\u0061ms"', "[]"]);
  for (let i = members.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [members[i], members[j]] = [members[j]!, members[i]!];
  }
  const outer = members.map(([k, v]) => `${space(r)}${k}${space(r)}:${space(r)}${v}${space(r)}`).join(",");
  const canonical = JSON.stringify(params);
  const spaced = canonical === undefined ? "" : `${canonical[0]}${uniqueSpace()}${canonical.slice(1)}`;
  return {
    full: `{${outer}}`.replace(PARAMS, spaced),
    fast: `{${outer}}`.replace(PARAMS, canonical ?? ""),
  };
}

/** A single request (80%) or a batch of 1-5 calls, sometimes one longer than the streamed window. */
function requestTexts(r: Random): { full: string; fast: string } {
  const shape = r.next();
  if (shape < 0.8) return callTexts(r);
  const length = shape < 0.97 ? 1 + r.int(5) : 17 + r.int(LONGEST_BATCH - 16);
  const calls = Array.from({ length }, () => callTexts(r));
  const join = (form: "full" | "fast") => `${space(r)}[${calls.map((c) => c[form]).join(`,${space(r)}`)}]`;
  return { full: join("full"), fast: join("fast") };
}

/** Sends every params text once, so that the fast forms are the memo's. */
async function prime(send: (text: string) => Promise<unknown>, r: Random, count: number) {
  for (let n = 0; n < count; n++) await send(callTexts(r).fast);
}

describe("the fast path answers byte for byte what the full path answers", () => {
  test(`JSON-RPC over HTTP: ${HTTP_REQUESTS} generated singles and batches`, async () => {
    const send = async (text: string) => {
      const response = await post(`${service}/node/jsonrpc`, text, { raw: true });
      return { status: response.status, text: response.text };
    };
    await prime(send, seededRandom(SEED), 400);
    const r = seededRandom(SEED);
    let readable = 0;
    for (let n = 0; n < HTTP_REQUESTS; n++) {
      const { full, fast } = requestTexts(r);
      if (readCalls(fast, 1000)) readable++;
      const expected = await send(full);
      const answer = await send(fast);
      if (answer.status !== expected.status || answer.text !== expected.text) {
        expect({ request: fast, ...answer }).toEqual({ request: fast, ...expected });
      }
    }
    // Most requests are of forms the fast path reads (the rest it must leave to the full path).
    expect(readable).toBeGreaterThan(HTTP_REQUESTS * 0.4);
  }, 120_000);

  test(`JSON-RPC over the WebSocket: ${WS_REQUESTS} generated singles and batches`, async () => {
    const ws = new WebSocket(`${service.replace("http", "ws")}/node/jsonrpc`);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    const queue: string[] = [];
    let wake: (() => void) | undefined;
    ws.onmessage = (event) => {
      queue.push(String(event.data));
      wake?.();
    };
    // One request at a time: its answer is the next message.
    const send = async (text: string) => {
      ws.send(text);
      const deadline = Date.now() + 10_000;
      while (queue.length === 0) {
        if (Date.now() > deadline) throw new Error(`no answer to ${text}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return queue.shift()!;
    };
    try {
      await prime(send, seededRandom(SEED + 1), 200);
      const r = seededRandom(SEED + 1);
      for (let n = 0; n < WS_REQUESTS; n++) {
        const { full, fast } = requestTexts(r);
        const expected = await send(full);
        const answer = await send(fast);
        if (answer !== expected)
          expect({ request: fast, answer }).toEqual({ request: fast, answer: expected });
      }
    } finally {
      ws.close();
    }
  }, 120_000);

  test(`REST: ${REST_REQUESTS} generated bodies, each sent as new text and then again`, async () => {
    const r = seededRandom(SEED + 2);
    const bodies = (n: number): [string, Record<string, unknown>] => {
      const block = r.pick([hex(r.int(chain.head + 1)), r.int(chain.head + 1), "latest", "0xzz", -1]);
      const tx = r.pick([...Object.values(chain.tx), "0x12"]);
      return r.pick<() => [string, Record<string, unknown>]>([
        () => ["eth_getBlockByNumber", { number: block, is_full_trx: r.next() < 0.5 }],
        () => ["eth_getTransactionByHash", { trx_hash: tx }],
        () => ["eth_getTransactionReceipt", { trx_hash: tx }],
        () => ["ext_getBlockReceipts", { number: block }],
        () => ["eth_getBlockTransactionCountByNumber", { number: block }],
        () => ["eth_getBlockByNumber", { number: block, is_full_trx: false, extra: n }],
      ])();
    };
    for (let n = 0; n < REST_REQUESTS; n++) {
      const [route, body] = bodies(n);
      const keys = Object.keys(body);
      if (r.next() < 0.5) keys.reverse();
      const text = `{${keys.map((k) => `${space(r)}${JSON.stringify(k)}:${space(r)}${JSON.stringify(body[k])}`).join(",")}}`;
      // Unique to this request: the full path reads it; sent again, it is the memo's.
      const full = `${uniqueSpace()}${text}`;
      const url = `${service}/node/rest/${route}`;
      const first = await post(url, full, { raw: true });
      const again = await post(url, full, { raw: true });
      expect(first.status).toBeLessThan(500);
      if (again.status !== first.status || again.text !== first.text) {
        expect({ request: full, status: again.status, text: again.text }).toEqual({
          request: full,
          status: first.status,
          text: first.text,
        });
      }
    }
  }, 120_000);
});
