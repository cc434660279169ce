/**
 * The Bitcoin family's reads for the Esplora-compatible API (operations/esploraSource.ts, served by
 * http/esplora/): blocks and transactions from the node through the engine (cached as its rows say: a block
 * or a confirmed transaction by hash for ever), prevouts, fees, spends, an address's figures, history and
 * unspent outputs from the index (fees are the index's, inputs minus outputs), the mempool from the
 * instance's follower of the node's (mempoolView.ts). The index's tip is Esplora's tip. A transaction the
 * index does not hold (the mempool, a block past the index's tip or before its first) is read from the
 * node, its prevouts from the index or the node, its fee its inputs minus its outputs.
 */
import { LRUCache } from "lru-cache";
import { callText, type Engine } from "../../../engine/engineApi";
import { NodeError, UpstreamProtocolError } from "../../../errors";
import type {
  ChargeReads,
  EsploraDeps,
  EsploraSource,
  ScriptRef,
  UtxoPage,
} from "../../../operations/esploraSource";
import { type BulkReads, createBulkReads } from "../bulkReads";
import { outpointKey } from "../indexedOutputs";
import type { MempoolFollower } from "../mempoolFollower";
import type { MempoolReads } from "../mempoolStore";
import { createNodeFormat, type NodeFormat } from "../nodeFormat";
import { RawBlockError, type RawBlockFormat, transactionsOfBlock } from "../rawBlock";
import {
  blockJson,
  type Confirmation,
  feeOf,
  type NodeBlock,
  type NodeTransaction,
  nodeOutputPrevout,
  type Prevout,
  parseNode,
  type ScriptStats,
  spendJson,
  spentOutpoints,
  statsJson,
  statusJson,
  transactionBody,
  utxoJson,
  withStatus,
} from "./esploraJson";
import { createEsploraQueries, type EsploraQueries, type Located } from "./esploraQueries";
import { createMempoolView, type MempoolView } from "./mempoolView";
import { merkleBranch } from "./merkle";
import {
  decodeTransaction,
  RawTransactionError,
  readsAsTransaction,
  TX_DECODE_FAILED,
} from "./rawTransaction";

/** Bitcoin Core's RPC_INVALID_ADDRESS_OR_KEY: no such block, no such transaction (in the block named). */
const NOT_FOUND = -5;
/** electrs' confirmation targets for /fee-estimates (query.rs CONF_TARGETS). */
const FEE_TARGETS = [...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008];
/** A fee rate in coins per kvB, read as satoshis per kvB: a thousandth of that is sat/vB. */
const VBYTES_PER_KVB = 1000;
/**
 * Transactions a request reads from the node at once for their outputs (prevouts the index does not hold):
 * half the node's RPC work queue (16 calls by default), so one request never fills it.
 */
export const PARENT_READS_IN_FLIGHT = 8;
/**
 * A page's transactions of one block from which the block is read once rather than each transaction: the
 * node reads the whole block for every `getrawtransaction <txid> false <block>`, so two reads already cost
 * it more than the block's own (a page of 25 on the utxoscale bench's hot address: one block read, not 25).
 */
export const BLOCK_READ_MIN_TXS = 2;
/**
 * Memory for the JSON of transactions of the index's blocks (about 4 KB each: 8,000 of them), so that a page
 * read again is neither read from the node nor decoded and written again. Bounded in bytes, least recent out.
 */
const INDEXED_JSON_MAX_BYTES = 32 * 1024 * 1024;

/** The node's answer, or undefined where it says there is no such block or transaction. */
async function maybe(engine: Engine, method: string, params: unknown[]): Promise<string | undefined> {
  try {
    return await callText(engine, method, params);
  } catch (error) {
    if (error instanceof NodeError && error.code === NOT_FOUND) return undefined;
    throw error;
  }
}

/** A JSON string's value (a hex answer). */
const unquote = (text: string) => JSON.parse(text) as string;

const ZERO_STATS: ScriptStats = { fundedCount: 0n, fundedSum: 0n, spentCount: 0n, spentSum: 0n, txCount: 0n };

