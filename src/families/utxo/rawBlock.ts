/**
 * A block decoded from its raw serialization (`getblock <hash> 0`, Dogecoin Core 1.14: `getblock <hash>
 * false`) into what the index keeps (decode.ts `UtxoBlock`), equal to what decode.ts reads of the node's
 * verbosity-2 answer of the same block: the header's parent and time; each transaction's txid (the double
 * SHA-256 of its serialization without witnesses, reversed as the node writes it), size, weight (its size
 * without witnesses times 3 plus its size, BIP-141), vsize (weight / 4 rounded up); a coinbase (one input
 * spending the null outpoint) and every other input's outpoint; each output's value in satoshis, script and
 * address (scriptAddress.ts, by the chain's codec and the node's dialect). What a raw block does not hold
 * comes from the block's header answer (`getblockheader <hash>`): its height and median time past.
 * Read from one Buffer with offsets; nothing is allocated per byte.
 *
 * The forks' serializations:
 *  - Dogecoin's AuxPoW (merged mining, as Namecoin's src/auxpow.h): a header whose version has bit 8 set is
 *    followed by the proof: the parent chain's coinbase transaction, its block hash, its merkle branch and
 *    index, the chain merkle branch and index, and the parent's 80-byte header. It is skipped; the block's
 *    size counts it, as the node's `size` does.
 *  - Litecoin's MWEB (litecoin-project/litecoin 0.21 src/primitives/transaction.h, block.h): a transaction
 *    flagged 8 carries MWEB data after its witnesses; a null one (one 0 byte) marks the integrating
 *    transaction (HogEx), whose txid, like every txid, excludes it. A block whose last transaction is a
 *    HogEx ends with the extension block, which is skipped: its inputs and outputs carry no outpoint or
 *    script the index keeps, and the node's answer lists it under `mweb`, not among `tx`. As the node
 *    counts them: a block's and a transaction's `size` include the MWEB bytes, their weight does not.
 *    Transactions with MWEB data of their own never reach a block (the node moves it to the extension
 *    block): one is refused here.
 */
import type { UtxoBlock, UtxoInput, UtxoOutput, UtxoTransaction } from "./decode";
import { integerAt, membersOf, stringAt } from "./members";
import type { ScriptAddresser } from "./scriptAddress";

/** The raw block cannot be read: its bytes end early or hold what no node of the family writes. */
export class RawBlockError extends Error {}

const HEADER_BYTES = 80;
const HASH_BYTES = 32;
const VERSION_BYTES = 4;
const LOCK_TIME_BYTES = 4;
const OUTPOINT_BYTES = 36;
const SEQUENCE_BYTES = 4;
const VALUE_BYTES = 8;
const TIME_OFFSET = 68;
const PREV_HASH_OFFSET = 4;
/** Dogecoin's (Namecoin's) version bit of a header followed by an AuxPoW. */
const AUXPOW_VERSION_BIT = 0x100;
const WITNESS_FLAG = 1;
const MWEB_FLAG = 8;
const WITNESS_SCALE = 4;
/** The null outpoint's index (a coinbase's input). */
const NULL_INDEX = 0xffffffff;

/** What of the chain's serialization a decoder reads. */
export interface RawBlockFormat {
  /** Dogecoin: headers with the AuxPoW bit carry a merged-mining proof. */
  auxpow: boolean;
  /** The address an output's script pays, as the node names it. */
  addressOf: ScriptAddresser;
}

/** One block's bytes and where the reading is. */
interface Reader {
  bytes: Buffer;
  at: number;
  /** Scratch: a reversed hash, and the non-witness serialization of a segwit transaction. */
  hash: Buffer;
  stripped: Buffer;
}

function need(r: Reader, count: number): void {
  if (count > r.bytes.length - r.at) throw new RawBlockError(`the block ends early at byte ${r.at}`);
}

