/**
 * The few protobuf messages of java-tron's `Tron.proto` and `contract/*.proto` the stand-in needs, encoded as
 * protobuf-java / google-protobuf write them (fields in number order, defaults left out), so a txID is
 * sha256 of the same bytes java-tron and tronweb hash. Checked byte for byte against recorded mainnet
 * `raw_data_hex` (test/fixtures/tron/mainnet/v1-account-transactions.json) and against tronweb's own
 * encoding (its `txCheck` refuses a built transaction whose `raw_data_hex` differs).
 */

export type Bytes = Uint8Array;

export const hexToBytes = (hex: string): Bytes => Uint8Array.from(Buffer.from(hex.replace(/^0x/, ""), "hex"));
export const bytesToHex = (bytes: Bytes): string => Buffer.from(bytes).toString("hex");

class Writer {
  private readonly parts: number[] = [];

  varint(value: bigint | number): this {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.parts.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.parts.push(Number(v));
    return this;
  }

  /** An int64/int32/enum field; zero is the default and is not written. */
  int(field: number, value: bigint | number | undefined): this {
    if (value === undefined || BigInt(value) === 0n) return this;
    return this.varint(field << 3).varint(value);
  }

  /** A bytes/string/message field; empty is the default and is not written. */
  bytes(field: number, value: Bytes | undefined): this {
    if (value === undefined || value.length === 0) return this;
    this.varint((field << 3) | 2).varint(value.length);
    for (const b of value) this.parts.push(b);
    return this;
  }

  /** A message field is written even when empty (it is present). */
  message(field: number, value: Bytes): this {
    this.varint((field << 3) | 2).varint(value.length);
    for (const b of value) this.parts.push(b);
    return this;
  }

  finish(): Bytes {
    return Uint8Array.from(this.parts);
  }
}

const utf8 = (text: string): Bytes => new TextEncoder().encode(text);

/** java-tron's ContractType numbers for the contracts the scenario and the builders use. */
export const CONTRACT_TYPES = {
  TransferContract: 1,
  TransferAssetContract: 2,
  CreateSmartContract: 30,
  TriggerSmartContract: 31,
} as const;
export type ContractTypeName = keyof typeof CONTRACT_TYPES;

export interface TransferValue {
  owner_address: Bytes;
  to_address: Bytes;
  amount: bigint;
}
export interface TransferAssetValue extends TransferValue {
  asset_name: Bytes;
}
export interface TriggerValue {
  owner_address: Bytes;
  contract_address: Bytes;
  call_value?: bigint;
  data?: Bytes;
  call_token_value?: bigint;
  token_id?: bigint;
}

/** `SmartContract` as a deployment writes it (no abi entries: the stand-in's creations carry `abi: {}`). */
export interface NewContractValue {
  origin_address: Bytes;
  bytecode: Bytes;
  call_value?: bigint;
  consume_user_resource_percent?: bigint;
  name?: string;
  origin_energy_limit?: bigint;
}
export interface CreateValue {
  owner_address: Bytes;
  new_contract: NewContractValue;
}

export type ContractParameter =
  | { type: "TransferContract"; value: TransferValue }
  | { type: "TransferAssetContract"; value: TransferAssetValue }
  | { type: "TriggerSmartContract"; value: TriggerValue }
  | { type: "CreateSmartContract"; value: CreateValue };

/** `SmartContract`: origin_address 1, abi 3 (an empty message, present), bytecode 4, call_value 5, percent 6, name 7, origin_energy_limit 8. */
function encodeNewContract(c: NewContractValue): Bytes {
  return new Writer()
    .bytes(1, c.origin_address)
    .message(3, new Uint8Array())
    .bytes(4, c.bytecode)
    .int(5, c.call_value)
    .int(6, c.consume_user_resource_percent)
    .bytes(7, c.name === undefined ? undefined : utf8(c.name))
    .int(8, c.origin_energy_limit)
    .finish();
}

export function encodeContractValue(contract: ContractParameter): Bytes {
  const w = new Writer();
  switch (contract.type) {
    case "TransferContract":
      return w
        .bytes(1, contract.value.owner_address)
        .bytes(2, contract.value.to_address)
        .int(3, contract.value.amount)
        .finish();
    case "TransferAssetContract":
      return w
        .bytes(1, contract.value.asset_name)
        .bytes(2, contract.value.owner_address)
        .bytes(3, contract.value.to_address)
        .int(4, contract.value.amount)
        .finish();
    case "TriggerSmartContract":
      return w
        .bytes(1, contract.value.owner_address)
        .bytes(2, contract.value.contract_address)
        .int(3, contract.value.call_value)
        .bytes(4, contract.value.data)
        .int(5, contract.value.call_token_value)
        .int(6, contract.value.token_id)
        .finish();
    case "CreateSmartContract":
      return w
        .bytes(1, contract.value.owner_address)
        .message(2, encodeNewContract(contract.value.new_contract))
        .finish();
  }
}

export interface RawTransaction {
  ref_block_bytes: Bytes;
  ref_block_hash: Bytes;
  expiration: bigint;
  data?: Bytes;
  contract: ContractParameter;
  permissionId?: number;
  timestamp: bigint;
  fee_limit?: bigint;
}

