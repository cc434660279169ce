/**
 * What the Bitcoin family's index keeps of a block (sql/utxo/007_utxo_index.sql), decoded from the node's
 * answers: its header, and per transaction its inputs (the outputs they spend) and outputs (value, script,
 * address). What needs more than the block (an input's address and value, so fees and whether an output pays
 * someone else) is settled before the write (`settleBlock`, once prevouts.ts has resolved the inputs).
 *
 * Read from either form of a node's answer (dialect.ts): an output's `address` (Bitcoin Core 22 and later)
 * or `addresses` (older nodes, Litecoin Core 0.21, Dogecoin Core 1.14), naming one address, else none
 * (OP_RETURN, bare multisig, P2PK where the node names none); the node's `fee` (Bitcoin Core 22+) is never
 * read: a fee is inputs minus outputs. Amounts are read from the answer's text into satoshis (`satoshisOf`),
 * never through a float. MWEB's inputs and outputs (Litecoin, `ismweb: true`) carry no outpoint or script:
 * they are not the index's (the integrating transaction's own inputs and outputs are).
 */
import type { IndexedBlock } from "../../indexer/indexFamily";
import { NULL_HASH } from "./blockHeader";
import { satoshisOf } from "./dialect";

/** An input: the output it spends, whose address and value are resolved before the write. */
export interface UtxoInput {
  readonly txid: string;
  readonly vout: number;
  /** The spent output's address (null: it pays none) and value; set by prevouts.ts. */
  address: string | null;
  value: bigint;
  /** Whether the spent output is a row of the index (then marked spent), not one older than its first block. */
  indexed: boolean;
}

export interface UtxoOutput {
  readonly vout: number;
  readonly value: bigint;
  readonly address: string | null;
  /** The script's hex. */
  readonly script: string;
  /** Pays an address not among its transaction's input addresses: a transfer row. Set by `settleBlock`. */
  pays: boolean;
}

export interface UtxoTransaction {
  readonly txid: string;
  readonly position: number;
  readonly size: number;
  readonly vsize: number;
  readonly weight: number;
  readonly coinbase: boolean;
  /** Empty for a coinbase. */
  readonly inputs: UtxoInput[];
  readonly outputs: UtxoOutput[];
  /** Inputs minus outputs (0 for a coinbase); the distinct input addresses in input order. By `settleBlock`. */
  fee: bigint;
  fromAddresses: string[];
}

export interface UtxoBlock extends IndexedBlock {
  readonly headerTime: bigint;
  readonly medianTime: bigint;
  readonly size: number;
  readonly weight: number;
  readonly transactions: UtxoTransaction[];
  /** Every output of the block: what write groups and progress count. */
  readonly transfers: UtxoOutput[];
  /** The running maximum of header times up to this block; set before the write (utxoIndex.ts). */
  timestamp: bigint;
}

/**
 * A block as read from the node: getblock's JSON text, at verbosity 2 (`transactions` absent), or at
 * verbosity 1 with each transaction's getrawtransaction JSON text (a node that cannot give them in one call).
 */
export interface FetchedUtxoBlock {
  block: string;
  transactions?: string[];
}

