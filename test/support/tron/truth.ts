/**
 * Ground truth for TRON part 2's tests, computed from what the stand-in built and ran (each mined
 * transaction's raw contract and its `outcome`: fee, energy, bandwidth, movements; test/support/tron/scenario.ts),
 * never by decoding the stand-in's HTTP or JSON-RPC answers the way the service does. Every function reads
 * the canonical chain as it is when called (after a reorg, the new branch).
 *
 * Forms (the interface's, docs/interface.md §4.6, with design §14's TRON rules):
 * - addresses base58 `T...`; amounts in transfer rows decimal text; `fee` the transaction's fee in sun (a
 *   number, on every row of the transaction); times RFC 3339 in whole seconds (the block's ms floored);
 * - a failed transaction (`contractRet` not SUCCESS) moves nothing: its only row is a `trx` row of its
 *   `call_value` when that is above 0, with `transactionError: true`.
 */
import { hexToBase58 } from "./codec";
import {
  GENESIS_TRC10,
  GENESIS_TRC20,
  GENESIS_TRX,
  type StoredBlock,
  type StoredTx,
  TRC10,
  TRC20,
  TRC721,
  type TronScenario,
} from "./scenario";

export type TransferType = "trx" | "erc20transfer" | "erc721transfer" | "trc10";

/**
 * One transfer row. `trx`: TransferContract, a call's `call_value` (sender → contract), internal TRX
 * transfers not `rejected` (contract → recipient); asset `TRX`, decimals 6, contractAddress null.
 * `erc20transfer`: a Transfer log with 3 topics; contractAddress the token (base58), asset its symbol,
 * decimals its decimals. `erc721transfer`: a Transfer log with 4 topics; value the token id, decimals null.
 * `trc10`: TransferContract's TRC-10 sibling, TransferAssetContract; contractAddress the asset id (decimal
 * text), asset its abbreviation, decimals its precision. Internal TRC-10 transfers (`tokenId`) are no row
 * (design §14 counts TRC-10 from TransferAssetContract only): `internalTrc10` lists them.
 */
export interface TransferRow {
  transferType: TransferType;
  blockNumber: number;
  transactionIndex: number;
  /** 64 hex digits, no 0x */
  transactionHash: string;
  blockTimestamp: string;
  /** the log's index in the block (every log of the block's transactions counted in order); null for TRX/TRC-10 */
  logIndex: number | null;
  /** the internal transaction's index in its transaction's `internal_transactions`; null otherwise */
  internalIndex: number | null;
  contractAddress: string | null;
  from: string;
  to: string;
  value: string;
  asset: string;
  decimals: number | null;
  fee: number;
  transactionError: boolean;
}

/** A TRC-20 Approval log (3 topics, data = value): owner and spender base58, value decimal text. */
export interface ApprovalRow {
  blockNumber: number;
  transactionIndex: number;
  transactionHash: string;
  blockTimestamp: string;
  logIndex: number;
  contractAddress: string;
  owner: string;
  spender: string;
  value: string;
  fee: number;
}

/**
 * A UTC day's figures over the blocks whose time falls in it (block 0 included): counts as numbers; `trxMoved`
 * (the `trx` rows' values that moved, sun) and `feesBurned` (every transaction's fee, sun) as bigint;
 * `energyUsed` the receipts' `energy_usage_total`, `bandwidthUsed` their `net_usage` (bytes drawn from free or
 * staked bandwidth; bandwidth paid in TRX is in the fees). `activeAddresses`: distinct senders and receivers
 * of the day's transactions (owner; to_address, the called contract, or the created one) and of its transfer
 * rows, the zero address left out.
 */
export interface DayFigures {
  date: string;
  fromBlock: number;
  toBlock: number;
  blockCount: number;
  transactionCount: number;
  transferCount: number;
  trxTransferCount: number;
  trc20TransferCount: number;
  activeAddresses: number;
  trxMoved: bigint;
  feesBurned: bigint;
  energyUsed: number;
  bandwidthUsed: number;
}

/** An address's holdings: TRX in sun, TRC-10 by asset id, TRC-20 by contract (base58); zero holdings left out. */
export interface Holdings {
  trx: bigint;
  trc10: Record<string, bigint>;
  trc20: Record<string, bigint>;
}

/** An internal TRC-10 transfer that moved (not `rejected`): no row, but it changes balances. */
export interface InternalTokenTransfer {
  blockNumber: number;
  transactionHash: string;
  internalIndex: number;
  asset: string;
  from: string;
  to: string;
  value: string;
}

const ZERO_ADDRESS = `41${"0".repeat(40)}`;
const b58 = hexToBase58;
const timeOf = (block: StoredBlock) =>
  new Date(Math.floor(block.header.raw_data.timestamp / 1000) * 1000).toISOString().replace(".000Z", "Z");
