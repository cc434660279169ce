/** Request ids, structured logs that never carry API keys, x-cache/x-upstream, Prometheus text. */
import { beforeAll, expect, test } from "bun:test";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";

const KEY = "secret-key-0123456789";
let service: string;
const lines: string[] = [];

beforeAll(async () => {
  const { anvil } = await fixtureChain();
  service = (
    await startTestService({
      upstreamUrls: [anvil.url],
      env: { API_KEYS: KEY, LOG_LEVEL: "debug" },
      logWrite: (line) => lines.push(line),
    })
  ).url;
});

test("every answer carries a request id: the caller's when sane, else a new one", async () => {
  const given = await post(`${service}/node/rest/eth_blockNumber`, undefined, {
    headers: { "x-api-key": KEY, "x-request-id": "trace-42" },
  });
  expect(given.headers.get("x-request-id")).toBe("trace-42");
  const insane = await post(
    `${service}/node/jsonrpc`,
    { id: 1, method: "eth_chainId" },
    {
      headers: { "x-api-key": KEY, "x-request-id": "bad id with spaces" },
    },
  );
  const generated = insane.headers.get("x-request-id")!;
  expect(generated).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
  const other = await post(
    `${service}/node/jsonrpc`,
    { id: 1, method: "eth_chainId" },
    { headers: { "x-api-key": KEY } },
  );
  expect(other.headers.get("x-request-id")).not.toBe(generated);
});

test("node answers say where they came from", async () => {
  const answer = await post(`${service}/node/jsonrpc?api_key=${KEY}`, {
    id: 1,
    method: "eth_getBlockByNumber",
    params: ["0x1", false],
  });
  expect(answer.headers.get("x-cache")).toBe("miss");
  expect(answer.headers.get("x-upstream")).toBe("upstream-1");
});

test("log lines are JSON objects with the request id, and never contain an API key", async () => {
  await post(`${service}/node/rest/eth_blockNumber?api_key=${KEY}`, undefined, {
    headers: { "x-request-id": "find-me" },
  });
  await post(`${service}/node/rest/eth_blockNumber?api_key=wrong-${KEY}`, undefined);
  await post(
    `${service}/node/jsonrpc`,
    { id: 1, method: "eth_chainId" },
    { headers: { "x-api-key": `other-${KEY}` } },
  );
  const records = lines.map((l) => JSON.parse(l));
  const access = records.find((r) => r.requestId === "find-me");
  expect(access).toMatchObject({
    level: "debug",
    msg: "request",
    route: "/node/rest/eth_blockNumber",
    status: 200,
  });
  expect(typeof access.ms).toBe("number");
  expect(records.filter((r) => r.status === 401).length).toBe(2);
  for (const line of lines) expect(line).not.toContain(KEY);
});

test("/metrics is Prometheus text, with no key needed", async () => {
  const response = await fetch(`${service}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/plain");
  const text = await response.text();
  expect(text).toContain("# TYPE gateway_requests_total counter");
  expect(text).toContain("# TYPE gateway_upstream_latency_seconds histogram");
  expect(text).not.toContain(KEY);
});
