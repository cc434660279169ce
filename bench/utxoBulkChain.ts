/**
 * A big regtest chain for the index's bench (bench/utxoIndexPhase.ts), made quickly: the transactions are
 * built and signed here (test/support/rawTransactions.ts: P2WPKH inputs, BIP 143 signatures) and mined with
 * `generateblock`, a block's transactions in one call, so neither the node's wallet (slow past a few
 * thousand outputs of its own) nor its mempool (its chain limit of 25) is in the way.
 *
 * Shape: LANES lanes each own a key and one output; each block holds one transaction per lane, spending
 * the lane's output of the block before (so its previous output is in the index, one write group back)
 * into its change (vout 0), a payment to the hot address (vout 1) and RECIPIENTS payments to addresses of a
 * pool (reused across blocks); every HOT_SPEND_EVERY-th transaction also spends an older output of the hot
 * address (the hot address then both receives and sends). Values are small (consensus has no dust rule;
 * generateblock checks consensus only); each transaction leaves FEE satoshis as its fee.
 *
 * After it, a mempool as big as wanted (bench/utxoScalePhase.ts): `fanOut` mines confirmed outputs, one a
 * mempool transaction, from the funder's spare coinbases; `mempoolTransactions` signs transactions spending
 * them (standard ones: the mempool checks policy) and `sendToMempool` sends them in batches.
 */
import type { LitecoinNode } from "../test/support/litecoind";
import { type Coin, type Key, keyOf, sha256, signedTransaction } from "../test/support/rawTransactions";

export const LANES = 100;
const RECIPIENTS = 9;
/** Distinct recipient addresses, reused: an index of the same size has many addresses, not all new. */
const RECIPIENT_POOL = 200_000;
const HOT_SPEND_EVERY = 5;
const PAYMENT = 1_000n;
const FEE = 500n;
/** A coinbase is spent in a block this many above its own at the earliest; the chain starts this long. */
const COINBASE_MATURITY = 100;
const MATURE_BLOCKS = COINBASE_MATURITY + 1;
const LANE_VALUE = 40_000_000n;
/**
 * The node's clock while it builds (setmocktime), a minute on a block: Litecoin's MWEB deployment starts at a
 * median time past 2020-09-30, and once active a block needs its integrating transaction, which
 * `generateblock` does not make. Held in March 2020, it never activates.
 */
const CLOCK_START_S = Date.UTC(2020, 2, 1) / 1000;
const BLOCK_INTERVAL_S = 60;

/** The keys of the coinbases that fund the chain (blocks 1 to MATURE_BLOCKS), and of the hot address. */
const FUNDER_SEED = "bench-funder";
export const HOT_SEED = "bench-hot";

/** A coinbase's reward below regtest's first halving (150 blocks): 50 coins. */
const COINBASE_VALUE = 5_000_000_000n;

/** The reward output of block `height`'s coinbase (paid to `key`). */
async function coinbaseCoin(node: LitecoinNode, height: number, key: Key): Promise<Coin> {
  const block = await node.rpc("getblock", [await node.rpc("getblockhash", [height]), 1]);
  return { txid: Buffer.from(block.tx[0], "hex").reverse(), vout: 0, value: COINBASE_VALUE, key };
}

export interface BulkChain {
  /** The first and last block of the bulk (after the coinbases that fund it). */
  first: number;
  head: number;
  transactions: number;
  outputs: number;
  /** The hot address (as the node writes it) and how many transfers it received. */
  hot: string;
  hotReceived: number;
  seconds: number;
}

/**
 * Builds `blocks` blocks of LANES transactions each on a fresh regtest node; with `lastBlockTransactions`
 * (a multiple of LANES), the last block holds that many instead: each lane spends its change again and
 * again within the block (a block may spend outputs of its own earlier transactions).
 */
