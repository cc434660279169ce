/**
 * A Bitcoin-family instance (CHAIN=LTC in front of a real regtest Litecoin Core) as a family without an
 * index makes it: what the service has but this instance does not serve is refused naming the chain
 * (-32601 over JSON-RPC, HTTP and WebSocket; 404 `{detail}` over REST), a name no family has keeps the plain
 * refusal; no indexer, no index tables, no `gateway_indexer_*` series; the operator's view (/health,
 * /status.json, the status page in a real Chromium, /metrics, the Grafana dashboard's series) shows this
 * chain's head, upstreams and cache; the OpenAPI document lists the family's methods and nothing of
 * another; and the README's examples for this family answer what the node answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { UTXO_METHODS } from "../src/families/utxo/methods";
import { type Browser, launchBrowser } from "./support/browser";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { metric } from "./support/metrics";
import { post, startTestService, type TestService } from "./support/service";
import { until } from "./support/until";
import { connectSocket, wsUrl } from "./support/ws";

const ROOT = join(import.meta.dir, "..");
const KEY = "utxo-service-key-0123456789";
/** Regtest coinbases mature after 100 blocks: the node starts with spendable coins. */
const START_BLOCKS = 101;
const GENESIS = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9";
/** The design's allow-list (§12 "Gateway"): every one is in the document's method list. */
const ALLOW_LIST = [
  "getblockchaininfo",
  "getbestblockhash",
  "getblockcount",
  "getblockhash",
  "getblock",
  "getblockheader",
  "getblockstats",
  "getchaintips",
  "getdifficulty",
  "getrawtransaction",
  "gettxout",
  "getblockfilter",
  "getrawmempool",
  "getmempoolinfo",
  "getmempoolentry",
  "estimatesmartfee",
  "decoderawtransaction",
  "decodescript",
  "validateaddress",
  "sendrawtransaction",
  "testmempoolaccept",
];

const EVM_REFUSAL = "it is a method of the evm family, and LTC is served by the utxo family";
const INDEX_REFUSAL = "it reads the index, which the utxo family does not keep yet";
const WATCH_REFUSAL = "watch filters match blocks of the index, which the utxo family does not keep yet";
const refused = (id: number, message: string) => ({ jsonrpc: "2.0", id, error: { code: -32601, message } });
const notServed = (method: string, why: string) => `the method ${method} is not served on LTC: ${why}`;

let node: LitecoinNode;
let service: TestService;
let browser: Browser | undefined;

