/**
 * TypeBox schemas of the interface (docs/interface.md): the primitives requests are checked against, the
 * resources the service answers with (for the OpenAPI document and the types of the answers it builds) and
 * the REST bodies. The `block-ref` and `address` formats are checked by validation.ts.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { ADDRESS_FORMAT } from "./addresses";
import { BLOCKCHAINS } from "./blockchain";
import { BLOCK_TAGS } from "./blockRef";

const TAGS = BLOCK_TAGS.join(", ");

// ---------------------------------------------------------------------------------------------------
// Examples of the API docs

/**
 * "Try it out" must ask about data the chain has, so the docs' examples name some values by role: a schema,
 * or a value inside an example, written `{"x-example": role}` shows the role's value (http/docs.ts). The
 * followed head gives `blockHash`, `unixTime` and `date` as the docs are served; the chain family gives the
 * rest (its dev chain's: families/family.ts `examples`).
 */
export type ExampleRole = "account" | "token" | "transaction" | "blockHash" | "unixTime" | "date";
/** The roles a chain family fills: an account, a token contract and a transaction its dev chain has. */
export type FamilyExamples = Readonly<Record<"account" | "token" | "transaction", string>>;
/** A value of an example (or a schema's keyword) that the docs fill with a role's value. */
export const example = (role: ExampleRole) => ({ "x-example": role });

// ---------------------------------------------------------------------------------------------------
// Primitives

export const BlockInteger = T.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "a block number (an integer >= 0)",
  // Block 1: every chain has it, and a dev chain's holds its first transaction.
  examples: [1],
});
export const BlockString = T.String({
  format: "block-ref",
  description: `a block number (0x-hex or decimal string below 2^64) or a tag: ${TAGS}`,
  examples: ["0x1", "1", "latest"],
});
const BLOCK_REF_DESCRIPTION = `a block number (integer, 0x-hex or decimal string) or a tag: ${TAGS}`;
export const BlockRef = T.Union([BlockInteger, BlockString], { description: BLOCK_REF_DESCRIPTION });
export const OptionalBlockRef = T.Union([BlockInteger, BlockString, T.Null()], {
  description: `${BLOCK_REF_DESCRIPTION}, or null`,
});

/** Checked by the served family's codec (addresses.ts), which also says what a mismatch should have been. */
const ADDRESS_DESCRIPTION =
  "an address of the chain served, in its family's form (EVM: 0x followed by 40 hex digits)";
export const Address = T.String({
  format: ADDRESS_FORMAT,
  description: ADDRESS_DESCRIPTION,
  ...example("account"),
});
/** An address that names a token contract: an Address (the same checks and words) whose docs' example is a token. */
export const TokenAddress = T.String({
  format: ADDRESS_FORMAT,
  description: ADDRESS_DESCRIPTION,
  ...example("token"),
});

// ---------------------------------------------------------------------------------------------------
// Resources, for the OpenAPI document and the types of what the service builds

const Str = T.String();
const StrOrNull = T.Union([T.String(), T.Null()]);
const opt = <S extends TSchema>(s: S) => T.Optional(s);

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
/** A watch filter's result, its `type` one of `types` (the family's: a coin's chain has no tokens). */
export const filterResult = (types: readonly string[]) =>
  T.Object(
    {
      from_address: T.Array(Str),
      to_address: T.Array(Str),
      contract_address: Str,
      type: T.Union(
        types.map((t) => T.Literal(t)),
        { title: "FilterType" },
      ),
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
/** The result types of the EVM family (the interface's FilterType); a family may give others (WatchMatcher.types). */
export const EVM_FILTER_TYPES = ["trx", "erc20", "trc20", "approval"] as const;

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

/** The bodies of the shared data operations (the node methods' are their family's: families/evm/schemas.ts). */
export const Bodies = {
  timestamp: body({
    timestamp: T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...example("unixTime") }),
  }),
  date: body({ date: T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", ...example("date") }) }),
  tokenBalances: body({
    address: Address,
    list_contract_address: T.Array(TokenAddress, {
      maxItems: MAX_BALANCE_CONTRACTS,
      examples: [[example("token")]],
    }),
  }),
  tokenMetadata: body({ token_address: TokenAddress }),
};

/** The largest page of transfers. */
export const MAX_TRANSFER_LIMIT = 500;
/**
 * The deepest `offset` of a transfer query: a page reads the rows it skips, so deeper pages are read after a
 * row (`after`, keyset paging), each as cheap as the first (docs/interface.md §4.6).
 */
export const MAX_TRANSFER_OFFSET = 10_000;
/** A position within a block in the index's tables (PostgreSQL's integer). */
const IndexPosition = T.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });

/** Keyset paging's cursor: the place of the last row seen. `nullLogIndex`: a row may have none (EVM's native rows). */
function transferCursor(nullLogIndex: boolean) {
  return T.Object(
    {
      blockNumber: T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      transactionIndex: IndexPosition,
      logIndex: nullLogIndex ? T.Union([IndexPosition, T.Null()]) : IndexPosition,
    },
    {
      additionalProperties: false,
      description: "the last row's blockNumber, transactionIndex and logIndex, as answered",
    },
  );
}

/**
 * The transfer queries' bodies for a family's rows: `types`, the transferType names its index holds; `chain`,
 * the chain's name; `nullLogIndex`, whether a row may have no logIndex. Where it holds every type (EVM) the
 * interface's bodies; where it holds no token type the document offers only what it serves, and a refusal
 * names the chain.
 */
export function transferBodies(types: readonly string[], chain: string, nullLogIndex: boolean) {
  const tokens = types.some((t) => t !== "trx");
  const typeNames = types.map((t) => `"${t}"`).join(", ");
  const noContracts = `null or [] (${chain} has no token contracts)`;
  const fields = {
    fromBlock: T.Optional(OptionalBlockRef),
    toBlock: T.Optional(OptionalBlockRef),
    transferType: T.Optional(
      T.Union(
        [...types.map((t) => T.Literal(t)), T.Null()],
        tokens
          ? {}
          : { description: `${typeNames} or null (${chain}'s transfers are ${types.join(", ")} only)` },
      ),
    ),
    contractAddresses: T.Optional(
      tokens
        ? T.Union([T.Array(Address, { maxItems: MAX_FILTER_ADDRESSES }), Address, T.Null()])
        : T.Union([T.Null(), T.Array(Address, { maxItems: 0, description: noContracts })], {
            description: noContracts,
          }),
    ),
    offset: T.Optional(
      T.Union([
        T.Integer({
          minimum: 0,
          maximum: MAX_TRANSFER_OFFSET,
          "x-past-maximum": `page deeper with "after" (the last row's blockNumber, transactionIndex and logIndex)`,
        }),
        T.Null(),
      ]),
    ),
    limit: T.Optional(T.Union([T.Integer({ minimum: 0, maximum: MAX_TRANSFER_LIMIT }), T.Null()])),
    after: T.Optional(T.Union([transferCursor(nullLogIndex), T.Null()])),
  };
  return {
    byAddress: body(
      {
        addresses: T.Union([T.Array(Address, { minItems: 1, maxItems: MAX_FILTER_ADDRESSES }), Address]),
        transferDirection: T.Optional(T.Union([T.Literal("to"), T.Literal("from"), T.Null()])),
        ...fields,
      },
      true,
    ),
    range: body(fields, true),
  };
}
