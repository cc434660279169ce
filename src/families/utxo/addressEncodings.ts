/**
 * The two ways Bitcoin-family addresses are written, as the nodes read them:
 *  - base58check (Bitcoin Core src/base58.cpp): a version byte and a 20-byte hash, with the first 4 bytes of
 *    the payload's double SHA-256 after it, in base58 (case-sensitive: `1` and `l` are different texts);
 *  - segwit addresses (BIP-173 bech32 for witness version 0, BIP-350 bech32m for versions 1 to 16): a
 *    human-readable prefix, `1`, the version and the witness program in 5-bit groups, and a 6-character
 *    checksum; all lower case or all upper case, never mixed, at most 90 characters.
 * Pure functions of the text: which versions and prefixes a chain takes is addresses.ts's business.
 */
import { createHash } from "node:crypto";

const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE58_VALUE: ReadonlyMap<string, number> = new Map(
  [...BASE58_ALPHABET].map((c, i) => [c, i] as const),
);
/** The checksum after a base58check payload: 4 bytes of its double SHA-256. */
const CHECKSUM_BYTES = 4;
/** Longer texts are no address of these chains (a P2PKH or P2SH address is 25 bytes, at most 35 characters). */
const MAX_BASE58_LENGTH = 64;

export function doubleSha256(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(createHash("sha256").update(bytes).digest()).digest();
}

/** The bytes a base58 text writes; undefined for a character outside the alphabet. */
export function base58Decode(text: string): Uint8Array | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === "1") zeros++;
  let value = 0n;
  for (const c of text) {
    const digit = BASE58_VALUE.get(c);
    if (digit === undefined) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const body: number[] = [];
  while (value > 0n) {
    body.push(Number(value & 0xffn));
    value >>= 8n;
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body.reverse()]);
}

/** A base58check text's version byte and the bytes after it; undefined unless the checksum holds. */
export function base58checkDecode(text: string): { version: number; payload: Uint8Array } | undefined {
  if (text.length === 0 || text.length > MAX_BASE58_LENGTH) return undefined;
  const bytes = base58Decode(text);
  if (bytes === undefined || bytes.length < 1 + CHECKSUM_BYTES) return undefined;
  const data = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  const checksum = doubleSha256(data).subarray(0, CHECKSUM_BYTES);
  for (let i = 0; i < CHECKSUM_BYTES; i++) {
    if (checksum[i] !== bytes[data.length + i]) return undefined;
  }
  return { version: data[0]!, payload: data.subarray(1) };
}

const BASE58_CODES = Uint8Array.from(BASE58_ALPHABET, (c) => c.charCodeAt(0));
/** The longest payload encoded (a version byte's worth below MAX_BASE58_LENGTH's bytes). */
const MAX_PAYLOAD_BYTES = 64;
// Scratch buffers of the encoder: each call fills and reads them synchronously, so one set serves all
// (it runs for every output of a backfill: scriptAddress.ts).
const scratch = new Uint8Array(1 + MAX_PAYLOAD_BYTES + CHECKSUM_BYTES);
const digest = new Uint8Array(32);
/** Base58 digits of the longest data: at most its bytes * log(256) / log(58) + 1. */
const digits = new Uint8Array(Math.ceil((scratch.length * 138) / 100) + 1);
const base58Chars = Buffer.alloc(digits.length);

