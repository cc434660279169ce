/**
 * The stand-in's HTTP API: `/wallet/<name>` and `/walletsolidity/<name>` answered from the scenario chain in
 * the forms java-tron writes (test/fixtures/tron/ records them): HTTP 200 with `{"Error": ...}` for errors,
 * `{}` for not found, addresses hex or base58 per `visible`, ms timestamps. The solidity face answers only
 * from solidified blocks and the state at the solidified block.
 */
import { id as keccakText } from "ethers";
import {
  addressOut,
  base58ToHex,
  bytesToHex,
  contractFromJson,
  hexToBase58,
  hexToBytes,
  isJsonFormError,
  type Json,
  type JsonObject,
  rawDataJson,
  rawFromJson,
  toHexAddress,
  txIdOf,
} from "./codec";
import { type ContractTypeName, decodeTransaction, type RawTransaction } from "./protobuf";
import {
  renderTransaction,
  type SignedTx,
  TRC10,
  TRC20,
  TRC20_ABI_ENTRYS,
  TRC20_BYTECODE,
  TRC20_CODE_HASH,
  type TronScenario,
  type TronTransactionInfoJson,
} from "./scenario";

export type Params = Record<string, unknown>;
interface Ctx {
  chain: TronScenario;
  solidity: boolean;
  visible: boolean;
  /** The highest block this face serves: the head, or the solidified block on `/walletsolidity`. */
  limit: number;
}
type Handler = (p: Params, ctx: Ctx) => Json;

const NOT_FOUND: JsonObject = {};
/** java-tron's `Util.processError` form. */
const error = (exceptionClass: string, message: string): JsonObject => ({
  Error: `class ${exceptionClass} : ${message}`,
});
const contractValidate = (message: string) =>
  error("org.tron.core.exception.ContractValidateException", message);
const BLOCK_LIST_LIMIT = 100;
const BUILDER_EXPIRATION_MS = 60_000;

const str = (v: unknown): string => (v === undefined || v === null ? "" : String(v));
const num = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : undefined;
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
};
const bool = (v: unknown): boolean => v === true || v === "true";
/** An address parameter as the face reads it: base58 when `visible`, `41...` hex otherwise. */
const addressIn = (v: unknown, visible: boolean): string | undefined =>
  typeof v !== "string"
    ? undefined
    : visible
      ? base58ToHex(v)
      : /^41[0-9a-fA-F]{40}$/.test(v)
        ? v.toLowerCase()
        : undefined;

const blockAnswer = (ctx: Ctx, n: number | undefined, detail = true): Json => {
  const b = n === undefined || n > ctx.limit ? undefined : ctx.chain.stored(n);
  return b ? ctx.chain.renderBlock(b, ctx.visible, detail) : NOT_FOUND;
};

function infoOut(info: TronTransactionInfoJson, visible: boolean): JsonObject {
  const out = structuredClone(info) as unknown as JsonObject;
  if (!visible) return out;
  // java-tron's visible info rewrites log addresses (20 bytes) to base58 with the 41 prefix.
  if (info.contract_address) out.contract_address = hexToBase58(info.contract_address);
  if (info.log) out.log = info.log.map((l) => ({ ...l, address: hexToBase58(`41${l.address}`) }));
  return out;
}

function txVisibleFor(ctx: Ctx, txID: unknown) {
  const found = typeof txID === "string" ? ctx.chain.findTx(txID.toLowerCase()) : undefined;
  return found && found.block.number <= ctx.limit ? found : undefined;
}

