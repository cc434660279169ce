/**
 * A broadcast's text read as the node reads it before anything else (Bitcoin Core's `sendrawtransaction`:
 * `DecodeHexTx` with witnesses, Litecoin Core and Dogecoin Core alike): hex digits, an even number of them,
 * then one transaction's serialization to its last byte (version, inputs, outputs, witnesses when flagged,
 * lock time), each count and length a canonical compact size. What fails here the node refuses with
 * TX_DECODE_FAILED, so the Esplora API refuses it so without a node call. A transaction flagged with
 * Litecoin's MWEB data (flag 8) is read up to that data and left to the node, which alone reads it.
 */
import type { ScriptAddresser } from "../scriptAddress";
import type { NodeInput, NodeOutput, NodeTransaction } from "./esploraJson";

/**
 * The node's refusal of a text it cannot read as a transaction (RPC_DESERIALIZATION_ERROR, -22), as Bitcoin
 * Core (0.20 on) and Litecoin Core word it; Dogecoin Core 1.14 says "TX decode failed" alone.
 */
export const TX_DECODE_FAILED =
  '{"code":-22,"message":"TX decode failed. Make sure the tx has at least one input."}';

const HEX = /^[0-9a-fA-F]*$/;
/** The serialization's flags after an empty input list: witnesses, and Litecoin's MWEB data. */
const WITNESS_FLAG = 1;
const MWEB_FLAG = 8;
/** Bytes of an input before its script (the outpoint), of its sequence, of an output's value. */
const OUTPOINT_BYTES = 36;
const SEQUENCE_BYTES = 4;
const VALUE_BYTES = 8;
const VERSION_BYTES = 4;
const LOCK_TIME_BYTES = 4;
/** The largest compact size the node reads (Bitcoin Core's MAX_SIZE). */
const MAX_SIZE = 0x0200_0000;
/** A compact size's first byte for 2, 4 and 8 bytes following, and the least each may carry (canonical). */
const WIDE = new Map([
  [0xfd, { width: 2, least: 0xfd }],
  [0xfe, { width: 4, least: 0x1_0000 }],
  [0xff, { width: 8, least: 0x1_0000_0000 }],
]);

/** Thrown where the bytes end early or hold what the node would not read. */
export class RawTransactionError extends Error {}

/** A transaction's bytes and where the reading is; counts and lengths read canonical, as the node reads them. */
class ByteReader {
  at = 0;
  constructor(readonly bytes: Buffer) {}
  /** The next `count` bytes: where they start. */
  take(count: number): number {
    if (count > this.bytes.length - this.at)
      throw new RawTransactionError(`the bytes end early at ${this.at}`);
    const from = this.at;
    this.at += count;
    return from;
  }
  byte(): number {
    return this.bytes[this.take(1)]!;
  }
  compactSize(): number {
    const first = this.byte();
    const wide = WIDE.get(first);
    if (wide === undefined) return first;
    const at = this.take(wide.width);
    let value = 0;
    for (let i = wide.width - 1; i >= 0; i--) value = value * 256 + this.bytes[at + i]!;
    if (value < wide.least || value > MAX_SIZE) throw new RawTransactionError(`a count of ${value} at ${at}`);
    return value;
  }
  /** A length-prefixed item's bounds. */
  item(): { start: number; end: number } {
    const length = this.compactSize();
    const start = this.take(length);
    return { start, end: start + length };
  }
}

/** Whether `hex` is a transaction the node would read; false for what it refuses with TX_DECODE_FAILED. */
export function readsAsTransaction(hex: string): boolean {
  if (hex.length === 0 || hex.length % 2 !== 0 || !HEX.test(hex)) return false;
  const r = new ByteReader(Buffer.from(hex, "hex"));
  const inputs = () => {
    const count = r.compactSize();
    for (let i = 0; i < count; i++) {
      r.take(OUTPOINT_BYTES);
      r.item();
      r.take(SEQUENCE_BYTES);
    }
    return count;
  };
  const outputs = () => {
    const count = r.compactSize();
    for (let i = 0; i < count; i++) {
      r.take(VALUE_BYTES);
      r.item();
    }
  };
  try {
    r.take(VERSION_BYTES);
    let count = inputs();
    // An empty input list is the witness serialization's marker: its flags follow, then the real lists.
    let flags = 0;
    if (count === 0) {
      flags = r.byte();
      if (flags !== 0) {
        count = inputs();
        outputs();
      }
    } else {
      outputs();
    }
    if (flags & WITNESS_FLAG) {
      flags ^= WITNESS_FLAG;
      let witnessed = false;
      for (let i = 0; i < count; i++) {
        const items = r.compactSize();
        for (let j = 0; j < items; j++) r.item();
        witnessed ||= items > 0;
      }
      // The node refuses a witness flag with every input's witness empty.
      if (!witnessed) return false;
    }
    if (flags & ~MWEB_FLAG) return false;
    if (flags & MWEB_FLAG) return true;
    r.take(LOCK_TIME_BYTES);
    return r.at === r.bytes.length;
  } catch (error) {
    if (error instanceof RawTransactionError) return false;
    throw error;
  }
}