/** Bitcoin Core's EncodeBase58Check: a version byte, the payload, 4 bytes of their double SHA-256. */
export function base58checkEncode(version: number, payload: Uint8Array): string {
  if (payload.length > MAX_PAYLOAD_BYTES) throw new RangeError("base58check payload too long");
  const length = 1 + payload.length;
  scratch[0] = version;
  scratch.set(payload, 1);
  Bun.SHA256.hash(scratch.subarray(0, length), digest);
  Bun.SHA256.hash(digest, digest);
  scratch.set(digest.subarray(0, CHECKSUM_BYTES), length);
  const end = length + CHECKSUM_BYTES;
  let zeros = 0;
  while (zeros < end && scratch[zeros] === 0) zeros++;
  // Base 256 to base 58 in place, a byte at a time (no BigInt: this runs for every output of a backfill).
  let count = 0;
  for (let i = zeros; i < end; i++) {
    let carry = scratch[i]!;
    for (let j = 0; j < count; j++) {
      carry += digits[j]! << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits[count++] = carry % 58;
      carry = (carry / 58) | 0;
    }
  }
  let n = 0;
  while (n < zeros) base58Chars[n++] = 0x31; // "1"
  for (let i = count - 1; i >= 0; i--) base58Chars[n++] = BASE58_CODES[digits[i]!]!;
  return base58Chars.toString("latin1", 0, n);
}

const BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32_VALUE: ReadonlyMap<string, number> = new Map([...BECH32_CHARSET].map((c, i) => [c, i] as const));
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
/** What the checksum's polymod must come to: BIP-173's bech32, BIP-350's bech32m. */
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;
const BECH32_CHECKSUM_LENGTH = 6;
/** BIP-173: a segwit address is at most 90 characters. */
const MAX_BECH32_LENGTH = 90;
/** Printable US-ASCII, the characters a prefix may have (BIP-173). */
const MIN_PREFIX_CHAR = 33;
const MAX_PREFIX_CHAR = 126;
/** BIP-141: witness versions 0 to 16, programs of 2 to 40 bytes; version 0's is 20 (P2WPKH) or 32 (P2WSH). */
const MAX_WITNESS_VERSION = 16;
const MIN_PROGRAM_BYTES = 2;
const MAX_PROGRAM_BYTES = 40;
const V0_PROGRAM_BYTES = [20, 32];

function polymod(values: readonly number[]): number {
  let check = 1;
  for (const v of values) {
    const top = check >>> 25;
    check = ((check & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < GENERATOR.length; i++) if ((top >>> i) & 1) check ^= GENERATOR[i]!;
  }
  return check >>> 0;
}

function prefixExpand(prefix: string): number[] {
  const codes = [...prefix].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >> 5), 0, ...codes.map((c) => c & 31)];
}

/** Regroups bits (8 to 5, or 5 to 8 without padding, as BIP-173 reads a program); undefined when invalid. */
function convertBits(data: readonly number[], from: number, to: number, pad: boolean): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const max = (1 << to) - 1;
  for (const value of data) {
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & max);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & max);
  } else if (bits >= from || ((acc << (to - bits)) & max) !== 0) {
    return undefined;
  }
  return out;
}

export interface SegwitAddress {
  /** The human-readable prefix, lower case. */
  prefix: string;
  version: number;
  program: Uint8Array;
}

/** Splits a bech32/bech32m text; undefined when it is not one (mixed case, bad characters, checksum). */
function bech32Split(text: string): { prefix: string; data: number[]; constant: number } | undefined {
  if (text.length > MAX_BECH32_LENGTH) return undefined;
  const lower = text.toLowerCase();
  if (text !== lower && text !== text.toUpperCase()) return undefined;
  const separator = lower.lastIndexOf("1");
  if (separator < 1 || separator + 1 + BECH32_CHECKSUM_LENGTH > lower.length) return undefined;
  const prefix = lower.slice(0, separator);
  for (const c of prefix) {
    const code = c.charCodeAt(0);
    if (code < MIN_PREFIX_CHAR || code > MAX_PREFIX_CHAR) return undefined;
  }
  const data: number[] = [];
  for (const c of lower.slice(separator + 1)) {
    const value = BECH32_VALUE.get(c);
    if (value === undefined) return undefined;
    data.push(value);
  }
  const constant = polymod([...prefixExpand(prefix), ...data]);
  if (constant !== BECH32_CONST && constant !== BECH32M_CONST) return undefined;
  return { prefix, data: data.slice(0, -BECH32_CHECKSUM_LENGTH), constant };
}

/**
 * A segwit address's prefix, version and program; undefined unless it is one by BIP-173 and BIP-350
 * (version 0 with bech32's checksum, 1 to 16 with bech32m's, a program of a length its version allows).
 */
