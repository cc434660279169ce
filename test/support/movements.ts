/**
 * A chain with known movements at known times, for the indexer tests. Every transaction is sent from one of
 * anvil's unlocked accounts with eth_sendTransaction, and every block gets its timestamp set beforehand, so
 * the blocks fall on chosen UTC days (a leap day, exact midnights, a day without blocks).
 *
 * What each step moves is written down here, by hand; block numbers, indexes, fees and times are read from
 * the node's receipts and blocks. The expected transfers are that, not a second run of the indexer's
 * decoder.
 */
import { Contract, ContractFactory } from "ethers";
import { rpc, rpcBatch, waitForReceipt } from "./chain";
import { compileContracts } from "./solc";

/** 2024-02-28T22:00:00Z: the genesis block's time (anvil --timestamp). */
export const GENESIS_TIME = 1_709_157_600;
export const DAY = 86_400;
/** Midnight (UTC) of 2024-02-29, the leap day. */
export const LEAP_DAY = 1_709_164_800;

const ZERO = "0x0000000000000000000000000000000000000000";
export const BIG = {
  nearMax: 2n ** 256n - 2n,
  aboveU64: 2n ** 64n + 1n,
  exact: 1_234_567_890_123_456_789n,
  nftId: 2n ** 255n + 7n,
};

export interface ExpectedTransfer {
  blockNumber: number;
  blockTimestamp: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number | null;
  contractAddress: string | null;
  transferType: "trx" | "erc20transfer" | "erc721transfer";
  from: string;
  to: string | null;
  value: bigint;
  fee: bigint;
  transactionError: boolean;
  asset: string | null;
  decimals: number | null;
}

export interface ExpectedApproval {
  blockNumber: number;
  transactionHash: string;
  transactionIndex: number;
  fee: bigint;
  logIndex: number;
  contract: string;
  owner: string;
  spender: string;
  value: bigint;
}

/** Native value moved inside contract execution (check_v2's extra results). */
export interface ExpectedInternal {
  blockNumber: number;
  transactionHash: string;
  transactionIndex: number;
  from: string;
  to: string;
  value: bigint;
  fee: bigint;
}