/**
 * The Esplora API's reads; the mempool's from the instance's follower (ChainFamily's followMempool hands it
 * over), which the API holds running while it is served.
 */
export function createUtxoEsplora(deps: EsploraDeps, follower: MempoolFollower): EsploraSource {
  const { engine } = deps;
  const bulk = deps.guard(createBulkReads(deps.sql));
  const queries: EsploraQueries = deps.guard(createEsploraQueries(deps.sql));
  follower.hold();
  const mempool = createMempoolView(follower);
  const reads = createReads(engine, queries, createNodeFormat(engine, deps.chain));
  return {
    ...blockSource(engine, queries, reads),
    ...transactionSource(engine, queries, reads, mempool),
    ...scriptSource(queries, reads, mempool, bulk),
    ...poolSource(engine, mempool),
  };
}

/** What several reads share: a block, a transaction, where it is, its prevouts, its JSON. */
interface Reads {
  block(hash: string): Promise<NodeBlock | undefined>;
  transaction(txid: string, blockHash?: string): Promise<NodeTransaction | undefined>;
  /** Where a transaction is: the index's word, else the node's. */
  confirmation(tx: NodeTransaction | undefined, located: Located | undefined): Promise<Confirmation>;
  /**
   * Esplora's JSON of transactions, with their prevouts and fees (the index's where it has them; the others
   * read from the node, charged a token each).
   */
  json(
    txs: readonly { tx: NodeTransaction; located?: Located; confirmation: Confirmation }[],
    charge: ChargeReads,
  ): Promise<string[]>;
  /**
   * Esplora's JSON of transactions of the index's blocks, in their order (those the node has not are left
   * out): kept once made, but their status (INDEXED_JSON_MAX_BYTES), the others read and made as `json` does.
   */
  indexedJson(items: readonly { txid: string; located: Located }[], charge: ChargeReads): Promise<string[]>;
}

/**
 * A transaction of a block read from the block itself: the node refuses `getrawtransaction` for block 0's
 * coinbase ("not considered an ordinary transaction"), which electrs serves as any other.
 */
async function fromBlock(engine: Engine, txid: string, blockHash: string) {
  const text = await maybe(engine, "getblock", [blockHash, 2]);
  return text === undefined
    ? undefined
    : parseNode<{ tx: (NodeTransaction & { hex: string })[] }>(text).tx.find((t) => t.txid === txid);
}

/** A transaction of a block decoded from its serialization, which must be the one asked for. */
function decoded(hex: string, txid: string, format: RawBlockFormat): NodeTransaction {
  try {
    const tx = decodeTransaction(hex, format.addressOf);
    if (tx.txid === txid.toLowerCase()) return tx;
    throw new UpstreamProtocolError(`the node answered transaction ${tx.txid} for ${txid}`);
  } catch (error) {
    if (!(error instanceof RawTransactionError)) throw error;
    throw new UpstreamProtocolError(`the node's transaction ${txid} could not be read: ${error.message}`);
  }
}

