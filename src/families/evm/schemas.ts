/**
 * TypeBox schemas of what EVM nodes take and answer (docs/interface.md): the primitives of their params, the
 * resources of their answers (for the OpenAPI document) and the REST bodies of the node methods. What the
 * interface shares whatever the family is in schemas.ts at the root of src/.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { Address, BlockInteger, BlockRef, BlockString, example, OptionalBlockRef } from "../../schemas";

// ---------------------------------------------------------------------------------------------------
// Primitives

const HASH32_PATTERN = "^0x[0-9a-fA-F]{64}$";
export const Hash32 = T.String({
  pattern: HASH32_PATTERN,
  description: "a 32-byte hash: 0x followed by 64 hex digits",
});
/** A Hash32 naming a block: the docs' example is the head's (the same checks and words as Hash32). */
export const BlockHash = T.String({
  pattern: HASH32_PATTERN,
  description: Hash32.description,
  ...example("blockHash"),
});
/** A Hash32 naming a transaction: the docs' example is one the dev chain has. */
export const TransactionHash = T.String({
  pattern: HASH32_PATTERN,
  description: Hash32.description,
  ...example("transaction"),
});
export const HexData = T.String({
  pattern: "^0x([0-9a-fA-F]{2})*$",
  description: "hex-encoded bytes: 0x followed by an even number of hex digits",
});
export const HexQuantity = T.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  description: "a hex quantity: 0x followed by 1 to 64 hex digits",
});
/**
 * A signed transaction. The docs' example: anvil's account 9 sends itself 1 wei (nonce 0, EIP-1559, chain
 * 31337): on a dev chain it goes through once, then the node refuses it (nonce too low), as any node would.
 */
export const SignedTransaction = T.String({
  pattern: HexData.pattern,
  description: HexData.description,
  examples: [
    "0x02f86c827a6980843b9aca00847735940082520894a0ee7a142d267c1f36714e4a8f75612f20a797200180c001a004ce29649cb11629efb39e07b2f4687f641e963be2df778df36c836e08818ed4a077d9b06949002e77fe7dafaf64ba5d4511a742837d9643c98d233e04a25892be",
  ],
});
/** A quantity as the node takes it, or as an integer for convenience. */
export const Quantity = T.Union([T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), HexQuantity], {
  description: "a quantity: 0x-hex string or integer >= 0",
});
export const StorageSlot = T.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  description: "a storage slot: 0x followed by 1 to 64 hex digits",
  examples: ["0x0"],
});
export const TransactionIndex = T.Integer({
  minimum: 0,
  maximum: 4294967295,
  description: "a transaction index (an integer >= 0)",
  examples: [0],
});
export const Hydrated = T.Boolean({
  description: "true for full transaction objects, false for hashes",
  examples: [false],
});

/** EIP-1898: a block by hash or number, for state queries. */
export const BlockSelector = T.Union(
  [
    BlockInteger,
    BlockString,
    Hash32,
    T.Object({ blockHash: Hash32, requireCanonical: T.Optional(T.Boolean()) }),
    T.Object({ blockNumber: T.Union([BlockInteger, BlockString]) }),
  ],
  {
    description: `${BlockRef.description}, a block hash, or an EIP-1898 object {blockHash} / {blockNumber}`,
    examples: ["latest"],
  },
);

const OptionalHexQuantity = T.Optional(HexQuantity);
export const TransactionCall = T.Object(
  {
    from: T.Optional(Address),
    to: T.Optional(T.Union([Address, T.Null()])),
    gas: OptionalHexQuantity,
    gasPrice: OptionalHexQuantity,
    maxFeePerGas: OptionalHexQuantity,
    maxPriorityFeePerGas: OptionalHexQuantity,
    maxFeePerBlobGas: OptionalHexQuantity,
    value: OptionalHexQuantity,
    nonce: OptionalHexQuantity,
    data: T.Optional(HexData),
    input: T.Optional(HexData),
    accessList: T.Optional(T.Array(T.Object({ address: Address, storageKeys: T.Array(Hash32) }))),
  },
  {
    description: "a transaction call object",
    // The dev chain's token, asked its totalSupply().
    examples: [{ to: example("token"), data: "0x18160ddd" }],
  },
);

