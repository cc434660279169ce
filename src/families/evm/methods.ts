/**
 * Every EVM node method, one row each (docs/interface.md §2): what callers see of it (its JSON-RPC name,
 * group, params, result, REST form, cost) and how the engine caches its answers (its `policy`, the rules of
 * cache/policy.ts; where its block parameter sits). The node operations and the engine's policy table are
 * derived from these rows; a new node method is one row. A method without a policy is passed to the node
 * and never cached; a method with no row at all is refused (-32601) and never reaches a node
 * (docs/interface.md §2.3).
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import type { MethodPolicy } from "../../cache/policy";
import type { ChainFollower } from "../../engine/chainFollower";
import type { Engine } from "../../engine/engineApi";
import type { MethodTable } from "../../engine/methodTable";
import type { RawJson } from "../../json";
import {
  defineOperation,
  type MethodGroup,
  type NodeMethodRow,
  nodeOperation,
  type Operation,
  type ParamSpec,
  type StreamSpec,
} from "../../operations/operation";
import { BlockRef } from "../../schemas";
import { createEvmFetch } from "./evmFetch";
import { blockRef, logFilter, lower, p, restLogFilter, toQuantity, traceFilter } from "./params";
import {
  Block,
  NodeBodies as Bodies,
  HexQuantity,
  LogFilter,
  LogOut,
  Quantity,
  Receipt,
  SignedTransaction,
  SimulatePayload,
  StorageSlot,
  Trace,
  TraceFilter,
  TraceTypes,
  Transaction,
} from "./schemas";

/** An offered method's row, with how the engine caches the answers of the node method it calls. */
interface EvmMethodRow extends NodeMethodRow {
  policy?: MethodPolicy;
}
/**
 * A method the service answers itself, never asking a node (no policy: the engine is not reached): its
 * answer, as JSON text.
 */
interface ServiceMethodRow {
  method: string;
  group: MethodGroup;
  summary: string;
  params: ParamSpec[];
  result: TSchema;
  answer: RawJson;
}

const NullOr = (s: TSchema) => T.Union([s, T.Null()]);
const HexOrNull = NullOr(T.String());

const at = (index: number, optional = false) => ({ kind: "position" as const, index, optional });
const TX_BLOCK = { number: "blockNumber", hash: "blockHash" };
const BLOCK_NAMES = { number: "number", hash: "hash" };
/** eth_getBlockReceipts, offered under its own name and as ext_getBlockReceipts: one policy, one cache. */
const BLOCK_RECEIPTS: MethodPolicy = { block: at(0), cache: "block", names: { ...TX_BLOCK, first: true } };

/** eth_getLogs costs one rate-limit token per this many blocks of its range. */
const LOG_BLOCKS_PER_TOKEN = 1_000n;

/** A node-form block of a log range as a number: tags at the followed head. */
function rangeEnd(ref: unknown, head: ChainFollower): bigint {
  if (ref === undefined || typeof ref !== "string") return head.latest() ?? 0n;
  if (ref === "earliest") return 0n;
  return ref.startsWith("0x") ? BigInt(ref) : (head.latest() ?? 0n);
}

/** One token per 1,000 blocks of the range (a query by block hash is one block). */
export function logsCost([filter]: unknown[], head: ChainFollower): number {
  const f = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
  if (f.blockHash !== undefined) return 1;
  const from = rangeEnd(f.fromBlock, head);
  const to = rangeEnd(f.toBlock, head);
  const blocks = to >= from ? to - from + 1n : 1n;
  return Number((blocks + LOG_BLOCKS_PER_TOKEN - 1n) / LOG_BLOCKS_PER_TOKEN);
}

/**
 * trace_filter as eth_getLogs: one token per 1,000 blocks of its range; an absent fromBlock counts from block
 * 0, the widest reading a node takes of it.
 */
function traceFilterCost([filter]: unknown[], head: ChainFollower): number {
  const f = filter as { fromBlock?: unknown; toBlock?: unknown };
  return logsCost([{ fromBlock: f.fromBlock ?? "earliest", toBlock: f.toBlock }], head);
}

