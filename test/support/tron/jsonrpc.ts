/**
 * java-tron's JSON-RPC face (`/jsonrpc`) for the stand-in java-tron of the test suite: a pure translator from
 * the scenario chain, held in java-tron's HTTP forms, to the answers java-tron writes.
 *
 * Modelled on java-tron 4.8.1 (TronJsonRpcImpl.java, types/*.java, JsonRpcApiUtil.java, Wallet.java at
 * tronprotocol/java-tron 6e117b25, the 4.8.1 release branch with eth_getBlockReceipts merged) served by
 * jsonrpc4j 1.6 (JsonRpcBasicServer.java at briandilley/jsonrpc4j 9ca8812c), and on the answers the TRON
 * documentation captured on Nile (node `TRON/v4.8.1/Linux/Java1.8`; test/fixtures/tron/jsonrpc/SOURCES.md).
 * Where the two differ the captures win: logs carry `blockTimestamp`, `safe` is refused by name, block
 * selectors take decimal heights and refuse negative or oversized ones, `input` is accepted beside `data`.
 * Members are written in alphabetical order, as java-tron's `@JsonPropertyOrder(alphabetic = true)` does.
 */
import { keccak256 } from "ethers";

// ---------------------------------------------------------------------------------------------------------
// Input: the scenario chain in java-tron's HTTP forms (`visible: false`, addresses `41` + 20 bytes hex)

type Int = number | string | bigint;

export interface HttpContract {
  parameter: { value: Record<string, unknown>; type_url: string };
  type: string;
  Permission_id?: number;
}

export interface HttpTransaction {
  txID: string;
  raw_data: {
    contract: HttpContract[];
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    timestamp?: number;
    fee_limit?: Int;
    data?: string;
  };
  ret?: { contractRet?: string; ret?: string; fee?: Int }[];
  signature?: string[];
  raw_data_hex: string;
}

/** `/wallet/getblock {"detail": true}` (or `getblockbynum`): a block and its transactions. */
export interface HttpBlock {
  blockID: string;
  block_header: {
    raw_data: {
      number?: number;
      txTrieRoot: string;
      witness_address: string;
      parentHash: string;
      timestamp?: number;
      version?: number;
      witness_id?: number;
      accountStateRoot?: string;
    };
    witness_signature?: string;
  };
  transactions?: HttpTransaction[];
}

/** One entry of `/wallet/gettransactioninfobyblocknum`. */
export interface HttpTxInfo {
  id: string;
  fee?: Int;
  blockNumber: number;
  blockTimeStamp: number;
  contractResult?: string[];
  contract_address?: string;
  receipt: {
    energy_usage?: Int;
    energy_fee?: Int;
    origin_energy_usage?: Int;
    energy_usage_total?: Int;
    net_usage?: Int;
    net_fee?: Int;
    result?: string;
    energy_penalty_total?: Int;
  };
  /** address: 20 bytes hex without `41`; topics: 32 bytes hex without `0x`. */
  log?: { address?: string; topics?: string[]; data?: string }[];
  internal_transactions?: unknown[];
  result?: string;
  resMessage?: string;
  unfreeze_amount?: Int;
  withdraw_amount?: Int;
  withdraw_expire_amount?: Int;
  cancel_unfreezeV2_amount?: Record<string, Int>;
}

/** What the translator reads of the scenario chain. Addresses handed to it are `41` + 20 bytes, lower case. */
export interface TronChainView {
  /** `0x2b6653dc` mainnet, `0xcd8690dc` Nile: the last 4 bytes of block 0's blockID. */
  chainId: string;
  head(): number;
  solidified(): number;
  blockByNum(n: number): HttpBlock | undefined;
  /** 64 hex digits, lower case, no `0x`. */
  blockById(id: string): HttpBlock | undefined;
  infosOf(n: number): HttpTxInfo[];
  /** The block holding a transaction (64 hex digits, lower case), if any. */
  blockNumOfTx(txId: string): number | undefined;
  balanceOf(address: string): bigint;
  /** Runtime code (hex, no `0x`) of a contract; undefined when the address holds none. */
  codeOf(address: string): string | undefined;
  /** A constant call's result (hex, no `0x`); throws TronCallReverted for a revert. */
  call(to: string, data: string): string;
  /** Energy a call or creation uses (eth_estimateGas); 0 when the scenario does not say. */
  energyOf?(to: string | undefined, data: string): number;
  /** A contract's storage slot (32 bytes hex); zeros when the scenario does not say. */
  storageAt?(address: string, key: string): string;
  /** Sun per energy at a time (ms): `getEnergyFee` and its history (`energyPriceHistory`). */
  energyFee(timestampMs: number): number;
  /** The node's own state; defaults are the Nile captures' (`TRON/v4.8.1/Linux/Java1.8`, peers present). */
  node?: { clientVersion?: string; peers?: number; activeConnections?: number; beginSyncNum?: number };
  /** For eth_syncing's estimate of the highest block; defaults to Date.now. */
  now?(): number;
}

/** A revert of a constant call; `data` is the revert data (hex, no `0x`). */
export class TronCallReverted extends Error {
  constructor(readonly data: string) {
    super("REVERT opcode executed");
  }
}

/** What java-tron writes for a body that is not JSON (the HTTP face parses the body; jsonrpc4j answers so). */
export const TRON_JSONRPC_PARSE_ERROR = Object.freeze({
  jsonrpc: "2.0",
  id: null,
  error: { code: -32700, message: "JSON parse error" },
});

// ---------------------------------------------------------------------------------------------------------
// Errors: java-tron's exceptions as jsonrpc4j resolves them

const DATA = "{}"; // every @JsonRpcError of TronJsonRpc.java declares data = "{}"

class RpcError {
  constructor(
    readonly code: number,
    readonly message: string | null,
    readonly data?: unknown,
  ) {}
}
/** jsonrpc4j turns a Jackson mapping failure into a parse error for the whole request, id null. */
class MappingError {}

