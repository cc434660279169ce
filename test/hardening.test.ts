/**
 * Hardening (docs/interface.md §7, §8, §9 and the README's decisions): no fault of a node, the database or a
 * client may open the service, make published results go backwards, keep a bad answer, cut a request off
 * or answer 500. Real parts everywhere; a fault-injecting proxy in front of a real anvil where a node
 * cannot be made to misbehave on demand, and a real PostgreSQL held, locked or stopped.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { rpc } from "./support/chain";
import { faults, startProxy } from "./support/proxy";
import { post, startTestService } from "./support/service";
import { fixtureChain, newAnvil } from "./support/shared";
import { until } from "./support/until";

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

let node: string;
beforeAll(async () => {
  node = (await fixtureChain()).anvil.url;
});

describe("time", () => {
  test("a hung node: the caller gets a 504 and a stream its error line, not a connection cut at 10 s", async () => {
    const proxy = startProxy(node);
    const { url } = await startTestService({
      upstreamUrls: [proxy.url],
      env: { UPSTREAM_TIMEOUT_MS: "11000", UPSTREAM_DEADLINE_MS: "11500", CACHE_MEMORY_MB: "0" },
    });
    proxy.mode = faults.hang();
    const started = performance.now();
    const [rest, stream] = await Promise.all([
      post(`${url}/node/rest/eth_getBlockByNumber`, { number: 1, is_full_trx: false }),
      fetch(`${url}/node/stream/ext_getBlockReceipts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ fromBlock: 1, toBlock: 2 }),
      }).then(async (r) => ({ status: r.status, text: await r.text() })),
    ]);
    expect(performance.now() - started).toBeGreaterThan(11_000);
    expect(rest.status).toBe(504);
    expect(rest.json.detail).toContain("did not answer within");
    expect(stream.status).toBe(200);
    const line = JSON.parse(stream.text.trim());
    expect(line).toEqual({
      number: 1,
      error: { code: -32002, message: expect.stringContaining("did not answer") },
    });
  }, 30_000);
});