export async function buildBulkChain(
  node: LitecoinNode,
  blocks: number,
  log: (line: string) => void,
  options: { lastBlockTransactions?: number } = {},
) {
  const started = performance.now();
  const funder = keyOf(FUNDER_SEED);
  const hot = keyOf(HOT_SEED);
  const descriptor = `raw(${funder.script.toString("hex")})`;
  let clock = CLOCK_START_S;
  await node.rpc("setmocktime", [clock]);
  await node.rpc("generatetodescriptor", [MATURE_BLOCKS, descriptor]);
  const funding = await coinbaseCoin(node, 1, funder);
  const lanes = Array.from({ length: LANES }, (_, i) => keyOf(`bench-lane-${i}`));
  const fan = signedTransaction(
    [funding],
    [
      ...lanes.map((k) => ({ script: k.script, value: LANE_VALUE })),
      { script: funder.script, value: funding.value - LANE_VALUE * BigInt(LANES) - FEE },
    ],
  );
  await node.rpc("generateblock", [descriptor, [fan.hex]]);
  let coins: Coin[] = lanes.map((key, i) => ({ txid: fan.txid, vout: i, value: LANE_VALUE, key }));
  const hotCoins: Coin[] = [];
  const recipient = (n: number) =>
    Buffer.concat([
      Buffer.from([0x00, 0x14]),
      sha256(Buffer.from(`recipient-${n % RECIPIENT_POOL}`)).subarray(0, 20),
    ]);
  const first = (await node.rpc<number>("getblockcount")) + 1;
  let transactions = 0;
  let outputs = 0;
  let counter = 0;
  let pending: Promise<unknown> = Promise.resolve();
  for (let b = 0; b < blocks; b++) {
    const hexes: string[] = [];
    const next: Coin[] = [];
    const newHot: Coin[] = [];
    const perLane =
      b === blocks - 1 && options.lastBlockTransactions ? options.lastBlockTransactions / LANES : 1;
    for (let coin of coins) {
      for (let k = 0; k < perLane; k++) {
        const inputs = [coin];
        if (transactions % HOT_SPEND_EVERY === 0 && hotCoins.length > 0) inputs.push(hotCoins.shift()!);
        const spent = inputs.reduce((s, c) => s + c.value, 0n);
        const outs = [
          { script: coin.key.script, value: spent - PAYMENT * BigInt(RECIPIENTS + 1) - FEE },
          { script: hot.script, value: PAYMENT },
          ...Array.from({ length: RECIPIENTS }, () => ({ script: recipient(counter++), value: PAYMENT })),
        ];
        const tx = signedTransaction(inputs, outs);
        hexes.push(tx.hex);
        coin = { txid: tx.txid, vout: 0, value: outs[0]!.value, key: coin.key };
        newHot.push({ txid: tx.txid, vout: 1, value: PAYMENT, key: hot });
        transactions++;
        outputs += outs.length;
      }
      next.push(coin);
    }
    // The node validates one block while the next is signed here.
    await pending;
    clock += BLOCK_INTERVAL_S;
    await node.rpc("setmocktime", [clock]);
    pending = node.rpc("generateblock", [descriptor, hexes]);
    coins = next;
    hotCoins.push(...newHot);
    if ((b + 1) % 100 === 0) log(`built ${b + 1}/${blocks} blocks (${transactions} transactions)`);
  }
  await pending;
  const head = await node.rpc<number>("getblockcount");
  const decoded = await node.rpc("decodescript", [hot.script.toString("hex")]);
  const hotAddress: string = decoded.address ?? decoded.addresses?.[0] ?? decoded.segwit?.address;
  return {
    first,
    head,
    transactions,
    outputs,
    hot: hotAddress,
    hotReceived: transactions,
    seconds: (performance.now() - started) / 1000,
  } satisfies BulkChain;
}

