/**
 * TRON's forms for the stand-in: addresses (`41` + 20 bytes hex, base58check `T...`), ids (txID = sha256 of
 * `raw_data`, blockID = 8-byte number + last 24 bytes of sha256 of the header's raw bytes), signatures
 * (secp256k1 over the txID, 65 bytes r|s|v), and a transaction's JSON as java-tron writes it.
 */
import { decodeBase58, encodeBase58, getBytes, keccak256, SigningKey, sha256, toBeHex } from "ethers";
import {
  type Bytes,
  bytesToHex,
  type ContractParameter,
  type ContractTypeName,
  encodeRawTransaction,
  hexToBytes,
  type RawTransaction,
} from "./protobuf";

export { bytesToHex, hexToBytes };

export const sha256Bytes = (data: Bytes): Bytes => getBytes(sha256(data));
export const sha256Hex = (data: Bytes): string => sha256(data).slice(2);

const ADDRESS_PREFIX = 0x41;

/** `41` + 20 bytes (hex) to base58check. */
export function hexToBase58(hex41: string): string {
  const body = hexToBytes(hex41);
  const check = sha256Bytes(sha256Bytes(body)).subarray(0, 4);
  const full = new Uint8Array([...body, ...check]);
  // encodeBase58 drops leading zero bytes' "1"s, but a TRON address starts with 0x41, never 0.
  return encodeBase58(full);
}

/** A base58check `T...` address to `41...` hex, or undefined when it is not one (checksum checked). */
export function base58ToHex(address: string): string | undefined {
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) return undefined;
  let n: bigint;
  try {
    n = decodeBase58(address);
  } catch {
    return undefined;
  }
  const bytes = getBytes(toBeHex(n, 25));
  const body = bytes.subarray(0, 21);
  const check = sha256Bytes(sha256Bytes(body)).subarray(0, 4);
  if (body[0] !== ADDRESS_PREFIX || bytesToHex(check) !== bytesToHex(bytes.subarray(21))) return undefined;
  return bytesToHex(body);
}

