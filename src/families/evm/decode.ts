/**
 * A block and its receipts, decoded into what the index keeps (docs/interface.md §4.6):
 *  - a native transfer (`trx`) for every transaction that carries value, failed ones included;
 *  - ERC-20 transfers (a `Transfer` log with 3 topics and 32 bytes of data) and ERC-721 transfers (4 topics:
 *    the token id is the value);
 *  - ERC-20 approvals (an `Approval` log with 3 topics and 32 bytes of data);
 *  - the block's aggregates for the daily figures, and every address it touched.
 * Amounts stay bigints from end to end.
 */
import { TransferKind } from "../../transferKind";
import { parseQuantity } from "./blockRef";

export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
export const APPROVAL_TOPIC = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";

export interface TransferRow {
  transactionIndex: number;
  /** -1 for the transaction's native transfer. */
  logIndex: number;
  transactionHash: string;
  kind: TransferKind;
  contract: string | null;
  from: string;
  to: string | null;
  value: bigint;
  fee: bigint;
  error: boolean;
}

export interface ApprovalRow {
  transactionIndex: number;
  logIndex: number;
  transactionHash: string;
  contract: string;
  owner: string;
  spender: string;
  value: bigint;
  fee: bigint;
  error: boolean;
}

export interface DecodedBlock {
  number: bigint;
  hash: string;
  parentHash: string;
  timestamp: bigint;
  miner: string;
  gasUsed: bigint;
  gasLimit: bigint;
  baseFee: bigint | null;
  transactionCount: number;
  uncleCount: number;
  totalFees: bigint;
  burntFees: bigint;
  gasPriceSum: bigint;
  transfers: TransferRow[];
  approvals: ApprovalRow[];
  /** Every address that sent or received a transaction or a transfer (but the zero address). */
  addresses: string[];
  /** Contracts seen in token transfers and approvals (their metadata names the asset). */
  tokens: string[];
}

export interface RawTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  gasPrice?: string;
  transactionIndex: string;
}
interface RawLog {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
}
export interface RawReceipt {
  /** The block it was read from: every receipt of a block read must name that block (evmIndex.ts). */
  blockHash?: string;
  transactionHash: string;
  transactionIndex: string;
  status?: string;
  gasUsed: string;
  effectiveGasPrice?: string;
  contractAddress?: string | null;
  blobGasUsed?: string;
  blobGasPrice?: string;
  l1Fee?: string;
  logs: RawLog[];
}
export interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  miner: string;
  gasUsed: string;
  gasLimit: string;
  baseFeePerGas?: string | null;
  uncles?: string[];
  transactions: RawTx[];
}

const q = (hex: string | undefined | null): bigint => (hex ? parseQuantity(hex) : 0n);
/** Mints come from it and burns go to it: a marker, not an account anyone uses. */
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
/** The address in the last 20 bytes of a 32-byte topic. */
const topicAddress = (topic: string) => `0x${topic.slice(26)}`.toLowerCase();
const WORD = /^0x[0-9a-fA-F]{64}$/;

/**
 * A transaction's fee (docs/interface.md §4.6): gasUsed x effectiveGasPrice (the transaction's gasPrice where the
 * receipt has none), plus blobGasUsed x blobGasPrice, plus an L2's l1Fee.
 */
export function transactionFee(receipt: RawReceipt, tx: RawTx): { fee: bigint; gasPrice: bigint } {
  const gasPrice = q(receipt.effectiveGasPrice ?? tx.gasPrice);
  const fee =
    q(receipt.gasUsed) * gasPrice + q(receipt.blobGasUsed) * q(receipt.blobGasPrice) + q(receipt.l1Fee);
  return { fee, gasPrice };
}

/** What a block's transactions add up to, gathered transaction by transaction. */
interface Gathered {
  transfers: TransferRow[];
  approvals: ApprovalRow[];
  addresses: Set<string>;
  tokens: Set<string>;
  totalFees: bigint;
  gasPriceSum: bigint;
  blobBurnt: bigint;
}

/** A transaction of the block, with what its logs' rows repeat. */
interface TxContext {
  index: number;
  hash: string;
  fee: bigint;
  error: boolean;
}

