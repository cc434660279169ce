/**
 * The Esplora-compatible API (/esplora/) of a Bitcoin-family instance (CHAIN=LTC, INDEXER=on) in front of a
 * real regtest Litecoin Core holding the shared test chain (test/support/utxoChain.ts), plus one block of 28
 * transactions (two pages of a block's transactions). Every answer is compared exactly with what the node's
 * own answers imply, written here from `truth` and the node (never from the service's code):
 * - the tip, every block by height and hash, its header, status, txids, raw bytes and pages of transactions;
 *   the 10 blocks from the tip or a height;
 * - every transaction (confirmed and in the mempool): its Esplora shape with prevouts and fees, status, hex,
 *   raw bytes, what spends each output, its merkle proof (folded up to the block's merkle root);
 * - every address of the chain and its scripthash: figures (chain and mempool), history page by page,
 *   mempool transactions, unspent outputs; UTXO_MAX's 400;
 * - POST tx (the txid, then the node has it; a text the node cannot read as a transaction refused in its
 *   words without reaching it), fee estimates, the mempool's backlog and txids;
 * - the key in the path, costs that match the work, bad input as Esplora's 400s and 404s (never a 500);
 * - a reorg; real Esplora clients: mempool.js reading addresses, UTXOs, transactions and blocks,
 *   @bitcoinerlab/explorer by scripthash;
 * - bounded work: a transaction's parents read from the node a few at a time, a token each;
 * - an EVM instance has no /esplora (404).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { EsploraExplorer } from "@bitcoinerlab/explorer";
import mempoolJS from "@mempool/mempool.js";
import { BLOCK_READ_MIN_TXS, PARENT_READS_IN_FLIGHT } from "../src/families/utxo/esplora/esplora";
import { type NodeProxy, startProxy } from "./support/proxy";
import { startTestService, type TestService } from "./support/service";
import { fixtureChain } from "./support/shared";
import { until } from "./support/until";
import {
  type NewOutput,
  type Outpoint,
  parseExact,
  startUtxoChain,
  type Truth,
  type TruthOutput,
  type TruthTransaction,
  type UtxoChain,
} from "./support/utxoChain";

const KEY = "esplora-test-key";
/** Below the miner's count of unspent coinbases, above every other address's unspent outputs. */
const UTXO_MAX = 50;
/**
 * CONFIRMATIONS above the reorg's depth (the build's two blocks plus the big block and the empty blocks below
 * it, ~33), so the reorg is one within the depth (regtest's default, 1, would make it one past finality:
 * test/reorg-past-finality.test.ts's).
 */
const CONFIRMATIONS = "64";
const ENV = {
  CHAIN: "LTC",
  INDEXER: "on",
  HEAD_POLL_MS: "50",
  API_KEYS: KEY,
  UTXO_MAX: String(UTXO_MAX),
  CONFIRMATIONS,
};
// Several tests read every block or transaction of the chain, one request after another: past 5 s on a busy
// machine.
setDefaultTimeout(60_000);
/** Transactions of the big block besides its coinbase: a block of 28, two pages of 25. */
const BIG_BLOCK_SPENDS = 27;
const PAGE = 25;

let chain: UtxoChain;
let service: TestService;
let truth: Truth;
let bigBlock: string;

interface Answer {
  status: number;
  type: string | null;
  text: string;
  bytes: Uint8Array;
}

