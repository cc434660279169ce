/**
 * First tries that work (item 5): the dev chain's seed (the same transactions on every fresh chain, made
 * once), its token's compiled code (DevToken.sol as solc compiles it), and the API docs' examples: every
 * operation's example, sent as "Try it out" sends it, answers 200 with data the chain has.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEV_ACCOUNTS, DEV_SEED, DEV_TOKEN, seedDevChain } from "../src/families/evm/devChain";
import { DEV_TOKEN_CREATION_CODE } from "../src/families/evm/devToken";
import { evm } from "../src/families/evm/evm";
import { createLogger } from "../src/log";
import { rpc } from "./support/chain";
import { post, startTestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

const INDEX_WAIT_MS = 20_000;
/**
 * The methods whose only param is an id another call makes (eth_newFilter and its kin): no example can be
 * real by itself, so the docs give none; the test sends them with the id the maker's example answered.
 */
const NEEDS_FILTER_ID = ["eth_getFilterChanges", "eth_getFilterLogs", "eth_uninstallFilter"];
/** A chain without uncles (every proof-of-stake chain, and anvil) answers these with null, whatever it is asked. */
const NULL_ON_EVERY_DEV_CHAIN = ["eth_getUncleByBlockNumberAndIndex", "eth_getUncleByBlockHashAndIndex"];

