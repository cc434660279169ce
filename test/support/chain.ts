/**
 * Fills an anvil with real traffic: contract creations (ERC-20, ERC-721, a forwarder, a bytes32 token),
 * native transfers as legacy and EIP-1559 transactions, token transfers and approvals, an ERC-721
 * transfer, a failed transaction that carries value, and one block with many transactions (automine
 * off, send, evm_mine). Returns what was made, for tests to ask about.
 */
import {
  Contract,
  ContractFactory,
  HDNodeWallet,
  JsonRpcProvider,
  type TransactionRequest,
  type TransactionResponse,
  Wallet,
} from "ethers";
import type { Engine } from "../../src/engine/engineApi";
import { compileContracts } from "./solc";

export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
export const BIG_BLOCK_TRANSACTIONS = 40;

export interface ChainFixture {
  url: string;
  accounts: string[];
  contracts: { token: string; nft: string; forwarder: string; oldToken: string };
  tx: {
    tokenDeploy: string;
    legacy: string;
    eip1559: string;
    mint: string;
    erc20Transfer: string;
    approval: string;
    nftMint: string;
    nftTransfer: string;
    failed: string;
    internalValue: string;
  };
  /** The block that holds BIG_BLOCK_TRANSACTIONS transactions. */
  bigBlock: number;
  /** The last block of the fixture. */
  head: number;
}