function accountAnswer(p: Params, ctx: Ctx): Json {
  const hex = addressIn(p.address, ctx.visible);
  const account = hex && ctx.chain.accountAt(hex, ctx.limit);
  if (!hex || !account) return NOT_FOUND;
  const a = addressOut(hex, ctx.visible);
  const out: JsonObject = { address: a };
  if (account.balance > 0n) out.balance = Number(account.balance);
  out.create_time = account.createTime;
  if (account.lastOperation) out.latest_opration_time = account.lastOperation;
  out.net_window_size = 28_800_000;
  out.net_window_optimized = true;
  out.account_resource = { energy_window_size: 28_800_000, energy_window_optimized: true };
  out.owner_permission = { permission_name: "owner", threshold: 1, keys: [{ address: a, weight: 1 }] };
  out.active_permission = [
    {
      type: "Active",
      id: 2,
      permission_name: "active",
      threshold: 1,
      operations: "7fff1fc0033efb0f000000000000000000000000000000000000000000000000",
      keys: [{ address: a, weight: 1 }],
    },
  ];
  out.frozenV2 = [{}, { type: "ENERGY" }, { type: "TRON_POWER" }];
  const assets = [...account.assets].filter(([, v]) => v > 0n);
  if (assets.length > 0) {
    out.assetV2 = assets.map(([key, value]) => ({ key, value: Number(value) }));
    out.free_asset_net_usageV2 = assets.map(([key]) => ({ key, value: 0 }));
  }
  out.asset_optimized = true;
  return out;
}

function accountResourceAnswer(p: Params, ctx: Ctx): Json {
  const hex = addressIn(p.address, ctx.visible);
  const account = hex && ctx.chain.accountAt(hex, ctx.limit);
  if (!account) return NOT_FOUND;
  const assets = [...account.assets.keys()];
  const out: JsonObject = { freeNetLimit: 600 };
  if (assets.length > 0) {
    out.assetNetUsed = assets.map((key) => ({ key, value: 0 }));
    out.assetNetLimit = assets.map((key) => ({ key, value: 0 }));
  }
  return {
    ...out,
    TotalNetLimit: 43_200_000_000,
    TotalNetWeight: 27_907_349_371,
    TotalEnergyLimit: 180_000_000_000,
    TotalEnergyWeight: 16_307_687_034,
  };
}

function smartContractJson(visible: boolean): JsonObject {
  return {
    origin_address: addressOut(TRC20.owner, visible),
    contract_address: addressOut(TRC20.address, visible),
    abi: { entrys: TRC20_ABI_ENTRYS },
    bytecode: TRC20_BYTECODE,
    name: "TetherToken",
    origin_energy_limit: 10_000_000,
    code_hash: TRC20_CODE_HASH,
  };
}

/** `data` of a contract call: given, or keccak(function_selector)[0..4] + parameter as java-tron builds it. */
function callData(p: Params): string {
  if (typeof p.data === "string" && p.data !== "") return p.data.replace(/^0x/, "").toLowerCase();
  const selector = str(p.function_selector).replace(/\s/g, "");
  return selector === "" ? "" : keccakText(selector).slice(2, 10) + str(p.parameter).toLowerCase();
}

function builderTransaction(ctx: Ctx, raw: RawTransaction, extra: JsonObject = {}): JsonObject {
  const { rawBytes, txID } = txIdOf(raw);
  return {
    ...extra,
    visible: ctx.visible,
    txID,
    raw_data: rawDataJson(raw, ctx.visible, true),
    raw_data_hex: bytesToHex(rawBytes),
  };
}

function newRaw(ctx: Ctx, contract: RawTransaction["contract"], feeLimit?: unknown): RawTransaction {
  // ref_block from the head, timestamps from the clock, as java-tron builds a transaction.
  const raw = ctx.chain.unsigned(contract, undefined, Date.now());
  raw.expiration = raw.timestamp + BigInt(BUILDER_EXPIRATION_MS);
  const fee = num(feeLimit);
  if (fee) raw.fee_limit = BigInt(fee);
  return raw;
}

