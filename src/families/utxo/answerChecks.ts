/**
 * What a Bitcoin-family node's answer by hash must be about (cache/policy.ts `verify`): the block or
 * transaction its params asked. Run on every node answer and every value of the fleet's shared tier before
 * it is given or kept (a hit is never checked again); an answer about anything else is the node's fault, a
 * 502, never kept. A hex block (verbosity 0) names its hash only through its header: the double SHA-256 of
 * its first 80 bytes, byte-reversed (for Litecoin's and Dogecoin's too: their proof of work hashes
 * differently, their block hash does not).
 */
import { doubleSha256 } from "./addressEncodings";
import { isJsonString, membersOf, stringAt } from "./members";

/** A block header is 80 bytes: the hex of a block (or header) starts with it. */
const HEADER_HEX_LENGTH = 160;
const HEX_HASH = /^[0-9a-f]{64}$/;

/** The hash of a block from its hex (verbosity 0): the double SHA-256 of its header, byte-reversed. */
export function blockHashOfHex(hex: string): string | undefined {
  if (hex.length < HEADER_HEX_LENGTH) return undefined;
  const header = Buffer.from(hex.slice(0, HEADER_HEX_LENGTH), "hex");
  if (header.length * 2 !== HEADER_HEX_LENGTH) return undefined;
  return doubleSha256(header).reverse().toString("hex");
}

const asked = (what: string, named: string | undefined, wanted: string) =>
  `upstream answered about ${what} ${named ?? "(none named)"} when asked about ${what} ${wanted}`;

/** `getblock` and `getblockheader`: the block asked, in any form (`null` names none). */
export function verifyBlock(params: unknown[], raw: string): string | undefined {
  if (raw === "null") return undefined;
  const hash = String(params[0]).toLowerCase();
  // A hex answer: only its header is read (no escapes in hex: the text after the quote is the hex).
  const named = isJsonString(raw)
    ? blockHashOfHex(raw.slice(raw.indexOf('"') + 1, raw.indexOf('"') + 1 + HEADER_HEX_LENGTH))
    : stringAt(raw, membersOf(raw, ["hash"]).get("hash"))?.toLowerCase();
  return named === hash ? undefined : asked("block", named, hash);
}

/** `getrawtransaction`: the transaction asked, and in the block asked where the params name one. */
export function verifyTransaction(params: unknown[], raw: string): string | undefined {
  if (raw === "null" || isJsonString(raw)) return undefined;
  const members = membersOf(raw, ["txid", "blockhash"]);
  const txid = String(params[0]).toLowerCase();
  const named = stringAt(raw, members.get("txid"))?.toLowerCase();
  if (named !== txid) return asked("transaction", named, txid);
  const block = typeof params[2] === "string" ? params[2].toLowerCase() : undefined;
  const inBlock = stringAt(raw, members.get("blockhash"))?.toLowerCase();
  return block === undefined || inBlock === block ? undefined : asked("block", inBlock, block);
}

/** The block hash a `getblockhash` answer is (checked by verifyBlockHash first). */
export const hashOfAnswer = (raw: string): string | undefined =>
  isJsonString(raw) ? (JSON.parse(raw) as string).toLowerCase() : undefined;

/** `getblockhash`: a block hash. */
export function verifyBlockHash(_params: unknown[], raw: string): string | undefined {
  const hash = isJsonString(raw) ? (JSON.parse(raw) as string) : undefined;
  return hash !== undefined && HEX_HASH.test(hash) ? undefined : "upstream answered a malformed block hash";
}
