/**
 * The execution-apis conformance fixtures (test/fixtures/execution-apis/, see its README): every request of
 * every fixture sent to the service, in front of a node made of the fixtures' own recorded answers
 * (test/support/recordedNode.ts; their hive chain cannot run here). A method the service serves answers
 * exactly the recorded response, alone and in one batch (the second time from the cache where the answer
 * is kept); a method it does not serve answers -32601 naming it. The few fixtures where the service answers
 * otherwise by design are listed below with the answer it gives and why; none is skipped.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  type Exchange,
  type Fixture,
  type RecordedNode,
  readFixtures,
  startRecordedNode,
} from "./support/recordedNode";
import { post, startTestService } from "./support/service";

const fixtures = readFixtures(join(import.meta.dir, "fixtures", "execution-apis", "tests"));

/** Methods of the fixtures the service does not serve on EVM chains, and why. */
const NOT_SERVED: Record<string, string> = {
  debug_getRawBlock: "raw RLP encodings are not in the interface's method list (docs/interface.md §2.3)",
  debug_getRawHeader: "raw RLP encodings are not in the interface's method list",
  debug_getRawReceipts: "raw RLP encodings are not in the interface's method list",
  debug_getRawTransaction: "raw RLP encodings are not in the interface's method list",
  eth_baseFee: "not a method of the interface (eth_feeHistory and blocks give the base fee)",
  eth_capabilities: "describes one node; the service stands for several",
  eth_config: "describes one node's fork configuration; not in the interface",
  eth_getStorageValues: "not in the interface (eth_getStorageAt per slot is)",
  testing_buildBlockV1: "builds a block on the node: engine-internal, changes what the node holds",
  txpool_content: "the node's transaction pool: never forwarded (txpool_*)",
  txpool_contentFrom: "the node's transaction pool: never forwarded (txpool_*)",
  txpool_status: "the node's transaction pool: never forwarded (txpool_*)",
};

/** Fixtures of served methods that the service answers otherwise by design: its exact answer, and why. */
const DEVIATIONS: Record<string, { why: string; error: { code: number; message: string } }> = {
  "debug_traceBlockByNumber/trace-block-invalid-number.io": {
    why: 'a decimal string is a block number (docs/interface.md §3.1): "3" is block 0x3, which the node is asked about; the recording has no trace of it, so the recorded node answers "no recorded answer", passed through',
    error: { code: -32000, message: "no recorded answer" },
  },
  "eth_getLogs/filter-error-future-block-range.io": {
    why: "a range past every upstream's head is refused as retryable before any node is asked (the blocks may come; an empty list would be wrong once they do): -32002, where geth says -32602",
    error: { code: -32002, message: "no upstream has reached block 56 yet; retry" },
  },
  "eth_getStorageAt/get-storage-invalid-key-too-large.io": {
    why: "the service checks the slot itself (docs/interface.md §3.2): the same code, its own message",
    error: {
      code: -32602,
      message:
        "invalid params: params[1] (slot): Input should be a storage slot: 0x followed by 1 to 64 hex digits",
    },
  },
  "eth_getStorageAt/get-storage-invalid-key.io": {
    why: "the service checks the slot itself (docs/interface.md §3.2): the same code, its own message",
    error: {
      code: -32602,
      message:
        "invalid params: params[1] (slot): Input should be a storage slot: 0x followed by 1 to 64 hex digits",
    },
  },
};

/** The response the service must give to one request of a fixture. */
function expected(fixture: Fixture, { request, response }: Exchange): unknown {
  if (NOT_SERVED[request.method]) {
    const message = `the method ${request.method} does not exist or is not available`;
    return { jsonrpc: "2.0", id: request.id, error: { code: -32601, message } };
  }
  const deviation = DEVIATIONS[fixture.name];
  return deviation ? { jsonrpc: "2.0", id: request.id, error: deviation.error } : response;
}

let node: RecordedNode;
let service: string;

beforeAll(async () => {
  // The recorded chain's head: what its eth_blockNumber fixture answered (headfcu.json's head block).
  const head = fixtures.find((f) => f.name.startsWith("eth_blockNumber/"))!.exchanges[0]!.response.result;
  expect(head).toBe("0x36");
  node = startRecordedNode(fixtures, head as string);
  // No WebSocket (the recording has none); the recording's finalized block is its head (headfcu.json).
  const env = { UPSTREAM_WS_URLS: "off", CONFIRMATIONS: "0" };
  service = (await startTestService({ upstreamUrls: [node.url], env })).url;
});

describe("the execution-apis fixtures", () => {
  test("they are all here: 41 methods, 233 files, every request with its response", () => {
    expect(new Set(fixtures.map((f) => f.name.split("/")[0])).size).toBe(41);
    expect(fixtures).toHaveLength(233);
    for (const fixture of fixtures)
      expect({ name: fixture.name, empty: fixture.exchanges.length === 0 }).toEqual({
        name: fixture.name,
        empty: false,
      });
    for (const name of Object.keys(DEVIATIONS)) expect(fixtures.some((f) => f.name === name)).toBe(true);
    const methods = new Set(fixtures.flatMap((f) => f.exchanges.map((e) => e.request.method)));
    for (const method of Object.keys(NOT_SERVED)) expect(methods.has(method)).toBe(true);
  });

  test("each request alone: the recorded response, -32601 for a method not served, or the listed deviation", async () => {
    for (const fixture of fixtures) {
      for (const exchange of fixture.exchanges) {
        const answer = await post(`${service}/node/jsonrpc`, exchange.request);
        expect({ fixture: fixture.name, status: answer.status, answer: answer.json }).toEqual({
          fixture: fixture.name,
          status: 200,
          answer: expected(fixture, exchange),
        });
      }
    }
    // The node saw no method the service does not serve, and was asked nothing it has no answer to but
    // the one deviation that says so.
    expect(node.calls.filter((c) => NOT_SERVED[c.method])).toEqual([]);
    expect(node.misses).toEqual([{ method: "debug_traceBlockByNumber", params: ["0x3"] }]);
  }, 60_000);

  test("every request again, as one batch (kept answers now come from the cache): the same answers, in order", async () => {
    const all = fixtures.flatMap((fixture) => fixture.exchanges.map((exchange) => ({ fixture, exchange })));
    const batch = all.map(({ exchange }, i) => ({ ...exchange.request, id: i }));
    const answer = await post(`${service}/node/jsonrpc`, batch);
    expect([answer.status, answer.text.slice(0, 200)]).toEqual([200, expect.stringMatching(/^\[/)]);
    expect(answer.json).toHaveLength(all.length);
    for (const [i, { fixture, exchange }] of all.entries()) {
      const want = { ...(expected(fixture, exchange) as object), id: i };
      expect({ fixture: fixture.name, answer: answer.json[i] }).toEqual({
        fixture: fixture.name,
        answer: want,
      });
    }
  }, 60_000);
});