function compactSize(r: Reader): number {
  need(r, 1);
  const first = r.bytes[r.at++]!;
  if (first < 0xfd) return first;
  const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  need(r, width);
  const b = r.bytes;
  const value =
    width === 2 ? b.readUInt16LE(r.at) : width === 4 ? b.readUInt32LE(r.at) : Number(b.readBigUInt64LE(r.at));
  r.at += width;
  // No count or length of a block is near this (Bitcoin Core's MAX_SIZE, 32 MiB).
  if (value > 0x0200_0000) throw new RawBlockError(`a count of ${value} at byte ${r.at}`);
  return value;
}

function skip(r: Reader, count: number): void {
  need(r, count);
  r.at += count;
}

/** A 32-byte hash at `at` as the node writes it: byte-reversed hex. */
function hashHex(r: Reader, at: number): string {
  const b = r.bytes;
  const out = r.hash;
  for (let i = 0; i < HASH_BYTES; i++) out[i] = b[at + HASH_BYTES - 1 - i]!;
  return out.toString("hex", 0, HASH_BYTES);
}

/** The double SHA-256 of `data`, as the node writes it. */
function doubleHashHex(r: Reader, data: Uint8Array): string {
  const out = r.hash;
  Bun.SHA256.hash(data, out);
  Bun.SHA256.hash(out, out);
  out.reverse();
  return out.toString("hex", 0, HASH_BYTES);
}

/** Where a transaction's parts lie, as read. */
interface TransactionSpan {
  start: number;
  end: number;
  /** Where its inputs start (after the marker and flags when there are any), its outputs end. */
  listsStart: number;
  listsEnd: number;
  flags: number;
  /** Bytes of its MWEB data (the HogEx's null marker). */
  mwebBytes: number;
  inputs: UtxoInput[];
  outputs: UtxoOutput[];
  coinbase: boolean;
}

/** Reads one transaction; `keep`: decode its inputs and outputs (false: an AuxPoW's parent coinbase). */
function readTransaction(r: Reader, keep: boolean, format: RawBlockFormat): TransactionSpan {
  const b = r.bytes;
  const start = r.at;
  skip(r, VERSION_BYTES);
  let listsStart = r.at;
  let inputCount = compactSize(r);
  let flags = 0;
  // An empty input list is the extended serialization's marker: its flags follow, then the real lists.
  if (inputCount === 0) {
    need(r, 1);
    flags = b[r.at++]!;
    if (flags === 0) throw new RawBlockError(`a transaction without inputs at byte ${start}`);
    listsStart = r.at;
    inputCount = compactSize(r);
  }
  const inputs: UtxoInput[] = [];
  let coinbase = false;
  for (let i = 0; i < inputCount; i++) {
    need(r, OUTPOINT_BYTES);
    const at = r.at;
    r.at += OUTPOINT_BYTES;
    skip(r, compactSize(r) + SEQUENCE_BYTES);
    if (!keep) continue;
    const index = b.readUInt32LE(at + HASH_BYTES);
    if (inputCount === 1 && index === NULL_INDEX && isNullHash(b, at)) coinbase = true;
    else inputs.push({ txid: hashHex(r, at), vout: index, address: null, value: 0n, indexed: false });
  }
  const outputCount = compactSize(r);
  const outputs: UtxoOutput[] = [];
  for (let n = 0; n < outputCount; n++) {
    need(r, VALUE_BYTES);
    const valueAt = r.at;
    r.at += VALUE_BYTES;
    const length = compactSize(r);
    const scriptAt = r.at;
    skip(r, length);
    if (!keep) continue;
    outputs.push({
      vout: n,
      value: b.readBigUInt64LE(valueAt),
      address: format.addressOf(b, scriptAt, scriptAt + length),
      script: b.toString("hex", scriptAt, scriptAt + length),
      pays: false,
    });
  }
  const listsEnd = r.at;
  if (flags & WITNESS_FLAG) {
    for (let i = 0; i < inputCount; i++) {
      const items = compactSize(r);
      for (let j = 0; j < items; j++) skip(r, compactSize(r));
    }
  }
  let mwebBytes = 0;
  if (flags & MWEB_FLAG) {
    need(r, 1);
    if (b[r.at] !== 0) throw new RawBlockError(`a transaction with MWEB data in the block at byte ${start}`);
    r.at++;
    mwebBytes = 1;
  }
  if (flags & ~(WITNESS_FLAG | MWEB_FLAG)) {
    throw new RawBlockError(`a transaction with unknown flags ${flags} at byte ${start}`);
  }
  skip(r, LOCK_TIME_BYTES);
  return { start, end: r.at, listsStart, listsEnd, flags, mwebBytes, inputs, outputs, coinbase };
}