/** A fan-out output's value; outputs a fan-out transaction makes (one spare coinbase funds one). */
const FAN_VALUE = 100_000n;
const FAN_OUTPUTS_PER_TX = 2_000;
/** Fan-out transactions a block (~62 KB each: 8 fill half a block's weight). */
const FAN_TXS_PER_BLOCK = 8;
/** Keys the fan-out pays in turn: the mempool's spenders. */
const FAN_KEYS = 64;
/** The funder's coinbases buildBulkChain leaves unspent: blocks 2 to MATURE_BLOCKS (block 1's funds the lanes). */
const SPARE_COINBASES = { first: 2, last: MATURE_BLOCKS };

/** Moves the node's clock a block's interval past its tip's time (kept before MWEB's start: see CLOCK_START_S). */
async function nextBlockTime(node: LitecoinNode) {
  const tip = await node.rpc("getblockheader", [await node.rpc("getbestblockhash")]);
  await node.rpc("setmocktime", [tip.time + BLOCK_INTERVAL_S]);
}

/**
 * `count` confirmed outputs of FAN_VALUE satoshis, each a coin of its own (to FAN_KEYS keys in turn), made by
 * transactions spending the funder's spare coinbases and mined after a chain buildBulkChain made (in as
 * few blocks as their weight allows): what a mempool of `count` independent transactions spends (the node refuses a 26th unconfirmed
 * descendant of an output, so a big mempool cannot grow from a few coins).
 */
export async function fanOut(node: LitecoinNode, count: number): Promise<Coin[]> {
  const funder = keyOf(FUNDER_SEED);
  const keys = Array.from({ length: FAN_KEYS }, (_, i) => keyOf(`bench-fan-${i}`));
  const descriptor = `raw(${funder.script.toString("hex")})`;
  // The last coinbase spent must be mature in the first fan-out block: empty blocks make it so.
  const lastCoinbase = SPARE_COINBASES.first + Math.ceil(count / FAN_OUTPUTS_PER_TX) - 1;
  const missing = lastCoinbase + COINBASE_MATURITY - 1 - (await node.rpc<number>("getblockcount"));
  if (missing > 0) await node.rpc("generatetodescriptor", [missing, descriptor]);
  const hexes: string[] = [];
  const coins: Coin[] = [];
  for (let height = SPARE_COINBASES.first; coins.length < count; height++) {
    if (height > SPARE_COINBASES.last) {
      throw new Error(`${count} fan-out outputs need more than ${SPARE_COINBASES.last - 1} coinbases`);
    }
    const n = Math.min(FAN_OUTPUTS_PER_TX, count - coins.length);
    const paid = Array.from({ length: n }, (_, i) => keys[(coins.length + i) % FAN_KEYS]!);
    const tx = signedTransaction(
      [await coinbaseCoin(node, height, funder)],
      [
        ...paid.map((key) => ({ script: key.script, value: FAN_VALUE })),
        { script: funder.script, value: COINBASE_VALUE - FAN_VALUE * BigInt(n) - FEE },
      ],
    );
    hexes.push(tx.hex);
    coins.push(...paid.map((key, vout) => ({ txid: tx.txid, vout, value: FAN_VALUE, key })));
  }
  for (let at = 0; at < hexes.length; at += FAN_TXS_PER_BLOCK) {
    await nextBlockTime(node);
    await node.rpc("generateblock", [descriptor, hexes.slice(at, at + FAN_TXS_PER_BLOCK)]);
  }
  return coins;
}

/** A mempool transaction's payments: to a recipient of its own, and to the hot address. */
const MEMPOOL_PAYMENT = 10_000n;
/** Fees from MEMPOOL_FEE to MEMPOOL_FEE + MEMPOOL_FEE_STEPS * MEMPOOL_FEE_STEP (6 to 70 sat/vB or so). */
const MEMPOOL_FEE = 1_000n;
const MEMPOOL_FEE_STEP = 250n;
const MEMPOOL_FEE_STEPS = 40;

export interface PendingTransaction {
  hex: string;
  /** The txid as written. */
  id: string;
  paysHot: boolean;
  /** Its change (vout 0) is spent by a child in the mempool. */
  spentInMempool: boolean;
  /** It spends an output of another mempool transaction (it is sent after its parent). */
  child: boolean;
}