function createReads(engine: Engine, queries: EsploraQueries, nodeFormat: () => Promise<NodeFormat>): Reads {
  /**
   * A transaction of a block of the best chain (the index's word), read as the node serializes it and
   * decoded here (rawTransaction.ts): the node's verbose answer of it costs the node and the service several
   * times the work. Where the service does not know the node's client, its verbose answer.
   */
  async function ofBlock(txid: string, blockHash: string) {
    const { format } = await nodeFormat();
    const text = await maybe(engine, "getrawtransaction", [txid, format === undefined, blockHash]);
    if (text === undefined) return fromBlock(engine, txid, blockHash);
    if (format === undefined) return parseNode<NodeTransaction>(text);
    return decoded(unquote(text), txid, format);
  }
  /**
   * Transactions of blocks of the best chain: where BLOCK_READ_MIN_TXS or more of them share a block, its
   * bytes are read once (`getblock <hash> 0`, which the index reads too) and cut here; the others one by
   * one (ofBlock).
   */
  async function ofBlocks(items: readonly { txid: string; hash: string; position?: number }[]) {
    const { format } = await nodeFormat();
    if (format === undefined) return Promise.all(items.map(({ txid, hash }) => ofBlock(txid, hash)));
    const byBlock = new Map<string, Map<string, number | undefined>>();
    for (const { txid, hash, position } of items)
      byBlock.set(hash, (byBlock.get(hash) ?? new Map()).set(txid, position));
    const cut = new Map<string, Map<string, string>>();
    const shared = [...byBlock].filter(([, txids]) => txids.size >= BLOCK_READ_MIN_TXS);
    await Promise.all(
      shared.map(async ([hash, txids]) => {
        const text = await maybe(engine, "getblock", [hash, 0]);
        if (text === undefined) return;
        try {
          cut.set(hash, transactionsOfBlock(unquote(text), format, txids));
        } catch (error) {
          if (!(error instanceof RawBlockError)) throw error;
          throw new UpstreamProtocolError(`the node's block ${hash} could not be read: ${error.message}`);
        }
      }),
    );
    return Promise.all(
      items.map(({ txid, hash }) => {
        const hex = cut.get(hash)?.get(txid);
        return hex === undefined ? ofBlock(txid, hash) : decoded(hex, txid, format);
      }),
    );
  }
  /**
   * A transaction of the best chain or the mempool. The node's txindex keeps what a reorg dropped (with the
   * stale block's hash and 0 confirmations): Esplora knows only its chain and mempool, so that is not found.
   */
  async function transaction(txid: string, blockHash?: string) {
    if (blockHash !== undefined) return ofBlock(txid, blockHash);
    const text = await maybe(engine, "getrawtransaction", [txid, true]);
    if (text === undefined) return undefined;
    const tx = parseNode<NodeTransaction>(text);
    return tx.blockhash !== undefined && (tx.confirmations ?? 0) <= 0 ? undefined : tx;
  }
  /**
   * The prevouts of transactions: the index's, then the node's for outputs it does not hold, their
   * transactions read PARENT_READS_IN_FLIGHT at a time, each group charged before it is read.
   */
  async function prevouts(
    txs: readonly NodeTransaction[],
    charge: ChargeReads,
  ): Promise<Map<string, Prevout>> {
    const wanted = txs.flatMap(spentOutpoints);
    const found: Map<string, Prevout> = await queries.outputs(wanted);
    const missing = [
      ...new Set(wanted.filter((o) => !found.has(outpointKey(o.txid, o.vout))).map((o) => o.txid)),
    ];
    for (let i = 0; i < missing.length; i += PARENT_READS_IN_FLIGHT) {
      const group = missing.slice(i, i + PARENT_READS_IN_FLIGHT);
      await charge(group.length);
      for (const parent of await Promise.all(group.map((txid) => transaction(txid)))) {
        for (const out of parent?.vout ?? [])
          found.set(outpointKey(parent!.txid, out.n), nodeOutputPrevout(out));
      }
    }
    return found;
  }
  /** Transactions' JSON but their status, with their prevouts and fees (the index's, else inputs - outputs). */
  async function bodiesOf(txs: readonly { tx: NodeTransaction; located?: Located }[], charge: ChargeReads) {
    const found = await prevouts(
      txs.map((t) => t.tx),
      charge,
    );
    return txs.map(({ tx, located }) => {
      const inputs = spentOutpoints(tx).map((o) => found.get(outpointKey(o.txid, o.vout)));
      return transactionBody(tx, inputs, located?.fee ?? feeOf(tx, inputs) ?? 0n);
    });
  }
  const indexed = new LRUCache<string, string>({
    maxSize: INDEXED_JSON_MAX_BYTES,
    sizeCalculation: (body, key) => body.length + key.length,
  });
  return {
    async block(hash) {
      const text = await maybe(engine, "getblock", [hash, true]);
      return text === undefined ? undefined : parseNode<NodeBlock>(text);
    },
    transaction,
    async confirmation(tx, located) {
      if (located) return located;
      if (!tx?.blockhash || (tx.confirmations ?? 0) <= 0) return undefined;
      const header = await maybe(engine, "getblockheader", [tx.blockhash, true]);
      if (header === undefined) return undefined;
      const { height, time } = JSON.parse(header) as { height: number; time: number };
      return { height: BigInt(height), hash: tx.blockhash, time };
    },
    async json(txs, charge) {
      const bodies = await bodiesOf(txs, charge);
      return txs.map(({ confirmation }, i) => withStatus(bodies[i]!, confirmation));
    },
    async indexedJson(items, charge) {
      // A transaction's body in a block is its bytes', its prevouts' and its fee's: all fixed by the two.
      const keys = items.map(({ txid, located }) => `${txid}:${located.hash}`);
      const bodies = keys.map((key) => indexed.get(key));
      const missing = items.flatMap((item, i) => (bodies[i] === undefined ? [{ ...item, i }] : []));
      if (missing.length > 0) {
        const txs = await ofBlocks(
          missing.map(({ txid, located }) => ({ txid, hash: located.hash, position: located.position })),
        );
        const found = missing.flatMap((m, n) => (txs[n] ? [{ ...m, tx: txs[n]! }] : []));
        const made = await bodiesOf(found, charge);
        found.forEach(({ i }, n) => {
          bodies[i] = made[n]!;
          indexed.set(keys[i]!, made[n]!);
        });
      }
      return items.flatMap(({ located }, i) =>
        bodies[i] === undefined ? [] : [withStatus(bodies[i]!, located)],
      );
    },
  };
}

