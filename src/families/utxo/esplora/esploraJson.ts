/**
 * Esplora's JSON (electrs src/rest.rs: TransactionValue, TxInValue, TxOutValue, TransactionStatus,
 * SpendingValue, UtxoValue, BlockValue, ScriptStats), written from a node's decoded transaction (Bitcoin
 * Core's `getrawtransaction <txid> true`), its prevouts and its fee. Members in electrs' order (its structs';
 * a JSON map's sorted names where electrs builds a map). Amounts are satoshis: the node's decimal amounts
 * are read from their text (a reviver with the source), never through a float.
 */
import { addressOf } from "../decode";
import { satoshisOf } from "../dialect";
import { hex, innerScripts, paysAddress, scriptAsm, scriptType } from "./script";

/** A transaction as the node decodes it, its amounts in satoshis. */
export interface NodeTransaction {
  txid: string;
  version: number;
  locktime: number;
  size: number;
  vsize: number;
  weight?: number;
  vin: NodeInput[];
  vout: NodeOutput[];
  blockhash?: string;
  confirmations?: number;
  blocktime?: number;
  /** The raw transaction (every verbose answer of the node carries it). */
  hex?: string;
}

export interface NodeInput {
  txid?: string;
  vout?: number;
  coinbase?: string;
  scriptSig?: { hex: string };
  txinwitness?: string[];
  sequence: number;
}

export interface NodeOutput {
  value: bigint;
  n: number;
  scriptPubKey: { hex: string; address?: string; addresses?: string[] };
}

/**
 * Members whose numbers are amounts, read as satoshis from their text (a mempool entry's `fees` too, and
 * estimatesmartfee's `feerate`: coins per kvB, so satoshis per kvB).
 */
const AMOUNTS = new Set(["value", "fee", "base", "modified", "ancestor", "descendant", "feerate"]);

/** A node's JSON text with its amounts (`value`, `fee`) as satoshis and `difficulty` as its text. */
export function parseNode<T>(text: string): T {
  return JSON.parse(text, (key, value, context?: { source?: string }) => {
    if (typeof value !== "number" || context?.source === undefined) return value;
    if (AMOUNTS.has(key)) return satoshisOf(context.source);
    if (key === "difficulty") return context.source;
    return value;
  }) as T;
}

/** An output, as the index or the node has it. */
export interface Prevout {
  script: Uint8Array;
  value: bigint;
  address: string | null;
}

/** Where a transaction is: a block of the best chain, or none (the mempool, or a block off the chain). */
export type Confirmation = { height: bigint; hash: string; time: number } | undefined;

/** `{confirmed, block_height, block_hash, block_time}`, or `{confirmed: false}`. */
export function statusJson(confirmation: Confirmation): string {
  if (confirmation === undefined) return '{"confirmed":false}';
  const { height, hash, time } = confirmation;
  return `{"confirmed":true,"block_height":${height},"block_hash":"${hash}","block_time":${time}}`;
}

/** An output as Esplora writes it (TxOutValue): its script, asm, type, the address it pays, its value. */
export function outputJson(script: Uint8Array, value: bigint, address: string | null | undefined): string {
  const paid =
    address != null && paysAddress(script) ? `,"scriptpubkey_address":${JSON.stringify(address)}` : "";
  return (
    `{"scriptpubkey":"${hex(script)}","scriptpubkey_asm":${JSON.stringify(scriptAsm(script))},` +
    `"scriptpubkey_type":"${scriptType(script)}"${paid},"value":${value}}`
  );
}

/** The prevout a node's output is, for a transaction spending it. */
export function nodeOutputPrevout(out: NodeOutput): Prevout {
  return {
    script: Buffer.from(out.scriptPubKey.hex, "hex"),
    value: out.value,
    address: addressOf(out.scriptPubKey),
  };
}

const COINBASE_TXID = "0".repeat(64);
const COINBASE_VOUT = 0xffff_ffff;

/** An input as Esplora writes it (TxInValue). */
function inputJson(input: NodeInput, prevout: Prevout | undefined): string {
  const coinbase = input.coinbase !== undefined;
  const scriptSig = Buffer.from(coinbase ? input.coinbase! : (input.scriptSig?.hex ?? ""), "hex");
  const witness = input.txinwitness ?? [];
  let text =
    `{"txid":"${coinbase ? COINBASE_TXID : input.txid}","vout":${coinbase ? COINBASE_VOUT : input.vout},` +
    `"prevout":${prevout ? outputJson(prevout.script, prevout.value, prevout.address) : "null"},` +
    `"scriptsig":"${hex(scriptSig)}","scriptsig_asm":${JSON.stringify(scriptAsm(scriptSig))},`;
  if (witness.length > 0) text += `"witness":${JSON.stringify(witness)},`;
  text += `"is_coinbase":${coinbase},"sequence":${input.sequence}`;
  if (prevout) {
    const inner = innerScripts(prevout.script, scriptSig, witness);
    if (inner.redeem) text += `,"inner_redeemscript_asm":${JSON.stringify(scriptAsm(inner.redeem))}`;
    if (inner.witness) text += `,"inner_witnessscript_asm":${JSON.stringify(scriptAsm(inner.witness))}`;
  }
  return `${text}}`;
}

