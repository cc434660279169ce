/**
 * TypeBox schemas of the interface (docs/interface.md): the primitives requests are checked against, the
 * resources the service answers with (for the OpenAPI document and the types of the answers it builds) and
 * the REST bodies. The `block-ref` format is checked by validation.ts.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { BLOCKCHAINS } from "./blockchain";
import { BLOCK_TAGS } from "./blockRef";

const TAGS = BLOCK_TAGS.join(", ");

// ---------------------------------------------------------------------------------------------------
// Primitives

export const BlockInteger = T.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "a block number (an integer >= 0)",
});
export const BlockString = T.String({
  format: "block-ref",
  description: `a block number (0x-hex or decimal string below 2^64) or a tag: ${TAGS}`,
  examples: ["0x1b4", "436", "latest"],
});
const BLOCK_REF_DESCRIPTION = `a block number (integer, 0x-hex or decimal string) or a tag: ${TAGS}`;
export const BlockRef = T.Union([BlockInteger, BlockString], { description: BLOCK_REF_DESCRIPTION });
export const OptionalBlockRef = T.Union([BlockInteger, BlockString, T.Null()], {
  description: `${BLOCK_REF_DESCRIPTION}, or null`,
});

export const Hash32 = T.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "a 32-byte hash: 0x followed by 64 hex digits",
});
export const Address = T.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "a 20-byte address: 0x followed by 40 hex digits",
});
export const HexData = T.String({
  pattern: "^0x([0-9a-fA-F]{2})*$",
  description: "hex-encoded bytes: 0x followed by an even number of hex digits",
});
export const HexQuantity = T.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  description: "a hex quantity: 0x followed by 1 to 64 hex digits",
});
/** A quantity as the node takes it, or as an integer for convenience. */
export const Quantity = T.Union([T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), HexQuantity], {
  description: "a quantity: 0x-hex string or integer >= 0",
});
export const StorageSlot = T.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  description: "a storage slot: 0x followed by 1 to 64 hex digits",
});
export const TransactionIndex = T.Integer({
  minimum: 0,
  maximum: 4294967295,
  description: "a transaction index (an integer >= 0)",
});
export const Hydrated = T.Boolean({ description: "true for full transaction objects, false for hashes" });

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
    description: `${BLOCK_REF_DESCRIPTION}, a block hash, or an EIP-1898 object {blockHash} / {blockNumber}`,
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
  { description: "a transaction call object" },
);

export const TopicFilter = T.Union([Hash32, T.Null(), T.Array(T.Union([Hash32, T.Null()]))], {
  description: "a 32-byte topic, null, or a list of alternatives",
});
export const LogFilter = T.Object(
  {
    fromBlock: T.Optional(BlockRef),
    toBlock: T.Optional(BlockRef),
    address: T.Optional(T.Union([Address, T.Array(Address)])),
    topics: T.Optional(T.Array(TopicFilter, { maxItems: 4 })),
    blockHash: T.Optional(Hash32),
  },
  { description: "a log filter object" },
);

// ---------------------------------------------------------------------------------------------------
// Resources, for the OpenAPI document and the types of what the service builds

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

export const TRANSFER_TYPES = ["erc20transfer", "erc721transfer", "trx"] as const;
export const TransferTypeEnum = T.Union(
  TRANSFER_TYPES.map((t) => T.Literal(t)),
  { title: "TransferType" },
);
export const Transfer = T.Object(
  {
    blockNumber: T.Integer(),
    blockTimestamp: T.String({ format: "date-time" }),
    transactionHash: Str,
    transactionIndex: T.Integer(),
    logIndex: opt(T.Union([T.Integer(), T.Null()])),
    contractAddress: opt(StrOrNull),
    transferType: Str,
    from: Str,
    to: opt(StrOrNull),
    value: T.Integer({ description: "exact: a uint256 is written with all its digits" }),
    fee: T.Integer({ description: "wei, exact" }),
    transactionError: T.Boolean(),
    asset: opt(StrOrNull),
    decimals: opt(T.Union([T.Integer(), T.Null()])),
  },
  { title: "Transfer" },
);

export const TokenBalance = T.Object(
  { contractAddress: Str, tokenBalance: opt(StrOrNull), error: opt(T.Union([T.Boolean(), T.Null()])) },
  { title: "TokenBalance" },
);
export const TokenBalanceByAddress = T.Object(
  { address: Str, tokenBalances: T.Array(TokenBalance) },
  { title: "TokenBalanceByAddress" },
);
export const TokenMetadataOut = T.Object(
  {
    contractAddress: Str,
    blockchain: Str,
    tokenName: Str,
    tokenSymbol: Str,
    tokenDecimals: T.Integer(),
    lastUpdate: T.String({ format: "date-time" }),
  },
  { title: "TokenMetadataOut" },
);