export interface Movements {
  url: string;
  accounts: { alice: string; bob: string; carol: string; dave: string; erin: string };
  contracts: { token: string; nft: string; forwarder: string; oldToken: string };
  /** In the order of the index: block, transaction, log (the native row first). */
  transfers: ExpectedTransfer[];
  approvals: ExpectedApproval[];
  /** In execution order. */
  internal: ExpectedInternal[];
  head: number;
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`;
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace(".000Z", "Z");

/** The anvil arguments the movements expect: genesis at GENESIS_TIME. */
export const MOVEMENTS_ANVIL_ARGS = ["--timestamp", String(GENESIS_TIME)];

export async function makeMovements(url: string): Promise<Movements> {
  const call = rpc(url);
  const artifacts = await compileContracts();
  const [alice, bob, carol, dave, erin] = ((await call<string[]>("eth_accounts")) as string[]).map((a) =>
    a.toLowerCase(),
  ) as [string, string, string, string, string];
  const iface = (name: string) => new Contract(ZERO, artifacts[name]!.abi).interface;
  const data = (name: string, fn: string, args: unknown[]) => iface(name).encodeFunctionData(fn, args);

  const transfers: ExpectedTransfer[] = [];
  const approvals: ExpectedApproval[] = [];
  const internal: ExpectedInternal[] = [];
  const symbols = new Map<string, { asset: string | null; decimals: number | null }>();

  interface Move {
    type: ExpectedTransfer["transferType"];
    contract?: string;
    from: string;
    to: string | null;
    value: bigint;
    /** Which of the receipt's logs (for token transfers). */
    log?: number;
  }

  /** Records what a mined transaction moved, with its place and fee from the node. */
  async function record(
    hash: string,
    moves: Move[],
    approvalLogs: { log: number; owner: string; spender: string; value: bigint; contract: string }[] = [],
    inside: { from: string; to: string; value: bigint }[] = [],
  ) {
    const receipt = await waitForReceipt(url, hash);
    const block = await call("eth_getBlockByNumber", [receipt.blockNumber, false]);
    const fee = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
    for (const move of moves) {
      const meta =
        move.type === "trx"
          ? { asset: "ETH", decimals: 18 }
          : {
              asset: symbols.get(move.contract!)!.asset,
              decimals: move.type === "erc20transfer" ? symbols.get(move.contract!)!.decimals : null,
            };
      transfers.push({
        blockNumber: Number(receipt.blockNumber),
        blockTimestamp: iso(Number(block.timestamp)),
        transactionHash: hash,
        transactionIndex: Number(receipt.transactionIndex),
        logIndex: move.log === undefined ? null : Number(receipt.logs[move.log].logIndex),
        contractAddress: move.contract ?? null,
        transferType: move.type,
        from: move.from,
        to: move.to,
        value: move.value,
        fee,
        transactionError: receipt.status === "0x0",
        ...meta,
      });
    }
    for (const move of inside) {
      internal.push({
        blockNumber: Number(receipt.blockNumber),
        transactionHash: hash,
        transactionIndex: Number(receipt.transactionIndex),
        ...move,
        fee,
      });
    }
    for (const a of approvalLogs) {
      approvals.push({
        blockNumber: Number(receipt.blockNumber),
        transactionHash: hash,
        transactionIndex: Number(receipt.transactionIndex),
        fee,
        logIndex: Number(receipt.logs[a.log].logIndex),
        contract: a.contract,
        owner: a.owner,
        spender: a.spender,
        value: a.value,
      });
    }
    return receipt;
  }

  async function at(time: number) {
    await call("evm_setNextBlockTimestamp", [time]);
  }
  async function send(tx: Record<string, unknown>): Promise<string> {
    return call<string>("eth_sendTransaction", [{ gas: hex(1_000_000), ...tx }]);
  }
  async function deploy(time: number, name: string, args: unknown[] = []): Promise<string> {
    await at(time);
    const request = await new ContractFactory(
      artifacts[name]!.abi,
      artifacts[name]!.bytecode,
    ).getDeployTransaction(...args);
    const hash = await send({ from: alice, data: request.data, gas: hex(5_000_000) });
    const receipt = await waitForReceipt(url, hash);
    return (receipt.contractAddress as string).toLowerCase();
  }

  const day0 = LEAP_DAY - DAY;
  // Day 2024-02-28: contracts, and a native transfer one second before midnight.
  const token = await deploy(day0 + 79_210, "TestToken", ["Test Token", "TST", 18]);
  const nft = await deploy(day0 + 79_220, "TestNFT");
  const forwarder = await deploy(day0 + 79_230, "Forwarder");
  const oldToken = await deploy(day0 + 79_240, "Bytes32Token");
  symbols.set(token, { asset: "TST", decimals: 18 });
  symbols.set(nft, { asset: "TNFT", decimals: null });
  symbols.set(oldToken, { asset: "OLD", decimals: 9 });

  await at(LEAP_DAY - 1);
  await record(
    await send({
      from: alice,
      to: bob,
      value: hex(BIG.exact),
      gasPrice: hex(2_000_000_000),
      gas: hex(21_000),
    }),
    [{ type: "trx", from: alice, to: bob, value: BIG.exact }],
  );

  // 2024-02-29, from exactly midnight.
  await at(LEAP_DAY);
  await record(
    await send({ from: alice, to: token, data: data("TestToken", "mint", [alice, BIG.nearMax]) }),
    [{ type: "erc20transfer", contract: token, from: ZERO, to: alice, value: BIG.nearMax, log: 0 }],
  );
  await at(LEAP_DAY + 3_600);
  await record(
    await send({ from: alice, to: token, data: data("TestToken", "transfer", [bob, BIG.aboveU64]) }),
    [{ type: "erc20transfer", contract: token, from: alice, to: bob, value: BIG.aboveU64, log: 0 }],
  );
  await at(LEAP_DAY + 7_200);
  await record(
    await send({
      from: alice,
      to: token,
      data: data("TestToken", "transferMany", [
        [bob, dave],
        [5n, 7n],
      ]),
    }),
    [
      { type: "erc20transfer", contract: token, from: alice, to: bob, value: 5n, log: 0 },
      { type: "erc20transfer", contract: token, from: alice, to: dave, value: 7n, log: 1 },
    ],
  );
  await at(LEAP_DAY + 10_800);
  await record(
    await send({ from: bob, to: token, data: data("TestToken", "approve", [forwarder, 2n ** 70n]) }),
    [],
    [{ log: 0, owner: bob, spender: forwarder, value: 2n ** 70n, contract: token }],
  );
  // A token transfer made by a contract: carol calls the forwarder, which moves bob's tokens to erin.
  await at(LEAP_DAY + 14_400);
  await record(
    await send({ from: carol, to: forwarder, data: data("Forwarder", "pull", [token, bob, erin, 3n]) }),
    [{ type: "erc20transfer", contract: token, from: bob, to: erin, value: 3n, log: 0 }],
  );
  await at(LEAP_DAY + 18_000);
  await record(await send({ from: alice, to: nft, data: data("TestNFT", "mint", [alice, BIG.nftId]) }), [
    { type: "erc721transfer", contract: nft, from: ZERO, to: alice, value: BIG.nftId, log: 0 },
  ]);
  await at(LEAP_DAY + 21_600);
  await record(
    await send({ from: alice, to: nft, data: data("TestNFT", "transferFrom", [alice, dave, BIG.nftId]) }),
    [{ type: "erc721transfer", contract: nft, from: alice, to: dave, value: BIG.nftId, log: 0 }],
  );
  // A failed transaction that carries value: still a native transfer row, with transactionError.
  await at(LEAP_DAY + 25_200);
  await record(
    await send({
      from: carol,
      to: forwarder,
      value: hex(10n ** 15n),
      data: data("Forwarder", "fail", []),
      gas: hex(100_000),
    }),
    [{ type: "trx", from: carol, to: forwarder, value: 10n ** 15n }],
  );
  // Value forwarded inside the contract is not a top-level transfer: one row, dave to the forwarder.
  await at(LEAP_DAY + 28_800);
  await record(
    await send({
      from: dave,
      to: forwarder,
      value: hex(3n * 10n ** 17n),
      data: data("Forwarder", "forward", [alice]),
    }),
    [{ type: "trx", from: dave, to: forwarder, value: 3n * 10n ** 17n }],
    [],
    [{ from: forwarder, to: alice, value: 3n * 10n ** 17n }],
  );
  // Two internal transfers in one transaction.
  await at(LEAP_DAY + 30_600);
  await record(
    await send({
      from: carol,
      to: forwarder,
      value: hex(10n ** 16n + 1n),
      data: data("Forwarder", "split", [bob, dave]),
    }),
    [{ type: "trx", from: carol, to: forwarder, value: 10n ** 16n + 1n }],
    [],
    [
      { from: forwarder, to: bob, value: 5n * 10n ** 15n },
      { from: forwarder, to: dave, value: 5n * 10n ** 15n + 1n },
    ],
  );
  await at(LEAP_DAY + 32_400);
  await record(await send({ from: alice, to: oldToken, data: data("Bytes32Token", "mint", [erin, 1000n]) }), [
    { type: "erc20transfer", contract: oldToken, from: ZERO, to: erin, value: 1000n, log: 0 },
  ]);
  await at(LEAP_DAY + 36_000);
  await record(await send({ from: erin, to: erin, value: hex(1), gas: hex(21_000) }), [
    { type: "trx", from: erin, to: erin, value: 1n },
  ]);

  // One block with three transactions, the last second of the leap day.
  await call("evm_setAutomine", [false]);
  const many = [
    await send({
      from: bob,
      to: carol,
      value: hex(5),
      gas: hex(21_000),
      maxFeePerGas: hex(5_000_000_000),
      maxPriorityFeePerGas: hex(3_000_000_000),
    }),
    await send({
      from: alice,
      to: token,
      data: data("TestToken", "transfer", [carol, BIG.exact]),
      maxFeePerGas: hex(5_000_000_000),
      maxPriorityFeePerGas: hex(2_000_000_000),
    }),
    await send({
      from: dave,
      to: alice,
      value: hex(6),
      gas: hex(21_000),
      maxFeePerGas: hex(5_000_000_000),
      maxPriorityFeePerGas: hex(1_000_000_000),
    }),
  ];
  await at(LEAP_DAY + DAY - 1);
  await call("evm_mine", []);
  await call("evm_setAutomine", [true]);
  const inBlock: [string, Move[]][] = [
    [many[0]!, [{ type: "trx", from: bob, to: carol, value: 5n }]],
    [
      many[1]!,
      [{ type: "erc20transfer", contract: token, from: alice, to: carol, value: BIG.exact, log: 0 }],
    ],
    [many[2]!, [{ type: "trx", from: dave, to: alice, value: 6n }]],
  ];
  for (const [hash, moves] of inBlock) await record(hash, moves);

  // 2024-03-01; then no block on 2024-03-02; then 2024-03-03.
  await at(LEAP_DAY + DAY + 1);
  await record(await send({ from: erin, to: alice, value: hex(2), gas: hex(21_000) }), [
    { type: "trx", from: erin, to: alice, value: 2n },
  ]);
  await at(LEAP_DAY + DAY + 43_200);
  await record(await send({ from: alice, to: dave, value: hex(1), gas: hex(21_000) }), [
    { type: "trx", from: alice, to: dave, value: 1n },
  ]);
  await at(LEAP_DAY + 3 * DAY);
  await record(await send({ from: bob, to: token, data: data("TestToken", "transfer", [alice, 1n]) }), [
    { type: "erc20transfer", contract: token, from: bob, to: alice, value: 1n, log: 0 },
  ]);

  transfers.sort(
    (a, b) =>
      a.blockNumber - b.blockNumber ||
      a.transactionIndex - b.transactionIndex ||
      (a.logIndex ?? -1) - (b.logIndex ?? -1),
  );
  return {
    url,
    accounts: { alice, bob, carol, dave, erin },
    contracts: { token, nft, forwarder, oldToken },
    transfers,
    approvals,
    internal,
    head: Number(await call<string>("eth_blockNumber")),
  };
}

/** A transfer as the service writes it in JSON (amounts as exact digits). */
export function transferJson(t: ExpectedTransfer): string {
  return JSON.stringify({ ...t, value: "@V", fee: "@F" })
    .replace('"@V"', t.value.toString())
    .replace('"@F"', t.fee.toString());
}

/**
 * Mines `blocks` blocks, each holding one transferMany of token transfers (`transfersPerBlock` of them to
 * distinct fixed recipients, or to `recipients(block)`) and, every other block, a native transfer. Returns
 * the token, the new head and how many transfers that made.
 */
export async function fillTokenBlocks(
  url: string,
  options: {
    blocks: number;
    transfersPerBlock?: number;
    recipients?: (block: number) => string[];
    token?: string;
  },
): Promise<{ token: string; head: number; transfers: number }> {
  const call = rpc(url);
  const artifacts = await compileContracts();
  const [alice, bob] = (await call<string[]>("eth_accounts")).map((a) => a.toLowerCase()) as [string, string];
  const iface = new Contract(ZERO, artifacts.TestToken!.abi).interface;
  let token = options.token;
  let transfers = 0;
  if (!token) {
    const request = await new ContractFactory(
      artifacts.TestToken!.abi,
      artifacts.TestToken!.bytecode,
    ).getDeployTransaction("Bulk Token", "BLK", 6);
    const hash = await call<string>("eth_sendTransaction", [
      { from: alice, data: request.data, gas: hex(5_000_000) },
    ]);
    token = ((await waitForReceipt(url, hash)).contractAddress as string).toLowerCase();
    const mint = iface.encodeFunctionData("mint", [alice, 2n ** 200n]);
    await waitForReceipt(
      url,
      await call<string>("eth_sendTransaction", [{ from: alice, to: token, data: mint }]),
    );
    transfers++;
  }
  const fixed = Array.from(
    { length: options.transfersPerBlock ?? 0 },
    (_, i) => `0x${(0x100000n + BigInt(i)).toString(16).padStart(40, "0")}`,
  );
  let last = "";
  await call("evm_setAutomine", [false]);
  try {
    for (let i = 0; i < options.blocks; i++) {
      const to = options.recipients?.(i) ?? fixed;
      const data = iface.encodeFunctionData("transferMany", [to, to.map((_, k) => BigInt(k + 1))]);
      const batch = [
        {
          method: "eth_sendTransaction",
          params: [{ from: alice, to: token, data, gas: hex(40_000 * to.length + 100_000) }],
        },
        ...(i % 2 === 0
          ? [
              {
                method: "eth_sendTransaction",
                params: [{ from: bob, to: alice, value: hex(i + 1), gas: hex(21_000) }],
              },
            ]
          : []),
        { method: "evm_mine", params: [] },
      ];
      last = (await rpcBatch<string>(url, batch))[0]!;
      transfers += to.length + (i % 2 === 0 ? 1 : 0);
    }
  } finally {
    await call("evm_setAutomine", [true]);
  }
  if (last) {
    const receipt = await waitForReceipt(url, last);
    if (receipt.status !== "0x1") throw new Error("a transferMany failed");
  }
  return { token, head: Number(await call<string>("eth_blockNumber")), transfers };
}
