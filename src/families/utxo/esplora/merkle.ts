/**
 * A transaction's merkle branch in its block (Electrum's `blockchain.transaction.get_merkle`, which
 * Esplora's `/tx/:txid/merkle-proof` answers): the sibling hashes from the transaction up to the root, in
 * the hex order txids are written (byte-reversed). A level of odd length pairs its last hash with itself.
 */
import { createHash } from "node:crypto";

const sha256d = (data: Uint8Array) =>
  createHash("sha256").update(createHash("sha256").update(data).digest()).digest();

/** Hex as written (txids, block hashes) to the bytes hashed, and back. */
const internal = (hex: string) => Buffer.from(hex, "hex").reverse();
const written = (bytes: Buffer) => Buffer.from(bytes).reverse().toString("hex");

/** The branch of the transaction at `position` among `txids`, and the root it leads to. */
export function merkleBranch(txids: readonly string[], position: number): { branch: string[]; root: string } {
  let level: Buffer<ArrayBufferLike>[] = txids.map(internal);
  let index = position;
  const branch: string[] = [];
  while (level.length > 1) {
    if (level.length % 2 === 1) level.push(level[level.length - 1]!);
    branch.push(written(level[index ^ 1]!));
    const next: Buffer<ArrayBufferLike>[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256d(Buffer.concat([level[i]!, level[i + 1]!])));
    level = next;
    index >>= 1;
  }
  return { branch, root: written(level[0]!) };
}
