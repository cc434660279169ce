/**
 * The one address an output's script pays, as the node's verbosity-2 answer names it (decode.ts `addressOf`:
 * its `address`, or its `addresses` when that lists exactly one), read from the script's bytes for raw
 * blocks (rawBlock.ts). Which scripts name an address is each client's, by its version (dialect.ts):
 *  - every client: P2PKH and P2SH (base58check with the network's version bytes), and where the network has
 *    segwit any witness program (BIP-141 shape: OP_0..OP_16 then one push of 2 to 40 bytes; version 0 only
 *    of 20 or 32 bytes) as a segwit address, bech32 for version 0 and bech32m after (Bitcoin Core 0.21.1+,
 *    Litecoin Core 0.21.2);
 *  - Bitcoin Core 22 and later (`address`): nothing else (a bare key or multisig names none);
 *  - Litecoin Core 0.21 and Bitcoin Core before 22 (`addresses`, Bitcoin Core 0.21's src/script/standard.cpp
 *    `MatchMultisig`): a bare multisig lists its keys' P2PKH addresses, so a 1-of-1 names one; a bare key
 *    names none. Litecoin's MWEB programs (version 8 and 9 of 32 bytes: `witness_mweb_hogaddr`,
 *    `witness_mweb_pegin`) name none;
 *  - Dogecoin Core 1.14 (Bitcoin Core 0.14's templates, no segwit addresses): a bare key names its P2PKH
 *    address, a bare multisig its valid keys' (one: that one).
 * Fast, since it runs for every output of a backfill: the family's encoders (addressEncodings.ts) work
 * without BigInt or intermediate arrays per byte.
 */
import { createHash } from "node:crypto";
import { base58checkEncode, bech32PrefixState, segwitEncodeAt } from "./addressEncodings";
import type { AddressNetwork } from "./addresses";
import type { NodeDialect } from "./dialect";

/** The address a script (`bytes[start, end)`) pays, or null. */
export type ScriptAddresser = (bytes: Uint8Array, start: number, end: number) => string | null;

const OP_0 = 0x00;
const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_DUP = 0x76;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_HASH160 = 0xa9;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;
/** Litecoin's MWEB witness programs (litecoin-project/litecoin 0.21 src/script/standard.cpp). */
const MWEB_HOGADDR_VERSION = 8;
const MWEB_PEGIN_VERSION = 9;
const MWEB_PROGRAM_BYTES = 32;

/** How a client names a bare key's and a bare multisig's addresses. */
type BareRules = "none" | "multisig-0.21" | "templates-0.14";

function bareRulesOf(dialect: NodeDialect): BareRules {
  if (dialect.outputAddress === "address") return "none";
  return dialect.client === "dogecoin-core" ? "templates-0.14" : "multisig-0.21";
}

// ---- bare keys and multisig -----------------------------------------------------------------------------

/** CPubKey::ValidSize: a key's length agrees with its first byte (02/03: 33; 04/06/07: 65). */
function validKey(bytes: Uint8Array, at: number, length: number): boolean {
  const header = bytes[at];
  if (header === 2 || header === 3) return length === 33;
  if (header === 4 || header === 6 || header === 7) return length === 65;
  return false;
}

/** One instruction read (Bitcoin Core's GetOp): its opcode and pushed data, or undefined past the end. */
interface Op {
  code: number;
  data: number;
  length: number;
  next: number;
}

function readOp(bytes: Uint8Array, at: number, end: number): Op | undefined {
  if (at >= end) return undefined;
  const code = bytes[at]!;
  let i = at + 1;
  if (code > OP_PUSHDATA4) return { code, data: i, length: 0, next: i };
  let length = code;
  const width = code === OP_PUSHDATA1 ? 1 : code === OP_PUSHDATA2 ? 2 : code === OP_PUSHDATA4 ? 4 : 0;
  if (width > 0) {
    if (i + width > end) return undefined;
    length = 0;
    for (let k = width - 1; k >= 0; k--) length = length * 256 + bytes[i + k]!;
    i += width;
  }
  if (i + length > end) return undefined;
  return { code, data: i, length, next: i + length };
}

const smallInteger = (code: number) => (code >= OP_1 && code <= OP_16 ? code - OP_1 + 1 : undefined);