const invalidParams = (message: string) => new RpcError(-32602, message, DATA);
const invalidRequest = (message: string) => new RpcError(-32600, message, DATA);
const internal = (message: string) => new RpcError(-32000, message, DATA);
const nullPointer = () =>
  new RpcError(-32001, null, { exceptionTypeName: "java.lang.NullPointerException", message: null });

const JSON_ERROR = "invalid json request";
const BLOCK_NUM_ERROR = "invalid block number";
const TAG_NOT_SUPPORT_ERROR = "TAG [earliest | pending | finalized | safe] not supported";
const QUANTITY_NOT_SUPPORT_ERROR = "QUANTITY not supported, just support TAG as latest";
const HASH_ERROR = "invalid hash value";
const MAX_BLOCK_RANGE = 5000; // node.jsonrpc.maxBlockRange default
const MAX_TOPICS = 4;
const MAX_SUB_TOPICS = 1000; // node.jsonrpc.maxSubTopics default
const MAX_ADDRESSES = 1000; // node.jsonrpc.maxAddressSize default
const LONG_MAX = (1n << 63n) - 1n;

/**
 * Methods TronJsonRpc.java declares and refuses with JsonRpcMethodNotFoundException, with their declared
 * arities (another count is jsonrpc4j's "method parameters invalid").
 */
const REFUSED: Record<string, number> = {
  eth_submitWork: 3,
  eth_sendRawTransaction: 1,
  eth_sendTransaction: 1,
  eth_sign: 2,
  eth_signTransaction: 1,
  parity_nextNonce: 1,
  eth_getTransactionCount: 2,
  eth_getCompilers: 0,
  eth_compileSolidity: 1,
  eth_compileLLL: 1,
  eth_compileSerpent: 1,
  eth_submitHashrate: 2,
};

// ---------------------------------------------------------------------------------------------------------
// Forms

const ZERO32 = `0x${"00".repeat(32)}`;
const LOGS_BLOOM = `0x${"00".repeat(256)}`;
const hex = (n: Int) => `0x${BigInt(n).toString(16)}`;
const big = (v: unknown): bigint => {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" || (typeof v === "string" && /^-?\d+$/.test(v))) return BigInt(v);
  return 0n;
};
/** ByteArray.toJsonHexAddress: `0x` + the hex, a leading `41` dropped; null for no bytes. */
const jsonAddress = (a: unknown): string | null => {
  if (typeof a !== "string" || a === "") return null;
  const h = a.toLowerCase();
  return `0x${h.startsWith("41") ? h.slice(2) : h}`;
};
const isHex = (s: string) => /^[0-9a-fA-F]*$/.test(s);
const strip0x = (s: string) => (s.startsWith("0x") ? s.slice(2) : s);

/** ByteArray.fromHexString: optional `0x`, odd lengths padded; bouncycastle's message for bad digits. */
function fromHexString(s: string | null | undefined): string {
  if (s == null) return "";
  let h = strip0x(s);
  if (!isHex(h)) throw new DecodeError();
  if (h.length % 2) h = `0${h}`;
  return h.toLowerCase();
}
class DecodeError extends Error {
  constructor() {
    super("exception decoding Hex string: invalid characters encountered in Hex string");
  }
}

/** JsonRpcApiUtil.addressCompatibleToByteArray: 20 bytes, or 21 starting with 41; answers `41` + 20 bytes. */
function addressCompatible(s: string | null | undefined): string {
  let h: string;
  try {
    h = fromHexString(s);
  } catch (e) {
    throw invalidParams((e as Error).message);
  }
  if (h.length === 40) return `41${h}`;
  if (h.length === 42 && h.startsWith("41")) return h;
  throw invalidParams("invalid address hash value");
}

function hashParam(s: string | null): string {
  if (s == null || !/^(0x)?[0-9a-fA-F]{64}$/.test(s)) throw invalidParams(HASH_ERROR);
  return strip0x(s).toLowerCase();
}

/** A height as java-tron's block selectors read it: `0x` hex or decimal, a non-negative long. */
function parseHeight(s: string): bigint | undefined {
  let n: bigint;
  if (/^0x[0-9a-fA-F]+$/.test(s)) n = BigInt(s);
  else if (/^[0-9]+$/.test(s)) n = BigInt(s);
  else return undefined;
  return n <= LONG_MAX ? n : undefined;
}

const isTag = (s: string | null, tag: string) => s != null && s.toLowerCase() === tag;

/** Wallet.getByJsonBlockId: latest, earliest, finalized or a height; pending and safe refused. */
function blockBySelector(chain: TronChainView, s: string | null): HttpBlock | undefined {
  if (isTag(s, "earliest")) return chain.blockByNum(0);
  if (isTag(s, "latest")) return chain.blockByNum(chain.head());
  if (isTag(s, "finalized")) return chain.blockByNum(chain.solidified());
  if (isTag(s, "pending")) throw invalidParams("TAG pending not supported");
  if (isTag(s, "safe")) throw invalidParams("TAG safe not supported");
  const n = s == null ? undefined : parseHeight(s);
  if (n === undefined) throw invalidParams(BLOCK_NUM_ERROR);
  return n > BigInt(chain.head()) ? undefined : chain.blockByNum(Number(n));
}

/** The state methods answer `latest` only (getTrxBalance, getStorageAt, getABIOfSmartContract, getCall). */
function requireLatest(tag: string | null): void {
  if (isTag(tag, "latest")) return;
  if (["earliest", "pending", "finalized", "safe"].some((t) => isTag(tag, t))) {
    throw invalidParams(TAG_NOT_SUPPORT_ERROR);
  }
  if (tag == null) throw nullPointer();
  if (parseHeight(tag) === undefined) throw invalidParams(BLOCK_NUM_ERROR);
  throw invalidParams(QUANTITY_NOT_SUPPORT_ERROR);
}

const blockNum = (b: HttpBlock) => b.block_header.raw_data.number ?? 0;
const blockTime = (b: HttpBlock) => b.block_header.raw_data.timestamp ?? 0;

