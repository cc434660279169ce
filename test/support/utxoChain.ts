/**
 * THE shared test chain of the Bitcoin family (issue 27, "Tests"): a regtest Litecoin Core (litecoind.ts)
 * holding every case the index, the data operations, the watch filters and the Esplora API must get right,
 * and `truth`, what the node's own answers imply about it, computed exactly (satoshis as bigints, the node's
 * decimal amounts read as text, never through a float).
 *
 * The chain `buildUtxoChain` makes (heights are those of a fresh node; read them from `txs`, `blocks`):
 *  - day 1 (2020-03-01 UTC): 110 blocks to `miner` (coinbases mature); `fund`: the node's own `sendmany`
 *    paying legacy, p2sh-segwit and bech32 addresses (two coinbase inputs, change to a wallet change
 *    address); `fundLegacy` and `fundMore`: two more payments to `legacy` (so it has three outputs to
 *    consolidate) and one to `bech32`; a coinbase paid to the watched `coinbase` address; blocks through the
 *    day up to 23:50;
 *  - around midnight: block `midnight` at 00:00:20 of day 2, then block `backInTime` whose header time is
 *    23:59:50 of day 1, below its parent's: its `timestamp` (the running maximum) and `day` are day 2's;
 *  - day 2 (2020-03-02): `change` (p2sh pays bech32, change back to p2sh: that output is no transfer) in
 *    `midnight`; `consolidation` (legacy's three outputs into one to itself: no transfer row at all) in
 *    `backInTime`; `opReturn` (bech32 pays legacy and external, an OP_RETURN output, change to bech32);
 *    `multiFrom` (inputs of bech32 and p2sh, in that order, paying external and legacy, no change);
 *  - day 3 (2020-03-03): `sendmany` (two coinbase inputs; outputs to legacy, p2sh, bech32, external and
 *    change to miner); `dropped` (two coinbase inputs, pays legacy) alone in block `reorgBase`, then one
 *    empty block on top;
 *  - the mempool: `pendingIn` (pays p2sh) and `pendingOut` (legacy pays external, change to legacy), unmined.
 * `reorg()` then replaces `reorgBase` and the block above by a longer branch whose first block holds
 * `added` (spending `dropped`'s first input only, paying bech32 instead): `dropped` is gone from the chain
 * and the mempool (it conflicts with `added`), its second input (`reorgUnspent`) is unspent again, the
 * pending transactions stay pending. A service following the chain through the reorg must run with
 * CONFIRMATIONS above its depth (2 on the chain as built; more when a test mined above it), so that it is a
 * reorg within the depth: one past it (regtest's default, 1) is test/reorg-past-finality.test.ts's.
 *
 * MWEB (Litecoin's extension blocks) never activates here: its deployment starts at a median time past
 * 2020-09-30, and the node's clock is held in March 2020 (setmocktime). Every block after the build is mined
 * through `mine`/`mineEmpty`, which move that clock on by a minute a block.
 *
 * The truth (`chain.truth()`, a snapshot of the node's chain and mempool at the call):
 *  - a transaction's fee is its inputs minus its outputs (0 for a coinbase), its inputs' addresses and values
 *    read from `getrawtransaction <prevout txid> true`;
 *  - an output `pays` when it has an address that is not among its transaction's input addresses (a
 *    coinbase's outputs with an address all pay); a transfer is one paying output: from = the first input's
 *    address ("coinbase" for a coinbase), fromAddresses = the distinct input addresses in input order;
 *  - a block's `timestamp` is the running maximum of header times from block 0 to it; `day` its UTC date;
 *  - a day's figures (the daily_stats contract of sql/utxo/007_utxo_index.sql) count the blocks whose
 *    `day` it is.
 */
import { satoshisOf } from "../../src/families/utxo/dialect";
import { type LitecoinNode, NodeRpcError, startLitecoind } from "./litecoind";

/** The three days of the chain, 00:00:00 UTC (Unix seconds); the node's clock is held within them. */
export const DAY_1 = Date.UTC(2020, 2, 1) / 1000;
const DAY_S = 86_400;
export const DAYS = ["2020-03-01", "2020-03-02", "2020-03-03"] as const;
/** Coinbase outputs mature 100 blocks deep: the first 110 blocks leave ten spendable. */
const MATURE_BLOCKS = 110;
/** Seconds between the blocks `mine` makes. */
const BLOCK_SPACING_S = 60;
const SATOSHIS = 100_000_000n;
/** The OP_RETURN output's data: "chain-gateway". */
export const OP_RETURN_DATA = "636861696e2d67617465776179";