function blockSource(engine: Engine, queries: EsploraQueries, reads: Reads) {
  /** The hash of the main chain's block at a height up to the tip: the index's, below its first the node's. */
  async function hashAt(height: bigint) {
    const indexed = await queries.blockHash(height);
    if (indexed !== undefined) return indexed;
    const text = await maybe(engine, "getblockhash", [Number(height)]);
    return text === undefined ? undefined : unquote(text);
  }
  const block = async (hash: string | undefined) => {
    const read = hash === undefined ? undefined : await reads.block(hash);
    return read && blockJson(read);
  };
  return {
    tip: () => queries.tip(),
    async blockHash(height: bigint) {
      const tip = await queries.tip();
      return tip === undefined || height > tip.height ? undefined : hashAt(height);
    },
    async blocks(start: bigint | undefined, count: number) {
      const tip = await queries.tip();
      if (tip === undefined) return undefined;
      const from = start ?? tip.height;
      if (from > tip.height) return undefined;
      const heights = Array.from({ length: Math.min(count, Number(from) + 1) }, (_, i) => from - BigInt(i));
      const blocks = await Promise.all(heights.map(async (height) => block(await hashAt(height))));
      return blocks.includes(undefined) ? undefined : (blocks as string[]);
    },
    block,
    async blockHeader(hash: string) {
      const text = await maybe(engine, "getblockheader", [hash, false]);
      return text === undefined ? undefined : unquote(text);
    },
    async blockStatus(hash: string) {
      const text = await maybe(engine, "getblockheader", [hash, true]);
      const header =
        text === undefined
          ? undefined
          : (JSON.parse(text) as { confirmations: number; height: number; nextblockhash?: string });
      if (header === undefined || header.confirmations < 0) return '{"in_best_chain":false}';
      const next = header.nextblockhash === undefined ? "" : `,"next_best":"${header.nextblockhash}"`;
      return `{"in_best_chain":true,"height":${header.height}${next}}`;
    },
    async blockTxids(hash: string) {
      return (await reads.block(hash))?.tx;
    },
    async blockTransactions(hash: string, txids: readonly string[], charge: ChargeReads) {
      // The route read the block for its txids: its header says where it is, without the block again.
      const text = await maybe(engine, "getblockheader", [hash, true]);
      const header = text && (JSON.parse(text) as { confirmations: number; height: number; time: number });
      const confirmation: Confirmation =
        header && header.confirmations >= 0
          ? { height: BigInt(header.height), hash, time: header.time }
          : undefined;
      const located = await queries.locate(txids);
      // A block of the best chain that the index holds: its transactions are the index's.
      if (confirmation !== undefined && txids.every((txid) => located.get(txid)?.hash === hash)) {
        return reads.indexedJson(
          txids.map((txid) => ({ txid, located: located.get(txid)! })),
          charge,
        );
      }
      const txs = await Promise.all(txids.map((txid) => reads.transaction(txid, hash)));
      const found = txs.flatMap((tx) => (tx ? [{ tx, located: located.get(tx.txid), confirmation }] : []));
      return reads.json(found, charge);
    },
    async blockHex(hash: string) {
      const text = await maybe(engine, "getblock", [hash, false]);
      return text === undefined ? undefined : unquote(text);
    },
  };
}