/** JsonRpcApiUtil.getTo: the first receiver a contract names. */
function toAddressOf(c: HttpContract | undefined): string | null {
  const v = c?.parameter.value ?? {};
  switch (c?.type) {
    case "AccountCreateContract":
      return jsonAddress(v["account_address"]);
    case "TransferContract":
    case "TransferAssetContract":
    case "ParticipateAssetIssueContract":
      return jsonAddress(v["to_address"]);
    case "VoteAssetContract":
      return jsonAddress((v["vote_address"] as string[] | undefined)?.[0]);
    case "VoteWitnessContract":
      return jsonAddress((v["votes"] as { vote_address?: string }[] | undefined)?.[0]?.vote_address);
    case "FreezeBalanceContract":
    case "UnfreezeBalanceContract":
    case "DelegateResourceContract":
    case "UnDelegateResourceContract":
      return jsonAddress(v["receiver_address"]);
    case "TriggerSmartContract":
    case "UpdateSettingContract":
    case "UpdateEnergyLimitContract":
    case "ClearABIContract":
      return jsonAddress(v["contract_address"]);
    case "ShieldedTransferContract":
      return jsonAddress(v["transparent_to_address"]);
    default:
      return null;
  }
}

/** JsonRpcApiUtil.getTransactionAmount: what a transaction moves, by contract type. */
function amountOf(c: HttpContract, info: HttpTxInfo | undefined): bigint {
  const v = c.parameter.value;
  switch (c.type) {
    case "TransferContract":
    case "TransferAssetContract":
      return big(v["amount"]);
    case "VoteWitnessContract":
      return ((v["votes"] as { vote_count?: Int }[] | undefined) ?? []).reduce(
        (s, x) => s + big(x.vote_count),
        0n,
      );
    case "WitnessCreateContract":
      return 9_999_000_000n;
    case "AssetIssueContract":
    case "ExchangeCreateContract":
      return 1_024_000_000n;
    case "FreezeBalanceContract":
      return big(v["frozen_balance"]);
    case "TriggerSmartContract":
      return big(v["call_value"]);
    case "ExchangeInjectContract":
    case "ExchangeWithdrawContract":
    case "ExchangeTransactionContract":
      return big(v["quant"]);
    case "AccountPermissionUpdateContract":
      return 100_000_000n;
    case "ShieldedTransferContract":
      return big(v["from_amount"]) > 0n ? big(v["from_amount"]) : big(v["to_amount"]);
    case "UnfreezeBalanceContract":
    case "UnfreezeBalanceV2Contract":
      return big(info?.unfreeze_amount);
    case "WithdrawBalanceContract":
      return big(info?.withdraw_amount);
    case "WithdrawExpireUnfreezeContract":
      return big(info?.withdraw_expire_amount);
    case "CancelAllUnfreezeV2Contract":
      return Object.values(info?.cancel_unfreezeV2_amount ?? {}).reduce<bigint>((s, x) => s + big(x), 0n);
    default:
      // UnfreezeAssetContract reads the issuer's asset from the node's store: not in the scenario, 0.
      return 0n;
  }
}

const energyOfInfo = (info: HttpTxInfo | undefined) => big(info?.receipt.energy_usage_total);

/** types/TransactionResult.java */
function transactionResult(
  block: HttpBlock,
  index: number,
  tx: HttpTransaction,
  energy: bigint,
  info: HttpTxInfo | undefined,
  energyFee: number,
) {
  const c = tx.raw_data.contract[0];
  const genesis = blockNum(block) === 0;
  const sig = tx.signature?.[0] ?? "";
  let v = "0x00";
  let r = ZERO32;
  let s = ZERO32;
  if (sig.length >= 130) {
    let vByte = Number.parseInt(sig.slice(128, 130), 16);
    if (vByte < 27) vByte += 27;
    v = hex(vByte);
    r = `0x${sig.slice(0, 64)}`;
    s = `0x${sig.slice(64, 128)}`;
  }
  const data = c?.type === "TriggerSmartContract" ? String(c.parameter.value["data"] ?? "") : "";
  return {
    blockHash: `0x${block.blockID}`,
    blockNumber: hex(blockNum(block)),
    from: c && !genesis ? jsonAddress(c.parameter.value["owner_address"]) : `0x${"00".repeat(20)}`,
    gas: hex(energy),
    gasPrice: hex(energyFee),
    hash: `0x${tx.txID}`,
    input: `0x${data}`,
    nonce: `0x${"00".repeat(8)}`,
    r,
    s,
    to: c ? toAddressOf(c) : `0x${"00".repeat(20)}`,
    transactionIndex: hex(index),
    type: "0x0",
    v,
    value: hex(c ? amountOf(c, info) : 0n),
  };
}

// Protocol-buffer sizes, for BlockResult.size (block.getSerializedSize()) from the HTTP form.
const varintSize = (n: bigint) => {
  let v = n < 0n ? n + (1n << 64n) : n;
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
};
const intField = (n: Int | undefined) => (n == null || BigInt(n) === 0n ? 0 : 1 + varintSize(BigInt(n)));
const bytesField = (hexBytes: string | undefined) => {
  const len = Math.ceil((hexBytes?.length ?? 0) / 2);
  return len === 0 ? 0 : 1 + varintSize(BigInt(len)) + len;
};
const messageField = (size: number) => 1 + varintSize(BigInt(size)) + size; // sub-messages are written even when empty
/** Transaction.Result.contractResult and .code, by name. */
const CONTRACT_RESULTS = [
  "DEFAULT",
  "SUCCESS",
  "REVERT",
  "BAD_JUMP_DESTINATION",
  "OUT_OF_MEMORY",
  "PRECOMPILED_CONTRACT",
  "STACK_TOO_SMALL",
  "STACK_TOO_LARGE",
  "ILLEGAL_OPERATION",
  "STACK_OVERFLOW",
  "OUT_OF_ENERGY",
  "OUT_OF_TIME",
  "JVM_STACK_OVER_FLOW",
  "UNKNOWN",
  "TRANSFER_FAILED",
  "INVALID_CODE",
];

