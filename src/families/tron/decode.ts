/**
 * A TRON block (`/wallet/getblock` with `detail`) and its transaction infos (`gettransactioninfobyblocknum`),
 * decoded into what the index keeps (sql/tron/009_tron_index.sql says each column's form):
 *  - `trx`: TransferContract's amount, a contract call's or creation's `call_value` (log_index -1), and the
 *    internal transactions' TRX (`callValueInfo` entries without a `tokenId`, not `rejected`; log_index
 *    INTERNAL_LOG_INDEX + k, after the transaction's logs);
 *  - `trc10`: TransferAssetContract (`asset_name` is the asset id's text, hex-encoded by the node);
 *  - TRC-20 (`Transfer` log, 3 topics, one word of data), TRC-721 (4 topics: the token id), and TRC-20
 *    approvals (`Approval`, 3 topics), at their block-wide log positions (java-tron's JSON-RPC logIndex);
 *  - a failed transaction (`contractRet` not SUCCESS) keeps its top-level row with `error` and moves nothing;
 *  - the block's sums for the daily figures and every address it touched.
 * Addresses are `41` + 40 hex digits, lower-case (log addresses and topics come without the 41); transaction
 * ids 64 hex digits, block ids `0x` + 64 (the chain follower's form); amounts bigints from the node's text (readExact keeps integers past 2^53 exact).
 */
import { TransferKind } from "../../transferKind";
import { tronHash } from "./blockRef";

export const TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
export const APPROVAL_TOPIC = "8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925";
/** A transaction's internal transfers sort after its logs (block-wide log positions stay far below). */
export const INTERNAL_LOG_INDEX = 1_000_000_000;
/** Mints come from it and burns go to it: not an account anyone uses. */
const ZERO_ADDRESS = `41${"0".repeat(40)}`;
const WORD = /^[0-9a-fA-F]{64}$/;
const HEX_ADDRESS = /^41[0-9a-f]{40}$/;

/** A JSON integer as the node wrote it: a number where exact, the digits as text where not (readExact). */
type Int = number | string | undefined;

export interface TronContractJson {
  type: string;
  parameter: { value: Record<string, unknown> };
}
export interface TronTxJson {
  txID: string;
  ret?: { contractRet?: string }[];
  raw_data: { contract: TronContractJson[] };
}
export interface TronBlockJson {
  blockID: string;
  block_header: {
    raw_data: { number?: Int; parentHash: string; timestamp: Int; witness_address: string };
  };
  transactions?: TronTxJson[];
}
interface LogJson {
  address: string;
  topics?: string[];
  data?: string;
}
interface InternalJson {
  caller_address?: string;
  transferTo_address?: string;
  callValueInfo?: { callValue?: Int; tokenId?: string }[];
  rejected?: boolean;
}
export interface TronInfoJson {
  id: string;
  fee?: Int;
  blockNumber?: Int;
  contract_address?: string;
  receipt?: {
    energy_fee?: Int;
    energy_usage_total?: Int;
    net_usage?: Int;
    net_fee?: Int;
    result?: string;
  };
  log?: LogJson[];
  result?: string;
  internal_transactions?: InternalJson[];
}

/**
 * JSON.parse, with every integer of 16 digits or more kept as its digits (a double holds 15 exactly): sun
 * amounts past 2^53 (9 billion TRX) and TRC-10 amounts up to 2^63 stay exact. Only a value after `:` or in
 * an array is such a run (hex and base58 texts are inside quotes, and a digit run there follows no `:`).
 */
export function readExact<T>(text: string): T {
  return JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, '$1"$2"')) as T;
}

const big = (value: Int): bigint => (value === undefined ? 0n : BigInt(value));
const lower = (hex: string) => hex.toLowerCase();
/** A 21-byte address of the node's hex form; undefined for anything else. */
const address41 = (value: unknown): string | undefined =>
  typeof value === "string" && HEX_ADDRESS.test(value.toLowerCase()) ? value.toLowerCase() : undefined;
