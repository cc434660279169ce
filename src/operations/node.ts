/**
 * Node operations: the Methods answered by the node (blocks, transactions, receipts, logs, traces) and the
 * pass-through NodeMethods (docs/interface.md §2). Params are checked here and handed to the engine in the
 * node's own form. A new pass-through method is one `nodeMethod` line below, plus its row in
 * engine/methods.ts (how it is cached, where its block parameter is).
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import type { NodeClient } from "../engine/client";
import type { ChainHead } from "../engine/head";
import { quantity, toNodeBlockRef } from "../families/evm/blockRef";
import type { RawJson } from "../json";
import {
  Address,
  Block,
  BlockRef,
  BlockSelector,
  Bodies,
  Hash32,
  HexData,
  HexQuantity,
  Hydrated,
  LogFilter,
  LogOut,
  Quantity,
  Receipt,
  StorageSlot,
  Trace,
  Transaction,
  TransactionCall,
} from "../schemas";
import { defineOperation, type Operation, type ParamSpec } from "./operation";

// ---------------------------------------------------------------------------------------------------
// Normalizers: valid input -> the node's form. Lower-case hex makes equal questions look equal.

const lower = (v: string) => v.toLowerCase();
const blockRef = (v: unknown) => toNodeBlockRef(v)!;
const HASH_LENGTH = 66;
const blockRefOrHash = (v: unknown) =>
  typeof v === "string" && v.length === HASH_LENGTH ? v.toLowerCase() : blockRef(v);
const toQuantity = (v: number | string) => (typeof v === "number" ? quantity(v) : quantity(BigInt(v)));
function blockSelector(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return blockRefOrHash(v);
  const o = v as { blockHash?: string; blockNumber?: unknown; requireCanonical?: boolean };
  if (o.blockHash !== undefined) return { ...o, blockHash: lower(o.blockHash) };
  return { blockNumber: blockRef(o.blockNumber) };
}
function logFilter(f: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...f };
  if (f.fromBlock !== undefined) out.fromBlock = blockRef(f.fromBlock);
  if (f.toBlock !== undefined) out.toBlock = blockRef(f.toBlock);
  if (typeof f.address === "string") out.address = lower(f.address);
  else if (Array.isArray(f.address)) out.address = f.address.map(lower);
  if (Array.isArray(f.topics)) {
    out.topics = f.topics.map((t) =>
      Array.isArray(t) ? t.map((x) => x?.toLowerCase() ?? null) : (t?.toLowerCase() ?? null),
    );
  }
  if (typeof f.blockHash === "string") out.blockHash = lower(f.blockHash);
  return out;
}
const LOG_FILTER_KEYS = ["fromBlock", "toBlock", "address", "topics", "blockHash"] as const;
/** The filter of a REST body: its known keys only, "absent" spelled as a missing key, not null. */
function restLogFilter(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of LOG_FILTER_KEYS) if (body[key] !== null && body[key] !== undefined) out[key] = body[key];
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Param specs

const p = {
  block: { name: "block", schema: BlockRef, normalize: blockRef },
  blockOrHash: {
    name: "block",
    schema: T.Union([...BlockRef.anyOf, Hash32], { description: `${BlockRef.description}, or a block hash` }),
    normalize: blockRefOrHash,
  },
  blockHash: { name: "block hash", schema: Hash32, normalize: lower },
  txHash: { name: "transaction hash", schema: Hash32, normalize: lower },
  hydrated: { name: "hydrated", schema: Hydrated },
  index: { name: "transaction index", schema: Quantity, normalize: toQuantity },
  address: { name: "address", schema: Address, normalize: lower },
  selector: { name: "block", schema: BlockSelector, normalize: blockSelector },
  optionalSelector: { name: "block", schema: BlockSelector, normalize: blockSelector, optional: true },
  call: { name: "transaction", schema: TransactionCall },
} satisfies Record<string, ParamSpec>;

const NullOr = (s: TSchema) => T.Union([s, T.Null()]);
const HexOrNull = NullOr(T.String());

// ---------------------------------------------------------------------------------------------------

/** eth_getLogs costs one rate-limit token per this many blocks of its range. */
const LOG_BLOCKS_PER_TOKEN = 1_000n;