async function get(
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${service.url}/esplora${path}`, {
    method: options.method ?? "GET",
    body: options.body,
    headers: options.headers ?? { "x-api-key": KEY },
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const answer: Answer = {
    status: response.status,
    type: response.headers.get("content-type"),
    text: new TextDecoder().decode(bytes),
    bytes,
  };
  return answer;
}
const json = async (path: string) => {
  const a = await get(path);
  expect({ path, status: a.status, type: a.type }).toEqual({ path, status: 200, type: "application/json" });
  return JSON.parse(a.text);
};
const text = async (path: string) => {
  const a = await get(path);
  expect({ path, status: a.status, type: a.type }).toEqual({ path, status: 200, type: "text/plain" });
  return a.text;
};
const node = <T = any>(method: string, params: unknown[] = []) => chain.node.rpc<T>(method, params);
/** A node answer with its amounts as their decimal text. */
async function exact<T = any>(method: string, params: unknown[]): Promise<T> {
  const { text: body } = await chain.node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
  return parseExact<{ result: T }>(body).result;
}

// ---------------------------------------------------------------------------------------------------------
// What the answers must be, from the node's answers and the truth

/** Esplora's assembly of a script (rust-bitcoin's formatter), for the scripts this chain holds. */
const OPCODES: Record<number, string> = {
  0: "OP_0",
  79: "OP_PUSHNUM_NEG1",
  106: "OP_RETURN",
  118: "OP_DUP",
  135: "OP_EQUAL",
  136: "OP_EQUALVERIFY",
  169: "OP_HASH160",
  172: "OP_CHECKSIG",
  174: "OP_CHECKMULTISIG",
};
function asm(hex: string): string {
  const b = Buffer.from(hex, "hex");
  const out: string[] = [];
  for (let i = 0; i < b.length; ) {
    const op = b[i++]!;
    if (op >= 1 && op <= 0x4e) {
      const size = op <= 0x4b ? 0 : op === 0x4c ? 1 : op === 0x4d ? 2 : 4;
      const length = op <= 0x4b ? op : b.readUIntLE(i, size);
      i += size;
      const name = op <= 0x4b ? `OP_PUSHBYTES_${op}` : `OP_PUSHDATA${size === 4 ? 4 : size}`;
      out.push(`${name} ${b.subarray(i, i + length).toString("hex")}`);
      i += length;
    } else if (op >= 0x51 && op <= 0x60) {
      out.push(`OP_PUSHNUM_${op - 0x50}`);
    } else {
      out.push(OPCODES[op] ?? `?${op}`);
    }
  }
  return out.join(" ");
}

const TYPES: Record<string, string> = {
  pubkeyhash: "p2pkh",
  scripthash: "p2sh",
  witness_v0_keyhash: "v0_p2wpkh",
  witness_v0_scripthash: "v0_p2wsh",
  witness_v1_taproot: "v1_p2tr",
  nulldata: "op_return",
  pubkey: "p2pk",
  nonstandard: "unknown",
};

function expectedOutput(out: TruthOutput) {
  const type = TYPES[out.type]!;
  const paysAddress = out.address !== null && type !== "p2pk" && type !== "op_return";
  return {
    scriptpubkey: out.script,
    scriptpubkey_asm: asm(out.script),
    scriptpubkey_type: type,
    ...(paysAddress ? { scriptpubkey_address: out.address } : {}),
    value: Number(out.value),
  };
}

function expectedStatus(tx: TruthTransaction) {
  if (tx.height === null) return { confirmed: false };
  const block = truth.blocks.find((b) => b.height === tx.height)!;
  return { confirmed: true, block_height: tx.height, block_hash: block.hash, block_time: block.time };
}

/** The scripts an input reveals, read from the node's decoding of its scriptSig and witness. */
function innerScripts(input: any, prevout: TruthOutput) {
  const inner: Record<string, string> = {};
  const lastPush = (input.scriptSig.asm as string).split(" ").at(-1)!;
  if (prevout.type === "scripthash") inner.inner_redeemscript_asm = asm(lastPush);
  const wsh = prevout.type === "witness_v0_scripthash" || lastPush.startsWith("0020");
  if (wsh && input.txinwitness) inner.inner_witnessscript_asm = asm(input.txinwitness.at(-1));
  return inner;
}

/** The node's decoding of a transaction (block 0's coinbase from its block: the node has no other way). */
async function decodedTransaction(tx: TruthTransaction) {
  if (tx.height === 0) return (await exact("getblock", [tx.blockHash, 2])).tx[0];
  return exact("getrawtransaction", [tx.txid, true]);
}

/** A transaction as Esplora must answer it. */
async function expectedTransaction(txid: string) {
  const tx = truth.transactions.get(txid)!;
  const decoded = await decodedTransaction(tx);
  const vin = (decoded.vin as any[]).map((input) => {
    const witness = input.txinwitness ? { witness: input.txinwitness } : {};
    if (input.coinbase !== undefined) {
      return {
        txid: "0".repeat(64),
        vout: 4294967295,
        prevout: null,
        scriptsig: input.coinbase,
        scriptsig_asm: asm(input.coinbase),
        ...witness,
        is_coinbase: true,
        sequence: input.sequence,
      };
    }
    const prevout = truth.transactions.get(input.txid)!.outputs[input.vout]!;
    return {
      txid: input.txid,
      vout: input.vout,
      prevout: expectedOutput(prevout),
      scriptsig: input.scriptSig.hex,
      scriptsig_asm: asm(input.scriptSig.hex),
      ...witness,
      is_coinbase: false,
      sequence: input.sequence,
      ...innerScripts(input, prevout),
    };
  });
  return {
    txid,
    version: decoded.version,
    locktime: decoded.locktime,
    vin,
    vout: tx.outputs.map(expectedOutput),
    size: tx.size,
    weight: tx.weight,
    fee: Number(tx.fee),
    status: expectedStatus(tx),
  };
}

/** Several, one after another: the node's RPC work queue is short (16 calls by default). */
async function expectedTransactions(txids: readonly string[]) {
  const out = [];
  for (const txid of txids) out.push(await expectedTransaction(txid));
  return out;
}

/** What spends an output, as Esplora must answer it. */
function expectedSpend(out: TruthOutput) {
  if (out.spentBy) {
    const spender = truth.transactions.get(out.spentBy.txid)!;
    return { spent: true, txid: out.spentBy.txid, vin: out.spentBy.vin, status: expectedStatus(spender) };
  }
  if (out.spentInMempool) {
    return {
      spent: true,
      txid: out.spentInMempool.txid,
      vin: out.spentInMempool.vin,
      status: { confirmed: false },
    };
  }
  return { spent: false };
}

const sha256d = (b: Buffer) => createHash("sha256").update(createHash("sha256").update(b).digest()).digest();
/** The merkle root a proof leads to, folded from the transaction up. */
function foldProof(txid: string, merkle: string[], pos: number): string {
  let hash = Buffer.from(txid, "hex").reverse();
  let index = pos;
  for (const sibling of merkle) {
    const s = Buffer.from(sibling, "hex").reverse();
    hash = index % 2 === 0 ? sha256d(Buffer.concat([hash, s])) : sha256d(Buffer.concat([s, hash]));
    index >>= 1;
  }
  return Buffer.from(hash).reverse().toString("hex");
}

/** The mempool's transactions touching an address, newest first (entry time, then txid). */
async function mempoolOf(address: string) {
  const entries = await node<Record<string, { time: number }>>("getrawmempool", [true]);
  return truth.mempool
    .filter(
      (tx) => tx.outputs.some((o) => o.address === address) || tx.inputs.some((i) => i.address === address),
    )
    .sort((a, b) => entries[b.txid]!.time - entries[a.txid]!.time || (a.txid < b.txid ? -1 : 1));
}

/** An address's confirmed transactions, newest first. */
const chainHistoryOf = (address: string) =>
  truth
    .addressTransactions(address)
    .filter((t) => t.height !== null)
    .sort((a, b) => b.height! - a.height! || b.position! - a.position!);

const statsJson = (s: {
  fundedCount: number;
  fundedSum: bigint;
  spentCount: number;
  spentSum: bigint;
  txCount: number;
}) => ({
  funded_txo_count: s.fundedCount,
  funded_txo_sum: Number(s.fundedSum),
  spent_txo_count: s.spentCount,
  spent_txo_sum: Number(s.spentSum),
  tx_count: s.txCount,
});

/** An address's script (the node's word), and its SHA-256: Esplora's scripthash (Electrum's is reversed). */
async function scriptDigestOf(address: string) {
  const { scriptPubKey } = await node("validateaddress", [address]);
  return createHash("sha256").update(Buffer.from(scriptPubKey, "hex")).digest();
}
const scripthashOf = async (address: string) => (await scriptDigestOf(address)).toString("hex");
const electrumScripthashOf = async (address: string) =>
  (await scriptDigestOf(address)).reverse().toString("hex");

async function caughtUp() {
  const [height, hash] = [await node<number>("getblockcount"), await node<string>("getbestblockhash")];
  await until(
    "the index to reach the node's tip",
    async () => ((await get("/blocks/tip/hash")).text === hash ? true : undefined),
    60_000,
  );
  expect(await text("/blocks/tip/height")).toBe(String(height));
}

beforeAll(async () => {
  chain = await startUtxoChain();
  // One block of 28 transactions (the build's blocks hold a few): two pages of a block's transactions.
  // Empty blocks first (the mempool's transactions stay pending), so that enough coinbases are mature.
  for (let i = 0; i < BIG_BLOCK_SPENDS + 2; i++) await chain.mineWith([]);
  const spends: string[] = [];
  for (let i = 0; i < BIG_BLOCK_SPENDS; i++) {
    const coin = await chain.minerCoin();
    const outputs: NewOutput[] = [{ address: chain.addresses.external, value: coin.value - 100_000n }];
    spends.push((await chain.sign([coin], outputs)).hex);
  }
  bigBlock = await chain.mineWith(spends);
  service = await startTestService({ upstreamUrls: [chain.node.url], env: ENV });
  await caughtUp();
  truth = await chain.truth();
}, 600_000);

afterAll(async () => {
  await service?.stop();
});

// ---------------------------------------------------------------------------------------------------------

/** A block as Esplora must answer it (BlockValue), from the node's. */
async function expectedBlock(height: number) {
  const b = await node("getblock", [await node<string>("getblockhash", [height]), 1]);
  return {
    id: b.hash,
    height,
    version: b.version,
    timestamp: b.time,
    tx_count: b.nTx,
    size: b.size,
    weight: b.weight,
    merkle_root: b.merkleroot,
    previousblockhash: b.previousblockhash ?? null,
    mediantime: b.mediantime,
    nonce: b.nonce,
    bits: Number.parseInt(b.bits, 16),
    difficulty: b.difficulty,
  };
}

describe("blocks", () => {
  test("the tip, each block by height and by hash, its header, status, txids and bytes", async () => {
    expect(await text("/blocks/tip/height")).toBe(String(truth.tip));
    expect(await text("/blocks/tip/hash")).toBe(await node("getbestblockhash"));
    for (const block of truth.blocks) {
      expect(await text(`/block-height/${block.height}`)).toBe(block.hash);
      const b = await node("getblock", [block.hash, 1]);
      expect(await json(`/block/${block.hash}`)).toEqual(await expectedBlock(block.height));
      expect(await text(`/block/${block.hash}/header`)).toBe(
        await node("getblockheader", [block.hash, false]),
      );
      expect(await json(`/block/${block.hash}/status`)).toEqual({
        in_best_chain: true,
        height: block.height,
        ...(b.nextblockhash ? { next_best: b.nextblockhash } : {}),
      });
      expect(await json(`/block/${block.hash}/txids`)).toEqual(b.tx);
      expect(await text(`/block/${block.hash}/txid/0`)).toBe(b.tx[0]);
      const raw = await get(`/block/${block.hash}/raw`);
      expect({ status: raw.status, type: raw.type }).toEqual({
        status: 200,
        type: "application/octet-stream",
      });
      expect(Buffer.from(raw.bytes).toString("hex")).toBe(await node("getblock", [block.hash, 0]));
    }
  });

  test("the 10 newest blocks from the tip or from a height, newest first, as /block/:hash answers each", async () => {
    /** From `height` down to block 0, ten at most. */
    const blocksFrom = async (height: number) => {
      const out = [];
      for (let h = height; h >= Math.max(0, height - 9); h--) out.push(await expectedBlock(h));
      return out;
    };
    const fromTip = await blocksFrom(truth.tip);
    expect(fromTip.length).toBe(10);
    expect(await json("/blocks")).toEqual(fromTip);
    expect(await json(`/blocks/${truth.tip}`)).toEqual(fromTip);
    expect(await json("/blocks/20")).toEqual(await blocksFrom(20));
    // Down to block 0, whose previousblockhash is null; a height as Rust reads one (a `+`, leading zeros).
    const fromThree = await blocksFrom(3);
    expect(fromThree.map((b) => b.height)).toEqual([3, 2, 1, 0]);
    for (const height of ["3", "+3", "003"]) expect(await json(`/blocks/${height}`)).toEqual(fromThree);
    // A height electrs cannot parse (not a usize) is none given: from the tip.
    for (const height of ["tip", "abc", "-1", "3.0", "99999999999999999999999"]) {
      expect(await json(`/blocks/${height}`)).toEqual(fromTip);
    }
    // Past the tip: electrs' 404.
    for (const height of [String(truth.tip + 1), "18446744073709551615"]) {
      expect(await get(`/blocks/${height}`)).toMatchObject({
        status: 404,
        type: "text/plain",
        text: "Block not found",
      });
    }
  });

  test("a block's transactions, 25 a page from :start, with prevouts, fees and status", async () => {
    const txids: string[] = (await node("getblock", [bigBlock, 1])).tx;
    expect(txids.length).toBe(BIG_BLOCK_SPENDS + 1);
    const first = await json(`/block/${bigBlock}/txs`);
    expect(first).toEqual(await expectedTransactions(txids.slice(0, PAGE)));
    expect(await json(`/block/${bigBlock}/txs/0`)).toEqual(first);
    expect(await json(`/block/${bigBlock}/txs/25`)).toEqual(await expectedTransactions(txids.slice(PAGE)));
    // A start that is no page's, past the end; one electrs cannot read is 0.
    expect(await get(`/block/${bigBlock}/txs/5`)).toMatchObject({
      status: 400,
      text: "start index must be a multipication of 25",
    });
    expect(await get(`/block/${bigBlock}/txs/50`)).toMatchObject({
      status: 404,
      text: "start index out of range",
    });
    expect(await json(`/block/${bigBlock}/txs/x`)).toEqual(first);
    expect(await get(`/block/${bigBlock}/txid/28`)).toMatchObject({
      status: 404,
      text: "tx index out of range",
    });
  });
});

describe("transactions", () => {
  test("each one (confirmed and pending): shape, status, hex, bytes, spends and merkle proof", async () => {
    expect(truth.mempool.length).toBeGreaterThanOrEqual(2);
    for (const tx of truth.transactions.values()) {
      const { txid } = tx;
      expect(await json(`/tx/${txid}`)).toEqual(await expectedTransaction(txid));
      expect(await json(`/tx/${txid}/status`)).toEqual(expectedStatus(tx));
      const hex: string = (await decodedTransaction(tx)).hex;
      expect(await text(`/tx/${txid}/hex`)).toBe(hex);
      const raw = await get(`/tx/${txid}/raw`);
      expect({ type: raw.type, hex: Buffer.from(raw.bytes).toString("hex") }).toEqual({
        type: "application/octet-stream",
        hex,
      });
      expect(await json(`/tx/${txid}/outspends`)).toEqual(tx.outputs.map(expectedSpend));
      for (const out of tx.outputs)
        expect(await json(`/tx/${txid}/outspend/${out.vout}`)).toEqual(expectedSpend(out));
      if (tx.height === null) {
        expect(await get(`/tx/${txid}/merkle-proof`)).toMatchObject({
          status: 404,
          text: "Transaction not found or is unconfirmed",
        });
        continue;
      }
      const proof = await json(`/tx/${txid}/merkle-proof`);
      const block = await node("getblock", [tx.blockHash, 1]);
      expect({ height: proof.block_height, pos: proof.pos }).toEqual({ height: tx.height, pos: tx.position });
      expect(foldProof(txid, proof.merkle, proof.pos)).toBe(block.merkleroot);
    }
  });

  test("what was built is there: an OP_RETURN output, a coinbase to a watched address, a p2sh-segwit spend", async () => {
    const opReturn = await json(`/tx/${chain.txs.opReturn}`);
    expect(opReturn.vout[0]).toEqual({
      scriptpubkey: "6a0d636861696e2d67617465776179",
      scriptpubkey_asm: "OP_RETURN OP_PUSHBYTES_13 636861696e2d67617465776179",
      scriptpubkey_type: "op_return",
      value: 0,
    });
    const coinbase = await json(`/tx/${chain.txs.coinbase}`);
    expect({
      coinbase: coinbase.vin[0].is_coinbase,
      fee: coinbase.fee,
      to: coinbase.vout[0].scriptpubkey_address,
    }).toEqual({ coinbase: true, fee: 0, to: chain.addresses.coinbase });
    const change = await json(`/tx/${chain.txs.change}`);
    expect(change.vin[0].prevout.scriptpubkey_type).toBe("p2sh");
    expect(change.vin[0].inner_redeemscript_asm).toMatch(/^OP_0 OP_PUSHBYTES_20 [0-9a-f]{40}$/);
  });
});

describe("addresses and scripthashes", () => {
  test("figures, history page by page, mempool transactions and unspent outputs", async () => {
    const { miner, ...watched } = chain.addresses;
    for (const address of [...Object.values(watched), miner]) {
      const hash = await scripthashOf(address);
      const stats = truth.addressStats(address);
      const figures = { chain_stats: statsJson(stats.chain), mempool_stats: statsJson(stats.mempool) };
      expect(await json(`/address/${address}`)).toEqual({ address, ...figures });
      expect(await json(`/scripthash/${hash}`)).toEqual({ scripthash: hash, ...figures });

      const pending = await expectedTransactions((await mempoolOf(address)).map((t) => t.txid));
      const history = chainHistoryOf(address);
      for (const base of [`/address/${address}`, `/scripthash/${hash}`]) {
        expect(await json(`${base}/txs/mempool`)).toEqual(pending);
        const firstPage = await expectedTransactions(history.slice(0, PAGE).map((t) => t.txid));
        expect(await json(`${base}/txs`)).toEqual([...pending, ...firstPage]);
        // Page by page to the end: each after the last txid seen.
        let seen: string[] = [];
        let last: string | undefined;
        for (;;) {
          const page = await json(`${base}/txs/chain${last ? `/${last}` : ""}`);
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(PAGE);
          expect(page).toEqual(
            await expectedTransactions(
              history.slice(seen.length, seen.length + page.length).map((t) => t.txid),
            ),
          );
          seen = [...seen, ...page.map((t: any) => t.txid)];
          last = seen.at(-1);
          if (page.length < PAGE) break;
        }
        expect(seen).toEqual(history.map((t) => t.txid));
      }
      const utxos = truth.utxos(address, { mempool: true });
      if (utxos.length > UTXO_MAX) {
        expect(address).toBe(miner);
        expect(await get(`/address/${address}/utxo`)).toMatchObject({
          status: 400,
          type: "text/plain",
          text: `Too many unspent transaction outputs (>${UTXO_MAX}). Contact support to raise limits.`,
        });
        continue;
      }
      const expected = utxos.map((u) => ({
        txid: u.txid,
        vout: u.vout,
        status: expectedStatus(truth.transactions.get(u.txid)!),
        value: Number(u.value),
      }));
      const byOutpoint = (a: any, b: any) => (a.txid + a.vout < b.txid + b.vout ? -1 : 1);
      expect((await json(`/address/${address}/utxo`)).sort(byOutpoint)).toEqual(expected.sort(byOutpoint));
      expect((await json(`/scripthash/${hash}/utxo`)).sort(byOutpoint)).toEqual(expected.sort(byOutpoint));
    }
    // The miner's history is long enough for several pages.
    expect(chainHistoryOf(miner).length).toBeGreaterThan(2 * PAGE);
  });

  test("a last seen txid not in the history leaves nothing after it; an unused script has zero figures", async () => {
    const { legacy } = chain.addresses;
    expect(await json(`/address/${legacy}/txs/chain/${chain.txs.coinbase}`)).toEqual([]);
    const unused = await node<string>("getnewaddress", ["", "bech32"]);
    const zero = {
      funded_txo_count: 0,
      funded_txo_sum: 0,
      spent_txo_count: 0,
      spent_txo_sum: 0,
      tx_count: 0,
    };
    expect(await json(`/address/${unused}`)).toEqual({
      address: unused,
      chain_stats: zero,
      mempool_stats: zero,
    });
    expect(await json(`/address/${unused}/utxo`)).toEqual([]);
    expect(await json(`/address/${unused}/txs`)).toEqual([]);
  });

  test("a real client by scripthash: @bitcoinerlab/explorer's figures and history agree with the node", async () => {
    // It takes Electrum's scripthash and reverses it for Esplora, as Blockstream's servers expect.
    const explorer = new EsploraExplorer({ url: `${service.url}/esplora/key/${KEY}` });
    await explorer.connect();
    const tip = await node<number>("getblockcount");
    // Its threshold: a transaction is irreversible three blocks deep.
    const IRREVERSIBLE = 3;
    const { miner, bech32, legacy, p2sh } = chain.addresses;
    for (const address of [bech32, legacy, p2sh, miner]) {
      const scriptHash = await electrumScripthashOf(address);
      const { chain: confirmed, mempool } = truth.addressStats(address);
      expect(await explorer.fetchScriptHash(scriptHash)).toEqual({
        balance: Number(confirmed.fundedSum - confirmed.spentSum),
        txCount: confirmed.txCount,
        unconfirmedBalance: Number(mempool.fundedSum - mempool.spentSum),
        unconfirmedTxCount: mempool.txCount,
      });
      // Oldest first: the confirmed history (every page), then the mempool's, each at its height (0: none).
      const history = [...(await mempoolOf(address)), ...chainHistoryOf(address)].reverse();
      expect(await explorer.fetchTxHistory({ scriptHash })).toEqual(
        history.map((t) => ({
          txId: t.txid,
          blockHeight: t.height ?? 0,
          irreversible: t.height !== null && tip - t.height + 1 >= IRREVERSIBLE,
        })),
      );
    }
    expect(chainHistoryOf(miner).length).toBeGreaterThan(2 * PAGE);
    explorer.close();
  });
});

describe("the mempool, fees, broadcasting", () => {
  test("backlog and txids as the node's mempool has them", async () => {
    const entries = await node<Record<string, any>>("getrawmempool", [true]);
    // Fees from the truth (inputs minus outputs, exact); vsize and rate as electrs counts them (TxFeeInfo:
    // ceil(weight / 4), the fee over weight / 4), so the vsize is the node's.
    const rows = Object.entries(entries).map(([txid, e]) => ({
      fee: Number(truth.transactions.get(txid)!.fee),
      vsize: Math.ceil(e.weight / 4),
      rate: Number(truth.transactions.get(txid)!.fee) / (e.weight / 4),
    }));
    const backlog = await json("/mempool");
    expect({ count: backlog.count, vsize: backlog.vsize, total_fee: backlog.total_fee }).toEqual({
      count: rows.length,
      vsize: Object.values(entries).reduce((s, e) => s + e.vsize, 0),
      total_fee: rows.reduce((s, r) => s + r.fee, 0),
    });
    expect(backlog.vsize).toBe(rows.reduce((s, r) => s + r.vsize, 0));
    // Below 50,000 vbytes in all: one bin, at the lowest fee rate (electrs' histogram).
    expect(backlog.fee_histogram).toEqual([[Math.min(...rows.map((r) => r.rate)), backlog.vsize]]);
    expect((await json("/mempool/txids")).sort()).toEqual(Object.keys(entries).sort());
  });

  test("fee estimates: the node's, for Esplora's targets, in sat/vB", async () => {
    const targets = [...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008];
    const expected: Record<string, number> = {};
    for (const target of targets) {
      const estimate = await exact("estimatesmartfee", [target]);
      if (estimate.feerate !== undefined) {
        expected[String(target)] = Number(BigInt(estimate.feerate.replace(".", ""))) / 1000;
      }
    }
    expect(await json("/fee-estimates")).toEqual(expected);
  });

  test("POST tx: the txid as text, then the node has it; what the node refuses is a 400 quoting it", async () => {
    const coin = await chain.minerCoin();
    const { txid, hex } = await chain.sign(
      [coin],
      [{ address: chain.addresses.external, value: coin.value - 50_000n }],
    );
    const sent = await get("/tx", { method: "POST", body: `${hex}\n`, headers: { "x-api-key": KEY } });
    expect({ status: sent.status, type: sent.type, text: sent.text }).toEqual({
      status: 200,
      type: "text/plain",
      text: txid,
    });
    expect(await node<string[]>("getrawmempool")).toContain(txid);
    const refused = await get("/tx", { method: "POST", body: "00", headers: { "x-api-key": KEY } });
    expect({ status: refused.status, type: refused.type }).toEqual({ status: 400, type: "text/plain" });
    expect(refused.text).toStartWith('sendrawtransaction RPC error: {"code":-22,');
  });
});

describe("keys, costs and refusals", () => {
  test("the key in the path, in a header, neither, or two different ones", async () => {
    const height = String(await node<number>("getblockcount"));
    const bare = { headers: {} };
    expect(await get(`/key/${KEY}/blocks/tip/height`, bare)).toMatchObject({ status: 200, text: height });
    expect(await get(`/key/${KEY}/address/${chain.addresses.legacy}`, bare)).toMatchObject({ status: 200 });
    expect(await get("/blocks/tip/height", bare)).toMatchObject({ status: 401, type: "text/plain" });
    expect(await get("/key/wrong/blocks/tip/height", bare)).toMatchObject({
      status: 401,
      text: "invalid API key",
    });
    expect(await get(`/key/${KEY}/blocks/tip/height`, { headers: { "x-api-key": "other" } })).toMatchObject({
      status: 401,
      text: "the request carries two different API keys; send one",
    });
  });

  test("an unknown path under the key's base URL answers 404 without writing the key back", async () => {
    const bare = { headers: {} };
    const cases: [path: string, shown: string][] = [
      [`/key/${KEY}/nothing/here`, "/esplora/nothing/here"],
      [`/key/${KEY}/`, "/esplora/"],
      [`/key/${KEY}`, "/esplora"],
    ];
    for (const [path, shown] of cases) {
      const a = await get(path, bare);
      expect({ path, status: a.status, type: a.type, text: a.text }).toEqual({
        path,
        status: 404,
        type: "text/plain",
        text: `endpoint does not exist "${shown}"`,
      });
    }
  });

  test("bad input is Esplora's 400 or 404, plain text, never a 500", async () => {
    const zeros = "0".repeat(64);
    const cases: [string, number, string][] = [
      ["/tx/xyz", 400, "Invalid hex string"],
      [`/tx/${"g".repeat(64)}/status`, 400, "Invalid hex string"],
      ["/block/abcd", 400, "Invalid hex string"],
      ["/block-height/abc", 400, "Invalid number"],
      ["/block-height/99999999999999999999999", 400, "Invalid number"],
      ["/block-height/1000000", 404, "Block not found"],
      [`/tx/${zeros}/outspend/x`, 400, "Invalid number"],
      [`/tx/${zeros}`, 404, "Transaction not found"],
      [`/tx/${zeros}/hex`, 404, "Transaction not found"],
      [`/tx/${zeros}/outspends`, 404, "Transaction not found"],
      [`/block/${zeros}`, 404, "Block not found"],
      [`/block/${zeros}/txs`, 404, "Block not found"],
      ["/address/notanaddress", 400, "Invalid Bitcoin address"],
      // Litecoin's main chain, not regtest's.
      ["/address/LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH9", 400, "Invalid Bitcoin address"],
      ["/scripthash/zz", 400, "Invalid hex string"],
      ["/scripthash/abcd", 400, "Invalid scripthash"],
      ["/nothing/here", 404, 'endpoint does not exist "/esplora/nothing/here"'],
    ];
    for (const [path, status, message] of cases) {
      const a = await get(path);
      expect({ path, status: a.status, type: a.type, text: a.text }).toEqual({
        path,
        status,
        type: "text/plain",
        text: message,
      });
    }
    // Never seen: unconfirmed, unspent, not in the best chain (as electrs answers them).
    expect(await json(`/tx/${zeros}/status`)).toEqual({ confirmed: false });
    expect(await json(`/tx/${zeros}/outspend/0`)).toEqual({ spent: false });
    expect(await json(`/block/${zeros}/status`)).toEqual({ in_best_chain: false });
  });

  test("costs match the work: a page of transactions takes more tokens than the tip", async () => {
    // A second instance reading the first's index, every caller's bucket 20 tokens that hardly refill.
    const limited = await startTestService({
      upstreamUrls: [chain.node.url],
      databaseUrl: service.databaseUrl,
      env: { ...ENV, INDEXER: "off", RATE_LIMIT: "0.001/20" },
    });
    try {
      const at = (path: string) => fetch(`${limited.url}/esplora${path}`, { headers: { "x-api-key": KEY } });
      expect(await (await at("/blocks/tip/height")).text()).toBe(String(truth.tip));
      // 19 tokens left: the first page (15) passes, a history page (10) does not, the tip (1) four times.
      expect((await at(`/address/${chain.addresses.legacy}/txs`)).status).toBe(200);
      const refused = await at(`/address/${chain.addresses.legacy}/txs/chain`);
      expect({ status: refused.status, type: refused.headers.get("content-type") }).toEqual({
        status: 429,
        type: "text/plain",
      });
      for (let i = 0; i < 4; i++) expect((await at("/blocks/tip/height")).status).toBe(200);
      expect((await at("/blocks/tip/height")).status).toBe(429);
    } finally {
      await limited.stop();
    }
  }, 120_000);
});

describe("a real Esplora client: mempool.js", () => {
  test("reads addresses, unspent outputs, transactions and blocks through /esplora and agrees with the node", async () => {
    const {
      bitcoin: { addresses, blocks, transactions },
    } = mempoolJS({
      hostname: "127.0.0.1",
      protocol: "http",
      config: { baseURL: `${service.url}/esplora/key/${KEY}/` },
    });
    const { bech32 } = chain.addresses;
    const stats = truth.addressStats(bech32);
    const info = await addresses.getAddress({ address: bech32 });
    expect(info.chain_stats).toEqual(statsJson(stats.chain) as never);
    const utxos = await addresses.getAddressTxsUtxo({ address: bech32 });
    expect(utxos.map((u) => `${u.txid}:${u.vout}:${u.value}`).sort()).toEqual(
      truth
        .utxos(bech32, { mempool: true })
        .map((u) => `${u.txid}:${u.vout}:${u.value}`)
        .sort(),
    );
    const txs = await addresses.getAddressTxs({ address: bech32 });
    expect(txs.map((t) => t.txid)).toEqual([
      ...(await mempoolOf(bech32)).map((t) => t.txid),
      ...chainHistoryOf(bech32)
        .slice(0, PAGE)
        .map((t) => t.txid),
    ]);
    const tx = await transactions.getTx({ txid: chain.txs.multiFrom });
    expect(tx as unknown).toEqual(await expectedTransaction(chain.txs.multiFrom));
    expect(await transactions.getTxHex({ txid: chain.txs.multiFrom })).toBe(
      await node("getrawtransaction", [chain.txs.multiFrom, false]),
    );
    const height = await blocks.getBlocksTipHeight();
    expect(height).toBe(await node<number>("getblockcount"));
    const hash = await blocks.getBlockHeight({ height: chain.blocks.midnight });
    expect(hash).toBe(await node<string>("getblockhash", [chain.blocks.midnight]));
    const b = await node("getblock", [hash, 1]);
    expect(await blocks.getBlockStatus({ hash })).toEqual({
      in_best_chain: true,
      height: chain.blocks.midnight,
      next_best: b.nextblockhash,
    } as never);
    expect(await blocks.getBlockHeader({ hash })).toBe(await node("getblockheader", [hash, false]));
    expect(await blocks.getBlockTxids({ hash })).toEqual(b.tx);
    expect(await blocks.getBlockTxs({ hash, start_index: 0 })).toEqual(
      (await expectedTransactions(b.tx)) as never,
    );
  });
});

describe("a reorg", () => {
  test("the dropped payment is gone, the added one confirmed, the old blocks out of the best chain", async () => {
    const reorg = await chain.reorg();
    await caughtUp();
    truth = await chain.truth();
    expect(await get(`/tx/${reorg.droppedTxid}`)).toMatchObject({
      status: 404,
      text: "Transaction not found",
    });
    expect(await json(`/tx/${reorg.addedTxid}`)).toEqual(await expectedTransaction(reorg.addedTxid));
    for (const hash of reorg.removed)
      expect(await json(`/block/${hash}/status`)).toEqual({ in_best_chain: false });
    expect(await text(`/block-height/${reorg.fork}`)).toBe(reorg.added[0]!);
    const { legacy, bech32 } = chain.addresses;
    for (const address of [legacy, bech32]) {
      const stats = truth.addressStats(address);
      expect(await json(`/address/${address}`)).toEqual({
        address,
        chain_stats: statsJson(stats.chain),
        mempool_stats: statsJson(stats.mempool),
      });
      // Their pages were read (and their transactions' JSON kept) before the reorg: the new chain's.
      const history = chainHistoryOf(address).slice(0, PAGE);
      expect(await json(`/address/${address}/txs/chain`)).toEqual(
        await expectedTransactions(history.map((t) => t.txid)),
      );
    }
    // The new branch's block, a page of the index's transactions.
    expect(await json(`/block/${reorg.added[0]}/txs/0`)).toEqual(
      await expectedTransactions((await node("getblock", [reorg.added[0], 1])).tx),
    );
  }, 120_000);
});

describe("bounded work: parents read from the node, broadcasts", () => {
  /** Mempool transactions whose outputs one child spends: the index holds none of them. */
  const PARENTS = 20;
  /** Fees in satoshis: well above the node's relay minimum, below its most (maxfeerate). */
  const FEE = 100_000n;
  /** How long the proxy holds a parent's read: the reads of a group are all in flight together. */
  const HOLD_MS = 50;
  let parents: string[];
  let child: string;
  /** An output of the parents' funding transaction nothing spends: the broadcast's input. */
  let spare: Outpoint;
  let proxy: NodeProxy;
  /** An instance reading the index through a proxy that counts node calls. */
  let proxied: TestService;

  beforeAll(async () => {
    const { external } = chain.addresses;
    // A funding transaction paying new addresses of the wallet (a transaction pays an address once), PARENTS
    // transactions each spending one of its outputs, a child spending each parent's: 22 unconfirmed in a
    // chain, within the node's 25.
    const coin = await chain.minerCoin();
    const each = (coin.value - FEE) / BigInt(PARENTS + 1);
    const payees: string[] = [];
    for (let i = 0; i <= PARENTS; i++) payees.push(await node<string>("getnewaddress", ["", "bech32"]));
    const fund = await chain.spend(
      [coin],
      payees.map((address) => ({ address, value: each })),
    );
    const outputs: Outpoint[] = [];
    for (const address of payees) outputs.push(await chain.outputOf(fund, address));
    parents = [];
    const inputs: Outpoint[] = [];
    for (const output of outputs.slice(0, PARENTS)) {
      const parent = await chain.spend([output], [{ address: external, value: each - FEE }]);
      parents.push(parent);
      inputs.push(await chain.outputOf(parent, external));
    }
    child = await chain.spend(inputs, [{ address: external, value: BigInt(PARENTS) * (each - FEE) - FEE }]);
    spare = outputs[PARENTS]!;
    truth = await chain.truth();
    proxy = startProxy(chain.node.url);
    proxied = await startTestService({
      upstreamUrls: [proxy.url],
      databaseUrl: service.databaseUrl,
      // Bodies past the most a transaction may be get through, for the route's own bound to be seen.
      env: { ...ENV, INDEXER: "off", MAX_BODY_BYTES: String(16 * 1024 * 1024) },
    });
  }, 120_000);

  afterAll(async () => {
    await proxied?.stop();
  });

  test("POST tx: a text the node cannot read is refused in its words without reaching it; a transaction is sent", async () => {
    const post = async (body: string) => {
      const response = await fetch(`${proxied.url}/esplora/tx`, {
        method: "POST",
        body,
        headers: { "x-api-key": KEY },
      });
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        text: await response.text(),
      };
    };
    const { external } = chain.addresses;
    const { txid, hex } = await chain.sign([spare], [{ address: external, value: spare.value - FEE }]);
    for (const body of ["zz", "☃", "", "00", "0100000000", `${hex}00`, hex.slice(0, -2)]) {
      // What the node itself answers (asked directly, not through the proxy).
      const { text: answer } = await chain.node.post(
        JSON.stringify({ jsonrpc: "1.0", id: 1, method: "sendrawtransaction", params: [body] }),
      );
      const error = JSON.parse(answer).error;
      expect(error.code).toBe(-22);
      expect({ body, ...(await post(body)) }).toEqual({
        body,
        status: 400,
        type: "text/plain",
        text: `sendrawtransaction RPC error: ${JSON.stringify(error)}`,
      });
    }
    // Longer than any transaction: refused unread.
    expect(await post("00".repeat(4_000_001))).toEqual({
      status: 413,
      type: "text/plain",
      text: "a transaction is at most 4000000 bytes",
    });
    expect(proxy.callsOf("sendrawtransaction")).toEqual([]);
    expect(await post(`${hex}\n`)).toEqual({ status: 200, type: "text/plain", text: txid });
    expect(proxy.callsOf("sendrawtransaction").length).toBe(1);
    expect(await node<string[]>("getrawmempool")).toContain(txid);
  });

  test("a page of confirmed transactions reads their bytes from the node once, in their block; read again, nothing", async () => {
    const { miner } = chain.addresses;
    const history = chainHistoryOf(miner);
    // A page this instance has not read: the oldest transactions of the miner's history.
    const last = history.at(-PAGE - 1)!.txid;
    const page = history.slice(-PAGE);
    const path = `${proxied.url}/esplora/address/${miner}/txs/chain/${last}`;
    let batches: number[] = [];
    const read = async () => {
      const from = proxy.calls.length;
      const fromRequest = proxy.requests.length;
      const answer = await fetch(path, { headers: { "x-api-key": KEY } });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual(await expectedTransactions(page.map((t) => t.txid)));
      batches = proxy.requests
        .slice(fromRequest)
        .map((r) => [r].flat().filter((c: any) => c?.method === "getrawtransaction").length)
        .filter((n) => n > 0);
      // The instance's own reads of the head and the mempool go on meanwhile.
      return proxy.calls.slice(from).filter((c) => c.method === "getrawtransaction");
    };
    const first = await read();
    // In batches of at most 8 (the family's nodes answer a batch's calls one after another on one thread).
    expect(batches.reduce((a, b) => a + b, 0)).toBe(PAGE);
    expect(Math.max(...batches)).toBeLessThanOrEqual(8);
    const blockOf = (txid: string) => truth.transactions.get(txid)!.blockHash;
    expect(first.map((c) => [c.method, ...c.params]).sort()).toEqual(
      page.map((t) => ["getrawtransaction", t.txid, false, blockOf(t.txid)]).sort(),
    );
    expect(await read()).toEqual([]);
  });

  test("a page's transactions sharing a block: the block read once and cut, none of them read alone", async () => {
    // The best chain's block holding the most transactions of its newest 64 (the reorg above sent the big
    // block's back to the mempool): its first page.
    let best = { hash: "", txids: [] as string[] };
    const tip = await node<number>("getblockcount");
    for (let height = tip; height > tip - 64; height--) {
      const block = await node("getblock", [await node<string>("getblockhash", [height]), 1]);
      if (block.tx.length > best.txids.length) best = { hash: block.hash, txids: block.tx };
    }
    const { hash } = best;
    expect(best.txids.length).toBeGreaterThanOrEqual(BLOCK_READ_MIN_TXS);
    const page = best.txids.slice(0, PAGE);
    const from = proxy.calls.length;
    const answer = await fetch(`${proxied.url}/esplora/block/${hash}/txs`, { headers: { "x-api-key": KEY } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(await expectedTransactions(page));
    const reads = proxy.calls
      .slice(from)
      .filter((c) => c.method === "getblock" || c.method === "getrawtransaction")
      .map((c) => [c.method, ...c.params]);
    // The block's txids (the route's own read), then its bytes once (BLOCK_READ_MIN_TXS or more of a page's
    // transactions in it): no transaction read alone.
    expect(reads).toEqual([
      ["getblock", hash, true],
      ["getblock", hash, 0],
    ]);
  });

  test("a transaction's parents are read from the node a few at a time, each once", async () => {
    const wanted = new Set(parents);
    let inFlight = 0;
    let most = 0;
    const read: string[] = [];
    /** The node's answer, held HOLD_MS, while the reads it holds are counted in flight. */
    const held = async (body: string, reads: string[]) => {
      inFlight += reads.length;
      most = Math.max(most, inFlight);
      read.push(...reads);
      try {
        await Bun.sleep(HOLD_MS);
        const answer = await fetch(chain.node.url, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        return new Response(await answer.text(), {
          status: answer.status,
          headers: { "content-type": "application/json" },
        });
      } finally {
        inFlight -= reads.length;
      }
    };
    proxy.mode = (body, parsed) => {
      const reads = [parsed]
        .flat()
        .filter((c) => c?.method === "getrawtransaction" && wanted.has(c.params?.[0]))
        .map((c) => c.params[0] as string);
      return reads.length === 0 ? undefined : held(body, reads);
    };
    try {
      const answer = await fetch(`${proxied.url}/esplora/tx/${child}`, { headers: { "x-api-key": KEY } });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual(await expectedTransaction(child));
    } finally {
      proxy.mode = undefined;
    }
    expect(read.sort()).toEqual([...parents].sort());
    expect(most).toBe(PARENT_READS_IN_FLIGHT);
  });

  test("a request pays a token for each transaction it reads from the node for its outputs", async () => {
    // Every caller's bucket 30 tokens that hardly refill.
    const limited = await startTestService({
      upstreamUrls: [chain.node.url],
      databaseUrl: service.databaseUrl,
      env: { ...ENV, INDEXER: "off", RATE_LIMIT: "0.001/30" },
    });
    try {
      const at = (path: string) => fetch(`${limited.url}/esplora${path}`, { headers: { "x-api-key": KEY } });
      // The child: 2, and 20 for its parents (8 left); a transaction whose prevouts the index holds: 2.
      expect((await at(`/tx/${child}`)).status).toBe(200);
      expect((await at(`/tx/${chain.txs.multiFrom}`)).status).toBe(200);
      // 6 left: the child's 2 are taken, its first parents' 8 cannot be paid: 429, 4 left.
      const refused = await at(`/tx/${child}`);
      expect({ status: refused.status, type: refused.headers.get("content-type") }).toEqual({
        status: 429,
        type: "text/plain",
      });
      for (let i = 0; i < 4; i++) expect((await at("/blocks/tip/height")).status).toBe(200);
      expect((await at("/blocks/tip/height")).status).toBe(429);
    } finally {
      await limited.stop();
    }
  }, 120_000);
});

describe("the API docs", () => {
  test("list every Esplora route with its cost on a Bitcoin-family instance", async () => {
    const doc: any = await (await fetch(`${service.url}/swagger/json`)).json();
    const esplora = Object.keys(doc.paths).filter((p) => p.startsWith("/esplora/"));
    expect(esplora.length).toBe(36);
    expect(doc.paths["/esplora/tx/{txid}/outspend/{vout}"].get.parameters.map((p: any) => p.name)).toEqual([
      "txid",
      "vout",
    ]);
    expect(doc.paths["/esplora/address/{address}/txs"].get.description).toBe("Costs 15 rate-limit tokens.");
    expect(doc.paths["/esplora/blocks/tip/height"].get.responses["200"].content).toEqual({
      "text/plain": { schema: { type: "string" } },
    });
    expect(Object.keys(doc.paths["/esplora/tx"])).toEqual(["post"]);
    expect(doc.tags.map((t: any) => t.name)).toContain("esplora");
  });
});

describe("an EVM instance", () => {
  test("has no Esplora API, nor docs of one", async () => {
    const { anvil } = await fixtureChain();
    const evm = await startTestService({ upstreamUrls: [anvil.url] });
    try {
      const response = await fetch(`${evm.url}/esplora/blocks/tip/height`);
      expect(response.status).toBe(404);
      const doc: any = await (await fetch(`${evm.url}/swagger/json`)).json();
      expect(Object.keys(doc.paths).filter((p) => p.startsWith("/esplora"))).toEqual([]);
    } finally {
      await evm.stop();
    }
  });
});