/** A log's transfer (ERC-20: 3 topics and a 32-byte word; ERC-721: 4 topics) or approval, if it is one. */
function decodeLog(log: RawLog, tx: TxContext, into: Gathered): void {
  const topic0 = log.topics[0]?.toLowerCase();
  if (topic0 !== TRANSFER_TOPIC && topic0 !== APPROVAL_TOPIC) return;
  const contract = log.address.toLowerCase();
  const logIndex = Number(q(log.logIndex));
  const base = {
    transactionIndex: tx.index,
    logIndex,
    transactionHash: tx.hash,
    contract,
    fee: tx.fee,
    error: tx.error,
  };
  const erc20 = log.topics.length === 3 && WORD.test(log.data);
  if (topic0 === TRANSFER_TOPIC && (erc20 || log.topics.length === 4)) {
    const row: TransferRow = {
      ...base,
      kind: erc20 ? TransferKind.erc20 : TransferKind.erc721,
      from: topicAddress(log.topics[1]!),
      to: topicAddress(log.topics[2]!),
      // An ERC-721 transfer's value is the token id, its fourth topic.
      value: BigInt(erc20 ? log.data : log.topics[3]!),
    };
    into.transfers.push(row);
    into.addresses.add(row.from).add(row.to!);
    into.tokens.add(contract);
  } else if (topic0 === APPROVAL_TOPIC && erc20) {
    into.approvals.push({
      ...base,
      owner: topicAddress(log.topics[1]!),
      spender: topicAddress(log.topics[2]!),
      value: BigInt(log.data),
    });
    into.tokens.add(contract);
  }
}

/** A transaction and its receipt: its fee, its native transfer (value > 0, failed ones too), its logs. */
function decodeTransaction(tx: RawTx, receipt: RawReceipt, index: number, into: Gathered): void {
  const { fee, gasPrice } = transactionFee(receipt, tx);
  into.totalFees += fee;
  into.gasPriceSum += gasPrice;
  into.blobBurnt += q(receipt.blobGasUsed) * q(receipt.blobGasPrice);
  // Receipts from before Byzantium have no status: those transactions did not fail in a way it shows.
  const context: TxContext = { index, hash: tx.hash, fee, error: receipt.status === "0x0" };
  const from = tx.from.toLowerCase();
  const to = (tx.to ?? receipt.contractAddress ?? null)?.toLowerCase() ?? null;
  into.addresses.add(from);
  if (to) into.addresses.add(to);
  const value = q(tx.value);
  if (value > 0n) {
    into.transfers.push({
      transactionIndex: index,
      logIndex: -1,
      transactionHash: tx.hash,
      kind: TransferKind.trx,
      contract: null,
      from,
      to,
      value,
      fee,
      error: context.error,
    });
  }
  for (const log of receipt.logs) decodeLog(log, context, into);
}

export function decodeBlock(block: RawBlock, receipts: RawReceipt[]): DecodedBlock {
  if (receipts.length !== block.transactions.length) {
    throw new Error(
      `block ${block.number}: ${block.transactions.length} transactions but ${receipts.length} receipts`,
    );
  }
  const gathered: Gathered = {
    transfers: [],
    approvals: [],
    addresses: new Set(),
    tokens: new Set(),
    totalFees: 0n,
    gasPriceSum: 0n,
    blobBurnt: 0n,
  };
  for (let i = 0; i < block.transactions.length; i++) {
    const tx = block.transactions[i]!;
    const receipt = receipts[i]!;
    if (receipt.transactionHash !== tx.hash) {
      throw new Error(
        `block ${block.number}: receipt ${i} is for ${receipt.transactionHash}, not ${tx.hash}`,
      );
    }
    decodeTransaction(tx, receipt, i, gathered);
  }
  const baseFee = block.baseFeePerGas ? parseQuantity(block.baseFeePerGas) : null;
  const gasUsed = parseQuantity(block.gasUsed);
  return {
    number: parseQuantity(block.number),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    timestamp: parseQuantity(block.timestamp),
    miner: block.miner.toLowerCase(),
    gasUsed,
    gasLimit: parseQuantity(block.gasLimit),
    baseFee,
    transactionCount: block.transactions.length,
    uncleCount: block.uncles?.length ?? 0,
    totalFees: gathered.totalFees,
    burntFees: (baseFee ?? 0n) * gasUsed + gathered.blobBurnt,
    gasPriceSum: gathered.gasPriceSum,
    transfers: gathered.transfers,
    approvals: gathered.approvals,
    addresses: [...gathered.addresses].filter((a) => a !== ZERO_ADDRESS),
    tokens: [...gathered.tokens],
  };
}
