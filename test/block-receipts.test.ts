/**
 * ext_getBlockReceipts on nodes that lack eth_getBlockReceipts: asked of an upstream that has it, else
 * assembled from transaction receipts; what an upstream lacks is learned per upstream.
 */
import { beforeAll, expect, test } from "bun:test";
import type { ChainFixture } from "./support/chain";
import { type NodeProxy, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";
import { until } from "./support/until";

let chain: ChainFixture;
let node: string;
let proxy: NodeProxy;
let service: string;

beforeAll(async () => {
  const fixture = await fixtureChain();
  chain = fixture.chain;
  node = fixture.anvil.url;
  proxy = startProxy(node, { hide: ["eth_getBlockReceipts"] });
  service = (await startTestService({ upstreamUrls: [proxy.url], env: { CACHE_MEMORY_MB: "0" } })).url;
});

const hex = (n: number) => `0x${n.toString(16)}`;

test("the receipts equal the node's own eth_getBlockReceipts, and the missing method is asked once", async () => {
  for (const number of [chain.bigBlock, chain.bigBlock - 1, 1]) {
    const expected = (
      await post(node, { jsonrpc: "2.0", id: 1, method: "eth_getBlockReceipts", params: [hex(number)] })
    ).json.result;
    const rest = await post(`${service}/node/rest/ext_getBlockReceipts`, { number });
    expect(rest.status).toBe(200);
    expect(rest.json).toEqual(expected);
    const rpc = await post(`${service}/node/jsonrpc`, {
      id: 2,
      method: "ext_getBlockReceipts",
      params: [hex(number)],
    });
    expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 2, result: expected });
  }
  expect(proxy.calls.filter((c) => c.method === "eth_getBlockReceipts")).toHaveLength(1);
  expect(proxy.calls.filter((c) => c.method === "eth_getTransactionReceipt").length).toBe(2 * (40 + 1 + 1));
});

test("by block hash, and for a block that does not exist", async () => {
  const block = (
    await post(node, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBlockByNumber",
      params: [hex(chain.bigBlock), false],
    })
  ).json.result;
  const expected = (
    await post(node, { jsonrpc: "2.0", id: 1, method: "eth_getBlockReceipts", params: [block.hash] })
  ).json.result;
  const byHash = await post(`${service}/node/jsonrpc`, {
    id: 3,
    method: "ext_getBlockReceipts",
    params: [block.hash],
  });
  expect(byHash.json).toEqual({ jsonrpc: "2.0", id: 3, result: expected });
  expect(expected).toHaveLength(40);
  const missing = await post(`${service}/node/rest/ext_getBlockReceipts`, { number: 1_000_000 });
  expect(missing.status).toBe(200);
  expect(missing.json).toBeNull();
});

test("what one upstream lacks is learned for it alone, and learned again after it reconnects", async () => {
  const lacking = startProxy(node, { hide: ["eth_getBlockReceipts"] });
  const having = startProxy(node);
  const twoUpstreams = (
    await startTestService({
      upstreamUrls: [lacking.url, having.url],
      env: { CACHE_MEMORY_MB: "0", HEAD_POLL_MS: "50", UPSTREAM_COOLDOWN_MS: "100" },
    })
  ).url;
  const receiptsOf = (number: number) =>
    post(`${twoUpstreams}/node/jsonrpc`, { id: 1, method: "ext_getBlockReceipts", params: [hex(number)] });
  const expected = async (number: number) =>
    (await post(node, { jsonrpc: "2.0", id: 1, method: "eth_getBlockReceipts", params: [hex(number)] })).json
      .result;
  const state = async () =>
    ((await (await fetch(`${twoUpstreams}/health`)).json()) as any).upstream.upstreams[0].state;

  // The first upstream says it lacks the method; the second answers it natively, nothing is assembled.
  for (const number of [chain.bigBlock, chain.bigBlock - 1]) {
    const answer = await receiptsOf(number);
    expect(answer.json.result).toEqual(await expected(number));
    expect(answer.headers.get("x-upstream")).toBe("upstream-2");
  }
  expect(lacking.callsOf("eth_getBlockReceipts")).toHaveLength(1);
  expect(having.callsOf("eth_getBlockReceipts")).toHaveLength(2);
  expect([
    ...lacking.callsOf("eth_getTransactionReceipt"),
    ...having.callsOf("eth_getTransactionReceipt"),
  ]).toEqual([]);

  // It goes away and comes back (upgraded, say): what it lacked is asked again.
  lacking.stop();
  await until("the first upstream's circuit to open", async () =>
    (await state()) === "open" ? true : undefined,
  );
  lacking.hidden.clear();
  lacking.restart();
  await until("the first upstream back in rotation", async () =>
    (await state()) === "closed" ? true : undefined,
  );
  const again = await receiptsOf(1);
  expect(again.json.result).toEqual(await expected(1));
  expect(again.headers.get("x-upstream")).toBe("upstream-1");
  expect(lacking.callsOf("eth_getBlockReceipts")).toHaveLength(2);
}, 30_000);