export function anvilWallets(provider: JsonRpcProvider, count = 10): Wallet[] {
  return Array.from({ length: count }, (_, i) => {
    const hd = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`);
    return new Wallet(hd.privateKey, provider);
  });
}

export function rpc(url: string) {
  let id = 0;
  return async function call<T = any>(method: string, params: unknown[] = []): Promise<T> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
}

/** Sends calls to the node as one JSON-RPC batch; returns their results in order, throws on any error. */
export async function rpcBatch<T = any>(
  url: string,
  calls: { method: string; params: unknown[] }[],
): Promise<T[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: "2.0", id, ...c }))),
  });
  const answers = (await response.json()) as { id: number; result?: T; error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`${calls[failed.id]?.method}: ${failed.error!.message}`);
  return answers.sort((a, b) => a.id - b.id).map((a) => a.result as T);
}

/** anvil mines an automined transaction just after answering eth_sendRawTransaction. */
export async function waitForReceipt(url: string, hash: string, timeoutMs = 10_000): Promise<any> {
  const call = rpc(url);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const receipt = await call("eth_getTransactionReceipt", [hash]);
    if (receipt) return receipt;
    if (Date.now() > deadline) throw new Error(`transaction ${hash} was not mined within ${timeoutMs} ms`);
    await Bun.sleep(10);
  }
}

/** Sends from an unlocked account and returns the receipt: anvil answers the hash before it mines the block. */
export async function sendAndWait(url: string, tx: Record<string, unknown>): Promise<any> {
  return waitForReceipt(url, await rpc(url)<string>("eth_sendTransaction", [tx]));
}

/** Deploys a test contract from one of anvil's accounts; returns its address. */
export async function deployContract(
  url: string,
  name: string,
  args: unknown[] = [],
  account = 0,
): Promise<string> {
  const artifact = (await compileContracts())[name]!;
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const wallet = anvilWallets(provider)[account]!;
    const request = await new ContractFactory(artifact.abi, artifact.bytecode).getDeployTransaction(...args);
    const { hash } = await wallet.sendTransaction({ ...request, gasLimit: 5_000_000 });
    return ((await waitForReceipt(url, hash)).contractAddress as string).toLowerCase();
  } finally {
    provider.destroy();
  }
}

/** Calldata for a test contract's function. */
export async function calldata(name: string, fn: string, args: unknown[]): Promise<string> {
  const artifact = (await compileContracts())[name]!;
  return new Contract(
    "0x0000000000000000000000000000000000000000",
    artifact.abi,
  ).interface.encodeFunctionData(fn, args);
}

export async function populateChain(url: string): Promise<ChainFixture> {
  const artifacts = await compileContracts();
  const provider = new JsonRpcProvider(url, undefined, {
    staticNetwork: true,
    batchMaxCount: 1,
    cacheTimeout: -1,
  });
  const call = rpc(url);
  const wallets = anvilWallets(provider);
  const [alice, bob, carol, dave] = wallets as [Wallet, Wallet, Wallet, Wallet];
  const nonces = new Map<string, number>();
  for (const w of wallets) nonces.set(w.address, await provider.getTransactionCount(w.address));

  async function send(wallet: Wallet, request: TransactionRequest): Promise<TransactionResponse> {
    const nonce = nonces.get(wallet.address)!;
    nonces.set(wallet.address, nonce + 1);
    return wallet.sendTransaction({ gasLimit: 1_000_000, ...request, nonce });
  }
  async function mined(response: Promise<TransactionResponse>): Promise<string> {
    const { hash } = await response;
    await waitForReceipt(url, hash);
    return hash;
  }
  async function deploy(wallet: Wallet, name: string, args: unknown[] = []) {
    const artifact = artifacts[name]!;
    const factory = new ContractFactory(artifact.abi, artifact.bytecode);
    const request = await factory.getDeployTransaction(...args);
    const hash = await mined(send(wallet, request));
    const receipt = await call("eth_getTransactionReceipt", [hash]);
    return { hash, address: receipt.contractAddress as string };
  }
  const data = (name: string, fn: string, args: unknown[]) =>
    new Contract(
      "0x0000000000000000000000000000000000000000",
      artifacts[name]!.abi,
    ).interface.encodeFunctionData(fn, args);

  const tokenDeploy = await deploy(alice, "TestToken", ["Test Token", "TST", 18]);
  const nftDeploy = await deploy(alice, "TestNFT");
  const forwarderDeploy = await deploy(alice, "Forwarder");
  const oldDeploy = await deploy(alice, "Bytes32Token");
  const token = tokenDeploy.address;

  const legacy = await mined(
    send(alice, { to: bob.address, value: 10n ** 18n, type: 0, gasPrice: 2_000_000_000n, gasLimit: 21_000 }),
  );
  const eip1559 = await mined(
    send(bob, {
      to: carol.address,
      value: 1234567890123456789n,
      type: 2,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      gasLimit: 21_000,
    }),
  );
  const mint = await mined(
    send(alice, { to: token, data: data("TestToken", "mint", [alice.address, 10n ** 24n]) }),
  );
  const erc20Transfer = await mined(
    send(alice, { to: token, data: data("TestToken", "transfer", [bob.address, 5n * 10n ** 18n]) }),
  );
  const approval = await mined(
    send(bob, { to: token, data: data("TestToken", "approve", [forwarderDeploy.address, 10n ** 18n]) }),
  );
  const nftMint = await mined(
    send(alice, { to: nftDeploy.address, data: data("TestNFT", "mint", [alice.address, 7n]) }),
  );
  const nftTransfer = await mined(
    send(alice, {
      to: nftDeploy.address,
      data: data("TestNFT", "transferFrom", [alice.address, dave.address, 7n]),
    }),
  );
  // Explicit gas: estimating a call that reverts would fail before sending.
  const failed = await mined(
    send(carol, {
      to: forwarderDeploy.address,
      value: 10n ** 15n,
      data: data("Forwarder", "fail", []),
      gasLimit: 100_000,
    }),
  );
  const internalValue = await mined(
    send(dave, {
      to: forwarderDeploy.address,
      value: 3n * 10n ** 17n,
      data: data("Forwarder", "forward", [alice.address]),
    }),
  );

  // One block with many transactions from many senders.
  await call("evm_setAutomine", [false]);
  const pending: Promise<TransactionResponse>[] = [];
  for (let i = 0; i < BIG_BLOCK_TRANSACTIONS; i++) {
    const from = wallets[i % wallets.length]!;
    const to = wallets[(i + 3) % wallets.length]!;
    pending.push(
      i % 2 === 0
        ? send(from, { to: to.address, value: BigInt(i + 1) * 10n ** 15n, gasLimit: 21_000 })
        : send(alice, {
            to: token,
            data: data("TestToken", "transfer", [to.address, BigInt(i) * 10n ** 16n]),
            gasLimit: 100_000,
          }),
    );
  }
  const sent = await Promise.all(pending);
  await call("evm_mine", []);
  await call("evm_setAutomine", [true]);
  for (const tx of sent) await waitForReceipt(url, tx.hash);
  const head = Number(await call<string>("eth_blockNumber"));
  const bigBlock = head;
  const count = Number(
    await call<string>("eth_getBlockTransactionCountByNumber", [`0x${bigBlock.toString(16)}`]),
  );
  if (count !== BIG_BLOCK_TRANSACTIONS) throw new Error(`big block holds ${count} transactions`);
  provider.destroy();

  return {
    url,
    accounts: wallets.map((w) => w.address.toLowerCase()),
    contracts: {
      token: token.toLowerCase(),
      nft: nftDeploy.address.toLowerCase(),
      forwarder: forwarderDeploy.address.toLowerCase(),
      oldToken: oldDeploy.address.toLowerCase(),
    },
    tx: {
      tokenDeploy: tokenDeploy.hash,
      legacy,
      eip1559,
      mint,
      erc20Transfer,
      approval,
      nftMint,
      nftTransfer,
      failed,
      internalValue,
    },
    bigBlock,
    head,
  };
}

/**
 * The engine's interface (src/engine/engineApi.ts) straight to a node, for tests that build a family's
 * parts by hand (a watch matcher reading a block's traces): every call goes to the node, nothing is cached.
 */
export function nodeEngine(url: string): Engine {
  const call = rpc(url);
  return {
    call: async (method, params) => ({ raw: JSON.stringify(await call(method, params)) }),
    readStored: () => false,
  };
}