function transactionSource(engine: Engine, queries: EsploraQueries, reads: Reads, mempool: MempoolView) {
  /** The transaction and where it is; undefined when neither the index nor the node has it. */
  async function find(txid: string) {
    const located = (await queries.locate([txid])).get(txid);
    const tx = await reads.transaction(txid, located?.hash);
    if (tx === undefined) return undefined;
    return { tx, located, confirmation: await reads.confirmation(tx, located) };
  }
  /** What spends output `vout` of `txid`: the index's spend, else the mempool's. */
  const spendOf = (
    spends: Awaited<ReturnType<EsploraQueries["spends"]>>,
    snapshot: MempoolReads | undefined,
    txid: string,
    vout: number,
  ) => {
    const confirmed = spends.get(vout);
    if (confirmed) return spendJson({ txid: confirmed.txid, vin: confirmed.vin, confirmation: confirmed });
    const pending = snapshot?.spendOf(txid, vout);
    return spendJson(pending && { ...pending, confirmation: undefined });
  };
  return {
    async transaction(txid: string, charge: ChargeReads) {
      const located = (await queries.locate([txid])).get(txid);
      if (located) return (await reads.indexedJson([{ txid, located }], charge))[0];
      const found = await find(txid);
      return found && (await reads.json([found], charge))[0];
    },
    async transactionHex(txid: string) {
      const located = (await queries.locate([txid])).get(txid);
      // Not in the index: the verbose form says whether the node's transaction is of the best chain.
      if (located === undefined) return (await reads.transaction(txid))?.hex;
      const text = await maybe(engine, "getrawtransaction", [txid, false, located.hash]);
      if (text !== undefined) return unquote(text);
      return (await fromBlock(engine, txid, located.hash))?.hex;
    },
    async transactionStatus(txid: string) {
      const located = (await queries.locate([txid])).get(txid);
      if (located) return statusJson(located);
      return statusJson(await reads.confirmation(await reads.transaction(txid), undefined));
    },
    async outspends(txid: string) {
      const found = await find(txid);
      if (found === undefined) return undefined;
      const spends = await queries.spends(txid);
      const snapshot = mempool.snapshot();
      return found.tx.vout.map((out) => spendOf(spends, snapshot, txid, out.n));
    },
    async outspend(txid: string, vout: number) {
      // The mempool is read only for an output the index has not seen spent.
      const spends = await queries.spends(txid);
      return spendOf(spends, spends.has(vout) ? undefined : mempool.snapshot(), txid, vout);
    },
    async merkleProof(txid: string) {
      const found = await find(txid);
      const confirmation = found?.confirmation;
      if (confirmation === undefined) return undefined;
      const txids = (await reads.block(confirmation.hash))?.tx ?? [];
      const position = txids.indexOf(txid);
      if (position < 0) return undefined;
      const { branch } = merkleBranch(txids, position);
      return `{"block_height":${confirmation.height},"merkle":${JSON.stringify(branch)},"pos":${position}}`;
    },
    undecodable: (hex: string) => (readsAsTransaction(hex) ? undefined : TX_DECODE_FAILED),
    async broadcast(hex: string) {
      return unquote(await callText(engine, "sendrawtransaction", [hex]));
    },
  };
}

/**
 * An address's (or scripthash's) confirmed figures, history and unspent outputs are refused during a bulk
 * load (bulkReads.ts): its totals and scripthashes are not made yet, and the indexes by address are
 * dropped. Its mempool transactions are answered: the mempool knows every script its transactions touch.
 */