/** The account in the last 20 bytes of a 32-byte topic. */
const topicAddress = (topic: string) => `41${topic.slice(24)}`.toLowerCase();

export interface TronTransferRow {
  transactionIndex: number;
  logIndex: number;
  transactionHash: string;
  kind: TransferKind;
  /** A TRC-20/721 contract; null for trx and trc10. */
  contract: string | null;
  /** A trc10 row's asset id. */
  assetId: string | null;
  from: string;
  to: string | null;
  value: bigint;
  fee: bigint;
  error: boolean;
}

export interface TronApprovalRow {
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

export interface TronTransactionRow {
  index: number;
  hash: string;
  contractType: string;
  owner: string | null;
  to: string | null;
  contractRet: string | null;
  fee: bigint;
  energyUsed: bigint;
  energyFee: bigint;
  netUsage: bigint;
  netFee: bigint;
  created: string | null;
}

/** The block's shares of its day's figures (sql/tron/009: blocks). */
export interface TronBlockSums {
  trxTransfers: number;
  trc20Transfers: number;
  trxMoved: bigint;
  totalFees: bigint;
  energyFee: bigint;
  netFee: bigint;
  energyUsed: bigint;
  bandwidthUsed: bigint;
}

export interface DecodedTronBlock {
  number: bigint;
  hash: string;
  parentHash: string;
  timestampMs: bigint;
  witness: string;
  transactions: TronTransactionRow[];
  transfers: TronTransferRow[];
  approvals: TronApprovalRow[];
  sums: TronBlockSums;
  /** Every address that sent or received a transaction or a transfer (but the zero address). */
  addresses: string[];
  /** TRC-20/721 contracts of its transfers and approvals (their metadata names the asset). */
  tokens: string[];
  /** TRC-10 asset ids of its trc10 rows (their precision and abbreviation). */
  assets: string[];
}

/** What a block's transactions add up to, gathered transaction by transaction. */
interface Gathered {
  transfers: TronTransferRow[];
  approvals: TronApprovalRow[];
  addresses: Set<string>;
  tokens: Set<string>;
  assets: Set<string>;
  sums: TronBlockSums;
  /** The block-wide position of the next log. */
  nextLog: number;
}

interface TxContext {
  index: number;
  hash: string;
  fee: bigint;
  error: boolean;
}

/** The asset id a TransferAssetContract names: its `asset_name`, the id's text in hex (visible: false). */
export function assetIdOf(assetName: unknown): string | undefined {
  if (typeof assetName !== "string" || !/^(?:[0-9a-fA-F]{2})+$/.test(assetName)) return undefined;
  return Buffer.from(assetName, "hex").toString("utf8");
}

function addRow(row: TronTransferRow, into: Gathered): void {
  into.transfers.push(row);
  into.addresses.add(row.from);
  if (row.to !== null) into.addresses.add(row.to);
  if (row.error) return;
  if (row.kind === TransferKind.trx) {
    into.sums.trxTransfers++;
    into.sums.trxMoved += row.value;
  } else if (row.kind === TransferKind.erc20) {
    into.sums.trc20Transfers++;
  }
}

/** A log's TRC-20/721 transfer or TRC-20 approval, if it is one. */
function decodeLog(log: LogJson, logIndex: number, tx: TxContext, into: Gathered): void {
  const topics = (log.topics ?? []).map(lower);
  const topic0 = topics[0];
  if (topic0 !== TRANSFER_TOPIC && topic0 !== APPROVAL_TOPIC) return;
  const contract = address41(`41${log.address}`);
  if (contract === undefined || !topics.every((t) => WORD.test(t))) return;
  const data = log.data ?? "";
  const erc20 = topics.length === 3 && WORD.test(data);
  if (topic0 === TRANSFER_TOPIC && (erc20 || topics.length === 4)) {
    addRow(
      {
        transactionIndex: tx.index,
        logIndex,
        transactionHash: tx.hash,
        kind: erc20 ? TransferKind.erc20 : TransferKind.erc721,
        contract,
        assetId: null,
        from: topicAddress(topics[1]!),
        to: topicAddress(topics[2]!),
        // A TRC-721 transfer's value is the token id, its fourth topic.
        value: BigInt(`0x${erc20 ? data : topics[3]!}`),
        fee: tx.fee,
        error: tx.error,
      },
      into,
    );
    into.tokens.add(contract);
  } else if (topic0 === APPROVAL_TOPIC && erc20) {
    into.approvals.push({
      transactionIndex: tx.index,
      logIndex,
      transactionHash: tx.hash,
      contract,
      owner: topicAddress(topics[1]!),
      spender: topicAddress(topics[2]!),
      value: BigInt(`0x${data}`),
      fee: tx.fee,
      error: tx.error,
    });
    into.tokens.add(contract);
  }
}

/** The transaction's own transfer (log_index -1), if its contract moves TRX or a TRC-10 asset. */
function topLevelRow(
  contract: TronContractJson,
  info: TronInfoJson,
  tx: TxContext,
): Omit<TronTransferRow, "transactionIndex" | "logIndex" | "transactionHash" | "fee" | "error"> | undefined {
  const v = contract.parameter.value;
  const from = address41(v.owner_address);
  if (from === undefined) return undefined;
  switch (contract.type) {
    case "TransferContract": {
      const to = address41(v.to_address);
      if (to === undefined) return undefined;
      return { kind: TransferKind.trx, contract: null, assetId: null, from, to, value: big(v.amount as Int) };
    }
    case "TransferAssetContract": {
      const to = address41(v.to_address);
      const assetId = assetIdOf(v.asset_name);
      if (to === undefined || assetId === undefined) return undefined;
      return { kind: TransferKind.trc10, contract: null, assetId, from, to, value: big(v.amount as Int) };
    }
    case "TriggerSmartContract": {
      const value = big(v.call_value as Int);
      const to = address41(v.contract_address);
      return value > 0n && to
        ? { kind: TransferKind.trx, contract: null, assetId: null, from, to, value }
        : undefined;
    }
    case "CreateSmartContract": {
      const created = (v.new_contract ?? {}) as Record<string, unknown>;
      const value = big(created.call_value as Int);
      // The new contract's address is the info's (a failed creation makes none).
      const to = tx.error ? null : (address41(info.contract_address) ?? null);
      return value > 0n
        ? { kind: TransferKind.trx, contract: null, assetId: null, from, to, value }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** The internal transactions' TRX, of a successful transaction: after its logs, in the node's order. */
function internalRows(info: TronInfoJson, tx: TxContext, into: Gathered): void {
  let k = 0;
  for (const internal of info.internal_transactions ?? []) {
    if (internal.rejected) continue;
    const from = address41(internal.caller_address);
    const to = address41(internal.transferTo_address);
    if (from === undefined || to === undefined) continue;
    for (const entry of internal.callValueInfo ?? []) {
      const value = big(entry.callValue);
      if (entry.tokenId !== undefined || value <= 0n) continue;
      addRow(
        {
          transactionIndex: tx.index,
          logIndex: INTERNAL_LOG_INDEX + k++,
          transactionHash: tx.hash,
          kind: TransferKind.trx,
          contract: null,
          assetId: null,
          from,
          to,
          value,
          fee: tx.fee,
          error: false,
        },
        into,
      );
    }
  }
}

/** The receiver a contract names, where it names one (TransferContract's to, a call's contract, ...). */
function receiverOf(v: Record<string, unknown>): string | null {
  return address41(v.to_address) ?? address41(v.contract_address) ?? address41(v.receiver_address) ?? null;
}

function decodeTransaction(
  tx: TronTxJson,
  info: TronInfoJson,
  index: number,
  into: Gathered,
): TronTransactionRow {
  const contract = tx.raw_data.contract[0];
  const contractRet = tx.ret?.[0]?.contractRet ?? null;
  const fee = big(info.fee);
  const receipt = info.receipt ?? {};
  const context: TxContext = {
    index,
    hash: lower(tx.txID),
    fee,
    error: (contractRet !== null && contractRet !== "SUCCESS") || info.result === "FAILED",
  };
  const value = contract?.parameter.value ?? {};
  const owner = address41(value.owner_address) ?? null;
  const to = receiverOf(value);
  if (owner !== null) into.addresses.add(owner);
  if (to !== null) into.addresses.add(to);
  const top = contract && topLevelRow(contract, info, context);
  if (top) {
    addRow(
      {
        ...top,
        transactionIndex: index,
        logIndex: -1,
        transactionHash: context.hash,
        fee,
        error: context.error,
      },
      into,
    );
    if (top.assetId !== null) into.assets.add(top.assetId);
  }
  // A failed transaction's logs are not kept by the node; its internal transfers were undone.
  for (const log of info.log ?? []) decodeLog(log, into.nextLog++, context, into);
  if (!context.error) internalRows(info, context, into);
  const row: TronTransactionRow = {
    index,
    hash: context.hash,
    contractType: contract?.type ?? "",
    owner,
    to,
    contractRet,
    fee,
    energyUsed: big(receipt.energy_usage_total),
    energyFee: big(receipt.energy_fee),
    netUsage: big(receipt.net_usage),
    netFee: big(receipt.net_fee),
    created: contract?.type === "CreateSmartContract" ? (address41(info.contract_address) ?? null) : null,
  };
  const s = into.sums;
  s.totalFees += fee;
  s.energyFee += row.energyFee;
  s.netFee += row.netFee;
  s.energyUsed += row.energyUsed;
  s.bandwidthUsed += row.netUsage;
  return row;
}

/** Throws when the infos are not those of the block's transactions, in order (a torn read: tronIndex.ts). */
export function infosMatch(block: TronBlockJson, infos: readonly TronInfoJson[]): string | undefined {
  const txs = block.transactions ?? [];
  if (infos.length !== txs.length) {
    return `block ${block.blockID}: ${txs.length} transactions but ${infos.length} transaction infos`;
  }
  for (let i = 0; i < txs.length; i++) {
    if (lower(infos[i]!.id) !== lower(txs[i]!.txID)) {
      return `block ${block.blockID}: transaction info ${i} is for ${infos[i]!.id}, not ${txs[i]!.txID}`;
    }
  }
  return undefined;
}

export function decodeTronBlock(block: TronBlockJson, infos: readonly TronInfoJson[]): DecodedTronBlock {
  const mismatch = infosMatch(block, infos);
  if (mismatch !== undefined) throw new Error(mismatch);
  const gathered: Gathered = {
    transfers: [],
    approvals: [],
    addresses: new Set(),
    tokens: new Set(),
    assets: new Set(),
    sums: {
      trxTransfers: 0,
      trc20Transfers: 0,
      trxMoved: 0n,
      totalFees: 0n,
      energyFee: 0n,
      netFee: 0n,
      energyUsed: 0n,
      bandwidthUsed: 0n,
    },
    nextLog: 0,
  };
  const txs = block.transactions ?? [];
  const transactions = txs.map((tx, i) => decodeTransaction(tx, infos[i]!, i, gathered));
  const raw = block.block_header.raw_data;
  return {
    // java-tron leaves block 0's number out, as every default.
    number: big(raw.number),
    // As the chain follower names blocks (blockRef.ts tronHash: 0x + the id), which the indexer compares.
    hash: tronHash(block.blockID),
    parentHash: tronHash(raw.parentHash),
    timestampMs: big(raw.timestamp),
    witness: address41(raw.witness_address) ?? ZERO_ADDRESS,
    transactions,
    transfers: gathered.transfers,
    approvals: gathered.approvals,
    sums: gathered.sums,
    addresses: [...gathered.addresses].filter((a) => a !== ZERO_ADDRESS),
    tokens: [...gathered.tokens],
    assets: [...gathered.assets],
  };
}