function blockSize(b: HttpBlock): number {
  const raw = b.block_header.raw_data;
  const rawSize =
    intField(raw.timestamp) +
    bytesField(raw.txTrieRoot) +
    bytesField(raw.parentHash) +
    intField(raw.number) +
    intField(raw.witness_id) +
    bytesField(raw.witness_address) +
    intField(raw.version) +
    bytesField(raw.accountStateRoot);
  const header = messageField(rawSize) + bytesField(b.block_header.witness_signature);
  let size = messageField(header); // Block.block_header
  for (const tx of b.transactions ?? []) {
    let t = bytesField(tx.raw_data_hex);
    for (const sig of tx.signature ?? []) t += bytesField(sig);
    for (const ret of tx.ret ?? []) {
      const contractRet = Math.max(0, CONTRACT_RESULTS.indexOf(ret.contractRet ?? "DEFAULT"));
      const r = intField(ret.fee) + intField(ret.ret === "FAILED" ? 1 : 0) + intField(contractRet);
      t += messageField(r);
    }
    size += messageField(t);
  }
  return size;
}

/** types/BlockResult.java */
function blockResult(chain: TronChainView, b: HttpBlock, fullTx: boolean) {
  const num = blockNum(b);
  const infos = chain.infosOf(num);
  const txs = b.transactions ?? [];
  const energyFee = chain.energyFee(blockTime(b));
  let gasLimit = 0n;
  let gasUsed = 0n;
  const transactions = txs.map((tx, i) => {
    gasLimit += big(tx.raw_data.fee_limit);
    const energy = energyOfInfo(infos[i]);
    gasUsed += energy;
    return fullTx ? transactionResult(b, i, tx, energy, infos[i], energyFee) : `0x${tx.txID}`;
  });
  const raw = b.block_header.raw_data;
  return {
    baseFeePerGas: "0x0",
    difficulty: "0x0",
    extraData: "0x",
    gasLimit: hex(gasLimit),
    gasUsed: hex(gasUsed),
    hash: `0x${b.blockID}`,
    logsBloom: LOGS_BLOOM,
    miner: num === 0 ? `0x${"00".repeat(20)}` : jsonAddress(raw.witness_address),
    mixHash: ZERO32,
    nonce: `0x${"00".repeat(8)}`,
    number: hex(num),
    parentHash: `0x${raw.parentHash}`,
    receiptsRoot: ZERO32,
    sha3Uncles: ZERO32,
    size: hex(blockSize(b)),
    stateRoot: `0x${raw.accountStateRoot ?? ""}`,
    timestamp: hex(Math.floor(blockTime(b) / 1000)),
    totalDifficulty: "0x0",
    transactions,
    transactionsRoot: `0x${raw.txTrieRoot}`,
    uncles: [],
  };
}

/** A log as receipts and eth_getLogs write it (TransactionLog, LogFilterElement). */
function logElement(
  b: HttpBlock,
  info: HttpTxInfo,
  txIndex: number,
  log: NonNullable<HttpTxInfo["log"]>[number],
  logIndex: number,
) {
  const address = (log.address ?? "").toLowerCase();
  return {
    address: `0x${address.length > 40 ? address.slice(-40) : address.padStart(40, "0")}`,
    blockHash: `0x${b.blockID}`,
    blockNumber: hex(blockNum(b)),
    blockTimestamp: hex(Math.floor(blockTime(b) / 1000)),
    data: `0x${log.data ?? ""}`,
    logIndex: hex(logIndex),
    removed: false,
    topics: (log.topics ?? []).map((t) => `0x${t}`),
    transactionHash: `0x${info.id}`,
    transactionIndex: hex(txIndex),
  };
}

/** types/TransactionReceipt.java */
function receipt(
  b: HttpBlock,
  info: HttpTxInfo,
  index: number,
  cumulativeGas: bigint,
  logsBefore: number,
  energyFee: number,
) {
  const tx = b.transactions?.[index];
  const c = tx?.raw_data.contract[0];
  const energy = energyOfInfo(info);
  const result = CONTRACT_RESULTS.indexOf(info.receipt.result ?? "DEFAULT");
  return {
    blockHash: `0x${b.blockID}`,
    blockNumber: hex(blockNum(b)),
    contractAddress: c?.type === "CreateSmartContract" ? jsonAddress(info.contract_address) : null,
    cumulativeGasUsed: hex(cumulativeGas + energy),
    effectiveGasPrice: hex(energyFee),
    from: c ? jsonAddress(c.parameter.value["owner_address"]) : null,
    gasUsed: hex(energy),
    logs: (info.log ?? []).map((log, j) => logElement(b, info, index, log, logsBefore + j)),
    logsBloom: LOGS_BLOOM,
    status: result <= 1 ? "0x1" : "0x0",
    to: c ? toAddressOf(c) : null,
    transactionHash: `0x${info.id}`,
    transactionIndex: hex(index),
    type: "0x0",
  };
}