function isNullHash(b: Buffer, at: number): boolean {
  for (let i = 0; i < HASH_BYTES; i++) if (b[at + i] !== 0) return false;
  return true;
}

/** The serialization's sizes a block's weight adds up: without witnesses, and all but MWEB data. */
interface Sizes {
  stripped: number;
  counted: number;
}

/** A transaction's txid (the double SHA-256 of its serialization without witnesses), and that size. */
function txidOf(r: Reader, span: TransactionSpan): { txid: string; stripped: number } {
  const b = r.bytes;
  if (span.flags === 0) {
    return { txid: doubleHashHex(r, b.subarray(span.start, span.end)), stripped: span.end - span.start };
  }
  // Version, the input and output lists, lock time: the serialization without marker, flags and witnesses.
  const lists = span.listsEnd - span.listsStart;
  const stripped = VERSION_BYTES + lists + LOCK_TIME_BYTES;
  if (r.stripped.length < stripped)
    r.stripped = Buffer.allocUnsafe(Math.max(stripped, r.stripped.length * 2));
  const s = r.stripped;
  b.copy(s, 0, span.start, span.start + VERSION_BYTES);
  b.copy(s, VERSION_BYTES, span.listsStart, span.listsEnd);
  b.copy(s, VERSION_BYTES + lists, span.end - LOCK_TIME_BYTES, span.end);
  return { txid: doubleHashHex(r, s.subarray(0, stripped)), stripped };
}

/** A transaction's txid, sizes and weight from its span; its sizes added to the block's. */
function transactionOf(r: Reader, span: TransactionSpan, position: number, sizes: Sizes): UtxoTransaction {
  const size = span.end - span.start;
  const { txid, stripped } = txidOf(r, span);
  // What weight counts is the serialization without MWEB data: with no witness, no marker and flags either.
  const counted = span.flags & WITNESS_FLAG ? size - span.mwebBytes : stripped;
  const weight = stripped * (WITNESS_SCALE - 1) + counted;
  sizes.stripped += stripped;
  sizes.counted += counted;
  return {
    txid,
    position,
    size,
    vsize: Math.ceil(weight / WITNESS_SCALE),
    weight,
    coinbase: span.coinbase,
    inputs: span.inputs,
    outputs: span.outputs,
    fee: 0n,
    fromAddresses: [],
  };
}

/** Skips a Dogecoin AuxPoW: the parent's coinbase, block hash, two merkle branches with indexes, header. */
function skipAuxpow(r: Reader, format: RawBlockFormat): void {
  readTransaction(r, false, format);
  skip(r, HASH_BYTES);
  skip(r, compactSize(r) * HASH_BYTES + 4);
  skip(r, compactSize(r) * HASH_BYTES + 4);
  skip(r, HEADER_BYTES);
}

/** What the header's answer (`getblockheader <hash>` verbose) gives that the raw block does not. */
interface HeaderFacts {
  hash: string;
  height: bigint;
  medianTime: bigint;
}

function headerFacts(text: string): HeaderFacts {
  const members = membersOf(text, ["hash", "height", "mediantime"]);
  const hash = stringAt(text, members.get("hash"));
  const height = integerAt(text, members.get("height"));
  const medianTime = integerAt(text, members.get("mediantime"));
  if (hash === undefined || height === undefined || medianTime === undefined) {
    throw new SyntaxError("a block header without hash, height or mediantime");
  }
  return { hash: hash.toLowerCase(), height, medianTime };
}