/**
 * `count` transactions for the mempool, spending `coins` one each (fan-out coins): each pays a recipient of
 * its own (vout 1), its change (vout 0) and, every `hotEvery`-th, the hot address (vout 2); every
 * `childEvery`-th is followed by a child spending its change (a chain of two unconfirmed). Fees vary, so the
 * mempool's fee histogram has many rates; all are above the node's relay minimum. `tag` keeps recipients of
 * different sets apart.
 */
export function mempoolTransactions(
  coins: readonly Coin[],
  count: number,
  options: { hotEvery: number; childEvery?: number; tag: string },
): PendingTransaction[] {
  const hot = keyOf(HOT_SEED);
  const out: PendingTransaction[] = [];
  const recipient = () =>
    Buffer.concat([
      Buffer.from([0x00, 0x14]),
      sha256(Buffer.from(`mempool-${options.tag}-${out.length}`)).subarray(0, 20),
    ]);
  const fee = () => MEMPOOL_FEE + MEMPOOL_FEE_STEP * BigInt(out.length % MEMPOOL_FEE_STEPS);
  for (const coin of coins) {
    if (out.length >= count) break;
    const paysHot = out.length % options.hotEvery === 0;
    const withChild =
      options.childEvery !== undefined && out.length % options.childEvery === 1 && out.length + 1 < count;
    const payments = [
      { script: recipient(), value: MEMPOOL_PAYMENT },
      ...(paysHot ? [{ script: hot.script, value: MEMPOOL_PAYMENT }] : []),
    ];
    const change = coin.value - payments.reduce((s, p) => s + p.value, 0n) - fee();
    const parent = signedTransaction([coin], [{ script: coin.key.script, value: change }, ...payments]);
    out.push({ hex: parent.hex, id: parent.id, paysHot, spentInMempool: withChild, child: false });
    if (!withChild) continue;
    const spent: Coin = { txid: parent.txid, vout: 0, value: change, key: coin.key };
    const payment = { script: recipient(), value: MEMPOOL_PAYMENT };
    const child = signedTransaction(
      [spent],
      [{ script: coin.key.script, value: change - MEMPOOL_PAYMENT - fee() }, payment],
    );
    out.push({ hex: child.hex, id: child.id, paysHot: false, spentInMempool: false, child: true });
  }
  if (out.length < count)
    throw new Error(`${coins.length} coins make ${out.length} of ${count} transactions`);
  return out;
}

/** Transactions go to the node in JSON-RPC batches of SEND_BATCH calls, SEND_IN_FLIGHT batches at once. */
const SEND_BATCH = 250;
const SEND_IN_FLIGHT = 4;

/**
 * Sends transactions to the node's mempool (`sendrawtransaction`): the parents first, then the children (a
 * child sent before its parent is refused). Throws on the first one the node refuses.
 */
export async function sendToMempool(node: LitecoinNode, txs: readonly PendingTransaction[]) {
  for (const wave of [txs.filter((t) => !t.child), txs.filter((t) => t.child)]) {
    let next = 0;
    await Promise.all(
      Array.from({ length: SEND_IN_FLIGHT }, async () => {
        while (next < wave.length) {
          const batch = wave.slice(next, next + SEND_BATCH);
          next += batch.length;
          const body = batch.map((t, i) => ({
            jsonrpc: "1.0",
            id: i,
            method: "sendrawtransaction",
            params: [t.hex],
          }));
          const { status, text } = await node.post(JSON.stringify(body));
          if (status !== 200)
            throw new Error(`the node answered a sendrawtransaction batch with HTTP ${status}`);
          const refused = (JSON.parse(text) as { error: { message: string } | null }[]).find((a) => a.error);
          if (refused) throw new Error(`the node refused a mempool transaction: ${refused.error!.message}`);
        }
      }),
    );
  }
}