function triggerConstant(p: Params, ctx: Ctx): Json {
  const contract = addressIn(p.contract_address, ctx.visible);
  const owner = addressIn(p.owner_address, ctx.visible) ?? `41${"0".repeat(40)}`;
  if (!contract || !ctx.chain.isContract(contract, ctx.limit)) {
    return { result: { code: "CONTRACT_VALIDATE_ERROR", message: "Smart contract is not exist." } };
  }
  const data = callData(p);
  const answer = ctx.chain.call(contract, data, ctx.limit);
  const raw = newRaw(ctx, {
    type: "TriggerSmartContract",
    value: {
      owner_address: hexToBytes(owner),
      contract_address: hexToBytes(contract),
      data: hexToBytes(data),
    },
  });
  const failed = !answer?.ok;
  return {
    result: failed ? { result: true, message: "REVERT opcode executed" } : { result: true },
    energy_used: failed ? 0 : 935,
    constant_result: [answer?.result ?? ""],
    transaction: builderTransaction(ctx, raw, { ret: [failed ? { ret: "FAILED" } : {}] }),
  };
}

function triggerSmart(p: Params, ctx: Ctx): Json {
  try {
    const contract = contractFromJson("TriggerSmartContract", { ...p, data: callData(p) }, ctx.visible);
    return {
      result: { result: true },
      transaction: builderTransaction(ctx, newRaw(ctx, contract, p.fee_limit)),
    };
  } catch (e) {
    return {
      result: { code: "OTHER_ERROR", message: `class ${(e as Error).name} : ${(e as Error).message}` },
    };
  }
}

function build(type: ContractTypeName, p: Params, ctx: Ctx): Json {
  let contract: RawTransaction["contract"];
  try {
    contract = contractFromJson(type, p, ctx.visible);
  } catch (e) {
    return error("org.tron.core.services.http.JsonFormat$ParseException", (e as Error).message);
  }
  if (contract.type === "TriggerSmartContract" || contract.type === "CreateSmartContract") return NOT_FOUND;
  const owner = bytesToHex(contract.value.owner_address);
  const to = bytesToHex(contract.value.to_address);
  const account = ctx.chain.accountAt(owner);
  if (owner === to) return contractValidate("Cannot transfer TRX to yourself.");
  if (!account) return contractValidate(`Validate ${type} error, no OwnerAccount.`);
  if (contract.value.amount <= 0n) return contractValidate("Amount must be greater than 0.");
  if (contract.type === "TransferContract" && account.balance < contract.value.amount) {
    return contractValidate("Validate TransferContract error, balance is not sufficient.");
  }
  return builderTransaction(ctx, newRaw(ctx, contract));
}

/** broadcasttransaction's and broadcasthex's answer for a decoded transaction. */
function broadcast(ctx: Ctx, tx: SignedTx, hexMessages: boolean): JsonObject {
  const refusal = ctx.chain.validate(tx);
  if (!refusal) {
    ctx.chain.pool.push(tx);
    return { result: true, code: "SUCCESS", txid: tx.txID };
  }
  const message = hexMessages ? bytesToHex(new TextEncoder().encode(refusal.message)) : refusal.message;
  return { result: false, code: refusal.code, message, txid: tx.txID };
}

function broadcastTransaction(p: Params, ctx: Ctx): Json {
  let raw: RawTransaction;
  try {
    raw = rawFromJson(p.raw_data, bool(p.visible));
  } catch (e) {
    if (isJsonFormError(e)) return error("java.lang.NullPointerException", "null");
    throw e;
  }
  const signatures = Array.isArray(p.signature) ? p.signature : [];
  if (!signatures.every((s) => typeof s === "string" && /^([0-9a-fA-F]{2})*$/.test(s))) {
    return error("java.lang.NullPointerException", "null");
  }
  const { rawBytes, txID } = txIdOf(raw);
  return broadcast(
    ctx,
    { raw, rawBytes, txID, signatures: signatures.map((s) => hexToBytes(s)) },
    !ctx.visible,
  );
}

