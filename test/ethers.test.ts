/** A real client: ethers v6 JsonRpcProvider, batching on, pointed at /node/jsonrpc. */
import { beforeAll, expect, test } from "bun:test";
import { type JsonRpcPayload, JsonRpcProvider, type JsonRpcResult } from "ethers";
import { anvilWallets, type ChainFixture, populateChain } from "./support/chain";
import { startTestService } from "./support/service";
import { newAnvil } from "./support/shared";

/** Records the batches ethers sends, to show batching is on. */
class RecordingProvider extends JsonRpcProvider {
  batchSizes: number[] = [];
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    this.batchSizes.push(Array.isArray(payload) ? payload.length : 1);
    return super._send(payload);
  }
}

let chain: ChainFixture;
let direct: JsonRpcProvider;
let viaService: RecordingProvider;

beforeAll(async () => {
  // Its own chain: this test broadcasts a transaction.
  const anvil = await newAnvil();
  chain = await populateChain(anvil.url);
  const { url } = await startTestService({ upstreamUrls: [anvil.url] });
  direct = new JsonRpcProvider(anvil.url, 31337, { staticNetwork: true, cacheTimeout: -1 });
  viaService = new RecordingProvider(`${url}/node/jsonrpc`, 31337, {
    staticNetwork: true,
    batchMaxCount: 20,
    batchStallTime: 5,
    cacheTimeout: -1,
  });
  viaService.pollingInterval = 50;
});

test("reads blocks, receipts, balances and logs in batches, as the node gives them", async () => {
  const ask = (p: JsonRpcProvider) =>
    Promise.all([
      p.getBlock(3),
      p.getBlock(chain.bigBlock, true),
      p.getTransactionReceipt(chain.tx.erc20Transfer),
      p.getTransactionReceipt(chain.tx.failed),
      p.getTransaction(chain.tx.eip1559),
      p.getBalance(chain.accounts[2]!),
      p.getBalance(chain.accounts[3]!, 5),
      p.getLogs({ address: chain.contracts.token, fromBlock: 0, toBlock: "latest" }),
      p.getCode(chain.contracts.nft),
      p.getTransactionCount(chain.accounts[0]!),
    ]);
  const [fromService, fromNode] = await Promise.all([ask(viaService), ask(direct)]);
  expect(
    fromService.map((v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x))),
  ).toEqual(fromNode.map((v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x))));
  expect(fromService[1]!.prefetchedTransactions).toHaveLength(40);
  expect(fromService[3]!.status).toBe(0);
  expect(fromService[7]!.length).toBeGreaterThan(20);
  expect(Math.max(...viaService.batchSizes)).toBeGreaterThan(1);
});

test("broadcasts a signed transaction and waits for its receipt", async () => {
  const [, , , , , sender, recipient] = anvilWallets(viaService);
  const before = await direct.getBalance(recipient!.address);
  const tx = await sender!.sendTransaction({ to: recipient!.address, value: 123456789n });
  const receipt = await tx.wait(1, 10_000);
  expect(receipt!.status).toBe(1);
  expect(receipt!.hash).toBe(tx.hash);
  expect(await direct.getBalance(recipient!.address)).toBe(before + 123456789n);
  expect((await direct.getTransaction(tx.hash))!.from).toBe(sender!.address);
});