/** A whole number of satoshis as the node's decimal coins ("1.23456789"): exact. */
export function coins(satoshis: bigint): string {
  const sign = satoshis < 0n ? "-" : "";
  const abs = satoshis < 0n ? -satoshis : satoshis;
  return `${sign}${abs / SATOSHIS}.${(abs % SATOSHIS).toString().padStart(8, "0")}`;
}

/** "1.5" coins in satoshis. */
const sat = (amount: string) => satoshisOf(amount);

/**
 * A node's JSON text parsed with its amounts (`value`, `amount`, `fee` members) kept as their decimal text:
 * JSON.parse would read them through a float.
 */
export function parseExact<T = any>(text: string): T {
  return JSON.parse(
    text.replace(/("(?:value|amount|fee)"\s*:\s*)(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/g, '$1"$2"'),
  ) as T;
}

/** An output to spend. */
export interface Outpoint {
  txid: string;
  vout: number;
  /** Its value, in satoshis. */
  value: bigint;
  /** Its script's hex: lets the wallet sign an input whose output is spent already (a double spend). */
  script?: string;
}

/** An output of a transaction to make: pay an address, or carry data (OP_RETURN). */
export type NewOutput = { address: string; value: bigint } | { data: string };

export interface ChainTxs {
  fund: string;
  fundLegacy: string;
  fundMore: string;
  /** The coinbase of the block mined to the watched `coinbase` address. */
  coinbase: string;
  change: string;
  consolidation: string;
  opReturn: string;
  multiFrom: string;
  sendmany: string;
  dropped: string;
  pendingIn: string;
  pendingOut: string;
}

export interface ChainBlocks {
  /** Holds `fund`; `fundLegacy` and `fundMore` are in the next block. */
  fund: number;
  /** Mined to the watched `coinbase` address. */
  coinbase: number;
  /** 00:00:20 of day 2; holds `change`. */
  midnight: number;
  /** Header time 23:59:50 of day 1, below its parent's; holds `consolidation`. */
  backInTime: number;
  /** Holds `dropped` alone; the block above it is empty. `reorg()` replaces both. */
  reorgBase: number;
  /** The head after the build. */
  tip: number;
}

export interface ReorgResult {
  /** The height the new branch starts at (`blocks.reorgBase`). */
  fork: number;
  /** The hashes of the blocks that left the chain, lowest first. */
  removed: string[];
  /** The new branch, lowest first (one block longer than what it replaced). */
  added: string[];
  /** The payment the new branch drops (it pays legacy), and the one it adds (it pays bech32). */
  droppedTxid: string;
  addedTxid: string;
  /** `dropped`'s second input: spent on the old branch, unspent on the new. */
  unspent: Outpoint;
}

export interface UtxoChain {
  node: LitecoinNode;
  /** Addresses by kind: the three watched kinds, a watched address a coinbase pays, the miner's, another. */
  addresses: {
    legacy: string;
    p2sh: string;
    bech32: string;
    coinbase: string;
    miner: string;
    external: string;
  };
  txs: ChainTxs;
  blocks: ChainBlocks;
  /** The UTC dates of the chain's three days. */
  days: typeof DAYS;
  /** What the node's answers imply now (a fresh snapshot each call). `fromBlock`: an index's first block. */
  truth(options?: { fromBlock?: number }): Promise<Truth>;
  /** Makes, signs and sends a transaction (mempool); its txid. `fee`: inputs minus outputs. */
  spend(inputs: Outpoint[], outputs: NewOutput[]): Promise<string>;
  /** Makes and signs a transaction without sending it: its txid and hex. */
  sign(inputs: Outpoint[], outputs: NewOutput[]): Promise<{ txid: string; hex: string }>;
  /** The output of `txid` paying `address` (its first one). */
  outputOf(txid: string, address: string): Promise<Outpoint>;
  /** A mature coinbase output of the miner nothing has spent yet (each call another). */
  minerCoin(): Promise<Outpoint>;
  /** Mines `n` blocks to the miner with the mempool's transactions, the clock a minute on each; hashes. */
  mine(n: number): Promise<string[]>;
  /** Mines a block holding exactly `txs` (raw hex or mempool txids), the clock a minute on; its hash. */
  mineWith(txs: string[]): Promise<string>;
  /** The node's clock (setmocktime), Unix seconds. */
  clock(): number;
  /** Replaces the last two blocks of the build by a longer branch: see the file's comment. Once. */
  reorg(): Promise<ReorgResult>;
}

/** Starts a regtest litecoind (stopped on teardown) and builds the chain on it. */
export async function startUtxoChain(): Promise<UtxoChain> {
  return buildUtxoChain(await startLitecoind());
}

/** Builds the chain on a fresh regtest node (its wallet loaded, nothing mined). */
export async function buildUtxoChain(node: LitecoinNode): Promise<UtxoChain> {
  let now = DAY_1 + 600;
  const setClock = async (time: number) => {
    now = time;
    await node.rpc("setmocktime", [now]);
  };
  const exact = async <T = any>(method: string, params: unknown[]): Promise<T> => {
    const { text } = await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
    const answer = parseExact<{ result: T; error: { code: number; message: string } | null }>(text);
    if (answer.error) throw new NodeRpcError(answer.error.code, answer.error.message);
    return answer.result;
  };
  const newAddress = (type: string) => node.rpc<string>("getnewaddress", ["", type]);

  await setClock(now);
  const addresses = {
    legacy: await newAddress("legacy"),
    p2sh: await newAddress("p2sh-segwit"),
    bech32: await newAddress("bech32"),
    coinbase: await newAddress("legacy"),
    miner: node.address,
    external: await newAddress("bech32"),
  };

  /** One block at the clock's time (then a minute on): `txs` exactly, or (undefined) the mempool's. */
  async function mineOne(txs: string[] | undefined, address = addresses.miner): Promise<string> {
    await node.rpc("setmocktime", [now]);
    const hash =
      txs === undefined
        ? (await node.rpc<string[]>("generatetoaddress", [1, address]))[0]!
        : (await node.rpc<{ hash: string }>("generateblock", [address, txs])).hash;
    now += BLOCK_SPACING_S;
    return hash;
  }
  const height = async () => node.rpc<number>("getblockcount");

  async function sign(inputs: Outpoint[], outputs: NewOutput[]) {
    const raw = await node.rpc<string>("createrawtransaction", [
      inputs.map(({ txid, vout }) => ({ txid, vout })),
      outputs.map((o) => ("data" in o ? { data: o.data } : { [o.address]: coins(o.value) })),
    ]);
    const prevtxs = inputs.flatMap(({ txid, vout, value, script }) =>
      script === undefined ? [] : [{ txid, vout, scriptPubKey: script, amount: coins(value) }],
    );
    const signed = await node.rpc<{ hex: string; complete: boolean }>("signrawtransactionwithwallet", [
      raw,
      prevtxs,
    ]);
    if (!signed.complete) throw new Error("the wallet could not sign every input");
    const { txid } = await node.rpc<{ txid: string }>("decoderawtransaction", [signed.hex]);
    return { txid, hex: signed.hex };
  }
  async function spend(inputs: Outpoint[], outputs: NewOutput[]) {
    const { hex } = await sign(inputs, outputs);
    return node.rpc<string>("sendrawtransaction", [hex]);
  }
  async function outputOf(txid: string, address: string): Promise<Outpoint> {
    const tx = await exact("getrawtransaction", [txid, true]);
    for (const out of tx.vout as any[]) {
      const paid: string[] = out.scriptPubKey.addresses ?? [out.scriptPubKey.address];
      if (paid.includes(address)) {
        return { txid, vout: out.n, value: sat(out.value), script: out.scriptPubKey.hex };
      }
    }
    throw new Error(`${txid} pays nothing to ${address}`);
  }
  // Coinbases of the first blocks, handed out in order: never one a wallet send could have taken.
  let nextCoin = 1;
  async function minerCoin(): Promise<Outpoint> {
    const tip = await height();
    for (; nextCoin + 100 <= tip; nextCoin++) {
      const block = await node.rpc("getblock", [await node.rpc("getblockhash", [nextCoin]), 1]);
      const coin = await outputOf(block.tx[0], addresses.miner).catch(() => undefined);
      if (!coin) continue;
      const unspent = await node.rpc("gettxout", [coin.txid, coin.vout, true]);
      nextCoin++;
      if (unspent) return coin;
    }
    throw new Error("no mature coinbase of the miner left");
  }
  /** A payment from coinbase coins: `outputs`, change to the miner, fee `fee`. */
  async function payFromCoins(count: number, outputs: NewOutput[], fee: bigint) {
    const inputs: Outpoint[] = [];
    for (let i = 0; i < count; i++) inputs.push(await minerCoin());
    const paid = outputs.reduce((sum, o) => sum + ("value" in o ? o.value : 0n), 0n);
    const change = inputs.reduce((sum, i) => sum + i.value, 0n) - paid - fee;
    return spend(inputs, [...outputs, { address: addresses.miner, value: change }]);
  }

  // Day 1: mature coinbases, then payments to each kind of address.
  for (let i = 0; i < MATURE_BLOCKS; i++) await mineOne(undefined);
  // The node's own sendmany: the wallet holds only coinbases of 50, so 55.5 takes two of them.
  const fund = await node.rpc<string>("sendmany", [
    "",
    { [addresses.legacy]: "30", [addresses.p2sh]: "15", [addresses.bech32]: "10.5" },
  ]);
  await mineOne(undefined);
  const fundBlock = await height();
  const fundLegacy = await payFromCoins(
    1,
    [
      { address: addresses.legacy, value: sat("2.5") },
      { address: addresses.bech32, value: sat("0.8") },
    ],
    31_000n,
  );
  const fundMore = await payFromCoins(1, [{ address: addresses.legacy, value: sat("1.25") }], 27_300n);
  await mineOne(undefined);
  const coinbaseHash = await mineOne([], addresses.coinbase);
  const coinbaseBlock = await height();
  const coinbase = (await node.rpc("getblock", [coinbaseHash, 1])).tx[0] as string;
  await setClock(DAY_1 + 12 * 3600);
  await mineOne(undefined);
  // Ten blocks a minute apart up to 23:50, so the median time past allows a block at 23:59:50 later.
  await setClock(DAY_1 + DAY_S - 600 - 9 * BLOCK_SPACING_S);
  for (let i = 0; i < 10; i++) await mineOne(undefined);

  // Around midnight: a block of day 2, then one whose header time is day 1's, below its parent's.
  const p2shFund = await outputOf(fund, addresses.p2sh);
  const change = await spend(
    [p2shFund],
    [
      { address: addresses.bech32, value: sat("4") },
      { address: addresses.p2sh, value: p2shFund.value - sat("4") - 45_500n },
    ],
  );
  await setClock(DAY_1 + DAY_S + 20);
  await mineOne(undefined);
  const midnight = await height();
  const legacyCoins = [
    await outputOf(fund, addresses.legacy),
    await outputOf(fundLegacy, addresses.legacy),
    await outputOf(fundMore, addresses.legacy),
  ];
  const consolidation = await spend(legacyCoins, [
    { address: addresses.legacy, value: legacyCoins.reduce((s, c) => s + c.value, 0n) - 52_100n },
  ]);
  await setClock(DAY_1 + DAY_S - 10);
  await mineOne(undefined);
  const backInTime = await height();

  // Day 2.
  await setClock(DAY_1 + DAY_S + 3600);
  const bech32Fund = await outputOf(fund, addresses.bech32);
  const opReturn = await spend(
    [bech32Fund],
    [
      { data: OP_RETURN_DATA },
      { address: addresses.legacy, value: sat("1") },
      { address: addresses.external, value: sat("2") },
      { address: addresses.bech32, value: bech32Fund.value - sat("3") - 38_700n },
    ],
  );
  await mineOne(undefined);
  await setClock(DAY_1 + DAY_S + 7200);
  const fromBech32 = await outputOf(change, addresses.bech32);
  const fromP2sh = await outputOf(change, addresses.p2sh);
  const multiFrom = await spend(
    [fromBech32, fromP2sh],
    [
      { address: addresses.external, value: sat("5") },
      { address: addresses.legacy, value: fromBech32.value + fromP2sh.value - sat("5") - 61_900n },
    ],
  );
  await mineOne(undefined);
  await setClock(DAY_1 + DAY_S + 12 * 3600);
  await mineOne(undefined);

  // Day 3.
  await setClock(DAY_1 + 2 * DAY_S + 600);
  const sendmany = await payFromCoins(
    2,
    [
      { address: addresses.legacy, value: sat("0.5") },
      { address: addresses.p2sh, value: sat("0.75") },
      { address: addresses.bech32, value: sat("0.25") },
      { address: addresses.external, value: sat("60") },
    ],
    77_700n,
  );
  await mineOne(undefined);
  await setClock(DAY_1 + 2 * DAY_S + 1200);
  const droppedCoin = await minerCoin();
  const reorgUnspent = await minerCoin();
  const dropped = await spend(
    [droppedCoin, reorgUnspent],
    [
      { address: addresses.legacy, value: sat("0.3") },
      { address: addresses.miner, value: droppedCoin.value + reorgUnspent.value - sat("0.3") - 33_300n },
    ],
  );
  await mineOne(undefined);
  const reorgBase = await height();
  await mineOne(undefined);
  const tip = await height();
  // The reorg's replacement is signed now: its input is `dropped`'s.
  const replacement = await sign(
    [droppedCoin],
    [
      { address: addresses.bech32, value: sat("0.4") },
      { address: addresses.miner, value: droppedCoin.value - sat("0.4") - 29_900n },
    ],
  );

  // The mempool: left unmined.
  const pendingIn = await payFromCoins(1, [{ address: addresses.p2sh, value: sat("0.6") }], 24_400n);
  const consolidated = await outputOf(consolidation, addresses.legacy);
  const pendingOut = await spend(
    [consolidated],
    [
      { address: addresses.external, value: sat("0.7") },
      { address: addresses.legacy, value: consolidated.value - sat("0.7") - 41_100n },
    ],
  );

  let reorged = false;
  return {
    node,
    addresses,
    txs: {
      fund,
      fundLegacy,
      fundMore,
      coinbase,
      change,
      consolidation,
      opReturn,
      multiFrom,
      sendmany,
      dropped,
      pendingIn,
      pendingOut,
    },
    blocks: { fund: fundBlock, coinbase: coinbaseBlock, midnight, backInTime, reorgBase, tip },
    days: DAYS,
    truth: (options) => readTruth(exact, options?.fromBlock ?? 0),
    spend,
    sign,
    outputOf,
    minerCoin,
    mine: async (n) => {
      const hashes: string[] = [];
      for (let i = 0; i < n; i++) hashes.push(await mineOne(undefined));
      return hashes;
    },
    mineWith: (txs) => mineOne(txs),
    clock: () => now,
    async reorg() {
      if (reorged) throw new Error("the chain's reorg is made once");
      reorged = true;
      // Everything from reorgBase to the node's tip now (a test may have mined above the build's tip).
      const top = await height();
      const removed: string[] = [];
      for (let h = reorgBase; h <= top; h++) removed.push(await node.rpc<string>("getblockhash", [h]));
      await node.rpc("invalidateblock", [removed[0]]);
      const added = [await mineOne([replacement.hex])];
      // One block longer than the branch it replaces, with none of the mempool's transactions.
      for (let h = reorgBase + 1; h <= top + 1; h++) added.push(await mineOne([]));
      return {
        fork: reorgBase,
        removed,
        added,
        droppedTxid: dropped,
        addedTxid: replacement.txid,
        unspent: reorgUnspent,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The truth: what the node's answers imply, exactly.

export interface TruthInput {
  /** The output it spends. */
  txid: string;
  vout: number;
  /** That output's address (null: a script paying none) and value, from getrawtransaction of its txid. */
  address: string | null;
  value: bigint;
}

export interface TruthOutput {
  txid: string;
  vout: number;
  /** The script's hex and the node's type for it (`nulldata` for OP_RETURN). */
  script: string;
  type: string;
  /** The address it pays (the node's `address`, or its `addresses` when it names one); null for none. */
  address: string | null;
  value: bigint;
  /** It pays an address that is not among its transaction's input addresses: a transfer. */
  pays: boolean;
  /** The confirmed transaction spending it (within the snapshot's blocks), if any. */
  spentBy: { txid: string; vin: number; height: number } | null;
  /** A mempool transaction spending it, if any. */
  spentInMempool: { txid: string; vin: number } | null;
}

export interface TruthTransaction {
  txid: string;
  /** Null for a mempool transaction. */
  height: number | null;
  blockHash: string | null;
  /** Its position in its block (0: the coinbase); null in the mempool. */
  position: number | null;
  coinbase: boolean;
  /** Empty for a coinbase. */
  inputs: TruthInput[];
  outputs: TruthOutput[];
  /** Inputs minus outputs; 0 for a coinbase. */
  fee: bigint;
  size: number;
  vsize: number;
  weight: number;
  /** The distinct input addresses, in input order ([] for a coinbase). */
  fromAddresses: string[];
}

export interface TruthBlock {
  height: number;
  hash: string;
  parent: string;
  /** The header's time and median time past. */
  time: number;
  medianTime: number;
  /** The running maximum of header times from block 0 up to this block. */
  timestamp: number;
  /** The UTC date of `timestamp`. */
  day: string;
  size: number;
  weight: number;
  transactions: TruthTransaction[];
}

/** A transfer row: one paying output (docs/interface.md, the Bitcoin family's transfers). */
export interface TruthTransfer {
  blockNumber: number;
  timestamp: number;
  transactionHash: string;
  transactionIndex: number;
  /** The output's index. */
  logIndex: number;
  /** The first input's address, "coinbase" for a coinbase (an input paying no address is skipped). */
  from: string;
  fromAddresses: string[];
  to: string;
  value: bigint;
  fee: bigint;
}

/** What one transaction does to one address: an address history's row (address_transactions). */
export interface TruthAddressTransaction {
  txid: string;
  height: number | null;
  position: number | null;
  /** What its outputs pay the address, and what its inputs spend of it. */
  received: bigint;
  sent: bigint;
}

/** Esplora's address stats, of the confirmed chain or of the mempool. */
export interface TruthAddressStats {
  fundedCount: number;
  fundedSum: bigint;
  spentCount: number;
  spentSum: bigint;
  txCount: number;
}

export interface TruthUtxo {
  txid: string;
  vout: number;
  value: bigint;
  /** Null: created by a mempool transaction. */
  height: number | null;
}

/** A day's figures (the daily_stats contract, sql/utxo/007_utxo_index.sql), amounts in satoshis. */
export interface TruthDay {
  date: string;
  fromBlock: number;
  toBlock: number;
  blockCount: number;
  /** Every transaction of the day's blocks, coinbases included (getblockstats' `txs`). */
  transactionCount: number;
  /** Paying outputs. */
  transferCount: number;
  /** Distinct addresses paid by an output or spent from by an input. */
  activeAddresses: number;
  /** The outputs of the transactions that are not coinbases (getblockstats' `total_out`). */
  totalOutput: bigint;
  totalFees: bigint;
  /** What the coinbases pay (subsidy and fees). */
  minersReward: bigint;
  /** Total fees over the total vsize of the transactions that are not coinbases, floored (0 with none). */
  averageFeeRate: bigint;
}

export interface Truth {
  /** The node's best chain from `fromBlock` to its head. */
  blocks: TruthBlock[];
  /** By txid: the confirmed transactions of `blocks`, then the mempool's. */
  transactions: Map<string, TruthTransaction>;
  mempool: TruthTransaction[];
  tip: number;
  /** Every paying output of the blocks from..to (inclusive), in (block, position, vout) order. */
  allTransfers(range?: { fromBlock?: number; toBlock?: number }): TruthTransfer[];
  /**
   * The transfers of an address (or any of several): to it, or (direction `from`) from a transaction one of
   * whose inputs spends from it; in (block, position, vout) order, each once.
   */
  transfers(
    addresses: string | string[],
    options?: { direction?: "from" | "to"; fromBlock?: number; toBlock?: number },
  ): TruthTransfer[];
  /** An address's transactions (confirmed in block order, then the mempool's). */
  addressTransactions(address: string): TruthAddressTransaction[];
  /** What the confirmed outputs to an address hold unspent, in satoshis. */
  balance(address: string): bigint;
  addressStats(address: string): { chain: TruthAddressStats; mempool: TruthAddressStats };
  /** Unspent outputs to an address; `mempool`: as the mempool leaves them (spent ones out, new ones in). */
  utxos(address: string, options?: { mempool?: boolean }): TruthUtxo[];
  /** A UTC day's figures; null when no block's `day` is it. */
  day(date: string): TruthDay | null;
  /** The UTC date of a Unix time. */
  dayOf(unixSeconds: number): string;
}

type Exact = <T = any>(method: string, params: unknown[]) => Promise<T>;

const utcDay = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

/** The address a node's output names (`address`, or `addresses` when it names exactly one). */
function addressOf(scriptPubKey: any): string | null {
  if (typeof scriptPubKey.address === "string") return scriptPubKey.address;
  const list = scriptPubKey.addresses as string[] | undefined;
  return list && list.length === 1 ? list[0]! : null;
}

async function readTransaction(
  tx: any,
  place: { height: number; hash: string; position: number } | null,
  prevout: (txid: string, vout: number) => Promise<{ address: string | null; value: bigint }>,
): Promise<TruthTransaction> {
  const coinbase = tx.vin.length > 0 && tx.vin[0].coinbase !== undefined;
  const inputs: TruthInput[] = [];
  if (!coinbase) {
    for (const vin of tx.vin)
      inputs.push({ txid: vin.txid, vout: vin.vout, ...(await prevout(vin.txid, vin.vout)) });
  }
  const fromAddresses = [...new Set(inputs.flatMap((i) => (i.address === null ? [] : [i.address])))];
  const senders = new Set(fromAddresses);
  const outputs: TruthOutput[] = (tx.vout as any[]).map((out) => {
    const address = addressOf(out.scriptPubKey);
    return {
      txid: tx.txid,
      vout: out.n,
      script: out.scriptPubKey.hex,
      type: out.scriptPubKey.type,
      address,
      value: sat(out.value),
      pays: address !== null && !senders.has(address),
      spentBy: null,
      spentInMempool: null,
    };
  });
  const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
  return {
    txid: tx.txid,
    height: place?.height ?? null,
    blockHash: place?.hash ?? null,
    position: place?.position ?? null,
    coinbase,
    inputs,
    outputs,
    fee: coinbase ? 0n : sum(inputs.map((i) => i.value)) - sum(outputs.map((o) => o.value)),
    size: tx.size,
    vsize: tx.vsize,
    weight: tx.weight,
    fromAddresses,
  };
}

/** Reads the node's chain (from `fromBlock`) and mempool, and what they imply. */
export async function readTruth(exact: Exact, fromBlock: number): Promise<Truth> {
  const prevouts = new Map<string, any>();
  async function prevout(txid: string, vout: number) {
    let tx = prevouts.get(txid);
    if (!tx) {
      tx = await exact("getrawtransaction", [txid, true]);
      prevouts.set(txid, tx);
    }
    const out = tx.vout[vout];
    return { address: addressOf(out.scriptPubKey), value: sat(out.value) };
  }

  const tip = await exact<number>("getblockcount", []);
  const blocks: TruthBlock[] = [];
  let runningMax = 0;
  for (let height = 0; height <= tip; height++) {
    const hash = await exact<string>("getblockhash", [height]);
    if (height < fromBlock) {
      runningMax = Math.max(runningMax, (await exact("getblockheader", [hash])).time);
      continue;
    }
    const block = await exact("getblock", [hash, 2]);
    runningMax = Math.max(runningMax, block.time);
    const transactions: TruthTransaction[] = [];
    for (const [position, tx] of (block.tx as any[]).entries()) {
      transactions.push(await readTransaction(tx, { height, hash, position }, prevout));
    }
    blocks.push({
      height,
      hash,
      parent: block.previousblockhash ?? "0".repeat(64),
      time: block.time,
      medianTime: block.mediantime,
      timestamp: runningMax,
      day: utcDay(runningMax),
      size: block.size,
      weight: block.weight,
      transactions,
    });
  }
  const mempool: TruthTransaction[] = [];
  for (const txid of await exact<string[]>("getrawmempool", [])) {
    mempool.push(await readTransaction(await exact("getrawtransaction", [txid, true]), null, prevout));
  }
  return truthOf(blocks, mempool, tip);
}

function emptyStats(): TruthAddressStats {
  return { fundedCount: 0, fundedSum: 0n, spentCount: 0, spentSum: 0n, txCount: 0 };
}

/** What the blocks and the mempool read imply. */
function truthOf(blocks: TruthBlock[], mempool: TruthTransaction[], tip: number): Truth {
  const transactions = new Map<string, TruthTransaction>();
  for (const block of blocks) for (const tx of block.transactions) transactions.set(tx.txid, tx);
  for (const tx of mempool) transactions.set(tx.txid, tx);
  // Spends: the chain's first, then the mempool's.
  for (const tx of [...blocks.flatMap((b) => b.transactions), ...mempool]) {
    tx.inputs.forEach((input, vin) => {
      const out = transactions.get(input.txid)?.outputs[input.vout];
      if (!out) return;
      if (tx.height === null) out.spentInMempool = { txid: tx.txid, vin };
      else out.spentBy = { txid: tx.txid, vin, height: tx.height };
    });
  }
  const timestampOf = new Map(blocks.map((b) => [b.height, b.timestamp]));
  const confirmed = () => blocks.flatMap((b) => b.transactions);

  function transfersOf(tx: TruthTransaction): TruthTransfer[] {
    return tx.outputs
      .filter((o) => o.pays)
      .map((o) => ({
        blockNumber: tx.height!,
        timestamp: timestampOf.get(tx.height!)!,
        transactionHash: tx.txid,
        transactionIndex: tx.position!,
        logIndex: o.vout,
        from: tx.coinbase ? "coinbase" : (tx.fromAddresses[0] ?? "nonstandard"),
        fromAddresses: tx.fromAddresses,
        to: o.address!,
        value: o.value,
        fee: tx.fee,
      }));
  }
  function allTransfers(range: { fromBlock?: number; toBlock?: number } = {}) {
    const from = range.fromBlock ?? 0;
    const to = range.toBlock ?? Number.MAX_SAFE_INTEGER;
    return confirmed()
      .filter((tx) => tx.height! >= from && tx.height! <= to)
      .flatMap(transfersOf);
  }
  function addressTransactions(address: string): TruthAddressTransaction[] {
    const rows: TruthAddressTransaction[] = [];
    for (const tx of [...confirmed(), ...mempool]) {
      const paid = tx.outputs.filter((o) => o.address === address);
      const spends = tx.inputs.filter((i) => i.address === address);
      if (paid.length === 0 && spends.length === 0) continue;
      const received = paid.reduce((s, o) => s + o.value, 0n);
      const sent = spends.reduce((s, i) => s + i.value, 0n);
      rows.push({ txid: tx.txid, height: tx.height, position: tx.position, received, sent });
    }
    return rows;
  }
  function stats(txs: TruthTransaction[], address: string): TruthAddressStats {
    const s = emptyStats();
    for (const tx of txs) {
      const funded = tx.outputs.filter((o) => o.address === address);
      const spent = tx.inputs.filter((i) => i.address === address);
      s.fundedCount += funded.length;
      s.fundedSum += funded.reduce((sum, o) => sum + o.value, 0n);
      s.spentCount += spent.length;
      s.spentSum += spent.reduce((sum, i) => sum + i.value, 0n);
      if (funded.length > 0 || spent.length > 0) s.txCount++;
    }
    return s;
  }
  function utxos(address: string, options: { mempool?: boolean } = {}): TruthUtxo[] {
    const pool = options.mempool ? [...confirmed(), ...mempool] : confirmed();
    return pool.flatMap((tx) =>
      tx.outputs
        .filter((o) => o.address === address && o.spentBy === null && !(options.mempool && o.spentInMempool))
        .map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: tx.height })),
    );
  }
  function day(date: string): TruthDay | null {
    const of = blocks.filter((b) => b.day === date);
    if (of.length === 0) return null;
    const txs = of.flatMap((b) => b.transactions);
    const spending = txs.filter((tx) => !tx.coinbase);
    const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
    const totalFees = sum(spending.map((tx) => tx.fee));
    const vsize = BigInt(spending.reduce((s, tx) => s + tx.vsize, 0));
    const active = new Set<string>();
    for (const tx of txs) {
      for (const o of tx.outputs) if (o.address !== null) active.add(o.address);
      for (const i of tx.inputs) if (i.address !== null) active.add(i.address);
    }
    return {
      date,
      fromBlock: of[0]!.height,
      toBlock: of[of.length - 1]!.height,
      blockCount: of.length,
      transactionCount: txs.length,
      transferCount: txs.reduce((s, tx) => s + tx.outputs.filter((o) => o.pays).length, 0),
      activeAddresses: active.size,
      totalOutput: sum(spending.flatMap((tx) => tx.outputs.map((o) => o.value))),
      totalFees,
      minersReward: sum(txs.filter((tx) => tx.coinbase).flatMap((tx) => tx.outputs.map((o) => o.value))),
      averageFeeRate: vsize === 0n ? 0n : totalFees / vsize,
    };
  }
  return {
    blocks,
    transactions,
    mempool,
    tip,
    allTransfers,
    transfers(addresses, options = {}) {
      const wanted = new Set(Array.isArray(addresses) ? addresses : [addresses]);
      return allTransfers(options).filter((t) => {
        const to = wanted.has(t.to);
        const from = t.fromAddresses.some((a) => wanted.has(a));
        return options.direction === "to" ? to : options.direction === "from" ? from : to || from;
      });
    },
    addressTransactions,
    balance: (address) => utxos(address).reduce((s, u) => s + u.value, 0n),
    addressStats: (address) => ({ chain: stats(confirmed(), address), mempool: stats(mempool, address) }),
    utxos,
    day,
    dayOf: utcDay,
  };
}

/** Unix seconds as the service writes a time: RFC 3339 in UTC, whole seconds. */
export const iso = (unixSeconds: number) =>
  new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A block of the truth as a watch filter's result names it (FilterResult's `block`). */
export const filterBlockOf = (b: TruthBlock) => ({
  hash: b.hash,
  number: b.height,
  created_at: iso(b.timestamp),
});

/**
 * A watch filter's result for a transaction by the net rule (docs/interface.md §16.6): what it pays the
 * filter's address minus what it spends from it; `block` as given (null while pending). Undefined where
 * the transaction neither pays nor spends from that address.
 */
export function filterResultOf<B>(tx: TruthTransaction, filter: { id: string; address: string }, block: B) {
  const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
  const paid = tx.outputs.filter((o) => o.address === filter.address);
  const spent = tx.inputs.filter((i) => i.address === filter.address);
  if (paid.length === 0 && spent.length === 0) return undefined;
  const net = sum(paid.map((o) => o.value)) - sum(spent.map((i) => i.value));
  return {
    from_address: tx.fromAddresses,
    to_address: [...new Set(tx.outputs.flatMap((o) => (o.address === null ? [] : [o.address])))],
    contract_address: "",
    type: "trx",
    value: { value: Number(net < 0n ? -net : net), decimals: 8 },
    currency: "LTC",
    transaction: { hash: tx.txid, fee: { value: Number(tx.fee), decimals: 8 }, fee_symbol: "LTC" },
    filter_id: filter.id,
    filter_target: {
      address: filter.address,
      direction: net > 0n ? "deposit" : net < 0n ? "withdrawal" : "unknown",
    },
    block,
    trx_success: true,
  };
}