/** The Methods (docs/interface.md §2), each with its REST route, in the order the document lists them. */
const METHODS: EvmMethodRow[] = [
  {
    method: "eth_getBlockByNumber",
    group: "Methods",
    summary: "A block by number or tag, with transaction hashes or full transactions.",
    params: [p.block, p.hydrated],
    result: NullOr(Block),
    rest: { body: Bodies.blockByNumber, toParams: (b) => [b.number, b.is_full_trx], response: NullOr(Block) },
    policy: { block: at(0), cache: "block", names: BLOCK_NAMES },
  },
  {
    method: "eth_getBlockByHash",
    group: "Methods",
    summary: "A block by hash.",
    params: [p.blockHash, p.hydrated],
    result: NullOr(Block),
    rest: { body: Bodies.blockByHash, toParams: (b) => [b.hash, b.is_full_trx], response: NullOr(Block) },
    policy: { cache: "result", names: BLOCK_NAMES, hashParam: 0 },
  },
  {
    method: "eth_blockNumber",
    group: "Methods",
    summary: "The number of the node's latest block, as a hex quantity.",
    params: [],
    result: HexQuantity,
    rest: { body: null, toParams: () => [], response: HexQuantity },
    policy: { cache: "head" },
  },
  {
    method: "net_version",
    group: "Methods",
    summary: "The network id, as a decimal string.",
    params: [],
    result: T.String({ description: "decimal network id" }),
    rest: { body: null, toParams: () => [], response: T.String() },
    policy: { cache: "static" },
  },
  {
    method: "eth_getLogs",
    group: "Methods",
    summary: "Logs matching a filter.",
    params: [{ name: "filter", schema: LogFilter, normalize: logFilter }],
    result: T.Array(LogOut),
    rest: { body: Bodies.logs, toParams: (b) => [restLogFilter(b)], response: T.Array(LogOut) },
    cost: logsCost,
    policy: { block: { kind: "filter", index: 0 }, cache: "block" },
  },
  {
    method: "eth_getTransactionByHash",
    group: "Methods",
    summary: "A transaction by hash.",
    params: [p.txHash],
    result: NullOr(Transaction),
    rest: { body: Bodies.trxHash, toParams: (b) => [b.trx_hash], response: NullOr(Transaction) },
    policy: { cache: "result", names: TX_BLOCK },
  },
  {
    method: "eth_getTransactionByBlockNumberAndIndex",
    group: "Methods",
    summary: "A transaction by block number and index.",
    params: [p.block, p.index],
    result: NullOr(Transaction),
    rest: {
      body: Bodies.trxByBlockNumberAndIndex,
      toParams: (b) => [b.block_number, b.trx_index],
      response: NullOr(Transaction),
    },
    policy: { block: at(0), cache: "block", names: TX_BLOCK },
  },
  {
    method: "eth_getTransactionByBlockHashAndIndex",
    group: "Methods",
    summary: "A transaction by block hash and index.",
    params: [p.blockHash, p.index],
    result: NullOr(Transaction),
    rest: {
      body: Bodies.trxByBlockHashAndIndex,
      toParams: (b) => [b.block_hash, b.trx_index],
      // The transaction itself, as its by-number twin answers (docs/interface.md §4).
      response: NullOr(Transaction),
    },
    policy: { cache: "result", names: TX_BLOCK, hashParam: 0 },
  },
  {
    method: "eth_getBlockTransactionCountByNumber",
    group: "Methods",
    summary: "The number of transactions in a block, by number.",
    params: [p.block],
    result: HexOrNull,
    rest: { body: Bodies.number, toParams: (b) => [b.number], response: HexOrNull },
    policy: { block: at(0), cache: "block" },
  },
  {
    method: "eth_getBlockTransactionCountByHash",
    group: "Methods",
    summary: "The number of transactions in a block, by hash.",
    params: [p.blockHash],
    result: HexOrNull,
    rest: { body: Bodies.hash, toParams: (b) => [b.hash], response: HexOrNull },
    policy: { cache: "result", hashParam: 0 },
  },
  {
    method: "ext_getBlockReceipts",
    group: "Methods",
    summary: "Every receipt of a block (the node's eth_getBlockReceipts, or assembled where it lacks it).",
    params: [p.blockOrHash],
    result: NullOr(T.Array(Receipt)),
    rest: { body: Bodies.number, toParams: (b) => [b.number], response: NullOr(T.Array(Receipt)) },
    readStored: true,
    // Assembled from the block's receipts where an upstream lacks it (evmFetch.ts).
    calls: "eth_getBlockReceipts",
    policy: BLOCK_RECEIPTS,
  },
  {
    method: "eth_getTransactionReceipt",
    group: "Methods",
    summary: "A transaction's receipt (REST: an array holding it).",
    params: [p.txHash],
    result: NullOr(Receipt),
    rest: {
      body: Bodies.trxHash,
      toParams: (b) => [b.trx_hash],
      response: NullOr(T.Array(Receipt, { maxItems: 1 })),
      toRest: (raw) => (raw === "null" ? [raw] : ["[", raw, "]"]),
    },
    policy: { cache: "result", names: TX_BLOCK },
  },
  {
    method: "trace_block",
    group: "Methods",
    summary: "Parity-style traces of every transaction in a block.",
    params: [p.block],
    result: NullOr(T.Array(Trace)),
    rest: { body: Bodies.number, toParams: (b) => [b.number], response: NullOr(T.Array(Trace)) },
    readStored: true,
    policy: { block: at(0), cache: "block", names: { ...TX_BLOCK, first: true } },
  },
  {
    method: "trace_transaction",
    group: "Methods",
    summary: "Parity-style traces of one transaction.",
    params: [p.txHash],
    result: NullOr(T.Array(Trace)),
    rest: { body: Bodies.trxHash, toParams: (b) => [b.trx_hash], response: NullOr(T.Array(Trace)) },
    policy: { cache: "result", names: { ...TX_BLOCK, first: true } },
  },
  {
    method: "eth_getUncleCountByBlockHash",
    group: "Methods",
    summary: "The number of uncles of a block, by hash.",
    params: [p.blockHash],
    result: HexOrNull,
    rest: { body: Bodies.hash, toParams: (b) => [b.hash], response: HexOrNull },
    policy: { cache: "result", hashParam: 0 },
  },
  {
    method: "eth_getUncleCountByBlockNumber",
    group: "Methods",
    summary: "The number of uncles of a block, by number.",
    params: [p.block],
    result: HexOrNull,
    rest: { body: Bodies.number, toParams: (b) => [b.number], response: HexOrNull },
    policy: { block: at(0), cache: "block" },
  },
];