const dateOf = (block: StoredBlock) => new Date(block.header.raw_data.timestamp).toISOString().slice(0, 10);
const ownerOf = (tx: StoredTx) => Buffer.from(tx.raw.contract.value.owner_address).toString("hex");

/** The first receiver a transaction names: to_address, the called contract, or the contract it creates. */
function receiverOf(tx: StoredTx): string {
  const c = tx.raw.contract;
  if (c.type === "TriggerSmartContract") return Buffer.from(c.value.contract_address).toString("hex");
  if (c.type === "CreateSmartContract") return tx.outcome.movements[0]?.to ?? ZERO_ADDRESS;
  return Buffer.from(c.value.to_address).toString("hex");
}

function blocksOf(chain: TronScenario, fromBlock = 0, toBlock = chain.headNumber()): StoredBlock[] {
  return chain.blocks.filter((b) => b.number >= fromBlock && b.number <= toBlock);
}

/** The transfer rows of blocks `fromBlock` to `toBlock` (default: the whole chain), in index order. */
export function transfers(chain: TronScenario, fromBlock = 0, toBlock?: number): TransferRow[] {
  return blocksOf(chain, fromBlock, toBlock).flatMap((block) => blockTransfers(block).rows);
}

/** The Approval logs of blocks `fromBlock` to `toBlock`, in order. */
export function approvals(chain: TronScenario, fromBlock = 0, toBlock?: number): ApprovalRow[] {
  return blocksOf(chain, fromBlock, toBlock).flatMap((block) => blockTransfers(block).approvals);
}

/** Transfer rows by block number, every block of the chain present (an empty block has []). */
export function transfersByBlock(chain: TronScenario): Map<number, TransferRow[]> {
  return new Map(chain.blocks.map((b) => [b.number, blockTransfers(b).rows]));
}

function blockTransfers(block: StoredBlock): { rows: TransferRow[]; approvals: ApprovalRow[] } {
  const rows: TransferRow[] = [];
  const approvalRows: ApprovalRow[] = [];
  let logIndex = 0;
  block.txs.forEach((tx, transactionIndex) => {
    const base = {
      blockNumber: block.number,
      transactionIndex,
      transactionHash: tx.txID,
      blockTimestamp: timeOf(block),
      fee: Number(tx.outcome.fee),
    };
    const trx = (from: string, to: string, value: bigint, internalIndex: number | null, error: boolean) =>
      rows.push({
        transferType: "trx",
        ...base,
        logIndex: null,
        internalIndex,
        contractAddress: null,
        from: b58(from),
        to: b58(to),
        value: value.toString(),
        asset: "TRX",
        decimals: 6,
        transactionError: error,
      });
    const c = tx.raw.contract;
    if (tx.contractRet !== "SUCCESS") {
      const callValue = c.type === "TriggerSmartContract" ? (c.value.call_value ?? 0n) : 0n;
      if (callValue > 0n) trx(ownerOf(tx), receiverOf(tx), callValue, null, true);
      return;
    }
    for (const m of tx.outcome.movements) {
      if (m.via === "transfer" && m.kind === "trx") trx(m.from, m.to, m.amount, null, false);
      else if (m.via === "call_value") trx(m.from, m.to, m.amount, null, false);
      else if (m.via === "internal" && m.kind === "trx" && !m.rejected)
        trx(m.from, m.to, m.amount, m.internalIndex, false);
      else if (m.via === "transfer" && m.kind === "trc10") {
        rows.push({
          transferType: "trc10",
          ...base,
          logIndex: null,
          internalIndex: null,
          contractAddress: m.asset,
          from: b58(m.from),
          to: b58(m.to),
          value: m.amount.toString(),
          asset: m.asset === TRC10.id ? TRC10.abbr : m.asset,
          decimals: m.asset === TRC10.id ? TRC10.precision : null,
          transactionError: false,
        });
      } else if (m.via === "log") {
        const index = logIndex++;
        if (m.kind === "approval") {
          approvalRows.push({
            ...base,
            logIndex: index,
            contractAddress: b58(m.contract),
            owner: b58(m.from),
            spender: b58(m.to),
            value: m.amount.toString(),
          });
          continue;
        }
        const erc20 = m.kind === "trc20";
        rows.push({
          transferType: erc20 ? "erc20transfer" : "erc721transfer",
          ...base,
          logIndex: index,
          internalIndex: null,
          contractAddress: b58(m.contract),
          from: b58(m.from),
          to: b58(m.to),
          value: m.amount.toString(),
          asset: erc20 ? TRC20.symbol : TRC721.symbol,
          decimals: erc20 ? TRC20.decimals : null,
          transactionError: false,
        });
      }
    }
  });
  return { rows, approvals: approvalRows };
}

