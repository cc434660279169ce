/**
 * The README's section "In front of a TRON node": its examples run verbatim (the port 8000 they name
 * replaced by the test's, the key added) against the service in front of the stand-in java-tron, each
 * answer checked against the stand-in's own answer to the same question, and its refusals as it shows them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { codeBlocks, curlCommands, readmeSection, runCurl } from "./support/readme";
import { startTestService, type TestService } from "./support/service";
import { startTronNode, type TronNode } from "./support/tronNode";
import { until } from "./support/until";

const KEY = "tron-readme-key";
const HEAD_SETTLE_MS = 10_000;

let node: TronNode;
let service: TestService;

beforeAll(async () => {
  node = await startTronNode({ network: "NILE" });
  service = await startTestService({
    upstreamUrls: [node.url],
    env: { CHAIN: "NILE", API_KEYS: KEY, HEAD_POLL_MS: "100" },
  });
});
afterAll(async () => {
  await service?.stop();
  await node?.stop();
});

const section = readmeSection("## In front of a TRON node");

/** The stand-in's own answer to a path of its HTTP API. */
async function direct(path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

async function directRpc(method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(`${node.url}/jsonrpc`, {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

test("its examples answer what the stand-in's own answers say, and its refusals as it shows them", async () => {
  const commands = curlCommands(codeBlocks(section, "sh")[1]!);
  expect(commands).toHaveLength(6);
  const run = (command: string) => runCurl(command, service.url, KEY);
  // The service has followed the stand-in's head (no block comes meanwhile: the stand-in mines on demand).
  const head = node.chain.headNumber();
  await until(
    "the service to follow the stand-in's head",
    async () => ((await run(commands[3]!))[1].result === `0x${head.toString(16)}` ? true : undefined),
    HEAD_SETTLE_MS,
  );
  const answers: any[] = [];
  for (const command of commands) answers.push(await run(command));
  const [now, byNumber, blockInfos, batch, refusedPath, refusedMethod] = answers;
  expect(now).toEqual(await direct("/wallet/getnowblock", {}));
  expect(now.block_header.raw_data.number).toBe(head);
  expect(byNumber).toEqual(await direct("/wallet/getblockbynum", { num: 1 }));
  expect(blockInfos).toEqual(await direct("/walletsolidity/gettransactioninfobyblocknum?num=2"));
  // Block 2 holds the scenario's TRC-20 transfer and its reverted one: two infos.
  expect(blockInfos.map((i: { id: string }) => i.id)).toEqual([
    node.scenario.trc20.txID,
    node.scenario.reverted.txID,
  ]);
  const solidified = node.chain.solidifiedNumber();
  expect(batch).toEqual([
    {
      jsonrpc: "2.0",
      id: 1,
      result: await directRpc("eth_getBlockByNumber", [`0x${solidified.toString(16)}`, false]),
    },
    { jsonrpc: "2.0", id: 2, result: `0x${head.toString(16)}` },
  ]);
  // The answers the README shows, exactly.
  const [shownPath, shownMethod] = codeBlocks(section, "json")[0]!.split("\n");
  expect(refusedPath).toEqual(JSON.parse(shownPath!));
  expect(refusedMethod).toEqual(JSON.parse(shownMethod!));
});