/** The members whose numbers are amounts: kept as their text when parsed. */
const AMOUNTS = /("(?:value|fee)"\s*:\s*)(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/g;

/** A node's JSON text parsed with its amounts as strings: JSON.parse would read them through a float. */
export function parseAmountsExact(text: string): unknown {
  return JSON.parse(text.replace(AMOUNTS, '$1"$2"'));
}

interface RawScript {
  hex: string;
  address?: string;
  addresses?: string[];
}
interface RawOutput {
  ismweb?: boolean;
  value: string;
  n: number;
  scriptPubKey: RawScript;
}
interface RawInput {
  ismweb?: boolean;
  coinbase?: string;
  txid?: string;
  vout?: number;
}
interface RawTransaction {
  txid: string;
  size: number;
  vsize?: number;
  weight?: number;
  vin: RawInput[];
  vout: RawOutput[];
}
interface RawBlock {
  hash: string;
  height: number;
  previousblockhash?: string;
  time: number;
  mediantime: number;
  size: number;
  weight?: number;
  tx: (RawTransaction | string)[];
}

/** The one address an output's script names, in either form; null when it names none, or several. */
export function addressOf(script: RawScript): string | null {
  if (typeof script.address === "string") return script.address;
  const list = script.addresses;
  return Array.isArray(list) && list.length === 1 && typeof list[0] === "string" ? list[0] : null;
}

function decodeTransaction(tx: RawTransaction, position: number): UtxoTransaction {
  const coinbase = tx.vin.length > 0 && tx.vin[0]!.coinbase !== undefined;
  const inputs: UtxoInput[] = [];
  if (!coinbase) {
    for (const vin of tx.vin) {
      if (vin.ismweb || vin.txid === undefined || vin.vout === undefined) continue;
      inputs.push({ txid: vin.txid, vout: vin.vout, address: null, value: 0n, indexed: false });
    }
  }
  const outputs: UtxoOutput[] = [];
  for (const out of tx.vout) {
    if (out.ismweb) continue;
    outputs.push({
      vout: out.n,
      value: satoshisOf(out.value),
      address: addressOf(out.scriptPubKey),
      script: out.scriptPubKey.hex,
      pays: false,
    });
  }
  return {
    txid: tx.txid,
    position,
    size: tx.size,
    // Dogecoin Core 1.14 (no segwit) writes neither: its size is its vsize, four times its weight.
    vsize: tx.vsize ?? tx.size,
    weight: tx.weight ?? tx.size * 4,
    coinbase,
    inputs,
    outputs,
    fee: 0n,
    fromAddresses: [],
  };
}

/** What the index keeps of a block the node answered (before its inputs are resolved). */
export function decodeUtxoBlock(fetched: FetchedUtxoBlock): UtxoBlock {
  const block = parseAmountsExact(fetched.block) as RawBlock;
  const raw = fetched.transactions
    ? fetched.transactions.map((text) => parseAmountsExact(text) as RawTransaction)
    : (block.tx as RawTransaction[]);
  if (raw.some((tx) => typeof tx !== "object"))
    throw new SyntaxError(`block ${block.hash} without transactions`);
  const transactions = raw.map(decodeTransaction);
  return {
    number: BigInt(block.height),
    hash: block.hash.toLowerCase(),
    parentHash: (block.previousblockhash ?? NULL_HASH).toLowerCase(),
    headerTime: BigInt(block.time),
    medianTime: BigInt(block.mediantime),
    size: block.size,
    weight: block.weight ?? block.size * 4,
    transactions,
    transfers: transactions.flatMap((tx) => tx.outputs),
    timestamp: BigInt(block.time),
  };
}

/** Settles what the resolved inputs decide: each transaction's fee, input addresses and paying outputs. */
export function settleBlock(block: UtxoBlock): void {
  for (const tx of block.transactions) {
    if (tx.coinbase) {
      tx.fee = 0n;
      tx.fromAddresses = [];
    } else {
      let fee = 0n;
      for (const input of tx.inputs) fee += input.value;
      for (const output of tx.outputs) fee -= output.value;
      tx.fee = fee;
      tx.fromAddresses = [
        ...new Set(tx.inputs.flatMap((input) => (input.address === null ? [] : [input.address]))),
      ];
    }
    const senders = new Set(tx.fromAddresses);
    for (const output of tx.outputs) output.pays = output.address !== null && !senders.has(output.address);
  }
}

/** A block's shares of its day's figures (sql/utxo/007: the `blocks` sums). */
export interface BlockSums {
  transactionCount: number;
  transferCount: number;
  outputCount: number;
  totalOutput: bigint;
  totalFees: bigint;
  minersReward: bigint;
  totalVsize: bigint;
}

export function blockSums(block: UtxoBlock): BlockSums {
  const sums: BlockSums = {
    transactionCount: block.transactions.length,
    transferCount: 0,
    outputCount: 0,
    totalOutput: 0n,
    totalFees: 0n,
    minersReward: 0n,
    totalVsize: 0n,
  };
  for (const tx of block.transactions) {
    let paid = 0n;
    for (const output of tx.outputs) {
      paid += output.value;
      if (output.pays) sums.transferCount++;
    }
    sums.outputCount += tx.outputs.length;
    if (tx.coinbase) {
      sums.minersReward += paid;
    } else {
      sums.totalOutput += paid;
      sums.totalFees += tx.fee;
      sums.totalVsize += BigInt(tx.vsize);
    }
  }
  return sums;
}