/** `Transaction.raw`: fields 1, 4, 8, 10, 11, 14, 18 (ref_block_num, auths and scripts are never set). */
export function encodeRawTransaction(raw: RawTransaction): Bytes {
  const any = new Writer()
    .bytes(1, utf8(`type.googleapis.com/protocol.${raw.contract.type}`))
    .bytes(2, encodeContractValue(raw.contract))
    .finish();
  const contract = new Writer()
    .int(1, CONTRACT_TYPES[raw.contract.type])
    .message(2, any)
    .int(5, raw.permissionId)
    .finish();
  return new Writer()
    .bytes(1, raw.ref_block_bytes)
    .bytes(4, raw.ref_block_hash)
    .int(8, raw.expiration)
    .bytes(10, raw.data)
    .message(11, contract)
    .int(14, raw.timestamp)
    .int(18, raw.fee_limit)
    .finish();
}

/** `Transaction`: raw_data = 1, signature = 2 (repeated), ret = 5 (repeated `Result`, contractRet = 3). */
export function encodeTransaction(rawBytes: Bytes, signatures: Bytes[], contractRet?: number): Bytes {
  const w = new Writer().message(1, rawBytes);
  for (const s of signatures) w.bytes(2, s);
  if (contractRet !== undefined) w.message(5, new Writer().int(3, contractRet).finish());
  return w.finish();
}

export interface RawBlockHeader {
  timestamp: bigint;
  txTrieRoot: Bytes;
  parentHash: Bytes;
  number: bigint;
  witness_address: Bytes;
  version: number;
}

/** `BlockHeader.raw`: timestamp 1, txTrieRoot 2, parentHash 3, number 7, witness_address 9, version 10. */
export function encodeBlockHeaderRaw(raw: RawBlockHeader): Bytes {
  return new Writer()
    .int(1, raw.timestamp)
    .bytes(2, raw.txTrieRoot)
    .bytes(3, raw.parentHash)
    .int(7, raw.number)
    .bytes(9, raw.witness_address)
    .int(10, raw.version)
    .finish();
}

// ---- reading (broadcasthex takes a serialized Transaction) ----

type Field = { field: number; wire: number; int?: bigint; bytes?: Bytes };

function readFields(buf: Bytes): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error("truncated varint");
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error("varint too long");
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) fields.push({ field, wire, int: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (pos + len > buf.length) throw new Error("truncated bytes");
      fields.push({ field, wire, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return fields;
}

const one = (fields: Field[], n: number) => fields.find((f) => f.field === n);
const EMPTY = new Uint8Array();

export function decodeContract(typeNumber: number, value: Bytes): ContractParameter {
  const f = readFields(value);
  const b = (n: number) => one(f, n)?.bytes ?? EMPTY;
  const i = (n: number) => one(f, n)?.int ?? 0n;
  const type = (Object.keys(CONTRACT_TYPES) as ContractTypeName[]).find(
    (k) => CONTRACT_TYPES[k] === typeNumber,
  );
  switch (type) {
    case "TransferContract":
      return { type, value: { owner_address: b(1), to_address: b(2), amount: i(3) } };
    case "TransferAssetContract":
      return { type, value: { asset_name: b(1), owner_address: b(2), to_address: b(3), amount: i(4) } };
    case "TriggerSmartContract":
      return {
        type,
        value: {
          owner_address: b(1),
          contract_address: b(2),
          call_value: i(3),
          data: b(4),
          call_token_value: i(5),
          token_id: i(6),
        },
      };
    case "CreateSmartContract": {
      const n = readFields(b(2));
      const nb = (k: number) => one(n, k)?.bytes ?? EMPTY;
      const ni = (k: number) => one(n, k)?.int ?? 0n;
      return {
        type,
        value: {
          owner_address: b(1),
          new_contract: {
            origin_address: nb(1),
            bytecode: nb(4),
            call_value: ni(5),
            consume_user_resource_percent: ni(6),
            name: new TextDecoder().decode(nb(7)),
            origin_energy_limit: ni(8),
          },
        },
      };
    }
    default:
      throw new Error(`contract type ${typeNumber} is not served by the stand-in`);
  }
}

/** A serialized `Transaction` back to its raw fields, its raw bytes and its signatures. */
export function decodeTransaction(buf: Bytes): { raw: RawTransaction; rawBytes: Bytes; signatures: Bytes[] } {
  const top = readFields(buf);
  const rawBytes = one(top, 1)?.bytes ?? EMPTY;
  const signatures = top.filter((f) => f.field === 2).map((f) => f.bytes ?? EMPTY);
  const r = readFields(rawBytes);
  const contractField = one(r, 11)?.bytes;
  if (!contractField) throw new Error("No contract!");
  const c = readFields(contractField);
  const any = readFields(one(c, 2)?.bytes ?? EMPTY);
  const contract = decodeContract(Number(one(c, 1)?.int ?? 0n), one(any, 2)?.bytes ?? EMPTY);
  const permission = one(c, 5)?.int;
  const raw: RawTransaction = {
    ref_block_bytes: one(r, 1)?.bytes ?? EMPTY,
    ref_block_hash: one(r, 4)?.bytes ?? EMPTY,
    expiration: one(r, 8)?.int ?? 0n,
    contract,
    timestamp: one(r, 14)?.int ?? 0n,
  };
  const data = one(r, 10)?.bytes;
  if (data) raw.data = data;
  const feeLimit = one(r, 18)?.int;
  if (feeLimit !== undefined) raw.fee_limit = feeLimit;
  if (permission !== undefined) raw.permissionId = Number(permission);
  return { raw, rawBytes, signatures };
}