/** A raw block's bytes (`hex`, the node's answer's string), read to its transactions' count. */
function openBlock(hex: string, format: RawBlockFormat): { r: Reader; count: number } {
  const bytes = Buffer.from(hex, "hex");
  if (bytes.length * 2 !== hex.length) throw new RawBlockError("a raw block that is not hex");
  const r: Reader = {
    bytes,
    at: 0,
    hash: Buffer.allocUnsafe(HASH_BYTES),
    stripped: Buffer.allocUnsafe(4096),
  };
  need(r, HEADER_BYTES);
  r.at = HEADER_BYTES;
  if (format.auxpow && bytes.readUInt32LE(0) & AUXPOW_VERSION_BIT) skipAuxpow(r, format);
  return { r, count: compactSize(r) };
}

/**
 * The serializations (hex) of the transactions of a raw block that `wanted` names (txid -> its position in
 * the block, where known), by txid: the block walked without decoding what its transactions hold, up to the
 * last wanted (the Esplora API's page of several transactions of one block: the node reads a block once,
 * not once a transaction). Where every position is known, they are taken by position (their txids are the
 * caller's to check, as it decodes them); else each transaction's txid is hashed to find them.
 */
export function transactionsOfBlock(
  hex: string,
  format: RawBlockFormat,
  wanted: ReadonlyMap<string, number | undefined>,
): Map<string, string> {
  const { r, count } = openBlock(hex, format);
  const found = new Map<string, string>();
  const byPosition = new Map<number, string>();
  for (const [txid, position] of wanted) if (position !== undefined) byPosition.set(position, txid);
  const placed = byPosition.size === wanted.size;
  for (let position = 0; position < count && found.size < wanted.size; position++) {
    const span = readTransaction(r, false, format);
    const txid = placed ? byPosition.get(position) : txidOf(r, span).txid;
    if (txid !== undefined && wanted.has(txid)) found.set(txid, hex.slice(2 * span.start, 2 * span.end));
  }
  return found;
}

/**
 * What the index keeps of a raw block (`hex`, the node's answer's string) whose header the node answered
 * as `header` (getblockheader's JSON text, or any block answer with `hash`, `height` and `mediantime`).
 * Throws RawBlockError when the bytes are no block of the chain, or not the block the header names.
 */
export function decodeRawBlock(hex: string, header: string, format: RawBlockFormat): UtxoBlock {
  const facts = headerFacts(header);
  const { r, count } = openBlock(hex, format);
  const bytes = r.bytes;
  const hash = doubleHashHex(r, bytes.subarray(0, HEADER_BYTES));
  if (hash !== facts.hash) throw new RawBlockError(`the raw block is ${hash}, its header ${facts.hash}`);
  const parentHash = hashHex(r, PREV_HASH_OFFSET);
  const headerTime = BigInt(bytes.readUInt32LE(TIME_OFFSET));
  // The header (with its AuxPoW) and the count are in both sizes.
  const sizes: Sizes = { stripped: r.at, counted: r.at };
  const transactions: UtxoTransaction[] = [];
  let hogEx = false;
  for (let position = 0; position < count; position++) {
    const span = readTransaction(r, true, format);
    transactions.push(transactionOf(r, span, position, sizes));
    hogEx = span.mwebBytes > 0;
  }
  // What follows a HogEx last is the MWEB extension block (skipped); after any other, nothing may.
  if (r.at !== bytes.length && !(hogEx && count >= 2)) {
    throw new RawBlockError(`${bytes.length - r.at} bytes after the block's transactions`);
  }
  return {
    number: facts.height,
    hash,
    parentHash,
    headerTime,
    medianTime: facts.medianTime,
    size: bytes.length,
    weight: sizes.stripped * (WITNESS_SCALE - 1) + sizes.counted,
    transactions,
    transfers: transactions.flatMap((tx) => tx.outputs),
    timestamp: headerTime,
  };
}
