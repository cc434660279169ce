/**
 * Scripts as Esplora writes them (Blockstream's electrs, src/rest.rs): the assembly of rust-bitcoin's script
 * formatter (`OP_DUP OP_HASH160 OP_PUSHBYTES_20 <hex> OP_EQUALVERIFY OP_CHECKSIG`: every push named by its
 * opcode, then its data in hex; `OP_0` for the empty push; `<push past end>` where a push runs off the
 * script), its type names (`p2pkh`, `p2sh`, `v0_p2wpkh`, `v0_p2wsh`, `v1_p2tr`, `p2pk`, `op_return`,
 * `empty`, `provably_unspendable`, `unknown`), the scripts wrapped in an input (a P2SH redeem script, a P2WSH
 * witness script), and the scripthash Esplora keys a script by: its SHA-256 in the order computed (electrs'
 * `compute_script_hash`; Electrum's protocol writes the same bytes reversed, Esplora does not).
 * Bitcoin Core's own `asm` differs (bare data, small pushes as numbers): these are read from the bytes.
 */
import { createHash } from "node:crypto";

const OP_0 = 0x00;
const OP_PUSHBYTES_75 = 0x4b;
const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_PUSHNUM_NEG1 = 0x4f;
const OP_RESERVED = 0x50;
const OP_PUSHNUM_1 = 0x51;
const OP_PUSHNUM_16 = 0x60;
const OP_RETURN = 0x6a;
const OP_DUP = 0x76;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_HASH160 = 0xa9;
const OP_CHECKSIG = 0xac;
const OP_NOP1 = 0xb0;
const OP_NOP10 = 0xb9;
const OP_CHECKSIGADD = 0xba;
const OP_INVALIDOPCODE = 0xff;

/** The names of the opcodes from OP_NOP (0x61) to OP_NOP1 (0xb0), in order (rust-bitcoin's Display). */
const NAMED_FROM_NOP = (
  "NOP VER IF NOTIF VERIF VERNOTIF ELSE ENDIF VERIFY RETURN TOALTSTACK FROMALTSTACK 2DROP 2DUP 3DUP 2OVER " +
  "2ROT 2SWAP IFDUP DEPTH DROP DUP NIP OVER PICK ROLL ROT SWAP TUCK CAT SUBSTR LEFT RIGHT SIZE INVERT AND " +
  "OR XOR EQUAL EQUALVERIFY RESERVED1 RESERVED2 1ADD 1SUB 2MUL 2DIV NEGATE ABS NOT 0NOTEQUAL ADD SUB MUL " +
  "DIV MOD LSHIFT RSHIFT BOOLAND BOOLOR NUMEQUAL NUMEQUALVERIFY NUMNOTEQUAL LESSTHAN GREATERTHAN " +
  "LESSTHANOREQUAL GREATERTHANOREQUAL MIN MAX WITHIN RIPEMD160 SHA1 SHA256 HASH160 HASH256 CODESEPARATOR " +
  "CHECKSIG CHECKSIGVERIFY CHECKMULTISIG CHECKMULTISIGVERIFY"
).split(" ");
const OP_NOP = 0x61;
/** OP_NOP2 and OP_NOP3 carry their soft-fork names. */
const OP_CLTV = 0xb1;
const OP_CSV = 0xb2;

/** An opcode's name as rust-bitcoin writes it. */
export function opcodeName(code: number): string {
  if (code <= OP_PUSHBYTES_75) return `OP_PUSHBYTES_${code}`;
  if (code === OP_PUSHDATA1) return "OP_PUSHDATA1";
  if (code === OP_PUSHDATA2) return "OP_PUSHDATA2";
  if (code === OP_PUSHDATA4) return "OP_PUSHDATA4";
  if (code === OP_PUSHNUM_NEG1) return "OP_PUSHNUM_NEG1";
  if (code === OP_RESERVED) return "OP_RESERVED";
  if (code >= OP_PUSHNUM_1 && code <= OP_PUSHNUM_16) return `OP_PUSHNUM_${code - OP_PUSHNUM_1 + 1}`;
  if (code >= OP_NOP && code < OP_NOP1) return `OP_${NAMED_FROM_NOP[code - OP_NOP]}`;
  if (code === OP_CLTV) return "OP_CLTV";
  if (code === OP_CSV) return "OP_CSV";
  if (code >= OP_NOP1 && code <= OP_NOP10) return `OP_NOP${code - OP_NOP1 + 1}`;
  if (code === OP_CHECKSIGADD) return "OP_CHECKSIGADD";
  if (code === OP_INVALIDOPCODE) return "OP_INVALIDOPCODE";
  return `OP_RETURN_${code}`;
}