/** A pass-through NodeMethod: JSON-RPC only, the node's standard params, any result. */
const nodeMethod = (
  method: string,
  summary: string,
  params: NodeMethodRow["params"],
  policy: MethodPolicy,
): EvmMethodRow => ({ method, group: "NodeMethods", summary, params, policy });

const NODE_METHODS: EvmMethodRow[] = [
  nodeMethod(
    "eth_call",
    "Executes a call without a transaction.",
    [p.call, p.optionalSelector, p.stateOverrides, p.blockOverrides],
    { block: at(1, true), cache: "block" },
  ),
  nodeMethod("eth_chainId", "The chain id, as a hex quantity.", [], { cache: "static" }),
  nodeMethod(
    "eth_estimateGas",
    "Estimates the gas a transaction needs.",
    [p.call, p.optionalSelector, p.stateOverrides],
    { cache: "never" },
  ),
  nodeMethod("eth_gasPrice", "The node's gas price suggestion.", [], { cache: "head" }),
  nodeMethod("eth_getBalance", "The balance of an account, in wei.", [p.address, p.optionalSelector], {
    block: at(1, true),
    cache: "block",
  }),
  nodeMethod("eth_getCode", "The code at an address.", [p.address, p.optionalSelector], {
    block: at(1, true),
    cache: "block",
  }),
  nodeMethod(
    "eth_getStorageAt",
    "A storage slot of an account.",
    [p.address, { name: "slot", schema: StorageSlot, normalize: lower }, p.optionalSelector],
    { block: at(2, true), cache: "block" },
  ),
  nodeMethod(
    "eth_sendRawTransaction",
    "Broadcasts a signed transaction.",
    [{ name: "transaction", schema: SignedTransaction }],
    {
      // Answered as sent when a node already holds it, then the head is polled (evmFetch.ts).
      cache: "never",
      write: true,
    },
  ),
  nodeMethod("eth_getTransactionCount", "The nonce of an account.", [p.address, p.optionalSelector], {
    block: at(1, true),
    cache: "block",
  }),
  nodeMethod(
    "eth_feeHistory",
    "Fee history of recent blocks.",
    [
      { name: "block count", schema: Quantity, normalize: toQuantity },
      { name: "newest block", schema: BlockRef, normalize: blockRef },
      {
        name: "reward percentiles",
        schema: T.Array(T.Number({ minimum: 0, maximum: 100 }), { maxItems: 100 }),
        optional: true,
      },
    ],
    // Not immutable: its last base fee is a prediction that some nodes (anvil) recompute as the head moves,
    // even for old ranges. Kept only as long as answers about the head.
    { block: at(1), cache: "head" },
  ),
  // What the node says of itself and of the head: changes with a node upgrade, a peer, the next block.
  nodeMethod("web3_clientVersion", "The node's name and version.", [], { cache: "head" }),
  nodeMethod("net_listening", "Whether the node listens for peers.", [], { cache: "head" }),
  nodeMethod("net_peerCount", "The node's number of peers, where the node has it.", [], { cache: "head" }),
  nodeMethod("eth_syncing", "The node's sync progress, or false.", [], { cache: "head" }),
  nodeMethod("eth_protocolVersion", "The node's protocol version, where the node has it.", [], {
    cache: "head",
  }),
  nodeMethod("eth_maxPriorityFeePerGas", "The node's priority fee suggestion.", [], { cache: "head" }),
  nodeMethod("eth_blobBaseFee", "The blob base fee of the next block.", [], { cache: "head" }),
  // The same node method as ext_getBlockReceipts, the same fallback (evmFetch.ts) and cache entries.
  nodeMethod("eth_getBlockReceipts", "Every receipt of a block.", [p.blockOrHash], BLOCK_RECEIPTS),
  nodeMethod(
    "eth_getProof",
    "An account's proof, with its storage slots' proofs.",
    [p.address, p.storageKeys, p.optionalSelector],
    { block: at(2, true), cache: "block" },
  ),
  nodeMethod(
    "eth_createAccessList",
    "The access list a transaction would use, and its gas.",
    [p.call, p.optionalSelector],
    { block: at(1, true), cache: "block" },
  ),
  nodeMethod(
    "eth_getTransactionBySenderAndNonce",
    "A transaction by its sender and nonce, where the node has it.",
    [p.address, { name: "nonce", schema: Quantity, normalize: toQuantity }],
    { cache: "result", names: TX_BLOCK },
  ),
  nodeMethod(
    "eth_simulateV1",
    "Simulates blocks of calls on a block's state.",
    [{ name: "simulation", schema: SimulatePayload }, p.optionalSelector],
    { block: at(1, true), cache: "block" },
  ),
  // An uncle's number is not its nephew's: the answer names no block to check, the params name it.
  nodeMethod("eth_getUncleByBlockNumberAndIndex", "An uncle of a block, by number.", [p.block, p.index], {
    block: at(0),
    cache: "block",
  }),
  nodeMethod("eth_getUncleByBlockHashAndIndex", "An uncle of a block, by hash.", [p.blockHash, p.index], {
    cache: "result",
    hashParam: 0,
  }),
  // A trace names no block: a transaction's could move to another block in a reorg, so it is never kept.
  nodeMethod(
    "debug_traceTransaction",
    "A transaction's trace, by the tracer its options name.",
    [p.txHash, p.traceOptions],
    { cache: "never" },
  ),
  // Also the traces blockTraces.ts reads where trace_block is lacking.
  nodeMethod(
    "debug_traceBlockByNumber",
    "The traces of every transaction of a block, by number.",
    [p.block, p.traceOptions],
    { block: at(0), cache: "block" },
  ),
  nodeMethod(
    "debug_traceBlockByHash",
    "The traces of every transaction of a block, by hash.",
    [p.blockHash, p.traceOptions],
    { cache: "result", hashParam: 0 },
  ),
  nodeMethod(
    "debug_traceCall",
    "Traces a call without a transaction.",
    [p.call, p.optionalSelector, p.traceOptions],
    { block: at(1, true), cache: "block" },
  ),
  {
    ...nodeMethod(
      "trace_filter",
      "Parity-style traces of a block range, by sender and receiver, where the node has it.",
      [{ name: "filter", schema: TraceFilter, normalize: traceFilter }],
      // Nodes read an absent fromBlock differently (0, or latest): no tag is resolved for it, nothing kept.
      { cache: "never" },
    ),
    cost: traceFilterCost,
  },
  nodeMethod(
    "trace_replayTransaction",
    "Replays a transaction with the traces asked, where the node has it.",
    [p.txHash, { name: "trace types", schema: TraceTypes }],
    { cache: "never" },
  ),
  nodeMethod(
    "trace_replayBlockTransactions",
    "Replays every transaction of a block with the traces asked, where the node has it.",
    [p.block, { name: "trace types", schema: TraceTypes }],
    { block: at(0), cache: "block" },
  ),
];

