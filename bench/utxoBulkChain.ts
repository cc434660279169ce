/**
 * A big regtest chain for the index's bench (bench/utxoIndexPhase.ts), made quickly: the transactions are
 * built and signed here (P2WPKH inputs, BIP 143 signatures with ethers' secp256k1) and mined with
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
import { createHash } from "node:crypto";
import { SigningKey } from "ethers";
import type { LitecoinNode } from "../test/support/litecoind";

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

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();
const dsha256 = (data: Uint8Array) => sha256(sha256(data));
const hash160 = (data: Uint8Array) => createHash("ripemd160").update(sha256(data)).digest();

interface Key {
  signer: SigningKey;
  pubkey: Buffer;
  pkh: Buffer;
  script: Buffer;
}

function keyOf(seed: string): Key {
  const signer = new SigningKey(`0x${sha256(Buffer.from(seed)).toString("hex")}`);
  const pubkey = Buffer.from(signer.compressedPublicKey.slice(2), "hex");
  const pkh = hash160(pubkey);
  return { signer, pubkey, pkh, script: Buffer.concat([Buffer.from([0x00, 0x14]), pkh]) };
}

interface Coin {
  /** The txid in the transaction's own byte order (the reverse of how it is written). */
  txid: Buffer;
  vout: number;
  value: bigint;
  key: Key;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
const varint = (n: number) =>
  n < 0xfd ? Buffer.from([n]) : Buffer.concat([Buffer.from([0xfd]), u32(n).subarray(0, 2)]);
const pushed = (data: Buffer) => Buffer.concat([varint(data.length), data]);

/** A DER signature of a BIP 143 digest, with SIGHASH_ALL. */
function derSign(key: Key, digest: Buffer): Buffer {
  const sig = key.signer.sign(digest);
  const int = (hex: string) => {
    let b = Buffer.from(hex.slice(2), "hex");
    while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.subarray(1);
    return b[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b;
  };
  const r = int(sig.r);
  const s = int(sig.s);
  const body = Buffer.concat([Buffer.from([0x02, r.length]), r, Buffer.from([0x02, s.length]), s]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body, Buffer.from([0x01])]);
}

/** A signed segwit transaction spending P2WPKH coins: its hex and txid (as written). */
export function signedTransaction(inputs: Coin[], outputs: { script: Buffer; value: bigint }[]) {
  const version = u32(2);
  const locktime = u32(0);
  const sequence = u32(0xffffffff);
  const outpoints = inputs.map((c) => Buffer.concat([c.txid, u32(c.vout)]));
  const outs = outputs.map((o) => Buffer.concat([u64(o.value), pushed(o.script)]));
  const hashPrevouts = dsha256(Buffer.concat(outpoints));
  const hashSequence = dsha256(Buffer.concat(inputs.map(() => sequence)));
  const hashOutputs = dsha256(Buffer.concat(outs));
  const witnesses = inputs.map((coin, i) => {
    const scriptCode = Buffer.concat([
      Buffer.from([0x19, 0x76, 0xa9, 0x14]),
      coin.key.pkh,
      Buffer.from([0x88, 0xac]),
    ]);
    const preimage = Buffer.concat([
      version,
      hashPrevouts,
      hashSequence,
      outpoints[i]!,
      scriptCode,
      u64(coin.value),
      sequence,
      hashOutputs,
      locktime,
      u32(1),
    ]);
    return Buffer.concat([
      Buffer.from([0x02]),
      pushed(derSign(coin.key, dsha256(preimage))),
      pushed(coin.key.pubkey),
    ]);
  });
  const vin = Buffer.concat([
    varint(inputs.length),
    ...outpoints.map((o) => Buffer.concat([o, Buffer.from([0]), sequence])),
  ]);
  const vout = Buffer.concat([varint(outs.length), ...outs]);
  const stripped = Buffer.concat([version, vin, vout, locktime]);
  const full = Buffer.concat([version, Buffer.from([0x00, 0x01]), vin, vout, ...witnesses, locktime]);
  const txid = dsha256(stripped);
  return { hex: full.toString("hex"), txid, id: Buffer.from(txid).reverse().toString("hex") };
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
