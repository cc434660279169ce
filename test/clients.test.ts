/**
 * Real clients from npm, over loopback, against the service in front of a seeded anvil, each answer
 * compared with what the same client gets from anvil itself: Foundry's `cast` (client, block-number,
 * send, receipt, logs --subscribe over ws://), ethers v6 (getFeeData, a JSON-RPC batch through its
 * batching) and viem (estimateFeesPerGas, getBlockReceipts, getLogs over http). The filter-based clients
 * (ethers' contract.on over HTTP, viem's watchEvent over http) are in the filter tests.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { HDNodeWallet, type JsonRpcPayload, JsonRpcProvider, type JsonRpcResult } from "ethers";
import { createPublicClient, http } from "viem";
import { DEV_ACCOUNTS, DEV_SEED, DEV_TOKEN, seedDevChain } from "../src/families/evm/devChain";
import { cast, castBinary } from "./support/cast";
import { ANVIL_MNEMONIC, rpc, waitForReceipt } from "./support/chain";
import { metric } from "./support/metrics";
import { startTestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

/** A tip above anvil's 1 gwei floor (and ethers' fallback), so a suggestion read from the node shows. */
const TIP_WEI = 3_000_000_000n;
const FEE_CAP_WEI = 10_000_000_000n;
const TIPPED_BLOCKS = 3;
const SUBSCRIBE_TIMEOUT_MS = 20_000;
const TRANSFER_SIG = "transfer(address,uint256)";