/** A tracer's options (geth's TraceConfig / TraceCallConfig): passed to the node as given. */
export const TraceOptions = T.Record(T.String(), T.Unknown(), { description: "the tracer's options" });
/** trace_replay*'s kinds of trace; a node refuses a kind it lacks. */
export const TraceTypes = T.Array(
  T.Union([T.Literal("trace"), T.Literal("vmTrace"), T.Literal("stateDiff")]),
  {
    maxItems: 3,
    description: 'the kinds of trace: "trace", "vmTrace", "stateDiff"',
    examples: [["trace"]],
  },
);
/** trace_filter's filter: a block range, the calls' senders and receivers, and a page of the matches. */
export const TraceFilter = T.Object(
  {
    fromBlock: T.Optional(BlockRef),
    toBlock: T.Optional(BlockRef),
    fromAddress: T.Optional(T.Array(Address)),
    toAddress: T.Optional(T.Array(Address)),
    after: T.Optional(T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    count: T.Optional(T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { description: "a trace filter object" },
);
/** eth_simulateV1's payload: blocks of calls with their overrides, checked by the node. */
export const SimulatePayload = T.Object(
  {
    blockStateCalls: T.Array(T.Record(T.String(), T.Unknown())),
    traceTransfers: T.Optional(T.Boolean()),
    validation: T.Optional(T.Boolean()),
    returnFullTransactions: T.Optional(T.Boolean()),
  },
  {
    description: "the simulation: {blockStateCalls, traceTransfers?, validation?, returnFullTransactions?}",
    // One block of one call: the dev chain's token asked its totalSupply().
    examples: [{ blockStateCalls: [{ calls: [{ to: example("token"), data: "0x18160ddd" }] }] }],
  },
);

/**
 * The most addresses a log filter names, and the most alternatives at one of its topic positions: geth's
 * bounds (maxAddresses, maxSubTopics) and Erigon's (--rpc.logs.querylimit), so a filter the nodes take is
 * taken, and a kept filter's criteria (eth_newFilter) are bounded in bytes.
 */
export const MAX_LOG_ADDRESSES = 1_000;
export const MAX_TOPIC_ALTERNATIVES = 1_000;
export const TopicFilter = T.Union(
  [Hash32, T.Null(), T.Array(T.Union([Hash32, T.Null()]), { maxItems: MAX_TOPIC_ALTERNATIVES })],
  { description: `a 32-byte topic, null, or a list of at most ${MAX_TOPIC_ALTERNATIVES} alternatives` },
);
/** One address or a list of them, at most MAX_LOG_ADDRESSES. */
const LogAddresses = T.Union([Address, T.Array(Address, { maxItems: MAX_LOG_ADDRESSES })], {
  description: `a 20-byte address or a list of at most ${MAX_LOG_ADDRESSES} of them`,
});
export const LogFilter = T.Object(
  {
    fromBlock: T.Optional(BlockRef),
    toBlock: T.Optional(BlockRef),
    address: T.Optional(LogAddresses),
    topics: T.Optional(T.Array(TopicFilter, { maxItems: 4 })),
    blockHash: T.Optional(Hash32),
  },
  {
    description: "a log filter object",
    examples: [{ address: example("token"), fromBlock: 0, toBlock: "latest" }],
  },
);

// ---------------------------------------------------------------------------------------------------
// Resources, for the OpenAPI document

const Str = T.String();
const StrOrNull = T.Union([T.String(), T.Null()]);
const opt = <S extends TSchema>(s: S) => T.Optional(s);

export const Transaction = T.Object(
  {
    hash: Str,
    nonce: opt(StrOrNull),
    transactionIndex: Str,
    from: Str,
    to: opt(StrOrNull),
    value: opt(StrOrNull),
    gasPrice: opt(StrOrNull),
    gas: opt(StrOrNull),
    maxFeePerGas: opt(StrOrNull),
    maxPriorityFeePerGas: opt(StrOrNull),
    chainId: opt(StrOrNull),
    accessList: opt(T.Union([T.Array(T.Unknown()), T.Null()])),
    blockHash: Str,
    blockNumber: Str,
  },
  { title: "Transaction" },
);

export const Block = T.Object(
  {
    number: T.Union([T.String(), T.Integer()]),
    hash: Str,
    parentHash: Str,
    nonce: Str,
    sha3Uncles: Str,
    logsBloom: Str,
    transactionsRoot: Str,
    stateRoot: Str,
    receiptsRoot: Str,
    miner: Str,
    difficulty: Str,
    totalDifficulty: Str,
    extraData: Str,
    size: Str,
    gasLimit: Str,
    gasUsed: Str,
    timestamp: Str,
    uncles: T.Array(Str),
    baseFeePerGas: opt(StrOrNull),
    mixHash: Str,
    transactions: T.Array(T.Union([Transaction, Str])),
  },
  { title: "Block" },
);

const logFields = {
  address: Str,
  blockHash: Str,
  blockNumber: Str,
  data: Str,
  logIndex: Str,
  topics: T.Array(Str),
  transactionHash: Str,
  transactionIndex: Str,
};
export const Log = T.Object(logFields, { title: "Log" });
export const LogOut = T.Object(
  { ...logFields, removed: T.Optional(T.Boolean({ default: false })) },
  { title: "LogOut" },
);

export const Receipt = T.Object(
  {
    blockHash: Str,
    blockNumber: Str,
    contractAddress: opt(StrOrNull),
    cumulativeGasUsed: Str,
    from: StrOrNull,
    gasUsed: Str,
    status: opt(StrOrNull),
    effectiveGasPrice: Str,
    to: opt(StrOrNull),
    transactionHash: Str,
    transactionIndex: Str,
    logs: T.Array(Log),
  },
  { title: "Receipt" },
);

const actionFields = [
  "callType",
  "gas",
  "init",
  "input",
  "to",
  "author",
  "rewardType",
  "value",
  "address",
  "balance",
  "refundAddress",
] as const;
export const Action = T.Object(
  { from: StrOrNull, ...Object.fromEntries(actionFields.map((f) => [f, opt(StrOrNull)])) },
  { title: "Action" },
);
export const TraceResult = T.Object(
  { gasUsed: opt(StrOrNull), output: opt(StrOrNull), address: opt(StrOrNull), code: opt(StrOrNull) },
  { title: "Result" },
);
export const Trace = T.Object(
  {
    action: Action,
    result: opt(T.Union([TraceResult, T.Null()])),
    error: opt(StrOrNull),
    subtraces: T.Integer(),
    traceAddress: T.Array(T.Integer()),
    transactionHash: opt(StrOrNull),
    transactionPosition: opt(T.Union([T.Integer(), T.Null()])),
    type: Str,
    blockHash: Str,
    blockNumber: T.Integer(),
  },
  { title: "Trace" },
);

// ---------------------------------------------------------------------------------------------------
// REST bodies of the node methods (docs/interface.md §2)

export const NodeBodies = {
  number: T.Object({ number: BlockRef }),
  blockByNumber: T.Object({ number: BlockRef, is_full_trx: Hydrated }),
  blockByHash: T.Object({ hash: BlockHash, is_full_trx: Hydrated }),
  hash: T.Object({ hash: BlockHash }),
  trxHash: T.Object({ trx_hash: TransactionHash }),
  trxByBlockNumberAndIndex: T.Object({ block_number: BlockRef, trx_index: TransactionIndex }),
  trxByBlockHashAndIndex: T.Object({ block_hash: BlockHash, trx_index: TransactionIndex }),
  logs: T.Object(
    {
      fromBlock: T.Optional(OptionalBlockRef),
      toBlock: T.Optional(OptionalBlockRef),
      address: T.Optional(T.Union([T.Array(Address, { maxItems: MAX_LOG_ADDRESSES }), T.Null()])),
      topics: T.Optional(T.Union([T.Array(T.Union([Hash32, T.Null()]), { maxItems: 4 }), T.Null()])),
      blockHash: T.Optional(T.Union([Hash32, T.Null()])),
    },
    // The dev chain's token's logs (its mint and a transfer).
    { examples: [{ fromBlock: 0, toBlock: "latest", address: [example("token")] }] },
  ),
};
