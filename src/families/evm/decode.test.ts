/**
 * decodeBlock on blocks and receipts recorded from a real anvil (fixtures/anvilChain.json: recorded data,
 * see fixtures/anvilChain.ts), with exact rows: native transfers (a failed one, a contract creation with
 * value), ERC-20 and ERC-721 transfers, approvals, fees (blob gas; an L2's l1Fee) and the block's aggregates.
 * The amounts are those the recording sent (test/support/recordEvmFixtures.ts, test/support/chain.ts); a fee
 * is the receipt's gasUsed x effectiveGasPrice written out, or what the transaction fixed.
 */
import { describe, expect, test } from "bun:test";
import { TransferKind } from "../../transferKind";
import { decodeBlock, type RawReceipt, transactionFee } from "./decode";
import { blockHolding, type RecordedBlock, readRecordedChain } from "./fixtures/anvilChain";

const chain = readRecordedChain();
const tx = chain.transactions;
const [alice, bob, carol, dave, erin] = chain.accounts as [string, string, string, string, string];
const { token, nft, forwarder } = chain.contracts;
const ZERO = "0x0000000000000000000000000000000000000000";
const GWEI = 10n ** 9n;
const ETHER = 10n ** 18n;

const decoded = (hash: string) => {
  const { block, receipts } = blockHolding(chain, hash);
  return decodeBlock(block, receipts);
};
const native = (hash: string, from: string, to: string, value: bigint, fee: bigint, error = false) => ({
  transactionIndex: 0,
  logIndex: -1,
  transactionHash: hash,
  kind: TransferKind.trx,
  contract: null,
  from,
  to,
  value,
  fee,
  error,
});

describe("native transfers", () => {
  test("a legacy transaction: its gas price fixed the fee", () => {
    expect(decoded(tx.legacy).transfers).toEqual([native(tx.legacy, alice, bob, ETHER, 21_000n * 2n * GWEI)]);
  });

  test("an EIP-1559 transaction pays the base fee and its priority fee", () => {
    const { block } = blockHolding(chain, tx.eip1559);
    const baseFee = BigInt(block.baseFeePerGas!);
    expect(baseFee).toBe(0x1f0d8d75n);
    expect(decoded(tx.eip1559).transfers).toEqual([
      native(tx.eip1559, bob, carol, 1_234_567_890_123_456_789n, 21_000n * (baseFee + 1n * GWEI)),
    ]);
  });

  test("a failed transaction's value is a transfer marked failed, with the fee it paid", () => {
    expect(decoded(tx.failed).transfers).toEqual([
      native(tx.failed, carol, forwarder, 10n ** 15n, 0x5347n * 0x49951098n, true),
    ]);
  });

  test("a creation with value goes to the contract made; one without moves nothing", () => {
    const created = blockHolding(chain, tx.createAndDestroy).receipts[0]!.contractAddress!;
    expect(created).toBe("0x78e6b135b2a7f63b281c80e2ff639eed32e2a81b");
    expect(decoded(tx.createAndDestroy).transfers).toEqual([
      native(tx.createAndDestroy, erin, created, 10n, 0x16b90n * 0x41f4b05bn),
    ]);
    const deploy = decoded(tx.tokenDeploy);
    expect(deploy.transfers).toEqual([]);
    expect(deploy.addresses).toEqual([alice, token]);
  });

  test("a log that is neither a transfer nor an approval adds no row", () => {
    const block = decoded(tx.internalValue);
    expect(block.transfers).toEqual([
      native(tx.internalValue, dave, forwarder, 3n * 10n ** 17n, 0x7f5bn * 0x47d66a83n),
    ]);
    expect(block.approvals).toEqual([]);
    expect(block.tokens).toEqual([]);
  });
});

describe("token transfers and approvals", () => {
  const tokenRow = (hash: string, kind: TransferKind, contract: string, from: string, to: string) => ({
    transactionIndex: 0,
    logIndex: 0,
    transactionHash: hash,
    kind,
    contract,
    from,
    to,
    error: false,
  });

  test("ERC-20: a mint comes from the zero address, which is no active address; a transfer", () => {
    const mint = decoded(tx.mint);
    expect(mint.transfers).toEqual([
      {
        ...tokenRow(tx.mint, TransferKind.erc20, token, ZERO, alice),
        value: 10n ** 24n,
        fee: 0x10ac4n * 0x56c809ebn,
      },
    ]);
    expect(mint.addresses).toEqual([alice, token]);
    expect(mint.tokens).toEqual([token]);
    expect(decoded(tx.erc20Transfer).transfers).toEqual([
      {
        ...tokenRow(tx.erc20Transfer, TransferKind.erc20, token, alice, bob),
        value: 5n * ETHER,
        fee: 0xc980n * 0x53665787n,
      },
    ]);
  });

  test("ERC-721: the token id is the value", () => {
    expect(decoded(tx.nftMint).transfers).toEqual([
      {
        ...tokenRow(tx.nftMint, TransferKind.erc721, nft, ZERO, alice),
        value: 7n,
        fee: 0x10bc5n * 0x4dd6f9f4n,
      },
    ]);
    const transfer = decoded(tx.nftTransfer);
    expect(transfer.transfers).toEqual([
      {
        ...tokenRow(tx.nftTransfer, TransferKind.erc721, nft, alice, dave),
        value: 7n,
        fee: 0xd57cn * 0x4b921ea0n,
      },
    ]);
    expect(transfer.addresses).toEqual([alice, nft, dave]);
    expect(transfer.tokens).toEqual([nft]);
  });

  test("an ERC-20 approval is an approval row, not a transfer; its token is named", () => {
    const block = decoded(tx.approval);
    expect(block.transfers).toEqual([]);
    expect(block.approvals).toEqual([
      {
        transactionIndex: 0,
        logIndex: 0,
        transactionHash: tx.approval,
        contract: token,
        owner: bob,
        spender: forwarder,
        value: ETHER,
        fee: 0xb447n * 0x506f8430n,
        error: false,
      },
    ]);
    expect(block.tokens).toEqual([token]);
    expect(block.addresses).toEqual([bob, token]);
  });
});

