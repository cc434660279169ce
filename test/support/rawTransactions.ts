/**
 * Segwit transactions signed here, without a node's wallet (slow past a few thousand outputs of its own,
 * and held to its mempool's chain limit of 25): P2WPKH keys made from a seed (ethers' secp256k1), inputs
 * signed by BIP 143 with SIGHASH_ALL. The index's bench chain (bench/utxoBulkChain.ts) and the mempool
 * tests (test/esplora-mempool.test.ts) are made with them.
 */
import { createHash } from "node:crypto";
import { SigningKey } from "ethers";

export const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();
const dsha256 = (data: Uint8Array) => sha256(sha256(data));
const hash160 = (data: Uint8Array) => createHash("ripemd160").update(sha256(data)).digest();

export interface Key {
  signer: SigningKey;
  pubkey: Buffer;
  pkh: Buffer;
  script: Buffer;
}

/** A P2WPKH key made from a seed: its signer, public key, key hash and script. */
export function keyOf(seed: string): Key {
  const signer = new SigningKey(`0x${sha256(Buffer.from(seed)).toString("hex")}`);
  const pubkey = Buffer.from(signer.compressedPublicKey.slice(2), "hex");
  const pkh = hash160(pubkey);
  return { signer, pubkey, pkh, script: Buffer.concat([Buffer.from([0x00, 0x14]), pkh]) };
}

/** An output of a key to spend. */
export interface Coin {
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
