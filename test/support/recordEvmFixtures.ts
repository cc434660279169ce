/**
 * Records the node answers the EVM family's unit tests decode (src/families/evm/decode.test.ts and
 * internalTransfers.test.ts) into src/families/evm/fixtures/anvilChain.json: a fresh anvil holding the
 * fixture chain (populateChain: creations, legacy and EIP-1559 transfers, a failed transfer with value, ERC-20
 * mint, transfer and approval, ERC-721 mint and transfer, an internal transfer, a block of 40 transactions),
 * then what that chain lacks: a blob transaction, two internal transfers in one transaction, a reverted
 * transaction whose inner transfer succeeded, and an internal contract creation and self-destruct that
 * move value. For every block: `eth_getBlockByNumber [n, true]`, `eth_getBlockReceipts [n]`,
 * `trace_block [n]` and `debug_traceBlockByNumber [n, {tracer: "callTracer"}]`, as anvil answered (but for
 * a blob's data, below).
 *
 * The file is committed as recorded data: the tests' expectations are written against it, so record it
 * again only to add to it, then update them. Run: bun test/support/recordEvmFixtures.ts, then
 * node_modules/.bin/biome format --write src/families/evm/fixtures/anvilChain.json
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Contract, JsonRpcProvider, type TransactionRequest } from "ethers";
import { anvilBinary, startAnvil } from "../../src/families/evm/devChain";
import { anvilWallets, populateChain, rpc, waitForReceipt } from "./chain";
import { compileContracts } from "./solc";

const OUT = join(import.meta.dir, "..", "..", "src", "families", "evm", "fixtures", "anvilChain.json");
/** A blob of zeros: its KZG commitment and proof are both the point at infinity, so no KZG library is needed. */
const ZERO_BLOB = `0x${"00".repeat(131_072)}`;
const INFINITY = `0xc0${"00".repeat(47)}`;

/**
 * Init code that creates an empty contract with 1 wei (CREATE), then self-destructs to `beneficiary`,
 * sending it the rest of the value it was created with: PUSH1 0, PUSH1 0, PUSH1 1, CREATE, POP,
 * PUSH20 beneficiary, SELFDESTRUCT.
 */
const createAndDestroy = (beneficiary: string) => `0x600060006001f05073${beneficiary.slice(2)}ff`;

async function extraTransactions(url: string, forwarder: string, token: string) {
  const provider = new JsonRpcProvider(url, undefined, {
    staticNetwork: true,
    batchMaxCount: 1,
    cacheTimeout: -1,
  });
  const [alice, bob, , , erin, frank] = anvilWallets(provider);
  const forwarderAbi = (await compileContracts()).Forwarder!.abi;
  const data = (fn: string, args: unknown[]) =>
    new Contract(forwarder, forwarderAbi).interface.encodeFunctionData(fn, args);
  const mined = async (wallet: typeof alice, request: TransactionRequest) => {
    const { hash } = await wallet!.sendTransaction(request);
    await waitForReceipt(url, hash);
    return hash;
  };
  const out = {
    blob: await mined(erin, {
      type: 3,
      to: bob!.address,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerBlobGas: 10n ** 9n,
      blobs: [{ data: ZERO_BLOB, commitment: INFINITY, proof: INFINITY }],
    }),
    split: await mined(frank, {
      to: forwarder,
      value: 7n * 10n ** 15n,
      data: data("split", [alice!.address, bob!.address]),
    }),
    // The first half reaches alice, the second is refused by the token (it takes no ether): all is undone.
    splitFailed: await mined(frank, {
      to: forwarder,
      value: 4n * 10n ** 15n,
      data: data("split", [alice!.address, token]),
      gasLimit: 200_000,
    }),
    createAndDestroy: await mined(erin, {
      data: createAndDestroy(bob!.address.toLowerCase()),
      value: 10n,
      gasLimit: 200_000,
    }),
  };
  provider.destroy();
  return out;
}

const anvil = await startAnvil();
try {
  const fixture = await populateChain(anvil.url);
  const extra = await extraTransactions(anvil.url, fixture.contracts.forwarder, fixture.contracts.token);
  const call = rpc(anvil.url);
  const head = Number(await call<string>("eth_blockNumber"));
  const blocks: Record<string, unknown> = {};
  for (let n = 1; n <= head; n++) {
    const ref = `0x${n.toString(16)}`;
    const block = await call("eth_getBlockByNumber", [ref, true]);
    // anvil writes a blob transaction's sidecar into the block (128 KiB of zeros here), which mainnet nodes
    // do not, and nothing decodes: left out, the one change to what was answered.
    for (const tx of block.transactions) delete tx.blobs;
    blocks[n] = {
      block,
      receipts: await call("eth_getBlockReceipts", [ref]),
      trace_block: await call("trace_block", [ref]),
      debug_traceBlockByNumber: await call("debug_traceBlockByNumber", [ref, { tracer: "callTracer" }]),
    };
  }
  const version = Bun.spawnSync([anvilBinary(), "--version"]).stdout.toString().split("\n")[0];
  const recorded = {
    recorded: `node answers as ${version} gave them (blob data left out), by test/support/recordEvmFixtures.ts: recorded data, not edited`,
    accounts: fixture.accounts,
    contracts: fixture.contracts,
    transactions: { ...fixture.tx, ...extra },
    bigBlock: fixture.bigBlock,
    head,
    blocks,
  };
  writeFileSync(OUT, `${JSON.stringify(recorded, null, 2)}\n`);
  console.log(`recorded blocks 1 to ${head} into ${OUT}`);
} finally {
  await anvil.stop();
}