/** The internal TRC-10 transfers that moved, in chain order. */
export function internalTrc10(chain: TronScenario): InternalTokenTransfer[] {
  return chain.blocks.flatMap((block) =>
    block.txs.flatMap((tx) =>
      tx.contractRet !== "SUCCESS"
        ? []
        : tx.outcome.movements.flatMap((m) =>
            m.via === "internal" && m.kind === "trc10" && !m.rejected
              ? [
                  {
                    blockNumber: block.number,
                    transactionHash: tx.txID,
                    internalIndex: m.internalIndex,
                    asset: m.asset!,
                    from: b58(m.from),
                    to: b58(m.to),
                    value: m.amount.toString(),
                  },
                ]
              : [],
          ),
    ),
  );
}

/** The figures of every UTC day the chain's blocks fall on, in date order. */
export function dailyFigures(chain: TronScenario): DayFigures[] {
  const days = new Map<string, StoredBlock[]>();
  for (const block of chain.blocks) {
    const date = dateOf(block);
    days.set(date, [...(days.get(date) ?? []), block]);
  }
  return [...days].map(([date, blocks]) => {
    const txs = blocks.flatMap((b) => b.txs);
    const rows = blocks.flatMap((b) => blockTransfers(b).rows);
    const active = new Set<string>();
    for (const tx of txs) active.add(b58(ownerOf(tx))).add(b58(receiverOf(tx)));
    for (const r of rows) active.add(r.from).add(r.to);
    active.delete(b58(ZERO_ADDRESS));
    const moved = rows.filter((r) => r.transferType === "trx" && !r.transactionError);
    return {
      date,
      fromBlock: blocks[0]!.number,
      toBlock: blocks[blocks.length - 1]!.number,
      blockCount: blocks.length,
      transactionCount: txs.length,
      transferCount: rows.length,
      // A failed transaction moved nothing (design §14): its `trx` row is a transfer row (transferCount) but no
      // TRX transfer, as the index's figures count them (sql/tron/009_tron_index.sql, families/tron/dayStats.ts).
      trxTransferCount: moved.length,
      trc20TransferCount: rows.filter((r) => r.transferType === "erc20transfer" && !r.transactionError)
        .length,
      activeAddresses: active.size,
      trxMoved: moved.reduce((sum, r) => sum + BigInt(r.value), 0n),
      feesBurned: txs.reduce((sum, tx) => sum + tx.outcome.fee, 0n),
      energyUsed: txs.reduce((sum, tx) => sum + tx.outcome.energy, 0),
      bandwidthUsed: txs.reduce((sum, tx) => sum + tx.outcome.bandwidth, 0),
    };
  });
}

/**
 * Every address's holdings after block `atBlock` (default the head), from the genesis allocations
 * (scenario.ts GENESIS_*), each transaction's fee (paid by its owner) and what it moved. Keyed by base58;
 * every address that held or received anything is present (a rejected payment's recipient is not).
 */
export function balances(chain: TronScenario, atBlock = chain.headNumber()): Map<string, Holdings> {
  const out = new Map<string, Holdings>();
  const of = (hex: string) => {
    const key = b58(hex);
    const h = out.get(key) ?? { trx: 0n, trc10: {}, trc20: {} };
    out.set(key, h);
    return h;
  };
  const add = (rec: Record<string, bigint>, key: string, amount: bigint) => {
    rec[key] = (rec[key] ?? 0n) + amount;
  };
  for (const [hex, amount] of Object.entries(GENESIS_TRX)) of(hex).trx += amount;
  for (const [hex, assets] of Object.entries(GENESIS_TRC10))
    for (const [id, amount] of Object.entries(assets)) add(of(hex).trc10, id, amount);
  for (const [hex, amount] of Object.entries(GENESIS_TRC20)) add(of(hex).trc20, b58(TRC20.address), amount);
  for (const block of blocksOf(chain, 1, atBlock)) {
    for (const tx of block.txs) {
      of(ownerOf(tx)).trx -= tx.outcome.fee;
      if (tx.contractRet !== "SUCCESS") continue;
      for (const m of tx.outcome.movements) {
        if (m.via === "internal" && m.rejected) continue;
        if (m.kind === "trx") {
          of(m.from).trx -= m.amount;
          of(m.to).trx += m.amount;
        } else if (m.kind === "trc10") {
          add(of(m.from).trc10, m.asset!, -m.amount);
          add(of(m.to).trc10, m.asset!, m.amount);
        } else if (m.kind === "trc20") {
          add(of(m.from).trc20, b58(m.contract), -m.amount);
          add(of(m.to).trc20, b58(m.contract), m.amount);
        } else if (m.kind === "create") of(m.to);
      }
    }
  }
  for (const h of out.values()) {
    for (const rec of [h.trc10, h.trc20])
      for (const [k, v] of Object.entries(rec)) if (v === 0n) delete rec[k];
  }
  return out;
}