/**
 * Methods the service answers itself. The node methods that use the node's keys or change its state
 * (eth_sign, eth_sendTransaction, personal_*, admin_*, miner_*, anvil_*, hardhat_*, evm_*, txpool_*,
 * debug_set*) have no row anywhere: a method without a row is refused (-32601) and never reaches a node, so
 * a dev node's unlocked accounts stay out of reach.
 */
const SERVICE_METHODS: ServiceMethodRow[] = [
  {
    method: "eth_accounts",
    group: "NodeMethods",
    summary: "The accounts the service holds keys for: always none.",
    params: [],
    result: T.Array(T.String(), { maxItems: 0 }),
    answer: "[]",
  },
];

/**
 * Every node method's policy, by the node method's name (a null prototype: no name finds what it inherits).
 * Two rows that call one node method share its policy (and so its cache entries).
 */
function policyTable(): Readonly<Record<string, MethodPolicy>> {
  const table: Record<string, MethodPolicy> = Object.create(null);
  for (const row of [...METHODS, ...NODE_METHODS]) {
    const calls = row.calls ?? row.method;
    if (!row.policy) continue;
    if (table[calls] && table[calls] !== row.policy) throw new Error(`node method ${calls}: two policies`);
    table[calls] = row.policy;
  }
  return Object.freeze(table);
}