describe("the dev chain's seed", () => {
  test("a fresh dev chain holds the seed, one block each, with the same hashes; a restart keeps it and seeds nothing", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cg-seed-"));
    const log = createLogger({ level: "silent" });
    try {
      const first = await evm.startDevNode({ dataDir, log });
      let head: string;
      try {
        const call = rpc(first.url);
        head = await call("eth_blockNumber");
        expect(head).toBe(`0x${DEV_SEED.length.toString(16)}`);
        for (const [i, tx] of DEV_SEED.entries()) {
          const block = await call("eth_getBlockByNumber", [`0x${(i + 1).toString(16)}`, false]);
          expect(block.transactions).toEqual([tx.hash]);
          const receipt = await call("eth_getTransactionReceipt", [tx.hash]);
          expect(receipt).toMatchObject({ status: "0x1", from: tx.from, to: tx.to });
        }
        const creation = await call("eth_getTransactionReceipt", [DEV_SEED[3]!.hash]);
        expect(creation.contractAddress).toBe(DEV_TOKEN);
        expect(await call("eth_getBalance", [DEV_ACCOUNTS[2], "latest"])).toBe(
          `0x${(10_000n * 10n ** 18n + 2n * 10n ** 18n).toString(16)}`,
        );
      } finally {
        await first.stop();
      }
      const again = await evm.startDevNode({ dataDir, log });
      try {
        const call = rpc(again.url);
        expect(await call("eth_blockNumber")).toBe(head);
        expect(await call("eth_getTransactionCount", [DEV_ACCOUNTS[0], "latest"])).toBe("0x4");
        expect((await call("eth_getTransactionByHash", [DEV_SEED[0]!.hash])).blockNumber).toBe("0x1");
      } finally {
        await again.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("DevToken's creation code is DevToken.sol as solc 0.8.37 compiles it", async () => {
    const solc = (await import("solc")).default;
    expect(solc.version()).toStartWith("0.8.37+");
    const content = readFileSync(
      join(import.meta.dir, "..", "src", "families", "evm", "DevToken.sol"),
      "utf8",
    );
    const output = JSON.parse(
      solc.compile(
        JSON.stringify({
          language: "Solidity",
          sources: { "DevToken.sol": { content } },
          settings: {
            optimizer: { enabled: true, runs: 200 },
            evmVersion: "cancun",
            outputSelection: { "*": { "*": ["evm.bytecode.object"] } },
          },
        }),
      ),
    );
    expect(output.errors ?? []).toEqual([]);
    expect(`0x${output.contracts["DevToken.sol"].DevToken.evm.bytecode.object}`).toBe(
      DEV_TOKEN_CREATION_CODE,
    );
  });
});

describe("the API docs' examples", () => {
  let service: string;
  let node: string;
  let doc: any;

  beforeAll(async () => {
    const anvil = await newAnvil();
    await seedDevChain(anvil.url);
    node = anvil.url;
    service = (await startTestService({ upstreamUrls: [anvil.url], env: { INDEXER: "on" } })).url;
    // "Try it out" on a service that has indexed its chain, as `npm start` has a moment after it starts.
    await until(
      "the index to reach the seed's last block",
      async () => {
        const health = (await (await fetch(`${service}/health`)).json()) as any;
        return health.indexer.lastBlockNumber === DEV_SEED.length ? true : undefined;
      },
      INDEX_WAIT_MS,
    );
    doc = await (await fetch(`${service}/swagger/json`)).json();
  }, INDEX_WAIT_MS + 30_000);

  const restOperations = () =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(() => path !== "/node/jsonrpc")
        .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
    );

  test("name no placeholder: every role is filled with the chain's", () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain("@example:");
    const head =
      doc.paths["/node/rest/eth_getBlockByHash"].post.requestBody.content["application/json"].example;
    expect(head.hash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  test("every REST, stream and watch-filter operation's example answers 200 with data the chain has", async () => {
    let filterId: string | undefined;
    const checked: string[] = [];
    // add before remove: a filter's id is made by add, so remove's example is the id add answered.
    const ops = restOperations().sort(
      (a, b) => Number(a.path.endsWith("/remove")) - Number(b.path.endsWith("/remove")),
    );
    for (const { path, method, op } of ops) {
      const content = op.requestBody?.content["application/json"];
      let body = content?.example;
      if (path === "/watch_filters/remove") {
        expect(body).toBeUndefined();
        body = { filter_id: filterId };
      } else if (op.requestBody) {
        expect({ path, example: body === undefined }).toEqual({ path, example: false });
      }
      const response = await fetch(`${service}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (path.startsWith("/webhooks")) {
        // The webhook routes act on the caller's own endpoints: the list answers (empty), making one with the
        // example's URL is refused naming it (deposits.example.com resolves nowhere), and the example's id is
        // no endpoint of this caller's: 404. Their answers with real endpoints: test/webhook-endpoints.test.ts.
        const expected = path === "/webhooks" ? (method === "GET" ? 200 : 422) : 404;
        expect({ path, method, status: response.status }).toEqual({ path, method, status: expected });
        checked.push(path);
        continue;
      }
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      if (path.startsWith("/node/stream/")) {
        const lines = text
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line));
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) expect({ path, error: line.error }).toEqual({ path, error: undefined });
        checked.push(path);
        continue;
      }
      const json = JSON.parse(text);
      expect({ path, json }).not.toEqual({ path, json: null });
      expect({ path, json }).not.toEqual({ path, json: [] });
      expect({ path, detail: json.detail }).toEqual({
        path,
        detail: path === "/watch_filters/remove" ? "filter removed" : undefined,
      });
      if (path === "/watch_filters/add") filterId = json.filter_id;
      checked.push(path);
    }
    // Every REST route of the table, the streams, the watch filters and health: none left out.
    expect(checked.filter((p) => p.startsWith("/node/rest/")).length).toBe(
      Object.keys(doc.paths).filter((p) => p.startsWith("/node/rest/")).length,
    );
    expect(checked).toContain("/watch_filters/remove");
    expect(checked).toContain("/node/stream/trace_block");
    expect(checked.filter((p) => p.startsWith("/webhooks")).length).toBe(8);
  });

  test("every JSON-RPC method has an example, and each answers 200 with a result, not an error", async () => {
    const content = doc.paths["/node/jsonrpc"].post.requestBody.content["application/json"];
    const methods = doc.components.schemas.JsonRpcRequest.properties.method.anyOf.flatMap((group: any) =>
      doc.components.schemas[group.$ref.split("/").pop()].anyOf.map((l: any) => l.const),
    ) as string[];
    expect(Object.keys(content.examples).sort()).toEqual(
      methods.filter((m) => !NEEDS_FILTER_ID.includes(m)).sort(),
    );
    const made = await post(`${service}/node/jsonrpc`, content.examples.eth_newFilter.value);
    const refused: string[] = [];
    // The filter's id is used up last (eth_uninstallFilter).
    const ordered = [...methods.filter((m) => !NEEDS_FILTER_ID.includes(m)), ...NEEDS_FILTER_ID];
    for (const method of ordered) {
      const request = NEEDS_FILTER_ID.includes(method)
        ? { jsonrpc: "2.0", id: 1, method, params: [made.json.result] }
        : content.examples[method].value;
      expect(request).toMatchObject({ jsonrpc: "2.0", method });
      const answer = await post(`${service}/node/jsonrpc`, request);
      expect({ method, status: answer.status }).toEqual({ method, status: 200 });
      if (answer.json.error) {
        // Only a method the dev node lacks ("where the node has it"): the example is answered with its refusal.
        const own = await post(node, { ...request, params: [] });
        expect({ method, error: answer.json.error }).toEqual({
          method,
          error: { code: -32601, message: own.json.error.message },
        });
        expect(own.json.error.code).toBe(-32601);
        refused.push(method);
        continue;
      }
      if (NULL_ON_EVERY_DEV_CHAIN.includes(method)) {
        expect({ method, result: answer.json.result }).toEqual({ method, result: null });
        continue;
      }
      expect({ method, result: answer.json.result ?? null }).not.toEqual({ method, result: null });
    }
    // What anvil 1.7.1 lacks of the methods served.
    expect(refused).toEqual(["net_peerCount", "trace_replayTransaction"]);
  });
});