export function segwitDecode(text: string): SegwitAddress | undefined {
  const split = bech32Split(text);
  if (split === undefined || split.data.length < 1) return undefined;
  const version = split.data[0]!;
  if (version > MAX_WITNESS_VERSION) return undefined;
  if (split.constant !== (version === 0 ? BECH32_CONST : BECH32M_CONST)) return undefined;
  const program = convertBits(split.data.slice(1), 5, 8, false);
  if (program === undefined || program.length < MIN_PROGRAM_BYTES || program.length > MAX_PROGRAM_BYTES) {
    return undefined;
  }
  if (version === 0 && !V0_PROGRAM_BYTES.includes(program.length)) return undefined;
  return { prefix: split.prefix, version, program: Uint8Array.from(program) };
}

function polymodStep(check: number, value: number): number {
  const top = check >>> 25;
  let next = ((check & 0x1ffffff) << 5) ^ value;
  // BIP-173's generator, unrolled: this runs about 60 times an address.
  if (top & 1) next ^= GENERATOR[0]!;
  if (top & 2) next ^= GENERATOR[1]!;
  if (top & 4) next ^= GENERATOR[2]!;
  if (top & 8) next ^= GENERATOR[3]!;
  if (top & 16) next ^= GENERATOR[4]!;
  return next;
}

/** The checksum's state after a prefix (its expansion, BIP-173): computed once per network by its callers. */
export function bech32PrefixState(prefix: string): number {
  let check = 1;
  for (let i = 0; i < prefix.length; i++) check = polymodStep(check, prefix.charCodeAt(i) >> 5);
  check = polymodStep(check, 0);
  for (let i = 0; i < prefix.length; i++) check = polymodStep(check, prefix.charCodeAt(i) & 31);
  return check;
}

/** The characters of an address being written (at most 90, BIP-173), as bytes: one string made at the end. */
const bech32Chars = Buffer.alloc(MAX_BECH32_LENGTH);
const BECH32_CODES = Uint8Array.from(BECH32_CHARSET, (c) => c.charCodeAt(0));

/**
 * The segwit address of a witness program (`bytes[start, end)`), lower case (bech32 for version 0, bech32m
 * after), with the prefix's checksum state (`bech32PrefixState`): read in place, for every output of a
 * backfill (scriptAddress.ts).
 */
export function segwitEncodeAt(
  prefix: string,
  state: number,
  version: number,
  bytes: Uint8Array,
  start: number,
  end: number,
): string {
  let n = bech32Chars.write(prefix, 0, "latin1");
  bech32Chars[n++] = 0x31; // "1"
  bech32Chars[n++] = BECH32_CODES[version]!;
  let check = polymodStep(state, version);
  let acc = 0;
  let bits = 0;
  for (let i = start; i < end; i++) {
    acc = ((acc << 8) | bytes[i]!) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      const value = (acc >> bits) & 31;
      check = polymodStep(check, value);
      bech32Chars[n++] = BECH32_CODES[value]!;
    }
  }
  if (bits > 0) {
    const value = (acc << (5 - bits)) & 31;
    check = polymodStep(check, value);
    bech32Chars[n++] = BECH32_CODES[value]!;
  }
  for (let i = 0; i < BECH32_CHECKSUM_LENGTH; i++) check = polymodStep(check, 0);
  check = (check ^ (version === 0 ? BECH32_CONST : BECH32M_CONST)) >>> 0;
  for (let i = 0; i < BECH32_CHECKSUM_LENGTH; i++) {
    bech32Chars[n++] = BECH32_CODES[(check >>> (5 * (5 - i))) & 31]!;
  }
  return bech32Chars.toString("latin1", 0, n);
}

/** The segwit address of a witness program, lower case (bech32 for version 0, bech32m after). */
export function segwitEncode(prefix: string, version: number, program: Uint8Array): string {
  return segwitEncodeAt(prefix, bech32PrefixState(prefix), version, program, 0, program.length);
}