/** One instruction of a script: its opcode, and the data it pushes (undefined: none, or past the end). */
interface Instruction {
  code: number;
  data?: Uint8Array;
  /** The push's length field or data runs off the script. */
  broken?: "length" | "data";
}

/** The bytes a push's length field says follow; undefined when the field runs off the script. */
function pushLength(
  script: Uint8Array,
  code: number,
  at: number,
): { length: number; next: number } | undefined {
  if (code <= OP_PUSHBYTES_75) return { length: code, next: at };
  const width = code === OP_PUSHDATA1 ? 1 : code === OP_PUSHDATA2 ? 2 : 4;
  if (at + width > script.length) return undefined;
  let length = 0;
  for (let i = width - 1; i >= 0; i--) length = length * 256 + script[at + i]!;
  return { length, next: at + width };
}

/** The instructions of a script, in order; a broken push ends them (as rust-bitcoin's formatter stops). */
function instructions(script: Uint8Array): Instruction[] {
  const out: Instruction[] = [];
  let i = 0;
  while (i < script.length) {
    const code = script[i++]!;
    if (code > OP_PUSHDATA4) {
      out.push({ code });
      continue;
    }
    const push = pushLength(script, code, i);
    if (push === undefined) {
      out.push({ code, broken: "length" });
      break;
    }
    if (push.next + push.length > script.length) {
      out.push({ code, broken: "data" });
      break;
    }
    out.push({ code, data: script.subarray(push.next, push.next + push.length) });
    i = push.next + push.length;
  }
  return out;
}

/** Bytes as hex digits (a view's own bytes, not its whole buffer's). */
export const hex = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/** A script's assembly as Esplora gives it (`scriptpubkey_asm`, `scriptsig_asm`, the inner scripts). */
export function scriptAsm(script: Uint8Array): string {
  let asm = "";
  for (const { code, data, broken } of instructions(script)) {
    // rust-bitcoin writes this before the separator and the opcode whose length field is cut short.
    if (broken === "length") return `${asm}<unexpected end>`;
    if (asm.length > 0) asm += " ";
    asm += code === OP_0 ? "OP_0" : opcodeName(code);
    if (broken === "data") return `${asm} <push past end>`;
    if (data !== undefined && data.length > 0) asm += ` ${hex(data)}`;
  }
  return asm;
}

/** Esplora's `scriptpubkey_type`s. */
export type ScriptType =
  | "empty"
  | "op_return"
  | "p2pk"
  | "p2pkh"
  | "p2sh"
  | "v0_p2wpkh"
  | "v0_p2wsh"
  | "v1_p2tr"
  | "provably_unspendable"
  | "unknown";

/** A witness program: version (OP_0, OP_1..OP_16) then one push of 2 to 40 bytes, nothing else. */
function witnessVersion(s: Uint8Array): number | undefined {
  if (s.length < 4 || s.length > 42) return undefined;
  const version = s[0]!;
  if (version !== OP_0 && (version < OP_PUSHNUM_1 || version > OP_PUSHNUM_16)) return undefined;
  if (s[1]! + 2 !== s.length) return undefined;
  return version === OP_0 ? 0 : version - OP_PUSHNUM_1 + 1;
}