/** Whether a node's transaction is a coinbase. */
const isCoinbase = (tx: NodeTransaction) => tx.vin.length > 0 && tx.vin[0]!.coinbase !== undefined;

/** The outpoints a transaction spends (none for a coinbase). */
export function spentOutpoints(tx: NodeTransaction): { txid: string; vout: number }[] {
  return isCoinbase(tx) ? [] : tx.vin.map((i) => ({ txid: i.txid!, vout: i.vout! }));
}

/** Inputs minus outputs, from the prevouts (0 for a coinbase); undefined when a prevout is missing. */
export function feeOf(tx: NodeTransaction, prevouts: readonly (Prevout | undefined)[]): bigint | undefined {
  if (isCoinbase(tx)) return 0n;
  let fee = 0n;
  for (const prevout of prevouts) {
    if (prevout === undefined) return undefined;
    fee += prevout.value;
  }
  for (const out of tx.vout) fee -= out.value;
  return fee;
}

/**
 * A transaction as Esplora writes it (TransactionValue) up to its status, which alone changes while it is
 * in a block: `{"txid":...,"fee":<fee>` (withStatus ends it). `prevouts` are its inputs' outputs, in input
 * order; `weight`: the node's, or four times the size where the node gives none (no segwit: Dogecoin).
 */
export function transactionBody(
  tx: NodeTransaction,
  prevouts: readonly (Prevout | undefined)[],
  fee: bigint,
): string {
  const vin = tx.vin.map((input, i) => inputJson(input, prevouts[i])).join(",");
  const vout = tx.vout
    .map((out) =>
      outputJson(Buffer.from(out.scriptPubKey.hex, "hex"), out.value, addressOf(out.scriptPubKey)),
    )
    .join(",");
  const weight = tx.weight ?? tx.size * 4;
  return (
    `{"txid":"${tx.txid}","version":${tx.version},"locktime":${tx.locktime},"vin":[${vin}],"vout":[${vout}],` +
    `"size":${tx.size},"weight":${weight},"fee":${fee}`
  );
}

/** A transaction's body (transactionBody) with its status: Esplora's TransactionValue. */
export const withStatus = (body: string, confirmation: Confirmation) =>
  `${body},"status":${statusJson(confirmation)}}`;

/** A transaction as Esplora writes it (TransactionValue). */
export function transactionJson(
  tx: NodeTransaction,
  prevouts: readonly (Prevout | undefined)[],
  fee: bigint,
  confirmation: Confirmation,
): string {
  return withStatus(transactionBody(tx, prevouts, fee), confirmation);
}

/** What spends an output (SpendingValue): `{spent: false}` when nothing does. */
export function spendJson(spend: { txid: string; vin: number; confirmation: Confirmation } | undefined) {
  if (spend === undefined) return '{"spent":false}';
  return `{"spent":true,"txid":"${spend.txid}","vin":${spend.vin},"status":${statusJson(spend.confirmation)}}`;
}

/** An unspent output (UtxoValue). */
export function utxoJson(txid: string, vout: number, value: bigint, confirmation: Confirmation): string {
  return `{"txid":"${txid}","vout":${vout},"status":${statusJson(confirmation)},"value":${value}}`;
}

/** A script's figures (ScriptStats, through electrs' JSON map: sorted names). */
export interface ScriptStats {
  fundedCount: bigint;
  fundedSum: bigint;
  spentCount: bigint;
  spentSum: bigint;
  txCount: bigint;
}

export function statsJson(s: ScriptStats): string {
  return (
    `{"funded_txo_count":${s.fundedCount},"funded_txo_sum":${s.fundedSum},"spent_txo_count":${s.spentCount},` +
    `"spent_txo_sum":${s.spentSum},"tx_count":${s.txCount}}`
  );
}

/** A block as the node gives it (`getblock <hash> 1`): what Esplora's BlockValue reads of it. */
export interface NodeBlock {
  hash: string;
  confirmations: number;
  height: number;
  version: number;
  merkleroot: string;
  tx: string[];
  time: number;
  mediantime: number;
  nonce: number;
  bits: string;
  /** The node's text (a float: kept as written). */
  difficulty: string;
  nTx: number;
  size: number;
  weight?: number;
  previousblockhash?: string;
  nextblockhash?: string;
}

/** A block as Esplora writes it (BlockValue); `weight`: four times the size where the node gives none. */
export function blockJson(b: NodeBlock): string {
  const previous = b.previousblockhash === undefined ? "null" : `"${b.previousblockhash}"`;
  return (
    `{"id":"${b.hash}","height":${b.height},"version":${b.version},"timestamp":${b.time},` +
    `"tx_count":${b.nTx},"size":${b.size},"weight":${b.weight ?? b.size * 4},"merkle_root":"${b.merkleroot}",` +
    `"previousblockhash":${previous},"mediantime":${b.mediantime},"nonce":${b.nonce},` +
    `"bits":${Number.parseInt(b.bits, 16)},"difficulty":${b.difficulty}}`
  );
}