function scriptSource(queries: EsploraQueries, reads: Reads, mempool: MempoolView, bulk: BulkReads) {
  /** The address the index keeps the script's history under; undefined where none is known. */
  async function historyAddress(script: ScriptRef): Promise<string | undefined> {
    if ("address" in script) return script.address;
    const indexed = await queries.addressOfScript(Buffer.from(script.scripthash, "hex"));
    if (indexed !== undefined) return indexed;
    return mempool.snapshot().addressOfScripthash(script.scripthash);
  }
  return {
    async scriptStats(script: ScriptRef) {
      await bulk.refuse("an address's figures");
      const address = await historyAddress(script);
      if (address === undefined) return { chain: statsJson(ZERO_STATS), mempool: statsJson(ZERO_STATS) };
      const pending = mempool.snapshot().stats(address);
      return { chain: statsJson(await queries.stats(address)), mempool: statsJson(pending) };
    },
    async scriptChainTransactions(
      script: ScriptRef,
      lastSeen: string | undefined,
      limit: number,
      charge: ChargeReads,
    ) {
      await bulk.refuse("an address's confirmed transactions");
      const address = await historyAddress(script);
      if (address === undefined) return [];
      const cursor = lastSeen === undefined ? undefined : await queries.historyCursor(address, lastSeen);
      // electrs: a last seen txid that is not in the history leaves nothing after it.
      if (lastSeen !== undefined && cursor === undefined) return [];
      const rows = await queries.history(address, cursor, limit);
      return reads.indexedJson(
        rows.map((r) => ({ txid: r.txid, located: r.block })),
        charge,
      );
    },
    async scriptMempoolTransactions(script: ScriptRef, limit: number) {
      const address = await historyAddress(script);
      if (address === undefined) return [];
      return mempool
        .snapshot()
        .ofAddress(address)
        .slice(0, limit)
        .map((m) => m.json);
    },
    async scriptUtxos(script: ScriptRef, max: number): Promise<UtxoPage> {
      await bulk.refuse("an address's unspent outputs");
      const address = await historyAddress(script);
      if (address === undefined) return { utxos: [] };
      const snapshot = mempool.snapshot();
      // The mempool's outputs to the address that the mempool does not spend, oldest first: they count
      // toward `max` as the confirmed ones do.
      const pending: string[] = [];
      for (const m of snapshot.ofAddress(address).reverse()) {
        m.outputs.forEach((out, vout) => {
          if (out.address !== address || snapshot.spendOf(m.txid, vout)) return;
          pending.push(utxoJson(m.txid, vout, out.value, undefined));
        });
        if (pending.length > max) return { tooMany: true };
      }
      // Of the confirmed ones the mempool spends at most as many as it spends from the address: read that
      // many past the bound, so that a full read says there are more than `max` left.
      const limit = max + 1 + Number(snapshot.stats(address).spentCount);
      const rows = await queries.unspent(address, limit);
      if (rows.length >= limit) return { tooMany: true };
      const utxos = rows
        .filter((r) => snapshot.spendOf(r.txid, r.vout) === undefined)
        .map((r) => utxoJson(r.txid, r.vout, r.value, r.block));
      if (utxos.length + pending.length > max) return { tooMany: true };
      return { utxos: [...utxos, ...pending] };
    },
  };
}

function poolSource(engine: Engine, mempool: MempoolView) {
  return {
    async feeEstimates() {
      const answers = await Promise.all(
        FEE_TARGETS.map((target) =>
          callText(engine, "estimatesmartfee", [target]).then((text) =>
            parseNode<{ feerate?: bigint }>(text),
          ),
        ),
      );
      const members = FEE_TARGETS.flatMap((target, i) => {
        const perKvB = answers[i]!.feerate;
        return perKvB === undefined || perKvB < 0n ? [] : [`"${target}":${Number(perKvB) / VBYTES_PER_KVB}`];
      });
      return `{${members.join(",")}}`;
    },
    async mempool() {
      return mempool.backlog();
    },
    async mempoolTxids() {
      // The node's own list, as it writes it (Esplora's order is arbitrary too).
      return callText(engine, "getrawmempool", [false]);
    },
  };
}