const isP2pk = (s: Uint8Array) =>
  (s.length === 35 && s[0] === 33 && s[34] === OP_CHECKSIG) ||
  (s.length === 67 && s[0] === 65 && s[66] === OP_CHECKSIG);

/** Opcodes that fail a script wherever they are (rust-bitcoin's ReturnOp and IllegalOp, legacy context). */
function failsAtOnce(code: number): boolean {
  return (
    code === OP_RETURN ||
    code === OP_RESERVED ||
    code === 0x62 || // OP_VER
    code === 0x65 || // OP_VERIF
    code === 0x66 || // OP_VERNOTIF
    code === 0x89 || // OP_RESERVED1
    code === 0x8a || // OP_RESERVED2
    (code >= 0x7e && code <= 0x81) || // OP_CAT .. OP_RIGHT
    (code >= 0x83 && code <= 0x86) || // OP_INVERT .. OP_XOR
    code === 0x8d || // OP_2MUL
    code === 0x8e || // OP_2DIV
    (code >= 0x95 && code <= 0x99) || // OP_MUL .. OP_RSHIFT
    code >= OP_CHECKSIGADD
  );
}

/** A script's type as Esplora names it. */
export function scriptType(s: Uint8Array): ScriptType {
  if (s.length === 0) return "empty";
  if (s[0] === OP_RETURN) return "op_return";
  if (isP2pk(s)) return "p2pk";
  if (
    s.length === 25 &&
    s[0] === OP_DUP &&
    s[1] === OP_HASH160 &&
    s[2] === 20 &&
    s[23] === OP_EQUALVERIFY &&
    s[24] === OP_CHECKSIG
  ) {
    return "p2pkh";
  }
  if (s.length === 23 && s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) return "p2sh";
  const version = witnessVersion(s);
  if (version === 0 && s.length === 22) return "v0_p2wpkh";
  if (version === 0 && s.length === 34) return "v0_p2wsh";
  if (version === 1 && s.length === 34) return "v1_p2tr";
  if (failsAtOnce(s[0]!)) return "provably_unspendable";
  return "unknown";
}

/**
 * Whether a script of this type pays an address Esplora names (`scriptpubkey_address`): the standard
 * templates and any witness program; a bare public key, a bare multisig or an OP_RETURN pays none, whatever
 * older nodes list under `addresses`.
 */
export function paysAddress(s: Uint8Array): boolean {
  const type = scriptType(s);
  if (type === "p2pkh" || type === "p2sh" || type === "v0_p2wpkh" || type === "v0_p2wsh") return true;
  return type === "v1_p2tr" || (type === "unknown" && witnessVersion(s) !== undefined);
}

/** The last push of a script (a P2SH input's redeem script); undefined when it ends otherwise. */
function lastPush(script: Uint8Array): Uint8Array | undefined {
  const all = instructions(script);
  const last = all[all.length - 1];
  return last && last.code <= OP_PUSHDATA4 && last.broken === undefined ? last.data : undefined;
}

/**
 * The scripts an input reveals (electrs `get_innerscripts`): the redeem script of a P2SH spend (the last
 * push of its scriptSig), and the witness script of a P2WSH or P2SH-P2WSH spend (its last witness item).
 */
export function innerScripts(
  prevoutScript: Uint8Array,
  scriptSig: Uint8Array,
  witness: readonly string[],
): { redeem?: Uint8Array; witness?: Uint8Array } {
  const type = scriptType(prevoutScript);
  const redeem = type === "p2sh" ? lastPush(scriptSig) : undefined;
  const wrapsWsh = redeem !== undefined && scriptType(redeem) === "v0_p2wsh";
  const last = witness[witness.length - 1];
  const witnessScript =
    (type === "v0_p2wsh" || wrapsWsh) && last !== undefined ? Buffer.from(last, "hex") : undefined;
  return { redeem, witness: witnessScript };
}

/** A script's scripthash as Esplora names it: the SHA-256 of the script, in hex (what the index keeps). */
export function scriptHash(script: Uint8Array): string {
  return createHash("sha256").update(script).digest("hex");
}