/** Either form to `41...` hex (lower case), or undefined. */
export function toHexAddress(address: string): string | undefined {
  if (/^41[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase();
  return base58ToHex(address);
}

export interface TronKey {
  privateKey: string;
  /** `41...` hex */
  hex: string;
  base58: string;
}

export function keyFromPrivate(privateKey: string): TronKey {
  const key = new SigningKey(privateKey.startsWith("0x") ? privateKey : `0x${privateKey}`);
  return { privateKey: key.privateKey.slice(2), ...addressOfPublicKey(key.publicKey) };
}

function addressOfPublicKey(publicKey: string): { hex: string; base58: string } {
  const hex = `41${keccak256(getBytes(publicKey).subarray(1)).slice(-40)}`;
  return { hex, base58: hexToBase58(hex) };
}

/** A 65-byte signature over a 32-byte digest, v as 0/1 as java-tron's wallets write it. */
export function signDigest(digest: Bytes, privateKey: string): Bytes {
  const sig = new SigningKey(`0x${privateKey}`).sign(digest);
  return new Uint8Array([...getBytes(sig.r), ...getBytes(sig.s), sig.v - 27]);
}

/** The `41...` address whose key made `signature` over `digest` (v as 0/1 or 27/28), or undefined. */
export function recoverAddress(digest: Bytes, signature: Bytes): string | undefined {
  if (signature.length !== 65) return undefined;
  const v = signature[64]!;
  const normalized = new Uint8Array(signature);
  normalized[64] = v < 27 ? v + 27 : v;
  try {
    return addressOfPublicKey(SigningKey.recoverPublicKey(digest, bytesToHex0x(normalized))).hex;
  } catch {
    return undefined;
  }
}

// ---- a transaction's JSON, as java-tron writes it ----

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** An address as java-tron writes it: hex, or base58 when the request said `visible`. */
export const addressOut = (hex41: string, visible: boolean): string => (visible ? hexToBase58(hex41) : hex41);

/** `contract[0].parameter.value` with members in the order java-tron writes them (see the recordings). */
function contractValueJson(contract: ContractParameter, visible: boolean): JsonObject {
  const a = (b: Bytes) => addressOut(bytesToHex(b), visible);
  switch (contract.type) {
    case "TransferContract":
      return {
        amount: Number(contract.value.amount),
        owner_address: a(contract.value.owner_address),
        to_address: a(contract.value.to_address),
      };
    case "TransferAssetContract":
      return {
        amount: Number(contract.value.amount),
        // bytes that are not addresses: hex, or text when visible.
        asset_name: visible
          ? new TextDecoder().decode(contract.value.asset_name)
          : bytesToHex(contract.value.asset_name),
        owner_address: a(contract.value.owner_address),
        to_address: a(contract.value.to_address),
      };
    case "TriggerSmartContract": {
      const v = contract.value;
      const out: JsonObject = {};
      if (v.data?.length) out.data = bytesToHex(v.data);
      out.owner_address = a(v.owner_address);
      out.contract_address = a(v.contract_address);
      if (v.call_value) out.call_value = Number(v.call_value);
      if (v.call_token_value) out.call_token_value = Number(v.call_token_value);
      if (v.token_id) out.token_id = Number(v.token_id);
      return out;
    }
    case "CreateSmartContract": {
      // members in the order of the recorded deployment (nile/deploycontract.json)
      const n = contract.value.new_contract;
      const created: JsonObject = { origin_address: a(n.origin_address) };
      if (n.consume_user_resource_percent)
        created.consume_user_resource_percent = Number(n.consume_user_resource_percent);
      if (n.name) created.name = n.name;
      created.bytecode = bytesToHex(n.bytecode);
      if (n.call_value) created.call_value = Number(n.call_value);
      created.abi = {};
      if (n.origin_energy_limit) created.origin_energy_limit = Number(n.origin_energy_limit);
      return { owner_address: a(contract.value.owner_address), new_contract: created };
    }
  }
}

/**
 * `raw_data` as java-tron writes it. A stored transaction has `fee_limit` after `expiration`; the builders'
 * answers (triggersmartcontract) write it before (both as recorded: gettransactionbyid.json,
 * triggersmartcontract.json).
 */
export function rawDataJson(raw: RawTransaction, visible: boolean, feeLimitFirst = false): JsonObject {
  const contract: JsonObject = {
    parameter: {
      value: contractValueJson(raw.contract, visible),
      type_url: `type.googleapis.com/protocol.${raw.contract.type}`,
    },
    type: raw.contract.type,
  };
  if (raw.permissionId) contract.Permission_id = raw.permissionId;
  const out: JsonObject = {
    contract: [contract],
    ref_block_bytes: bytesToHex(raw.ref_block_bytes),
    ref_block_hash: bytesToHex(raw.ref_block_hash),
  };
  if (feeLimitFirst && raw.fee_limit) out.fee_limit = Number(raw.fee_limit);
  out.expiration = Number(raw.expiration);
  if (raw.data?.length) out.data = bytesToHex(raw.data);
  if (!feeLimitFirst && raw.fee_limit) out.fee_limit = Number(raw.fee_limit);
  out.timestamp = Number(raw.timestamp);
  return out;
}

class JsonFormError extends Error {}

const asObject = (v: unknown, what: string): Record<string, unknown> => {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new JsonFormError(`${what} is not an object`);
  return v as Record<string, unknown>;
};
const asHex = (v: unknown, what: string): Bytes => {
  if (v === undefined) return new Uint8Array();
  if (typeof v !== "string" || !/^([0-9a-fA-F]{2})*$/.test(v))
    throw new JsonFormError(`${what}: INVALID hex String`);
  return hexToBytes(v);
};
const asInt = (v: unknown, what: string): bigint => {
  if (v === undefined) return 0n;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  throw new JsonFormError(`${what} is not an integer`);
};
const asAddress = (v: unknown, visible: boolean, what: string): Bytes => {
  if (typeof v !== "string") throw new JsonFormError(`${what} missing`);
  const hex = visible ? base58ToHex(v) : /^41[0-9a-fA-F]{40}$/.test(v) ? v : undefined;
  if (!hex) throw new JsonFormError(`${what}: INVALID ${visible ? "base58" : "hex"} String`);
  return hexToBytes(hex);
};

/** The contract of a builder request or of a transaction's `raw_data.contract[0].parameter.value`. */
export function contractFromJson(
  type: ContractTypeName,
  v: Record<string, unknown>,
  visible: boolean,
  assetNameAsText = visible,
): ContractParameter {
  switch (type) {
    case "TransferContract":
      return {
        type,
        value: {
          owner_address: asAddress(v.owner_address, visible, "owner_address"),
          to_address: asAddress(v.to_address, visible, "to_address"),
          amount: asInt(v.amount, "amount"),
        },
      };
    case "TransferAssetContract":
      return {
        type,
        value: {
          asset_name: assetNameAsText
            ? new TextEncoder().encode(String(v.asset_name ?? ""))
            : asHex(v.asset_name, "asset_name"),
          owner_address: asAddress(v.owner_address, visible, "owner_address"),
          to_address: asAddress(v.to_address, visible, "to_address"),
          amount: asInt(v.amount, "amount"),
        },
      };
    case "TriggerSmartContract":
      return {
        type,
        value: {
          owner_address: asAddress(v.owner_address, visible, "owner_address"),
          contract_address: asAddress(v.contract_address, visible, "contract_address"),
          call_value: asInt(v.call_value, "call_value"),
          data: asHex(v.data, "data"),
          call_token_value: asInt(v.call_token_value, "call_token_value"),
          token_id: asInt(v.token_id, "token_id"),
        },
      };
    case "CreateSmartContract": {
      const n = asObject(v.new_contract, "new_contract");
      return {
        type,
        value: {
          owner_address: asAddress(v.owner_address, visible, "owner_address"),
          new_contract: {
            origin_address: asAddress(n.origin_address, visible, "origin_address"),
            bytecode: asHex(n.bytecode, "bytecode"),
            call_value: asInt(n.call_value, "call_value"),
            consume_user_resource_percent: asInt(n.consume_user_resource_percent, "percent"),
            name: String(n.name ?? ""),
            origin_energy_limit: asInt(n.origin_energy_limit, "origin_energy_limit"),
          },
        },
      };
    }
  }
}

const CONTRACT_NAMES = new Set<string>([
  "TransferContract",
  "TransferAssetContract",
  "TriggerSmartContract",
  "CreateSmartContract",
]);

/**
 * A transaction's `raw_data` JSON (as a client sends it back to broadcasttransaction) to its fields.
 * TronGrid's v1 API writes hex addresses but `asset_name` as text: `assetNameAsText` reads that form.
 */
export function rawFromJson(rawData: unknown, visible: boolean, assetNameAsText = visible): RawTransaction {
  const r = asObject(rawData, "raw_data");
  if (!Array.isArray(r.contract) || r.contract.length !== 1) throw new JsonFormError("raw_data.contract");
  const c = asObject(r.contract[0], "contract");
  const type = String(c.type);
  if (!CONTRACT_NAMES.has(type))
    throw new JsonFormError(`contract type ${type} is not served by the stand-in`);
  const parameter = asObject(c.parameter, "parameter");
  const raw: RawTransaction = {
    ref_block_bytes: asHex(r.ref_block_bytes, "ref_block_bytes"),
    ref_block_hash: asHex(r.ref_block_hash, "ref_block_hash"),
    expiration: asInt(r.expiration, "expiration"),
    contract: contractFromJson(
      type as ContractTypeName,
      asObject(parameter.value, "value"),
      visible,
      assetNameAsText,
    ),
    timestamp: asInt(r.timestamp, "timestamp"),
  };
  if (r.data !== undefined) raw.data = asHex(r.data, "data");
  if (r.fee_limit !== undefined) raw.fee_limit = asInt(r.fee_limit, "fee_limit");
  if (c.Permission_id !== undefined) raw.permissionId = Number(asInt(c.Permission_id, "Permission_id"));
  return raw;
}

export const isJsonFormError = (e: unknown): e is Error => e instanceof JsonFormError;

export function txIdOf(raw: RawTransaction): { rawBytes: Bytes; txID: string } {
  const rawBytes = encodeRawTransaction(raw);
  return { rawBytes, txID: sha256Hex(rawBytes) };
}

function bytesToHex0x(bytes: Bytes): string {
  return `0x${bytesToHex(bytes)}`;
}