const keyOf = (index: number) =>
  HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`).privateKey;
/** JSON with bigints as their digits, to compare what two clients built. */
const plain = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? `${v}n` : v)));

let node: string;
let service: string;
let rpcUrl: string;

beforeAll(async () => {
  const anvil = await newAnvil();
  await seedDevChain(anvil.url);
  node = anvil.url;
  service = (await startTestService({ upstreamUrls: [anvil.url] })).url;
  rpcUrl = `${service}/node/jsonrpc`;
});

/** Blocks whose transactions pay TIP_WEI, sent to anvil itself: its priority fee suggestion follows them. */
async function tippedBlocks(): Promise<void> {
  const call = rpc(node);
  for (let i = 0; i < TIPPED_BLOCKS; i++) {
    const hash = await call<string>("eth_sendTransaction", [
      {
        from: DEV_ACCOUNTS[2],
        to: DEV_ACCOUNTS[1],
        value: "0x1",
        maxPriorityFeePerGas: `0x${TIP_WEI.toString(16)}`,
        maxFeePerGas: `0x${FEE_CAP_WEI.toString(16)}`,
      },
    ]);
    await waitForReceipt(node, hash);
  }
  await until("the service to follow the head", async () =>
    (await rpc(rpcUrl)("eth_blockNumber")) === (await call("eth_blockNumber")) ? true : undefined,
  );
}

async function answered(method: string): Promise<number> {
  const text = await (await fetch(`${service}/metrics`)).text();
  return (
    metric(text, "gateway_requests_total", { operation: method, transport: "jsonrpc", outcome: "ok" }) ?? 0
  );
}

describe("ethers v6", () => {
  test("getFeeData over HTTP equals anvil's, its priority fee read from eth_maxPriorityFeePerGas", async () => {
    await tippedBlocks();
    const before = await answered("eth_maxPriorityFeePerGas");
    const through = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true });
    const direct = new JsonRpcProvider(node, undefined, { staticNetwork: true });
    try {
      const [fees, own] = [await through.getFeeData(), await direct.getFeeData()];
      expect(plain(fees)).toEqual(plain(own));
      // anvil's suggestion, not ethers' 1 gwei fallback for a node without the method.
      expect(fees.maxPriorityFeePerGas).toBe(TIP_WEI);
      expect(await answered("eth_maxPriorityFeePerGas")).toBe(before + 1);
    } finally {
      through.destroy();
      direct.destroy();
    }
  });

  test("a JSON-RPC batch through ethers' batching answers each call as anvil does", async () => {
    const batches: string[][] = [];
    class Recording extends JsonRpcProvider {
      override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
        batches.push((Array.isArray(payload) ? payload : [payload]).map((p) => p.method));
        return super._send(payload);
      }
    }
    const options = { staticNetwork: true, batchMaxCount: 10, cacheTimeout: -1 };
    const through = new Recording(rpcUrl, undefined, options);
    const direct = new JsonRpcProvider(node, undefined, options);
    const ask = (p: JsonRpcProvider) =>
      Promise.all([
        p.getBlockNumber(),
        p.getBalance(DEV_ACCOUNTS[0]),
        p.getTransactionCount(DEV_ACCOUNTS[0]),
        p.getCode(DEV_TOKEN),
        p.call({ to: DEV_TOKEN, data: "0x18160ddd" }),
        p.getBlock(1).then((b) => b?.toJSON()),
        p.getTransactionReceipt(DEV_SEED[0]!.hash).then((r) => r?.toJSON()),
      ]);
    try {
      const answers = await ask(through);
      expect(plain(answers)).toEqual(plain(await ask(direct)));
      // The calls left as one batch, with the chain id ethers checks its network by.
      expect(batches.map((b) => [...b].sort())).toEqual([
        [
          "eth_blockNumber",
          "eth_call",
          "eth_chainId",
          "eth_getBalance",
          "eth_getBlockByNumber",
          "eth_getCode",
          "eth_getTransactionCount",
          "eth_getTransactionReceipt",
        ],
      ]);
    } finally {
      through.destroy();
      direct.destroy();
    }
  });
});

describe("viem over http", () => {
  const through = () => createPublicClient({ transport: http(rpcUrl) });
  const direct = () => createPublicClient({ transport: http(node) });

  test("estimateFeesPerGas equals anvil's, asked of eth_maxPriorityFeePerGas", async () => {
    const before = await answered("eth_maxPriorityFeePerGas");
    const fees = await through().estimateFeesPerGas();
    expect(plain(fees)).toEqual(plain(await direct().estimateFeesPerGas()));
    expect(await answered("eth_maxPriorityFeePerGas")).toBe(before + 1);
  });

  test("getBlockReceipts and getLogs equal anvil's", async () => {
    const receipts = await through().getBlockReceipts({ blockNumber: 5n });
    expect(receipts).toHaveLength(1);
    expect(plain(receipts)).toEqual(plain(await direct().getBlockReceipts({ blockNumber: 5n })));
    const logs = await through().getLogs({ address: DEV_TOKEN, fromBlock: 0n, toBlock: "latest" });
    // The seed's mint and transfer of its token.
    expect(logs.map((l) => l.blockNumber)).toEqual([4n, 5n]);
    expect(plain(logs)).toEqual(
      plain(await direct().getLogs({ address: DEV_TOKEN, fromBlock: 0n, toBlock: "latest" })),
    );
  });
});

describe("Foundry's cast", () => {
  test("cast client and cast block-number answer as they do from anvil", async () => {
    for (const command of [["client"], ["block-number"], ["chain-id"], ["gas-price"]]) {
      const through = await cast([...command, "--rpc-url", rpcUrl]);
      const own = await cast([...command, "--rpc-url", node]);
      expect({ command, ...through }).toEqual({ command, ...own, exitCode: 0 });
    }
    expect((await cast(["client", "--rpc-url", rpcUrl])).stdout).toBe("anvil/v1.7.1");
  });

  test("cast send signs locally and sends through the service; cast receipt is anvil's", async () => {
    const sent = await cast([
      "send",
      "--private-key",
      keyOf(5),
      "--rpc-url",
      rpcUrl,
      "--json",
      DEV_ACCOUNTS[1],
      "--value",
      "12345",
    ]);
    expect({ exitCode: sent.exitCode, stderr: sent.stderr }).toEqual({ exitCode: 0, stderr: "" });
    const receipt = JSON.parse(sent.stdout);
    expect(receipt).toMatchObject({ status: "0x1", to: DEV_ACCOUNTS[1] });
    const tx = await rpc(node)("eth_getTransactionByHash", [receipt.transactionHash]);
    expect(tx).toMatchObject({ value: "0x3039", to: DEV_ACCOUNTS[1] });
    const through = await cast(["receipt", receipt.transactionHash, "--json", "--rpc-url", rpcUrl]);
    const own = await cast(["receipt", receipt.transactionHash, "--json", "--rpc-url", node]);
    expect(through).toEqual({ ...own, exitCode: 0 });
    expect(JSON.parse(through.stdout).transactionHash).toBe(receipt.transactionHash);
  });

  test(
    "cast logs --subscribe over ws:// receives the token's Transfer logs as it does from anvil",
    async () => {
      const watch = (url: string) => {
        const child = Bun.spawn(
          [
            castBinary(),
            "logs",
            "--subscribe",
            "--rpc-url",
            url.replace(/^http/, "ws"),
            "--address",
            DEV_TOKEN,
          ],
          { stdout: "pipe", stderr: "pipe", stdin: "ignore", env: { ...process.env, NO_COLOR: "1" } },
        );
        const seen = { out: "", err: "" };
        (async () => {
          for await (const chunk of child.stdout) seen.out += new TextDecoder().decode(chunk);
        })();
        (async () => {
          for await (const chunk of child.stderr) seen.err += new TextDecoder().decode(chunk);
        })();
        return { child, seen };
      };
      /** cast's printed logs, by transaction hash. */
      const entries = (out: string) =>
        new Map(
          out
            .split(/^- /m)
            .filter((e) => e.trim())
            .map((e) => [/transactionHash: (0x[0-9a-f]{64})/.exec(e)?.[1], e.trim()]),
        );
      const through = watch(rpcUrl);
      const own = watch(node);
      try {
        const sent: string[] = [];
        // A transfer a round until both have printed one (each subscribes as it starts).
        const hash = await until(
          "cast to print a log",
          async () => {
            const transfer = await cast([
              "send",
              "--private-key",
              keyOf(0),
              "--rpc-url",
              rpcUrl,
              "--json",
              DEV_TOKEN,
              TRANSFER_SIG,
              DEV_ACCOUNTS[2],
              "7",
            ]);
            expect(transfer.exitCode).toBe(0);
            sent.push(JSON.parse(transfer.stdout).transactionHash);
            await Bun.sleep(200);
            return sent.find((h) => entries(through.seen.out).has(h) && entries(own.seen.out).has(h));
          },
          SUBSCRIBE_TIMEOUT_MS,
        );
        expect(through.seen.err).toBe("");
        expect(entries(through.seen.out).get(hash)).toBe(entries(own.seen.out).get(hash)!);
        // The transfer of 7 it was sent.
        expect(entries(through.seen.out).get(hash)).toContain(`data: 0x${"7".padStart(64, "0")}`);
      } finally {
        through.child.kill();
        own.child.kill();
      }
    },
    SUBSCRIBE_TIMEOUT_MS + 10_000,
  );
});