const rpc = (body: unknown) => post(`${service.url}/node/jsonrpc`, body, { headers: { "x-api-key": KEY } });
const json = async (path: string) => (await fetch(`${service.url}${path}`)).json() as Promise<any>;

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(START_BLOCKS);
  service = await startTestService({
    upstreamUrls: [node.url],
    env: { CHAIN: "LTC", API_KEYS: KEY, INDEXER: "on" },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("what the instance does not serve is refused naming the chain", () => {
  test("JSON-RPC: another family's methods and the data methods are -32601 saying why; others the plain -32601", async () => {
    for (const [method, why] of [
      ["eth_blockNumber", EVM_REFUSAL],
      ["eth_getBlockByNumber", EVM_REFUSAL],
      ["net_version", EVM_REFUSAL],
      ["eth_sign", EVM_REFUSAL],
      ["watch_getTransfers", INDEX_REFUSAL],
      ["watch_getTransfersByAddress", INDEX_REFUSAL],
      ["watch_getBlockNumberByTimestamp", INDEX_REFUSAL],
      ["watch_getStatsByDay", INDEX_REFUSAL],
      ["watch_getBlockNumbersByDay", INDEX_REFUSAL],
      ["watch_getTokenBalances", INDEX_REFUSAL],
    ] as const) {
      const answer = await rpc({ jsonrpc: "2.0", id: 7, method, params: [] });
      expect([answer.status, answer.json]).toEqual([200, refused(7, notServed(method, why))]);
    }
    // A wallet method, or a name no family has: the plain refusal, naming the method.
    for (const method of ["sendtoaddress", "generatetoaddress", "foo_bar"]) {
      const answer = await rpc({ jsonrpc: "2.0", id: 8, method, params: [] });
      expect(answer.json).toEqual(refused(8, `the method ${method} does not exist or is not available`));
    }
  });

  test("in a batch, each element answers its own: the node's answer beside the refusals", async () => {
    const answer = await rpc([
      { jsonrpc: "2.0", id: 1, method: "getblockhash", params: [0] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 3, method: "watch_getStatsByDay", params: [0] },
      { jsonrpc: "2.0", id: 4, method: "getblockcount", params: [] },
    ]);
    expect(answer.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: GENESIS },
      refused(2, notServed("eth_chainId", EVM_REFUSAL)),
      refused(3, notServed("watch_getStatsByDay", INDEX_REFUSAL)),
      { jsonrpc: "2.0", id: 4, result: await node.rpc("getblockcount") },
    ]);
  });

  test("over WebSocket as over HTTP; eth_subscribe serves newHeads, and no watch_filters kind", async () => {
    const socket = await connectSocket(wsUrl(service.url, KEY));
    try {
      expect(await socket.request("eth_getBalance", ["x", "latest"])).toMatchObject({
        error: { code: -32601, message: notServed("eth_getBalance", EVM_REFUSAL) },
      });
      expect(await socket.request("watch_getTransfers", [])).toMatchObject({
        error: { code: -32601, message: notServed("watch_getTransfers", INDEX_REFUSAL) },
      });
      expect(await socket.request("eth_subscribe", ["watch_filters", { version: "v1" }])).toMatchObject({
        error: {
          code: -32602,
          message: 'invalid params: the subscription should be one of newHeads; got "watch_filters"',
        },
      });
      const heads = await socket.request("eth_subscribe", ["newHeads"]);
      expect(heads.result).toMatch(/^0x[0-9a-f]{32}$/);
      const [mined] = await node.mine(1);
      const [header] = await socket.waitFor(heads.result, 1, 10_000);
      expect([header.hash, header.height]).toEqual([mined, await node.rpc("getblockcount")]);
    } finally {
      socket.close();
    }
  });

  test("REST: another family's routes, the data routes and watch filters are 404 {detail} naming the chain", async () => {
    for (const [method, path, why] of [
      ["POST", "/node/rest/eth_blockNumber", EVM_REFUSAL],
      ["POST", "/node/rest/eth_getBlockByNumber", EVM_REFUSAL],
      ["POST", "/node/rest/get_token_balances", EVM_REFUSAL],
      ["POST", "/node/stream/ext_getBlockReceipts", EVM_REFUSAL],
      ["POST", "/node/rest/watch_getTransfers", INDEX_REFUSAL],
      ["POST", "/node/rest/watch_getBlockNumbersByDay", INDEX_REFUSAL],
      ["GET", "/watch_filters/lastBlockNumber", WATCH_REFUSAL],
      ["POST", "/watch_filters/add", WATCH_REFUSAL],
      ["POST", "/watch_filters/check", WATCH_REFUSAL],
      ["DELETE", "/watch_filters/remove", WATCH_REFUSAL],
    ] as const) {
      const answer = await post(`${service.url}${path}`, method === "GET" ? undefined : {}, {
        method,
        headers: { "x-api-key": KEY },
      });
      expect([path, answer.status, answer.json]).toEqual([
        path,
        404,
        { detail: `${path} is not served on LTC: ${why}` },
      ]);
    }
    // No REST form of the node's methods, and a path of no family: the plain Not Found.
    for (const path of ["/node/rest/getblockcount", "/node/rest/nothing", "/nothing"]) {
      const answer = await post(`${service.url}${path}`, {}, { headers: { "x-api-key": KEY } });
      expect([path, answer.status, answer.json]).toEqual([path, 404, { detail: "Not Found" }]);
    }
  });
});