function broadcastHex(p: Params, ctx: Ctx): Json {
  const hex = str(p.transaction);
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) {
    return error("org.bouncycastle.util.encoders.DecoderException", "exception decoding Hex string");
  }
  let decoded: ReturnType<typeof decodeTransaction>;
  try {
    decoded = decodeTransaction(hexToBytes(hex));
  } catch (e) {
    return error("com.google.protobuf.InvalidProtocolBufferException", (e as Error).message);
  }
  const { txID } = txIdOf(decoded.raw);
  const tx: SignedTx = { raw: decoded.raw, rawBytes: decoded.rawBytes, txID, signatures: decoded.signatures };
  const answer = broadcast(ctx, tx, false);
  // the parsed transaction, printed `visible` into a string (a broadcast transaction has no `ret` yet)
  const { ret: _ret, ...printed } = renderTransaction({ ...tx, contractRet: "SUCCESS" }, true);
  const transaction = JSON.stringify({ visible: true, ...printed });
  return {
    result: answer.result ?? false,
    code: answer.code ?? "",
    message: answer.message ?? "",
    transaction,
    txid: txID,
  };
}

function getBlock(p: Params, ctx: Ctx): Json {
  const idOrNum = str(p.id_or_num);
  const detail = bool(p.detail);
  if (idOrNum === "") return blockAnswer(ctx, ctx.limit, detail);
  if (/^-\d+$/.test(idOrNum)) return { Error: "num must be non-positive number." };
  if (/^\d+$/.test(idOrNum) && idOrNum.length < 64) return blockAnswer(ctx, num(idOrNum), detail);
  if (!/^[0-9a-fA-F]{64}$/.test(idOrNum)) return { Error: "id must be legal block hash." };
  const b = ctx.chain.storedById(idOrNum.toLowerCase());
  return b && b.number <= ctx.limit ? ctx.chain.renderBlock(b, ctx.visible, detail) : NOT_FOUND;
}

function blockList(ctx: Ctx, from: number, to: number, newestFirst: boolean): Json {
  const numbers: number[] = [];
  for (let n = Math.max(0, from); n < Math.min(to, ctx.limit + 1); n++) numbers.push(n);
  if (numbers.length === 0) return NOT_FOUND;
  if (newestFirst) numbers.reverse();
  return { block: numbers.map((n) => blockAnswer(ctx, n)) };
}