describe("fees", () => {
  test("a blob transaction pays its blob gas too, and the blob gas is burnt", () => {
    const { block, receipts } = blockHolding(chain, tx.blob);
    expect([receipts[0]!.blobGasUsed, receipts[0]!.blobGasPrice]).toEqual(["0x20000", "0x1"]);
    const decodedBlock = decodeBlock(block, receipts);
    const fee = 21_000n * 0x45136601n + 0x20000n * 1n;
    expect(decodedBlock.transfers).toEqual([native(tx.blob, erin, bob, 1n, fee)]);
    expect(decodedBlock.totalFees).toBe(fee);
    expect(decodedBlock.burntFees).toBe(0x9789c01n * 21_000n + 0x20000n);
    expect(decodedBlock.gasPriceSum).toBe(0x45136601n);
  });

  test("an L2's l1Fee is added to the fee (anvil writes none: the recorded receipt with an OP-stack l1Fee)", () => {
    const { block, receipts } = blockHolding(chain, tx.legacy);
    const withL1Fee: RawReceipt = { ...receipts[0]!, l1Fee: "0x2540be400" };
    expect(transactionFee(withL1Fee, block.transactions[0]!)).toEqual({
      fee: 21_000n * 2n * GWEI + 10_000_000_000n,
      gasPrice: 2n * GWEI,
    });
    expect(decodeBlock(block, [withL1Fee]).totalFees).toBe(21_000n * 2n * GWEI + 10_000_000_000n);
  });

  test("without an effectiveGasPrice (old nodes), the transaction's gasPrice", () => {
    const { block, receipts } = blockHolding(chain, tx.legacy);
    const { effectiveGasPrice: _, ...old } = receipts[0]!;
    expect(transactionFee(old, block.transactions[0]!)).toEqual({
      fee: 21_000n * 2n * GWEI,
      gasPrice: 2n * GWEI,
    });
  });
});

describe("the block's aggregates", () => {
  test("a block of one transaction, every member", () => {
    const { block, receipts } = blockHolding(chain, tx.eip1559);
    const previous = chain.blocks[String(Number(block.number) - 1)]!;
    const price = 0x1f0d8d75n + 1n * GWEI;
    expect(decodeBlock(block, receipts)).toEqual({
      number: 6n,
      hash: block.hash,
      parentHash: previous.block.hash,
      timestamp: BigInt(block.timestamp),
      miner: ZERO,
      gasUsed: 21_000n,
      gasLimit: 30_000_000n,
      baseFee: 0x1f0d8d75n,
      transactionCount: 1,
      uncleCount: 0,
      totalFees: 21_000n * price,
      burntFees: 21_000n * 0x1f0d8d75n,
      gasPriceSum: price,
      transfers: [native(tx.eip1559, bob, carol, 1_234_567_890_123_456_789n, 21_000n * price)],
      approvals: [],
      addresses: [bob, carol],
      tokens: [],
    });
  });

  test("the block of 40 transactions: one transfer each, in order, and the sums of all", () => {
    const recorded: RecordedBlock = chain.blocks[String(chain.bigBlock)]!;
    const block = decodeBlock(recorded.block, recorded.receipts);
    // test/support/chain.ts: transaction i sends (i + 1) finney from account i % 10 to account (i + 3) % 10
    // when i is even, else i x 10^16 tokens from alice to account (i + 3) % 10.
    expect(
      block.transfers.map((t) => [t.transactionIndex, t.logIndex, t.kind, t.from, t.to, t.value]),
    ).toEqual(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? [
              i,
              -1,
              TransferKind.trx,
              chain.accounts[i % 10]!,
              chain.accounts[(i + 3) % 10]!,
              BigInt(i + 1) * 10n ** 15n,
            ]
          : [
              i,
              (i - 1) / 2,
              TransferKind.erc20,
              alice,
              chain.accounts[(i + 3) % 10]!,
              BigInt(i) * 10n ** 16n,
            ],
      ),
    );
    expect(block.transactionCount).toBe(40);
    expect(block.totalFees).toBe(block.transfers.reduce((sum, t) => sum + t.fee, 0n));
    expect(block.totalFees).toBe(1_353_731_146_955_520n);
    expect(block.burntFees).toBe(BigInt(recorded.block.baseFeePerGas!) * 0x1182c0n);
    expect(block.gasPriceSum).toBe(
      recorded.receipts.reduce((sum, r) => sum + BigInt(r.effectiveGasPrice!), 0n),
    );
    expect(new Set(block.addresses)).toEqual(new Set([...chain.accounts, token]));
    expect(block.addresses).toHaveLength(11);
    expect(block.tokens).toEqual([token]);
  });

  test("receipts that are not the block's are refused", () => {
    const { block, receipts } = blockHolding(chain, tx.legacy);
    expect(() => decodeBlock(block, [])).toThrow("1 transactions but 0 receipts");
    const other = blockHolding(chain, tx.eip1559).receipts;
    expect(() => decodeBlock(block, other)).toThrow(`receipt 0 is for ${tx.eip1559}, not ${tx.legacy}`);
    expect(decodeBlock(block, receipts).number).toBe(5n);
  });
});