describe("no index", () => {
  test("the database holds sql/common/'s tables only", async () => {
    const schema = (await json("/health")).database.schema;
    const sql = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const versions = (await sql`select version from ${sql(schema)}.schema_migrations order by version`).map(
        (r) => Number(r.version),
      );
      const common = readdirSync(join(ROOT, "sql", "common"))
        .filter((f) => f.endsWith(".sql"))
        .map((f) => Number(f.split("_")[0]))
        .sort((a, b) => a - b);
      expect(versions).toEqual(common);
      const tables = (
        await sql`select table_name from information_schema.tables where table_schema = ${schema} order by 1`
      ).map((r) => r.table_name);
      // chain_identity: which chain the schema holds (db/chainSchema.ts), whatever the family.
      expect(tables).toEqual([
        "api_keys",
        "chain_identity",
        "rpc_filter_block_logs",
        "rpc_filters",
        "rpc_pending_transactions",
        "schema_migrations",
        "watch_filters",
      ]);
    } finally {
      await sql.end();
    }
  });

  test("/metrics has no gateway_indexer_* series (INDEXER=on changes nothing: there is no index)", async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(text).not.toContain("gateway_indexer_");
    expect(text).toContain("gateway_head_block");
  });
});

describe("the operator's view", () => {
  test("/health: chain LTC, the node's head, its upstream pushing (the long-poll), no indexer", async () => {
    const [mined] = await node.mine(1);
    const height = await node.rpc<number>("getblockcount");
    const health = await until("the head at the mined block", async () => {
      const h = await json("/health");
      return h.head.hash === mined ? h : undefined;
    });
    expect(health).toEqual({
      status: "ok",
      chain: "LTC",
      chainId: "2",
      upstream: {
        status: "ok",
        headBlockNumber: height,
        upstreams: [
          {
            name: "upstream-1",
            url: node.bareUrl,
            state: "closed",
            headBlockNumber: height,
            batchLimit: 100,
            pushing: true,
          },
        ],
      },
      database: {
        status: "ok",
        embedded: false,
        schema: health.database.schema,
        latencyMs: health.database.latencyMs,
      },
      // Regtest: final at once (CONFIRMATIONS 0).
      head: { number: height, hash: mined, finalized: height },
      cache: health.cache,
      indexer: null,
    });
  });

  test("/status.json says what /health and /metrics say, with no indexer section", async () => {
    // A hit from memory to show: the same block twice.
    const hash = await node.rpc<string>("getblockhash", [1]);
    for (let i = 0; i < 2; i++) await rpc({ jsonrpc: "2.0", id: 1, method: "getblock", params: [hash, 1] });
    await until("two status samples", async () =>
      (await json("/status.json")).series.at.length > 0 ? true : undefined,
    );
    const status = await json("/status.json");
    const health = await json("/health");
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect([status.status, status.chain, status.chainId]).toEqual(["ok", "LTC", "2"]);
    expect(status.head.number).toBe(await node.rpc("getblockcount"));
    expect(status.head.number).toBe(metric(metrics, "gateway_head_block"));
    expect(status.head.finalized).toBe(health.head.finalized);
    expect(status.indexer).toBeNull();
    expect(status.upstreams).toEqual([
      expect.objectContaining({ name: "upstream-1", state: "closed", pushing: true, behind: 0 }),
    ]);
    expect(metric(metrics, "gateway_upstream_pushing", { upstream: "upstream-1" })).toBe(1);
    expect(metric(metrics, "gateway_upstream_head_block", { upstream: "upstream-1" })).toBe(
      status.head.number,
    );
    expect(status.totals.cache.memoryHits).toBeGreaterThanOrEqual(1);
    expect(status.cache.memory.entries).toBe(health.cache.memory.entries);
    expect(status.totals.requests).toContainEqual({ operation: "getblock", outcome: "ok", count: 2 });
    expect(status.websocket.subscriptions).not.toHaveProperty("watch_filters");
  });

  test("the status page in a real Chromium: the node's head, its upstream, no indexer card", async () => {
    browser = await launchBrowser();
    const page = await browser.open(`${service.url}/status`, { width: 1280, height: 1000 });
    try {
      await page.waitFor(`document.body.dataset.rendered !== undefined`, 10_000);
      const head = await node.rpc<number>("getblockcount");
      expect(await page.evaluate<string>(`document.getElementById("head-number").textContent`)).toBe(
        head.toLocaleString("en-US"),
      );
      expect(await page.evaluate<string>(`document.getElementById("chain").textContent`)).toStartWith("LTC");
      const upstream = `document.querySelector('#upstreams tr[data-upstream="upstream-1"]')`;
      expect(await page.evaluate<string>(`${upstream}.children[1].textContent`)).toBe("closed");
      expect(await page.evaluate<string>(`${upstream}.children[4].textContent`)).toBe("yes");
      expect(await page.evaluate<boolean>(`document.getElementById("indexer-card").hidden`)).toBe(true);
      // A new block shows without a reload.
      await node.mine(1);
      await page.waitFor(
        `document.getElementById("head-number").textContent === ${JSON.stringify((head + 1).toLocaleString("en-US"))}`,
        5_000,
      );
      expect(page.problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  test("every series the Grafana dashboard reads is exported, but the index's", async () => {
    const dashboard = readFileSync(join(ROOT, "monitoring", "grafana-dashboard.json"), "utf8");
    const asked = new Set([...dashboard.matchAll(/\bgateway_[a-z0-9_]+/g)].map((m) => m[0]));
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!));
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
    const missing = [...asked].filter((name) => !exported.has(name) && !exported.has(base(name)));
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.filter((name) => !name.startsWith("gateway_indexer_"))).toEqual([]);
  });

  test("credentials appear nowhere an operator or a caller reads", async () => {
    const texts = await Promise.all(
      ["/health", "/status.json", "/metrics", "/swagger/json", "/status"].map(async (path) =>
        (await fetch(`${service.url}${path}`)).text(),
      ),
    );
    for (const text of texts) {
      expect(text).not.toContain(node.user);
      expect(text).not.toContain(node.password);
      expect(text).not.toContain(encodeURIComponent(node.password));
    }
  });
});

describe("the OpenAPI document shows what the instance serves", () => {
  test("the family's JSON-RPC methods, and no eth_*, watch_*, stream or watch-filter route", async () => {
    const doc = await json("/swagger/json");
    expect(Object.keys(doc.paths).sort()).toEqual(["/health", "/health/", "/node/jsonrpc"]);
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(["node", "health"]);
    expect(doc.info.title).toBe("Blockchain data access service");
    for (const text of [doc.info.title, doc.info.description]) expect(text).not.toMatch(/ethereum|eth_|EVM/i);
    // One group of methods, the node's: no `Methods` (the data methods) at all.
    expect(doc.components.schemas.JsonRpcRequest.properties.method).toEqual({
      $ref: "#/components/schemas/NodeMethods",
    });
    const names = doc.components.schemas.NodeMethods.anyOf.map((m: { const: string }) => m.const);
    expect(names).toEqual([...UTXO_METHODS]);
    for (const method of ALLOW_LIST) expect(names).toContain(method);
    expect(doc.components.schemas.Methods).toBeUndefined();
    const post = doc.paths["/node/jsonrpc"].post;
    for (const method of UTXO_METHODS) expect(post.description).toContain(`- \`${method}(`);
    expect(post.description).not.toMatch(/- `(eth|watch)_/);
    expect(post.description).toContain("Not served on LTC");
    // The health schema says the indexer section is null here.
    const health = doc.paths["/health"].get.responses["200"].content["application/json"].schema;
    const report = health.$ref ? doc.components.schemas[health.$ref.split("/").pop()] : health;
    expect(report.properties.indexer.type).toBe("null");
    const ws = doc.paths["/node/jsonrpc"].get.description;
    expect(ws).toContain('`eth_subscribe ["newHeads"]`');
    for (const kind of ["logs", "newPendingTransactions", "watch_filters"])
      expect(ws).not.toContain(`["${kind}"`);
  });

  test("each example of the document answers what the node answers for it", async () => {
    const doc = await json("/swagger/json");
    const examples = Object.values(
      doc.paths["/node/jsonrpc"].post.requestBody.content["application/json"].examples,
    ) as { value: { jsonrpc: string; id: number; method: string; params: unknown[] } }[];
    expect(examples.map(({ value }) => value.method).sort()).toEqual(
      UTXO_METHODS.filter((m) => examples.some(({ value }) => value.method === m)).sort(),
    );
    expect(examples.length).toBeGreaterThan(0);
    for (const { value } of examples) {
      const answer = await rpc(value);
      const own = JSON.parse((await node.post(JSON.stringify(value))).text);
      expect([value.method, answer.status, answer.json.error]).toEqual([
        value.method,
        200,
        own.error ?? undefined,
      ]);
      if (own.error) continue;
      // Nothing moves meanwhile (no block is mined, the mempool is empty): the same result.
      expect([value.method, answer.json.result]).toEqual([value.method, own.result]);
    }
  });

  test("the docs page names no other chain", async () => {
    const page = await (await fetch(`${service.url}/swagger`)).text();
    expect(page).toContain("<title>Blockchain data access service - API</title>");
    expect(page).not.toMatch(/ethereum/i);
  });
});

/** The README's section for this family, from its heading to the next of the same level. */
function readmeSection(heading: string): string {
  const lines = readFileSync(join(ROOT, "README.md"), "utf8").split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`the README has no ${heading}`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  return lines.slice(start + 1, end).join("\n");
}

describe("the README's section on this family", () => {
  const section = readmeSection("## In front of a Bitcoin-family node");
  const blocks = (language: string) =>
    [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]+?)\\n\`\`\``, "g"))].map((m) => m[1]!);

  test("its examples answer as the node does, and its refusals as it shows them", async () => {
    const [, examples] = blocks("sh");
    // One command a paragraph: a comment, then the command (its continuation lines included).
    const commands = examples!
      .split(/\n\n/)
      .map((part) =>
        part
          .split("\n")
          .filter((line) => !line.startsWith("#"))
          .join("\n"),
      )
      .flatMap((part) => part.split(/\n(?=curl )/))
      .filter((command) => command.startsWith("curl "));
    expect(commands).toHaveLength(5);
    const port = new URL(service.url).port;
    // Spawned, not spawnSync: the service answers on this process's event loop.
    const run = async (command: string) => {
      const keyed = command
        .replaceAll("localhost:8000", `127.0.0.1:${port}`)
        .replace("curl -s ", `curl -s -H 'x-api-key: ${KEY}' `);
      const child = Bun.spawn(["bash", "-c", keyed], { stdout: "pipe" });
      const out = await new Response(child.stdout).text();
      expect(await child.exited).toBe(0);
      return JSON.parse(out);
    };
    const answers: any[] = [];
    for (const command of commands) answers.push(await run(command));
    const [heads, block, refusals, rest, health] = answers;
    const height = await node.rpc<number>("getblockcount");
    expect(heads).toEqual([
      { jsonrpc: "2.0", id: 1, result: height },
      { jsonrpc: "2.0", id: 2, result: await node.rpc("getbestblockhash") },
      { jsonrpc: "2.0", id: 3, result: GENESIS },
    ]);
    expect(block).toEqual({ jsonrpc: "2.0", id: 1, result: await node.rpc("getblock", [GENESIS, 2]) });
    expect(block.result.confirmations).toBe(height + 1);
    // The answers the README shows, exactly.
    const [shownBatch, shownRest] = blocks("json")[0]!.split("\n{");
    expect(refusals).toEqual(JSON.parse(shownBatch!));
    expect(rest).toEqual(JSON.parse(`{${shownRest}`));
    expect(health).toMatchObject({ chain: "LTC", head: { number: height }, indexer: null });
  });
});