export const BlockchainEnum = T.Union(
  BLOCKCHAINS.map((b) => T.Literal(b)),
  { title: "Blockchain" },
);
/** An integer of chain data: built as a bigint, written as its exact digits. */
const ExactInteger = T.Unsafe<bigint>({ type: "integer" });
export const Value = T.Object(
  { value: ExactInteger, decimals: opt(T.Union([T.Integer(), T.Null()])) },
  { title: "Value" },
);
export const FilterInfo = T.Object(
  {
    api_key: Str,
    blockchain: BlockchainEnum,
    address: Str,
    contract_address: Str,
    created_at: T.String({ format: "date-time" }),
    filter_id: Str,
    with_approval: T.Boolean(),
  },
  { title: "FilterInfo" },
);
export const FilterResult = T.Object(
  {
    from_address: T.Array(Str),
    to_address: T.Array(Str),
    contract_address: Str,
    type: T.Union([T.Literal("trx"), T.Literal("erc20"), T.Literal("trc20"), T.Literal("approval")], {
      title: "FilterType",
    }),
    value: Value,
    currency: opt(StrOrNull),
    transaction: T.Object({ hash: Str, fee: Value, fee_symbol: Str }, { title: "TransactionOut" }),
    filter_id: Str,
    filter_target: T.Object(
      {
        address: Str,
        direction: T.Union([T.Literal("deposit"), T.Literal("withdrawal"), T.Literal("unknown")], {
          title: "TokenMovementDirection",
        }),
      },
      { title: "FilterTargetOut" },
    ),
    block: T.Object(
      { hash: Str, number: T.Integer(), created_at: T.String({ format: "date-time" }) },
      { title: "BlockOut" },
    ),
    trx_success: T.Boolean(),
  },
  { title: "FilterResult" },
);

export const ValidationErrorItem = T.Object(
  { loc: T.Array(T.Union([T.String(), T.Integer()])), msg: Str, type: Str },
  { title: "ValidationError" },
);
export const HTTPValidationError = T.Object(
  { detail: T.Optional(T.Array(ValidationErrorItem)) },
  { title: "HTTPValidationError" },
);
export const ErrorDetail = T.Object({ detail: Str }, { title: "ErrorDetail" });

export const BlockRange = T.Object(
  {
    date: T.String({ format: "date" }),
    fromBlock: T.Integer(),
    toBlock: T.Integer(),
    blockCount: T.Integer(),
  },
  { title: "BlockRange" },
);
export const DayStats = T.Object(
  {
    date: T.String({ format: "date" }),
    fromBlock: T.Integer(),
    toBlock: T.Integer(),
    blockCount: T.Integer(),
    transactionCount: T.Integer(),
    transferCount: T.Integer(),
    activeAddresses: T.Integer(),
    totalGasUsed: T.Integer(),
    averageGasPrice: T.Integer(),
    totalFees: T.Integer(),
    burntFees: T.Integer(),
    minersReward: T.Integer(),
    uncleBlockReward: T.Integer(),
  },
  { title: "DayStats" },
);

// ---------------------------------------------------------------------------------------------------
// REST bodies (docs/interface.md §2)

/** Token contracts one balances call may name. */
export const MAX_BALANCE_CONTRACTS = 1_000;
/** Addresses (or contracts) one transfer query may name. */
const MAX_FILTER_ADDRESSES = 1_000;

const body = (properties: Parameters<typeof T.Object>[0], strict = false) =>
  T.Object(properties, strict ? { additionalProperties: false } : {});

export const Bodies = {
  number: body({ number: BlockRef }),
  blockByNumber: body({ number: BlockRef, is_full_trx: Hydrated }),
  blockByHash: body({ hash: Hash32, is_full_trx: Hydrated }),
  hash: body({ hash: Hash32 }),
  trxHash: body({ trx_hash: Hash32 }),
  trxByBlockNumberAndIndex: body({ block_number: BlockRef, trx_index: TransactionIndex }),
  trxByBlockHashAndIndex: body({ block_hash: Hash32, trx_index: TransactionIndex }),
  timestamp: body({ timestamp: T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) }),
  date: body({ date: T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$" }) }),
  logs: body({
    fromBlock: T.Optional(OptionalBlockRef),
    toBlock: T.Optional(OptionalBlockRef),
    address: T.Optional(T.Union([T.Array(Address), T.Null()])),
    topics: T.Optional(T.Union([T.Array(T.Union([Hash32, T.Null()]), { maxItems: 4 }), T.Null()])),
    blockHash: T.Optional(T.Union([Hash32, T.Null()])),
  }),
  tokenBalances: body({
    address: Address,
    list_contract_address: T.Array(Address, { maxItems: MAX_BALANCE_CONTRACTS }),
  }),
  tokenMetadata: body({ token_address: Address }),
};

const transferFilterFields = {
  fromBlock: T.Optional(OptionalBlockRef),
  toBlock: T.Optional(OptionalBlockRef),
  transferType: T.Optional(T.Union([...TRANSFER_TYPES.map((t) => T.Literal(t)), T.Null()])),
  contractAddresses: T.Optional(
    T.Union([T.Array(Address, { maxItems: MAX_FILTER_ADDRESSES }), Address, T.Null()]),
  ),
  offset: T.Optional(T.Union([T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), T.Null()])),
  limit: T.Optional(T.Union([T.Integer({ minimum: 0, maximum: 500 }), T.Null()])),
};
export const TransfersByAddressBody = body(
  {
    addresses: T.Union([T.Array(Address, { minItems: 1, maxItems: MAX_FILTER_ADDRESSES }), Address]),
    transferDirection: T.Optional(T.Union([T.Literal("to"), T.Literal("from"), T.Null()])),
    ...transferFilterFields,
  },
  true,
);
export const TransfersBody = body(transferFilterFields, true);