function blockReceipts(chain: TronChainView, b: HttpBlock) {
  const infos = chain.infosOf(blockNum(b));
  const count = b.transactions?.length ?? 0;
  if (count !== infos.length) {
    throw internal(
      `TransactionList size mismatch: block has ${count} transactions, but transactionInfoList has ${infos.length}`,
    );
  }
  const energyFee = chain.energyFee(blockTime(b));
  let gas = 0n;
  let logs = 0;
  return infos.map((info, i) => {
    const r = receipt(b, info, i, gas, logs, energyFee);
    gas += energyOfInfo(info);
    logs += info.log?.length ?? 0;
    return r;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Parameters: jsonrpc4j binds them positionally, exact count, through Jackson

type Kind = "string" | "boolean" | "object" | "any";

/** Jackson's coercions into String and Boolean; what it cannot coerce is a mapping failure. */
function coerce(v: unknown, kind: Kind): unknown {
  if (v === null || v === undefined || kind === "any") return v ?? null;
  if (kind === "string") {
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    throw new MappingError();
  }
  if (kind === "boolean") {
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    if (typeof v === "number" && Number.isInteger(v)) return v !== 0;
    throw new MappingError();
  }
  if (typeof v !== "object" || Array.isArray(v)) throw new MappingError();
  return v;
}

/** A request object bound to a Java class: unknown members fail (FAIL_ON_UNKNOWN_PROPERTIES). */
function bind(v: unknown, fields: Record<string, Kind>): Record<string, unknown> | null {
  if (v === null) return null;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const kind = fields[k];
    if (!kind) throw new MappingError();
    out[k] = coerce(x, kind);
  }
  return out;
}

const CALL_FIELDS: Record<string, Kind> = {
  from: "string",
  to: "string",
  gas: "string",
  gasPrice: "string",
  value: "string",
  data: "string",
  input: "string",
  nonce: "string",
};
const FILTER_FIELDS: Record<string, Kind> = {
  fromBlock: "string",
  toBlock: "string",
  address: "any",
  topics: "any",
  blockHash: "string",
};

// ---------------------------------------------------------------------------------------------------------
// Methods

type Handler = (p: unknown[]) => unknown;
interface MethodDef {
  params: Kind[];
  run: Handler;
}

const str = (v: unknown) => v as string | null;

function createMethods(chain: TronChainView): Map<string, MethodDef> {
  const m = new Map<string, MethodDef>();
  const def = (name: string, params: Kind[], run: Handler) => m.set(name, { params, run });
  const node = () => ({
    clientVersion: "TRON/v4.8.1/Linux/Java1.8",
    peers: 30,
    activeConnections: 30,
    beginSyncNum: chain.head(),
    ...chain.node,
  });
  const headBlock = () => chain.blockByNum(chain.head());
  const blockByHash = (h: unknown) => chain.blockById(hashParam(str(h)));
  const txIndexParam = (s: unknown) => {
    const v = str(s);
    if (v == null || !/^0x[0-9a-fA-F]{1,8}$/.test(v) || Number.parseInt(v, 16) > 0x7fffffff) {
      throw invalidParams("invalid index value");
    }
    return Number.parseInt(v, 16);
  };
  const txByIndex = (b: HttpBlock | undefined, index: number) => {
    const tx = b?.transactions?.[index];
    if (!b || !tx) return null;
    const info = chain.infosOf(blockNum(b)).find((i) => i.id === tx.txID);
    return transactionResult(b, index, tx, energyOfInfo(info), info, chain.energyFee(blockTime(b)));
  };
  const located = (txId: string) => {
    const n = chain.blockNumOfTx(txId);
    const b = n === undefined ? undefined : chain.blockByNum(n);
    const index = b?.transactions?.findIndex((t) => t.txID === txId) ?? -1;
    return b && index >= 0 ? { b, index } : undefined;
  };
  const callData = (a: Record<string, unknown>) => {
    const input = str(a["input"]);
    const data = str(a["data"]);
    if (input != null) {
      if (!/^0x([0-9a-fA-F]{2})*$/.test(input) && input !== "")
        throw invalidParams(`invalid hex input: ${input}`);
      if (data != null && fromHexStringParam(data) !== strip0x(input).toLowerCase()) {
        throw invalidParams(
          'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data',
        );
      }
      return strip0x(input).toLowerCase();
    }
    return fromHexStringParam(data);
  };

  def("web3_clientVersion", [], () => node().clientVersion);
  def("web3_sha3", ["string"], ([d]) => {
    let bytes: string;
    try {
      bytes = fromHexString(str(d));
    } catch {
      throw invalidParams("invalid input value");
    }
    return keccak256(`0x${bytes}`);
  });
  def("net_version", [], () => chain.chainId);
  def("eth_chainId", [], () => chain.chainId);
  def("net_listening", [], () => node().activeConnections >= 1);
  def("net_peerCount", [], () => hex(node().peers));
  def("eth_protocolVersion", [], () => hex(headBlock()?.block_header.raw_data.version ?? 0));
  def("eth_blockNumber", [], () => hex(chain.head()));
  def("eth_gasPrice", [], () => hex(chain.energyFee(blockTime(headBlock()!))));
  def("eth_syncing", [], () => {
    const n = node();
    if (n.peers === 0) return false;
    const head = headBlock()!;
    const behind = Math.max(0, Math.floor(((chain.now?.() ?? Date.now()) - blockTime(head)) / 3000));
    return {
      currentBlock: hex(chain.head()),
      highestBlock: hex(chain.head() + behind),
      startingBlock: hex(n.beginSyncNum),
    };
  });
  def("eth_accounts", [], () => []);
  def("eth_coinbase", [], () => {
    throw internal("etherbase must be explicitly specified");
  });
  def("eth_mining", [], () => false);
  def("eth_hashrate", [], () => "0x0");
  def("eth_getWork", [], () => [headBlock() ? `0x${headBlock()!.blockID}` : null, null, null]);
  def("eth_getUncleByBlockHashAndIndex", ["string", "string"], () => null);
  def("eth_getUncleByBlockNumberAndIndex", ["string", "string"], () => null);
  def("eth_getUncleCountByBlockHash", ["string"], () => "0x0");
  def("eth_getUncleCountByBlockNumber", ["string"], () => "0x0");

  def("eth_getBlockByHash", ["string", "boolean"], ([h, full]) => {
    const b = blockByHash(h);
    if (!b) return null;
    if (full == null) throw nullPointer();
    return blockResult(chain, b, full as boolean);
  });
  def("eth_getBlockByNumber", ["string", "boolean"], ([s, full]) => {
    const b = blockBySelector(chain, str(s));
    if (!b) return null;
    if (full == null) throw nullPointer();
    return blockResult(chain, b, full as boolean);
  });
  def("eth_getBlockTransactionCountByHash", ["string"], ([h]) => {
    const b = blockByHash(h);
    return b ? hex(b.transactions?.length ?? 0) : null;
  });
  def("eth_getBlockTransactionCountByNumber", ["string"], ([s]) => {
    const b = blockBySelector(chain, str(s));
    return b ? hex(b.transactions?.length ?? 0) : null;
  });
  def("eth_getTransactionByHash", ["string"], ([h]) => {
    const at = located(hashParam(str(h)));
    return at ? txByIndex(at.b, at.index) : null;
  });
  def("eth_getTransactionByBlockHashAndIndex", ["string", "string"], ([h, i]) => {
    const b = blockByHash(h);
    return b ? txByIndex(b, txIndexParam(i)) : null;
  });
  def("eth_getTransactionByBlockNumberAndIndex", ["string", "string"], ([s, i]) => {
    const b = blockBySelector(chain, str(s));
    return b ? txByIndex(b, txIndexParam(i)) : null;
  });
  def("eth_getTransactionReceipt", ["string"], ([h]) => {
    const id = hashParam(str(h));
    const at = located(id);
    if (!at) return null;
    const infos = chain.infosOf(blockNum(at.b));
    const index = infos.findIndex((i) => i.id === id);
    if (index < 0) return null;
    const before = infos.slice(0, index);
    return receipt(
      at.b,
      infos[index]!,
      index,
      before.reduce((s, i) => s + energyOfInfo(i), 0n),
      before.reduce((s, i) => s + (i.log?.length ?? 0), 0),
      chain.energyFee(blockTime(at.b)),
    );
  });
  def("eth_getBlockReceipts", ["string"], ([s]) => {
    const sel = str(s);
    const b =
      sel != null && /^(0x)?[0-9a-fA-F]{64}$/.test(sel)
        ? chain.blockById(strip0x(sel).toLowerCase())
        : blockBySelector(chain, sel);
    return b && blockNum(b) > 0 ? blockReceipts(chain, b) : null;
  });

  def("eth_getBalance", ["string", "string"], ([a, tag]) => {
    requireLatest(str(tag));
    return hex(chain.balanceOf(addressCompatible(str(a))));
  });
  def("eth_getCode", ["string", "string"], ([a, tag]) => {
    requireLatest(str(tag));
    return `0x${chain.codeOf(addressCompatible(str(a))) ?? ""}`;
  });
  def("eth_getStorageAt", ["string", "string", "string"], ([a, key, tag]) => {
    requireLatest(str(tag));
    const address = addressCompatible(str(a));
    let slot: string;
    try {
      slot = fromHexString(str(key));
    } catch {
      throw invalidParams("invalid storage key value");
    }
    if (key == null || slot.length > 64) throw invalidParams("invalid storage key value");
    if (chain.codeOf(address) === undefined) return ZERO32;
    const value = chain.storageAt?.(address, slot.padStart(64, "0")) ?? "";
    return `0x${strip0x(value).padStart(64, "0")}`;
  });
  def("eth_call", ["object", "any"], ([args, blockParam]) => {
    const a = bind(args, CALL_FIELDS);
    const tag = callBlockTag(chain, blockParam);
    requireLatest(tag);
    if (!a) throw nullPointer();
    addressCompatible("from" in a ? str(a["from"]) : "0x0000000000000000000000000000000000000000");
    const to = addressCompatible(str(a["to"]));
    const data = callData(a);
    parseQuantity(str(a["value"]));
    if (chain.codeOf(to) === undefined) throw invalidRequest("No contract or not a valid smart contract");
    try {
      return `0x${chain.call(to, data)}`;
    } catch (e) {
      if (e instanceof TronCallReverted) throw internal(revertMessage(e.data));
      throw e;
    }
  });
  def("eth_estimateGas", ["object"], ([args]) => {
    const a = bind(args, CALL_FIELDS);
    if (!a) throw nullPointer();
    const fromParam = "from" in a ? str(a["from"]) : "0x0000000000000000000000000000000000000000";
    addressCompatible(fromParam);
    const data = callData(a);
    const toParam = str(a["to"]);
    if (fromParam == null || fromParam === "" || fromParam === "0x") throw invalidRequest(JSON_ERROR);
    let to: string | undefined;
    if (toParam == null || toParam === "" || toParam === "0x") {
      if (data === "") throw invalidRequest(JSON_ERROR);
    } else {
      to = addressCompatible(toParam);
      if (chain.codeOf(to) === undefined) {
        const value = str(a["value"]);
        if (value == null || value === "") throw invalidRequest(`${JSON_ERROR}: invalid value`);
        if (parseQuantity(value) < 0n) throw invalidParams("invalid param value: negative");
        return "0x0";
      }
    }
    try {
      if (to) chain.call(to, data);
    } catch (e) {
      if (e instanceof TronCallReverted) throw internal(revertMessage(e.data));
      throw e;
    }
    return hex(chain.energyOf?.(to, data) ?? 0);
  });
  def("eth_getLogs", ["object"], ([fr]) => getLogs(chain, bind(fr, FILTER_FIELDS)));

  for (const [name, arity] of Object.entries(REFUSED)) {
    const run = () => {
      throw new RpcError(-32601, `the method ${name} does not exist/is not available`, DATA);
    };
    const objectFirst = name === "eth_sendTransaction" || name === "eth_signTransaction";
    def(
      name,
      Array.from({ length: arity }, (_, i) => (objectFirst && i === 0 ? "object" : "any")),
      run,
    );
  }
  addFilters(chain, def);
  return m;
}

/**
 * eth_newFilter / eth_newBlockFilter / eth_getFilterChanges / eth_getFilterLogs / eth_uninstallFilter.
 * java-tron appends to a filter as blocks arrive; the translator is asked only when a request comes, so a
 * filter remembers the head it has reported to and a poll reports the blocks since. Expiry: 5 minutes unread.
 */
function addFilters(
  chain: TronChainView,
  def: (name: string, params: Kind[], run: Handler) => unknown,
): void {
  const EXPIRE_MS = 5 * 60 * 1000; // TronJsonRpcImpl.EXPIRE_SECONDS
  type Filter = { seen: number; read: number; logs?: Record<string, unknown> };
  const filters = new Map<string, Filter>();
  const now = () => chain.now?.() ?? Date.now();
  const find = (id: unknown, logsOnly = false) => {
    const key = typeof id === "string" ? strip0x(id) : "";
    const f = filters.get(key);
    if (!f || now() - f.read > EXPIRE_MS || (logsOnly && !f.logs)) {
      if (f && now() - f.read > EXPIRE_MS) filters.delete(key);
      throw internal("filter not found");
    }
    return { key, f };
  };
  const newId = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  def("eth_newFilter", ["object"], ([fr]) => {
    const req = bind(fr, FILTER_FIELDS);
    if (!req) throw nullPointer();
    if (isTag(str(req["fromBlock"]), "finalized") || isTag(str(req["toBlock"]), "finalized")) {
      throw invalidParams("invalid block range params");
    }
    logFilter(req);
    for (const k of ["fromBlock", "toBlock"]) if (req[k] != null) filterBlock(chain, str(req[k])!);
    const id = newId();
    filters.set(id, { seen: chain.head(), read: now(), logs: req });
    return `0x${id}`;
  });
  def("eth_newBlockFilter", [], () => {
    const id = newId();
    filters.set(id, { seen: chain.head(), read: now() });
    return `0x${id}`;
  });
  def("eth_uninstallFilter", ["string"], ([id]) => filters.delete(find(id).key));
  def("eth_getFilterChanges", ["string"], ([id]) => {
    const { f } = find(id);
    const head = chain.head();
    const from = f.seen + 1;
    f.seen = head;
    f.read = now();
    if (!f.logs) {
      const hashes: string[] = [];
      for (let n = from; n <= head; n++) {
        const b = chain.blockByNum(n);
        if (b) hashes.push(`0x${b.blockID}`);
      }
      return hashes;
    }
    if (from > head) return [];
    const { fromBlock: _f, toBlock: _t, blockHash: _h, ...rest } = f.logs;
    return getLogs(chain, { ...rest, fromBlock: hex(from), toBlock: hex(head) }, false);
  });
  def("eth_getFilterLogs", ["string"], ([id]) => getLogs(chain, find(id, true).f.logs!));
}

function fromHexStringParam(s: string | null): string {
  try {
    return fromHexString(s);
  } catch (e) {
    throw invalidParams((e as Error).message);
  }
}

/** JsonRpcApiUtil.parseQuantityValue. */
function parseQuantity(s: string | null): bigint {
  if (s == null || s === "") return 0n;
  if (!/^0x[0-9a-fA-F]+$/.test(s) || BigInt(s) > LONG_MAX) {
    throw invalidParams("invalid param value: invalid hex number");
  }
  return BigInt(s);
}

/** The message java-tron writes for a reverted constant call: Error(string) decoded when present. */
function revertMessage(data: string): string {
  const d = strip0x(data).toLowerCase();
  if (d.length > 8 && d.startsWith("08c379a0")) {
    const body = d.slice(8);
    const offset = Number(BigInt(`0x${body.slice(0, 64) || "0"}`)) * 2;
    const len = Number(BigInt(`0x${body.slice(offset, offset + 64) || "0"}`)) * 2;
    const text = Buffer.from(body.slice(offset + 64, offset + 64 + len), "hex").toString("utf8");
    return `REVERT opcode executed: ${text}`;
  }
  return "REVERT opcode executed";
}

/** TronJsonRpcImpl.getCall's block parameter: a tag string, or an EIP-1898 object read for existence only. */
function callBlockTag(chain: TronChainView, p: unknown): string | null {
  if (typeof p === "string") return p;
  if (p === null || typeof p !== "object" || Array.isArray(p)) throw invalidRequest(JSON_ERROR);
  const o = p as Record<string, unknown>;
  if ("blockNumber" in o) {
    const n = typeof o["blockNumber"] === "string" ? parseHeight(o["blockNumber"]) : undefined;
    if (n === undefined) throw invalidParams(BLOCK_NUM_ERROR);
    if (n > BigInt(chain.head()) || !chain.blockByNum(Number(n))) throw internal("header not found");
  } else if ("blockHash" in o) {
    if (!chain.blockById(hashParam(typeof o["blockHash"] === "string" ? o["blockHash"] : null))) {
      throw internal("header for hash not found");
    }
  } else {
    throw invalidRequest(JSON_ERROR);
  }
  return "latest";
}

/** JsonRpcApiUtil.getByJsonBlockId for filters: -1 for latest. */
function filterBlock(chain: TronChainView, s: string): bigint {
  if (s === "" || isTag(s, "latest")) return -1n;
  if (isTag(s, "earliest")) return 0n;
  if (isTag(s, "finalized")) return BigInt(chain.solidified());
  if (isTag(s, "pending")) throw invalidParams("TAG pending not supported");
  if (isTag(s, "safe")) throw invalidParams("TAG safe not supported");
  const n = parseHeight(s);
  if (n === undefined) throw invalidParams(BLOCK_NUM_ERROR);
  return n;
}

/** LogFilter: addresses (20 bytes) and topic slots, each null (any) or a set. */
function logFilter(fr: Record<string, unknown>) {
  const address20 = (s: unknown, i?: number) => {
    const h = typeof s === "string" && isHex(strip0x(s)) ? fromHexString(s) : "";
    if (h.length !== 40) {
      throw invalidParams(i === undefined ? `invalid address: ${s}` : `invalid address at index ${i}: ${s}`);
    }
    return h;
  };
  let addresses: Set<string> | undefined;
  const a = fr["address"];
  if (typeof a === "string") addresses = new Set([address20(a)]);
  else if (Array.isArray(a)) {
    if (a.length > MAX_ADDRESSES) throw invalidParams(`exceed max addresses: ${MAX_ADDRESSES}`);
    addresses = new Set(a.map((x, i) => address20(x, i)));
  } else if (a != null) throw invalidParams("invalid addresses in query");

  const topic = (t: unknown) => {
    const h = typeof t === "string" && isHex(strip0x(t)) ? fromHexString(t) : "";
    if (h.length !== 64) throw invalidParams(`invalid topic(s): ${t}`);
    return h;
  };
  const slots: (Set<string> | null)[] = [];
  const topics = fr["topics"];
  if (topics != null) {
    if (!Array.isArray(topics)) throw new MappingError();
    if (topics.length > MAX_TOPICS) throw invalidParams(`topics size should be <= ${MAX_TOPICS}`);
    for (const t of topics) {
      if (t == null) slots.push(null);
      else if (typeof t === "string") slots.push(new Set([topic(t)]));
      else if (Array.isArray(t)) {
        if (t.length > MAX_SUB_TOPICS) throw invalidParams(`exceed max topics: ${MAX_SUB_TOPICS}`);
        slots.push(new Set(t.map(topic)));
      } else throw invalidParams("invalid topic(s)");
    }
  }
  return (log: NonNullable<HttpTxInfo["log"]>[number]) => {
    if (addresses && !addresses.has((log.address ?? "").toLowerCase().slice(-40))) return false;
    const ts = log.topics ?? [];
    return slots.every((slot, i) => slot === null || (ts[i] !== undefined && slot.has(ts[i]!.toLowerCase())));
  };
}

/** TronJsonRpcImpl.getLogs with LogFilterWrapper's block range. */
function getLogs(chain: TronChainView, fr: Record<string, unknown> | null, checkRange = true) {
  if (!fr) throw nullPointer();
  const match = logFilter(fr);
  const head = BigInt(chain.head());
  const fromS = str(fr["fromBlock"]) ?? "";
  const toS = str(fr["toBlock"]) ?? "";
  let from: bigint;
  let to: bigint;
  if (fr["blockHash"] != null) {
    const hash = hashParam(str(fr["blockHash"]));
    if (fr["fromBlock"] != null || fr["toBlock"] != null) {
      throw invalidParams("cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other");
    }
    const b = chain.blockById(hash);
    if (!b) throw invalidParams("invalid blockHash");
    from = to = BigInt(blockNum(b));
  } else {
    if (fromS === "" && toS !== "") {
      to = filterBlock(chain, toS);
      if (to === -1n) to = LONG_MAX;
      from = to < head ? to : head;
    } else if (fromS !== "" && toS === "") {
      from = filterBlock(chain, fromS);
      if (from === -1n) from = head;
      to = LONG_MAX;
    } else if (fromS === "" && toS === "") {
      from = head;
      to = LONG_MAX;
    } else {
      from = filterBlock(chain, fromS);
      to = filterBlock(chain, toS);
      if (from === -1n) from = head;
      if (to === -1n) to = LONG_MAX;
      if (from > to) throw invalidParams("please verify: fromBlock <= toBlock");
    }
    if (checkRange && (to < head ? to : head) - from > BigInt(MAX_BLOCK_RANGE)) {
      throw invalidParams(`exceed max block range: ${MAX_BLOCK_RANGE}`);
    }
  }
  const out: ReturnType<typeof logElement>[] = [];
  const last = to < head ? to : head;
  for (let n = from; n <= last; n++) {
    const b = chain.blockByNum(Number(n));
    if (!b) continue;
    let logIndex = 0;
    chain.infosOf(Number(n)).forEach((info, i) => {
      for (const log of info.log ?? []) {
        if (match(log)) out.push(logElement(b, info, i, log, logIndex));
        logIndex++;
      }
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The envelope (jsonrpc4j 1.6 JsonRpcBasicServer)

type Id = string | number | null;

function envelope(jsonrpc: string, id: Id, body: { result: unknown } | { error: RpcError }) {
  if ("result" in body) return { jsonrpc, id, result: body.result };
  const { code, message, data } = body.error;
  return { jsonrpc, id, error: data === undefined ? { code, message } : { code, message, data } };
}

export function createTronJsonRpc(chain: TronChainView): (body: unknown) => unknown {
  const methods = createMethods(chain);

  const one = (req: unknown): unknown => {
    if (req === null || typeof req !== "object" || Array.isArray(req)) {
      return envelope("2.0", null, { error: new RpcError(-32600, "invalid request") });
    }
    const r = req as Record<string, unknown>;
    const rawId = r["id"];
    if (rawId != null && typeof rawId !== "string" && typeof rawId !== "number") {
      // jsonrpc4j's parseId throws "Unknown id type"; the servlet answers it as an internal error.
      return envelope("2.0", null, { error: new RpcError(-32603, "Internal error") });
    }
    const id: Id = (rawId as Id | undefined) ?? null;
    const jsonrpc = r["jsonrpc"] == null ? "2.0" : String(r["jsonrpc"]);
    const name = r["method"];
    const method = name == null ? undefined : methods.get(String(name));
    if (!method) return envelope(jsonrpc, id, { error: new RpcError(-32601, "method not found") });
    const raw = r["params"];
    const params = raw == null ? [] : Array.isArray(raw) ? raw : undefined;
    if (!params || params.length !== method.params.length) {
      // Named params would need @JsonRpcParam, which TronJsonRpc.java never declares.
      const emptyNamed =
        params === undefined && Object.keys(raw as object).length === 0 && !method.params.length;
      if (!emptyNamed)
        return envelope(jsonrpc, id, { error: new RpcError(-32602, "method parameters invalid") });
    }
    try {
      const args = (params ?? []).map((p, i) => coerce(p, method.params[i]!));
      const result = method.run(args);
      return id === null ? undefined : envelope(jsonrpc, id, { result });
    } catch (e) {
      if (e instanceof MappingError) return TRON_JSONRPC_PARSE_ERROR;
      if (e instanceof RpcError) return envelope(jsonrpc, id, { error: e });
      throw e;
    }
  };

  return (body) => {
    if (!Array.isArray(body)) return one(body);
    // A notification's success is written as null inside a batch (ArrayNode.add(null)).
    return body.map((req) => one(req) ?? null);
  };
}