export const HANDLERS: Record<string, Handler> = {
  getnowblock: (_p, ctx) => blockAnswer(ctx, ctx.limit),
  getblockbynum: (p, ctx) => blockAnswer(ctx, num(p.num ?? 0)),
  getblockbyid: (p, ctx) => {
    const b = ctx.chain.storedById(str(p.value).toLowerCase());
    return b && b.number <= ctx.limit ? ctx.chain.renderBlock(b, ctx.visible, true) : NOT_FOUND;
  },
  getblock: getBlock,
  getblockbylimitnext: (p, ctx) => {
    const start = num(p.startNum) ?? 0;
    const end = num(p.endNum) ?? 0;
    if (end <= start || end - start > BLOCK_LIST_LIMIT) return NOT_FOUND;
    return blockList(ctx, start, end, false);
  },
  getblockbylatestnum: (p, ctx) => {
    const n = num(p.num) ?? 0;
    if (n <= 0 || n > BLOCK_LIST_LIMIT) return NOT_FOUND;
    // newest first, as the recorded answer lists them (test/fixtures/tron/nile/getblockbylatestnum.json).
    return blockList(ctx, ctx.limit - n + 1, ctx.limit + 1, true);
  },
  gettransactionbyid: (p, ctx) => {
    const found = txVisibleFor(ctx, p.value);
    return found ? renderTransaction(found.tx, ctx.visible) : NOT_FOUND;
  },
  gettransactioninfobyid: (p, ctx) => {
    const found = txVisibleFor(ctx, p.value);
    return found ? infoOut(found.info, ctx.visible) : NOT_FOUND;
  },
  gettransactioninfobyblocknum: (p, ctx) => {
    const n = num(p.num);
    const infos = n !== undefined && n > 0 && n <= ctx.limit ? ctx.chain.infos(n) : undefined;
    return infos ? infos.map((i) => infoOut(i, ctx.visible)) : NOT_FOUND;
  },
  getaccount: accountAnswer,
  getaccountresource: accountResourceAnswer,
  getcontract: (p, ctx) =>
    addressIn(p.value, ctx.visible) === TRC20.address ? smartContractJson(ctx.visible) : NOT_FOUND,
  getcontractinfo: (p, ctx) =>
    addressIn(p.value, ctx.visible) === TRC20.address
      ? {
          smart_contract: smartContractJson(ctx.visible),
          runtimecode: TRC20_BYTECODE,
          contract_state: { energy_usage: 0, update_cycle: 0 },
        }
      : NOT_FOUND,
  triggerconstantcontract: triggerConstant,
  triggersmartcontract: triggerSmart,
  createtransaction: (p, ctx) => build("TransferContract", p, ctx),
  transferasset: (p, ctx) => build("TransferAssetContract", p, ctx),
  getassetissuebyid: (p, ctx) =>
    str(p.value) === TRC10.id
      ? {
          owner_address: addressOut(TRC10.owner, ctx.visible),
          name: ctx.visible ? TRC10.name : bytesToHex(new TextEncoder().encode(TRC10.name)),
          abbr: ctx.visible ? TRC10.abbr : bytesToHex(new TextEncoder().encode(TRC10.abbr)),
          total_supply: Number(TRC10.totalSupply),
          trx_num: 1,
          precision: TRC10.precision,
          num: 1,
          start_time: 1_735_689_600_000,
          end_time: 2_053_134_849_000,
          description: ctx.visible
            ? "stand-in TRC-10"
            : bytesToHex(new TextEncoder().encode("stand-in TRC-10")),
          url: ctx.visible
            ? "https://example.invalid"
            : bytesToHex(new TextEncoder().encode("https://example.invalid")),
          id: TRC10.id,
        }
      : NOT_FOUND,
  getchainparameters: () => ({
    chainParameter: [
      { key: "getMaintenanceTimeInterval", value: 21_600_000 },
      { key: "getAccountUpgradeCost", value: 9_999_000_000 },
      { key: "getCreateAccountFee", value: 100_000 },
      { key: "getTransactionFee", value: 1_000 },
      { key: "getAssetIssueFee", value: 1_024_000_000 },
      { key: "getWitnessPayPerBlock", value: 8_000_000 },
      { key: "getWitnessStandbyAllowance", value: 115_200_000_000 },
      { key: "getCreateNewAccountFeeInSystemContract", value: 1_000_000 },
      { key: "getEnergyFee", value: 420 },
    ],
  }),
  broadcasttransaction: broadcastTransaction,
  broadcasthex: broadcastHex,
  validateaddress: (p) => {
    const a = str(p.address);
    if (/^41[0-9a-fA-F]{40}$/.test(a)) return { result: true, message: "Hex string format" };
    if (toHexAddress(a)) return { result: true, message: "Base58check format" };
    return { result: false, message: "Invalid address" };
  },
};

/** The paths java-tron serves on its solidity face too (reads; builders and writes are full-node only). */
export const SOLIDITY_PATHS = new Set([
  "getnowblock",
  "getblockbynum",
  "getblockbyid",
  "getblock",
  "getblockbylimitnext",
  "getblockbylatestnum",
  "gettransactionbyid",
  "gettransactioninfobyid",
  "gettransactioninfobyblocknum",
  "getaccount",
  "getassetissuebyid",
  "triggerconstantcontract",
  "getchainparameters",
  "validateaddress",
]);

export function answerWallet(
  chain: TronScenario,
  solidity: boolean,
  name: string,
  params: Params,
): Json | undefined {
  const handler = HANDLERS[name];
  if (!handler || (solidity && !SOLIDITY_PATHS.has(name))) return undefined;
  const ctx: Ctx = {
    chain,
    solidity,
    visible: bool(params.visible),
    limit: solidity ? chain.solidifiedNumber() : chain.headNumber(),
  };
  return handler(params, ctx);
}