export const EVM_POLICIES = policyTable();

/** What the engine needs of the EVM's methods (engine/methodTable.ts). */
export const evmMethods: MethodTable = {
  policy: (method) => EVM_POLICIES[method],
  createFetch: createEvmFetch,
};

/**
 * The operations of the node methods, in the order of the rows; `only`: those named alone, for a family
 * whose nodes speak part of Ethereum's JSON-RPC (java-tron: families/tron/methods.ts), with the same params,
 * results, REST forms and cache rules.
 */
export function createNodeOperations(
  deps: { engine: Engine; head: ChainFollower },
  only?: ReadonlySet<string>,
): Operation[] {
  const kept = (row: { method: string }) => only === undefined || only.has(row.method);
  const own = SERVICE_METHODS.filter(kept).map(({ answer, ...row }) =>
    defineOperation({ ...row, run: () => ({ raw: answer }) }),
  );
  return [...METHODS, ...NODE_METHODS]
    .filter(kept)
    .map((row) => nodeOperation(row, deps))
    .concat(own);
}

/** The bulk streams (http/stream.ts): a range of blocks of the operations whose final answers are kept. */
export const EVM_STREAMS: readonly StreamSpec[] = [
  {
    path: "/node/stream/ext_getBlockReceipts",
    operation: "ext_getBlockReceipts",
    member: "receipts",
    summary: "Receipts of a range of blocks as NDJSON, one line per block in order: {number, receipts}",
  },
  {
    path: "/node/stream/trace_block",
    operation: "trace_block",
    member: "traces",
    summary: "Traces of a range of blocks as NDJSON, one line per block in order: {number, traces}",
  },
];

/**
 * The filters the service keeps (docs/interface.md, "Filters kept by the service"), answered by the service
 * from the followed head and the cached receipts, never by a node: a node's filters live on that one node,
 * and the upstreams are a pool. rpcFilters.ts runs them, and says what they cost (a kept filter's range is
 * read from the database).
 */
interface FilterMethodRow {
  group: MethodGroup;
  summary: string;
  params: ParamSpec[];
  result: TSchema;
}

/** A filter id as sent: any text (one the service never made is "filter not found", as nodes answer it). */
const filterId: ParamSpec = { name: "filter id", schema: T.String({ maxLength: 256 }), normalize: lower };
const FilterIdResult = T.String({ description: "a filter id: 0x and 32 hex digits" });

export const FILTER_METHODS = {
  eth_newFilter: {
    group: "NodeMethods",
    summary:
      "Makes a log filter kept by the service (no blockHash); eth_getFilterChanges reads its new logs.",
    params: [{ name: "filter", schema: LogFilter, normalize: logFilter }],
    result: FilterIdResult,
  },
  eth_newBlockFilter: {
    group: "NodeMethods",
    summary: "Makes a filter of new blocks kept by the service; eth_getFilterChanges reads their hashes.",
    params: [],
    result: FilterIdResult,
  },
  eth_newPendingTransactionFilter: {
    group: "NodeMethods",
    summary:
      "Makes a filter of transactions entering the nodes' pools; eth_getFilterChanges reads their hashes.",
    params: [{ name: "full transactions (false only)", schema: T.Boolean(), optional: true }],
    result: FilterIdResult,
  },
  eth_getFilterChanges: {
    group: "NodeMethods",
    summary: "What a kept filter matched since its last poll: logs, or block or transaction hashes.",
    params: [filterId],
    result: T.Union([T.Array(LogOut), T.Array(T.String())]),
  },
  eth_getFilterLogs: {
    group: "NodeMethods",
    summary: "Every log of a kept log filter's range, as eth_getLogs with its criteria.",
    params: [filterId],
    result: T.Array(LogOut),
  },
  eth_uninstallFilter: {
    group: "NodeMethods",
    summary: "Removes a kept filter: true when the caller's key held it.",
    params: [filterId],
    result: T.Boolean(),
  },
} satisfies Record<string, FilterMethodRow>;

export type FilterMethod = keyof typeof FILTER_METHODS;