/** The keys (offset, length) of a bare multisig by the client's rules; undefined when it is none. */
function multisigKeys(bytes: Uint8Array, start: number, end: number, rules: BareRules) {
  if (end - start < 1 || bytes[end - 1] !== OP_CHECKMULTISIG) return undefined;
  const first = readOp(bytes, start, end);
  const required = first && smallInteger(first.code);
  if (first === undefined || required === undefined) return undefined;
  const keys: { at: number; length: number }[] = [];
  let op = readOp(bytes, first.next, end);
  // 0.21 reads keys while each has a valid size; 0.14's template any push of 33 to 65 bytes.
  while (
    op !== undefined &&
    op.code <= OP_PUSHDATA4 &&
    (rules === "multisig-0.21" ? validKey(bytes, op.data, op.length) : op.length >= 33 && op.length <= 65)
  ) {
    keys.push({ at: op.data, length: op.length });
    op = readOp(bytes, op.next, end);
  }
  const count = op && smallInteger(op.code);
  if (op === undefined || count === undefined || count !== keys.length || count < required) return undefined;
  if (op.next + 1 !== end) return undefined;
  return rules === "multisig-0.21" ? keys : keys.filter((key) => validKey(bytes, key.at, key.length));
}

function hash160(bytes: Uint8Array, at: number, length: number): Uint8Array {
  const sha = createHash("sha256")
    .update(bytes.subarray(at, at + length))
    .digest();
  return createHash("ripemd160").update(sha).digest();
}

/** What a bare key or multisig names under the client's rules (the 1-key lists only). */
function bareAddress(
  network: AddressNetwork,
  rules: BareRules,
  bytes: Uint8Array,
  start: number,
  end: number,
) {
  if (rules === "none") return null;
  if (rules === "templates-0.14") {
    // <push of 33 to 65 bytes> OP_CHECKSIG, the key valid.
    const push = readOp(bytes, start, end);
    if (
      push !== undefined &&
      push.code <= OP_PUSHDATA4 &&
      push.next + 1 === end &&
      bytes[push.next] === OP_CHECKSIG &&
      push.length >= 33 &&
      push.length <= 65
    ) {
      return validKey(bytes, push.data, push.length)
        ? base58checkEncode(network.pubkeyHash, hash160(bytes, push.data, push.length))
        : null;
    }
  }
  const keys = multisigKeys(bytes, start, end, rules);
  if (keys === undefined || keys.length !== 1) return null;
  return base58checkEncode(network.pubkeyHash, hash160(bytes, keys[0]!.at, keys[0]!.length));
}

/** The addresser of a network's scripts as its node (by its dialect) names them. */
export function createScriptAddresser(network: AddressNetwork, dialect: NodeDialect): ScriptAddresser {
  const rules = bareRulesOf(dialect);
  const segwit = network.segwit;
  const state = segwit === undefined ? 0 : bech32PrefixState(segwit);
  const litecoin = dialect.client === "litecoin-core";
  return (bytes, start, end) => {
    const length = end - start;
    const b0 = bytes[start];
    if (
      length === 25 &&
      b0 === OP_DUP &&
      bytes[start + 1] === OP_HASH160 &&
      bytes[start + 2] === 20 &&
      bytes[start + 23] === OP_EQUALVERIFY &&
      bytes[start + 24] === OP_CHECKSIG
    ) {
      return base58checkEncode(network.pubkeyHash, bytes.subarray(start + 3, start + 23));
    }
    if (length === 23 && b0 === OP_HASH160 && bytes[start + 1] === 20 && bytes[start + 22] === OP_EQUAL) {
      return base58checkEncode(network.scriptHash, bytes.subarray(start + 2, start + 22));
    }
    if (
      length >= 4 &&
      length <= 42 &&
      (b0 === OP_0 || (b0! >= OP_1 && b0! <= OP_16)) &&
      bytes[start + 1]! + 2 === length
    ) {
      const version = b0 === OP_0 ? 0 : b0! - OP_1 + 1;
      const program = length - 2;
      if (segwit === undefined) return null;
      if (version === 0 && program !== 20 && program !== 32) return null;
      if (
        litecoin &&
        program === MWEB_PROGRAM_BYTES &&
        (version === MWEB_HOGADDR_VERSION || version === MWEB_PEGIN_VERSION)
      ) {
        return null;
      }
      return segwitEncodeAt(segwit, state, version, bytes, start + 2, end);
    }
    return bareAddress(network, rules, bytes, start, end);
  };
}