const HASH_BYTES = 32;
/** The null outpoint's index (a coinbase's input). */
const NULL_INDEX = 0xffff_ffff;
const WITNESS_SCALE = 4;

/** A 32-byte hash as the node writes it: byte-reversed hex. */
const reversedHex = (bytes: Uint8Array) => Buffer.from(bytes).reverse().toString("hex");

/**
 * A transaction of a block, decoded from its serialization (`getrawtransaction <txid> false <block>`) into
 * the members Esplora's JSON reads of the node's verbose answer (esploraJson.ts `NodeTransaction`), equal to
 * them: the node writes those from the same bytes, and asking for its hex spares it building them (its
 * verbose answer costs it and the service several times the work). The txid is the double SHA-256 of the
 * serialization without witnesses (and Litecoin's MWEB data), reversed; weight its size without them times 3
 * plus its size without MWEB data (BIP-141); addresses by the chain's codec as the node names them.
 */
export function decodeTransaction(hex: string, addressOf: ScriptAddresser): NodeTransaction {
  const bytes = Buffer.from(hex, "hex");
  if (bytes.length * 2 !== hex.length) throw new RawTransactionError("a transaction that is not hex");
  const r = new ByteReader(bytes);
  const version = bytes.readInt32LE(r.take(VERSION_BYTES));
  let listsStart = r.at;
  let inputCount = r.compactSize();
  let flags = 0;
  if (inputCount === 0) {
    flags = r.byte();
    if (flags === 0) throw new RawTransactionError("a transaction without inputs");
    listsStart = r.at;
    inputCount = r.compactSize();
  }
  const vin: NodeInput[] = [];
  for (let i = 0; i < inputCount; i++) {
    const outpoint = r.take(OUTPOINT_BYTES);
    const script = r.item();
    const sequence = bytes.readUInt32LE(r.take(SEQUENCE_BYTES));
    const index = bytes.readUInt32LE(outpoint + HASH_BYTES);
    const hash = bytes.subarray(outpoint, outpoint + HASH_BYTES);
    const scriptHex = bytes.toString("hex", script.start, script.end);
    vin.push(
      inputCount === 1 && index === NULL_INDEX && hash.every((b) => b === 0)
        ? { coinbase: scriptHex, sequence }
        : { txid: reversedHex(hash), vout: index, scriptSig: { hex: scriptHex }, sequence },
    );
  }
  const vout: NodeOutput[] = [];
  const outputCount = r.compactSize();
  for (let n = 0; n < outputCount; n++) {
    const value = bytes.readBigUInt64LE(r.take(VALUE_BYTES));
    const { start, end } = r.item();
    const address = addressOf(bytes, start, end);
    const scriptPubKey = { hex: bytes.toString("hex", start, end), ...(address === null ? {} : { address }) };
    vout.push({ value, n, scriptPubKey });
  }
  const listsEnd = r.at;
  if (flags & WITNESS_FLAG) {
    for (const input of vin) {
      const items = r.compactSize();
      const witness: string[] = [];
      for (let j = 0; j < items; j++) {
        const { start, end } = r.item();
        witness.push(bytes.toString("hex", start, end));
      }
      if (witness.length > 0) input.txinwitness = witness;
    }
  }
  // Litecoin's MWEB data: in a block only the integrating transaction's null marker (rawBlock.ts).
  let mwebBytes = 0;
  if (flags & MWEB_FLAG) {
    if (r.byte() !== 0) throw new RawTransactionError("a transaction with MWEB data");
    mwebBytes = 1;
  }
  if (flags & ~(WITNESS_FLAG | MWEB_FLAG)) throw new RawTransactionError(`unknown flags ${flags}`);
  const locktime = bytes.readUInt32LE(r.take(LOCK_TIME_BYTES));
  if (r.at !== bytes.length)
    throw new RawTransactionError(`${bytes.length - r.at} bytes after the transaction`);
  const size = bytes.length;
  // Version, the input and output lists, lock time: the serialization without marker, flags and witnesses.
  const stripped = Buffer.concat([
    bytes.subarray(0, VERSION_BYTES),
    bytes.subarray(listsStart, listsEnd),
    bytes.subarray(size - LOCK_TIME_BYTES),
  ]);
  const hash = Bun.SHA256.hash(Bun.SHA256.hash(stripped) as Uint8Array) as Uint8Array;
  const counted = flags & WITNESS_FLAG ? size - mwebBytes : stripped.length;
  const weight = stripped.length * (WITNESS_SCALE - 1) + counted;
  return {
    txid: reversedHex(hash),
    version,
    locktime,
    size,
    vsize: Math.ceil(weight / WITNESS_SCALE),
    weight,
    vin,
    vout,
    hex,
  };
}
