/**
 * What differs between the Bitcoin family's node versions, detected rather than assumed, for what the service
 * asks of its own accord (part 2's index reads blocks; callers' calls pass through as they are sent):
 *  - Bitcoin Core 22 and later write an output's `address` (one, when its script has one) where older nodes,
 *    Litecoin Core 0.21 and Dogecoin Core 1.14 write `addresses` (a list) and `reqSigs`;
 *  - Bitcoin Core 22 and later give each transaction's `fee` in a block at verbosity 2;
 *  - Dogecoin Core 1.14 takes getblock's second param as a boolean only (`verbose`: hex or ids, never the
 *    transactions), and refuses a number with "JSON value is not a boolean as expected".
 * `dialectOf` reads a node's `getnetworkinfo` (its `subversion` names the client: `/Satoshi:22.0.0/`,
 * `/LitecoinCore:0.21.2.1/`, `/Shibetoshi:1.14.6/`); `refusesVerbosityLevel` reads the answer of a node
 * that was asked a level anyway; the readers take either form of an answer. Amounts are read from the
 * answer's text into satoshis, never through a float.
 */
import { arrayElements } from "../../json";
import { membersOf, stringAt } from "./members";

export type NodeClient = "bitcoin-core" | "litecoin-core" | "dogecoin-core" | "unknown";

export interface NodeDialect {
  client: NodeClient;
  /** Its version as its subversion writes it (22.0.0: [22, 0, 0]); empty when unknown. */
  version: readonly number[];
  /** getblock's second param: a level (0, 1, 2), or only a boolean (hex or ids: no transactions in one call). */
  blockVerbosity: "level" | "boolean";
  /** How its outputs name their address (the readers take either). */
  outputAddress: "address" | "addresses";
  /** Whether getblock at verbosity 2 gives each transaction's `fee`. */
  blockFees: boolean;
}

/** The clients' names in a subversion (BIP 14 user agent). */
const CLIENTS: ReadonlyMap<string, NodeClient> = new Map([
  ["Satoshi", "bitcoin-core"],
  ["LitecoinCore", "litecoin-core"],
  ["Shibetoshi", "dogecoin-core"],
]);
const USER_AGENT = /^\/([A-Za-z]+):([0-9]+(?:\.[0-9]+)*)/;
/** Bitcoin Core's first version with `address` and block fees. */
const BITCOIN_CORE_ADDRESS = [22];

/** a >= b, version by version. */
function atLeast(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < b.length; i++) {
    const x = a[i] ?? 0;
    if (x !== b[i]) return x > b[i]!;
  }
  return true;
}

/** What a node's `getnetworkinfo` answer (its JSON text) says of the forms it takes and writes. */
export function dialectOf(networkInfo: string): NodeDialect {
  const subversion = stringAt(networkInfo, membersOf(networkInfo, ["subversion"]).get("subversion")) ?? "";
  const agent = USER_AGENT.exec(subversion);
  const client = (agent && CLIENTS.get(agent[1]!)) ?? "unknown";
  const version = agent ? agent[2]!.split(".").map(Number) : [];
  const modernCore = client === "bitcoin-core" && atLeast(version, BITCOIN_CORE_ADDRESS);
  return {
    client,
    version,
    // Dogecoin Core 1.14 is Bitcoin Core 0.14's RPC: getblock's verbosity levels came with 0.15.
    blockVerbosity: client === "dogecoin-core" ? "boolean" : "level",
    outputAddress: modernCore ? "address" : "addresses",
    blockFees: modernCore,
  };
}

/**
 * Whether a node's error answer to getblock with a numeric verbosity says it takes a boolean only (Dogecoin
 * Core 1.14: code -1, "JSON value is not a boolean as expected", dogecoin/dogecoin#1625; -32700 where the
 * node's server reports a parse failure so): ask it with `verbose` instead.
 */
export function refusesVerbosityLevel(error: { code: number; message: string }): boolean {
  return (error.code === -1 || error.code === -32700) && /not a boolean/i.test(error.message);
}

/** What of a block is wanted: its hex, its transaction ids, or its transactions decoded. */
export type BlockDetail = "hex" | "ids" | "transactions";

const LEVELS: Readonly<Record<BlockDetail, number>> = { hex: 0, ids: 1, transactions: 2 };

/**
 * getblock's params for a block hash and the detail wanted, in the form the node takes; undefined when it
 * cannot give that detail in one call (a boolean-only node's transactions: read the ids, then each one).
 */
export function getblockParams(
  hash: string,
  detail: BlockDetail,
  dialect: NodeDialect,
): unknown[] | undefined {
  if (dialect.blockVerbosity === "level") return [hash, LEVELS[detail]];
  return detail === "transactions" ? undefined : [hash, detail === "ids"];
}

/** The addresses an output pays (the JSON text of its scriptPubKey), whichever form the node writes. */
export function outputAddresses(scriptPubKey: string): string[] {
  const members = membersOf(scriptPubKey, ["address", "addresses"]);
  const one = stringAt(scriptPubKey, members.get("address"));
  if (one !== undefined) return [one];
  const list = members.get("addresses");
  if (list === undefined) return [];
  return arrayElements(scriptPubKey, list.start).map((span) => {
    const text = scriptPubKey.slice(span.start, span.end);
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "string") throw new SyntaxError(`an address that is no string: ${text}`);
    return value;
  });
}

/** A coin's decimals: a satoshi is 10^-8 of it. */
export const DECIMALS = 8;
const AMOUNT = /^(-?)([0-9]+)(?:\.([0-9]{1,8}))?$/;

/** A decimal amount as the node writes it (`50.00001750`), in satoshis; exact, never through a float. */
export function satoshisOf(amount: string): bigint {
  const match = AMOUNT.exec(amount);
  if (!match) throw new SyntaxError(`not an amount: ${amount}`);
  const [, sign, whole, fraction = ""] = match;
  const satoshis = BigInt(whole!) * 10n ** BigInt(DECIMALS) + BigInt(fraction.padEnd(DECIMALS, "0"));
  return sign ? -satoshis : satoshis;
}

/** An output's value (the JSON text of a `vout` element), in satoshis. */
export function outputValue(vout: string): bigint {
  const span = membersOf(vout, ["value"]).get("value");
  if (span === undefined) throw new SyntaxError("an output without a value");
  return satoshisOf(vout.slice(span.start, span.end));
}

/**
 * A transaction's fee as the node gives it (the JSON text of a transaction of a block at verbosity 2), in
 * satoshis; undefined where the node gives none (before Bitcoin Core 22, the forks, a coinbase): the fee is
 * then its inputs minus its outputs.
 */
export function transactionFee(transaction: string): bigint | undefined {
  const span = membersOf(transaction, ["fee"]).get("fee");
  return span === undefined ? undefined : satoshisOf(transaction.slice(span.start, span.end));
}