export function createNodeOperations(options: { node: NodeClient; head: ChainHead }): Operation[] {
  const { node, head } = options;

  /** A node-form block of a log range as a number: tags at the followed head. */
  const rangeEnd = (ref: unknown): bigint => {
    if (ref === undefined || typeof ref !== "string") return head.latest() ?? 0n;
    if (ref === "earliest") return 0n;
    return ref.startsWith("0x") ? BigInt(ref) : (head.latest() ?? 0n);
  };
  /** One token per 1,000 blocks of the range (a query by block hash is one block). */
  function logsCost([filter]: unknown[]): number {
    const f = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
    if (f.blockHash !== undefined) return 1;
    const from = rangeEnd(f.fromBlock);
    const to = rangeEnd(f.toBlock);
    const blocks = to >= from ? to - from + 1n : 1n;
    return Number((blocks + LOG_BLOCKS_PER_TOKEN - 1n) / LOG_BLOCKS_PER_TOKEN);
  }
  const pass = (method: string) => (params: unknown[]) => node.call(method, params);
  const stored = (method: string) => (params: unknown[], use: (raw: RawJson) => void) =>
    node.readStored(method, params, use);

  const ops: Operation[] = [
    defineOperation({
      method: "eth_getBlockByNumber",
      group: "Methods",
      summary: "A block by number or tag, with transaction hashes or full transactions.",
      params: [p.block, p.hydrated],
      result: NullOr(Block),
      rest: {
        name: "eth_getBlockByNumber",
        body: Bodies.blockByNumber,
        toParams: (b) => [b.number, b.is_full_trx],
        response: NullOr(Block),
      },
      run: pass("eth_getBlockByNumber"),
    }),
    defineOperation({
      method: "eth_getBlockByHash",
      group: "Methods",
      summary: "A block by hash.",
      params: [p.blockHash, p.hydrated],
      result: NullOr(Block),
      rest: {
        name: "eth_getBlockByHash",
        body: Bodies.blockByHash,
        toParams: (b) => [b.hash, b.is_full_trx],
        response: NullOr(Block),
      },
      run: pass("eth_getBlockByHash"),
    }),
    defineOperation({
      method: "eth_blockNumber",
      group: "Methods",
      summary: "The number of the node's latest block, as a hex quantity.",
      params: [],
      result: HexQuantity,
      rest: { name: "eth_blockNumber", body: null, toParams: () => [], response: HexQuantity },
      run: pass("eth_blockNumber"),
    }),
    defineOperation({
      method: "net_version",
      group: "Methods",
      summary: "The network id, as a decimal string.",
      params: [],
      result: T.String({ description: "decimal network id" }),
      rest: { name: "net_version", body: null, toParams: () => [], response: T.String() },
      run: pass("net_version"),
    }),
    defineOperation({
      method: "eth_getLogs",
      group: "Methods",
      summary: "Logs matching a filter.",
      params: [{ name: "filter", schema: LogFilter, normalize: logFilter }],
      result: T.Array(LogOut),
      rest: {
        name: "eth_getLogs",
        body: Bodies.logs,
        toParams: (b) => [restLogFilter(b)],
        response: T.Array(LogOut),
      },
      run: pass("eth_getLogs"),
      cost: logsCost,
    }),
    defineOperation({
      method: "eth_getTransactionByHash",
      group: "Methods",
      summary: "A transaction by hash.",
      params: [p.txHash],
      result: NullOr(Transaction),
      rest: {
        name: "eth_getTransactionByHash",
        body: Bodies.trxHash,
        toParams: (b) => [b.trx_hash],
        response: NullOr(Transaction),
      },
      run: pass("eth_getTransactionByHash"),
    }),
    defineOperation({
      method: "eth_getTransactionByBlockNumberAndIndex",
      group: "Methods",
      summary: "A transaction by block number and index.",
      params: [p.block, p.index],
      result: NullOr(Transaction),
      rest: {
        name: "eth_getTransactionByBlockNumberAndIndex",
        body: Bodies.trxByBlockNumberAndIndex,
        toParams: (b) => [b.block_number, b.trx_index],
        response: NullOr(Transaction),
      },
      run: pass("eth_getTransactionByBlockNumberAndIndex"),
    }),
    defineOperation({
      method: "eth_getTransactionByBlockHashAndIndex",
      group: "Methods",
      summary: "A transaction by block hash and index.",
      params: [p.blockHash, p.index],
      result: NullOr(Transaction),
      rest: {
        name: "eth_getTransactionByBlockHashAndIndex",
        body: Bodies.trxByBlockHashAndIndex,
        toParams: (b) => [b.block_hash, b.trx_index],
        // The transaction itself, as its by-number twin answers (docs/interface.md §4).
        response: NullOr(Transaction),
      },
      run: pass("eth_getTransactionByBlockHashAndIndex"),
    }),
    defineOperation({
      method: "eth_getBlockTransactionCountByNumber",
      group: "Methods",
      summary: "The number of transactions in a block, by number.",
      params: [p.block],
      result: HexOrNull,
      rest: {
        name: "eth_getBlockTransactionCountByNumber",
        body: Bodies.number,
        toParams: (b) => [b.number],
        response: HexOrNull,
      },
      run: pass("eth_getBlockTransactionCountByNumber"),
    }),
    defineOperation({
      method: "eth_getBlockTransactionCountByHash",
      group: "Methods",
      summary: "The number of transactions in a block, by hash.",
      params: [p.blockHash],
      result: HexOrNull,
      rest: {
        name: "eth_getBlockTransactionCountByHash",
        body: Bodies.hash,
        toParams: (b) => [b.hash],
        response: HexOrNull,
      },
      run: pass("eth_getBlockTransactionCountByHash"),
    }),
    defineOperation({
      method: "ext_getBlockReceipts",
      group: "Methods",
      summary: "Every receipt of a block (the node's eth_getBlockReceipts, or assembled where it lacks it).",
      params: [p.blockOrHash],
      result: NullOr(T.Array(Receipt)),
      rest: {
        name: "ext_getBlockReceipts",
        body: Bodies.number,
        toParams: (b) => [b.number],
        response: NullOr(T.Array(Receipt)),
      },
      run: pass("eth_getBlockReceipts"),
      readStored: stored("eth_getBlockReceipts"),
    }),
    defineOperation({
      method: "eth_getTransactionReceipt",
      group: "Methods",
      summary: "A transaction's receipt (REST: an array holding it).",
      params: [p.txHash],
      result: NullOr(Receipt),
      rest: {
        name: "eth_getTransactionReceipt",
        body: Bodies.trxHash,
        toParams: (b) => [b.trx_hash],
        response: NullOr(T.Array(Receipt, { maxItems: 1 })),
        toRest: (raw) => (raw === "null" ? [raw] : ["[", raw, "]"]),
      },
      run: pass("eth_getTransactionReceipt"),
    }),
    defineOperation({
      method: "trace_block",
      group: "Methods",
      summary: "Parity-style traces of every transaction in a block.",
      params: [p.block],
      result: NullOr(T.Array(Trace)),
      rest: {
        name: "trace_block",
        body: Bodies.number,
        toParams: (b) => [b.number],
        response: NullOr(T.Array(Trace)),
      },
      run: pass("trace_block"),
      readStored: stored("trace_block"),
    }),
    defineOperation({
      method: "trace_transaction",
      group: "Methods",
      summary: "Parity-style traces of one transaction.",
      params: [p.txHash],
      result: NullOr(T.Array(Trace)),
      rest: {
        name: "trace_transaction",
        body: Bodies.trxHash,
        toParams: (b) => [b.trx_hash],
        response: NullOr(T.Array(Trace)),
      },
      run: pass("trace_transaction"),
    }),
    defineOperation({
      method: "eth_getUncleCountByBlockHash",
      group: "Methods",
      summary: "The number of uncles of a block, by hash.",
      params: [p.blockHash],
      result: HexOrNull,
      rest: {
        name: "eth_getUncleCountByBlockHash",
        body: Bodies.hash,
        toParams: (b) => [b.hash],
        response: HexOrNull,
      },
      run: pass("eth_getUncleCountByBlockHash"),
    }),
    defineOperation({
      method: "eth_getUncleCountByBlockNumber",
      group: "Methods",
      summary: "The number of uncles of a block, by number.",
      params: [p.block],
      result: HexOrNull,
      rest: {
        name: "eth_getUncleCountByBlockNumber",
        body: Bodies.number,
        toParams: (b) => [b.number],
        response: HexOrNull,
      },
      run: pass("eth_getUncleCountByBlockNumber"),
    }),

    // NodeMethods: JSON-RPC only, the node's standard params.
    nodeMethod("eth_call", "Executes a call without a transaction.", [
      p.call,
      p.optionalSelector,
      { name: "state overrides", schema: T.Record(T.String(), T.Unknown()), optional: true },
      { name: "block overrides", schema: T.Record(T.String(), T.Unknown()), optional: true },
    ]),
    nodeMethod("eth_chainId", "The chain id, as a hex quantity.", []),
    nodeMethod("eth_estimateGas", "Estimates the gas a transaction needs.", [
      p.call,
      p.optionalSelector,
      { name: "state overrides", schema: T.Record(T.String(), T.Unknown()), optional: true },
    ]),
    nodeMethod("eth_gasPrice", "The node's gas price suggestion.", []),
    nodeMethod("eth_getBalance", "The balance of an account, in wei.", [p.address, p.optionalSelector]),
    nodeMethod("eth_getCode", "The code at an address.", [p.address, p.optionalSelector]),
    nodeMethod("eth_getStorageAt", "A storage slot of an account.", [
      p.address,
      { name: "slot", schema: StorageSlot, normalize: lower },
      p.optionalSelector,
    ]),
    nodeMethod("eth_sendRawTransaction", "Broadcasts a signed transaction.", [
      { name: "transaction", schema: HexData },
    ]),
    nodeMethod("eth_getTransactionCount", "The nonce of an account.", [p.address, p.optionalSelector]),
    nodeMethod("eth_feeHistory", "Fee history of recent blocks.", [
      { name: "block count", schema: Quantity, normalize: toQuantity },
      { name: "newest block", schema: BlockRef, normalize: blockRef },
      {
        name: "reward percentiles",
        schema: T.Array(T.Number({ minimum: 0, maximum: 100 }), { maxItems: 100 }),
        optional: true,
      },
    ]),
  ];

  function nodeMethod(method: string, summary: string, params: ParamSpec[]): Operation {
    return defineOperation({
      method,
      group: "NodeMethods",
      summary,
      params,
      result: T.Unknown(),
      run: pass(method),
    });
  }

  return ops;
}
