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
 */
import type { LitecoinNode } from "../test/support/litecoind";
import { type Coin, keyOf, sha256, signedTransaction } from "../test/support/rawTransactions";

const LANES = 100;
const RECIPIENTS = 9;
/** Distinct recipient addresses, reused: an index of the same size has many addresses, not all new. */
const RECIPIENT_POOL = 200_000;
const HOT_SPEND_EVERY = 5;
const PAYMENT = 1_000n;
const FEE = 500n;
/** Regtest coinbases mature 100 blocks deep. */
const MATURE_BLOCKS = 101;
const LANE_VALUE = 40_000_000n;
/**
 * The node's clock while it builds (setmocktime), a minute on a block: Litecoin's MWEB deployment starts at a
 * median time past 2020-09-30, and once active a block needs its integrating transaction, which
 * `generateblock` does not make. Held in March 2020, it never activates.
 */
const CLOCK_START_S = Date.UTC(2020, 2, 1) / 1000;
const BLOCK_INTERVAL_S = 60;

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
  const funder = keyOf("bench-funder");
  const hot = keyOf("bench-hot");
  const descriptor = `raw(${funder.script.toString("hex")})`;
  let clock = CLOCK_START_S;
  await node.rpc("setmocktime", [clock]);
  await node.rpc("generatetodescriptor", [MATURE_BLOCKS, descriptor]);
  const coinbase = await node.rpc("getblock", [await node.rpc("getblockhash", [1]), 2]);
  const funding: Coin = {
    txid: Buffer.from(coinbase.tx[0].txid, "hex").reverse(),
    vout: 0,
    value: 5_000_000_000n,
    key: funder,
  };
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
