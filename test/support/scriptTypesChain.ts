/**
 * A regtest Litecoin Core chain whose blocks hold every kind of output script and input serialization the
 * raw-block decoder (src/families/utxo/rawBlock.ts) must read as the node does, for test/utxo-rawblock.test.ts
 * and the fixtures test/support/recordRawBlockFixtures.ts records:
 *  - the wallet's P2PKH, P2SH-P2WPKH and P2WPKH, and P2SH, P2SH-P2WSH and P2WSH 1-of-2 multisig (addmultisigaddress,
 *    so the wallet spends them: legacy and witness inputs, scriptSigs and witness stacks);
 *  - outputs the wallet does not make, written here and sent (standard): a bare key (compressed and
 *    uncompressed), bare multisig 1-of-1, 1-of-2 and 2-of-3, OP_RETURN, a version 1 program of 32 bytes
 *    (taproot's shape) and a version 2 program of 2 bytes;
 *  - nonstandard outputs, mined with `generateblock` (consensus only): OP_TRUE, a version 0 program of 25
 *    bytes, a bare key pushed by OP_PUSHDATA1, a multisig whose second key is invalid, an OP_RETURN
 *    followed by a non-push;
 *  - after MWEB activates (block 432 on regtest with the real clock: the node's clock is not held here): a
 *    peg-in in that first MWEB block (a payment to an MWEB address: its witness_mweb_pegin output and the block's integrating
 *    transaction, HogEx), an MWEB payment, and a peg-out (MWEB to a canonical address).
 * `generateblock` is used only before MWEB activates (it makes no HogEx).
 */
import type { LitecoinNode } from "./litecoind";

/** Blocks mined before the payments: the first coinbases mature at 101. */
const MATURE_BLOCKS = 110;
/**
 * MWEB's deployment is active from block 432 on regtest; that block's integrating transaction needs an input,
 * so the chain is mined to the block below it and the peg-in sent first.
 */
const BELOW_MWEB = 431;
/** secp256k1's generator as a key: compressed and uncompressed (valid keys nobody needs to spend). */
const G_COMPRESSED = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";
const G_UNCOMPRESSED =
  "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798" +
  "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";
/** A 33-byte push that is no key (its first byte is neither 02 nor 03). */
const NOT_A_KEY = `05${"11".repeat(32)}`;
/** Each written output's value, in satoshis (above every script's dust threshold). */
const OUTPUT_SATOSHIS = 100_000n;

const push = (hex: string) => {
  const length = hex.length / 2;
  if (length <= 75) return length.toString(16).padStart(2, "0") + hex;
  return `4c${length.toString(16).padStart(2, "0")}${hex}`;
};

/** The written scripts a standard transaction carries (sent through the mempool). */
export const STANDARD_SCRIPTS: Readonly<Record<string, string>> = {
  p2pkCompressed: `${push(G_COMPRESSED)}ac`,
  p2pkUncompressed: `${push(G_UNCOMPRESSED)}ac`,
  multisig1of1: `51${push(G_COMPRESSED)}51ae`,
  multisig1of2: `51${push(G_COMPRESSED)}${push(G_UNCOMPRESSED)}52ae`,
  multisig2of3: `52${push(G_COMPRESSED)}${push(G_UNCOMPRESSED)}${push(`03${"22".repeat(32)}`)}53ae`,
  opReturn: `6a${push("7261772d626c6f636b")}`,
  witnessV1: `5120${"ab".repeat(32)}`,
  witnessV2: "5202abcd",
};

/** Scripts only a block made with `generateblock` carries. */
export const NONSTANDARD_SCRIPTS: Readonly<Record<string, string>> = {
  opTrue: "51",
  witnessV0Of25: `0019${"cd".repeat(25)}`,
  p2pkPushdata1: `4c21${G_COMPRESSED}ac`,
  multisigInvalidKey: `51${push(G_COMPRESSED)}${push(NOT_A_KEY)}52ae`,
  opReturnNonPush: "6a51",
};

/** The outputs' script lengths are pushed as compact sizes, which `push` writes for lengths up to 252. */
function compactScript(script: string): string {
  return (script.length / 2).toString(16).padStart(2, "0") + script;
}

/** A transaction with no inputs paying `scripts` (the node's fundrawtransaction adds inputs and change). */
function unfundedTransaction(scripts: readonly string[]): string {
  const value = Buffer.alloc(8);
  value.writeBigUInt64LE(OUTPUT_SATOSHIS);
  let hex = `0200000000${scripts.length.toString(16).padStart(2, "0")}`;
  for (const script of scripts) hex += value.toString("hex") + compactScript(script);
  return `${hex}00000000`;
}

/** Funds and signs a transaction with the node's wallet; its hex. */
async function fundAndSign(node: LitecoinNode, scripts: readonly string[]): Promise<string> {
  const funded = await node.rpc<{ hex: string }>("fundrawtransaction", [unfundedTransaction(scripts)]);
  const signed = await node.rpc<{ hex: string; complete: boolean }>("signrawtransactionwithwallet", [
    funded.hex,
  ]);
  if (!signed.complete) throw new Error("the wallet could not sign a funded transaction");
  return signed.hex;
}

/** Spends one output the wallet can sign for (a multisig it added) to `to`; the transaction's id. */
async function spend(node: LitecoinNode, txid: string, vout: number, value: number, to: string) {
  const raw = await node.rpc<string>("createrawtransaction", [[{ txid, vout }], { [to]: value - 0.001 }]);
  const signed = await node.rpc<{ hex: string; complete: boolean }>("signrawtransactionwithwallet", [raw]);
  if (!signed.complete) throw new Error(`the wallet could not sign the spend of ${txid}:${vout}`);
  return node.rpc<string>("sendrawtransaction", [signed.hex]);
}

/** The output of `txid` paying `address`: its index and value. */
async function outputTo(node: LitecoinNode, txid: string, address: string) {
  const tx = await node.rpc("getrawtransaction", [txid, true]);
  const out = tx.vout.find((o: any) => o.scriptPubKey.addresses?.[0] === address);
  if (out === undefined) throw new Error(`${txid} pays nothing to ${address}`);
  return { vout: out.n as number, value: out.value as number };
}

/** Builds the chain on a fresh node; the tip's height when done. */
export async function buildScriptTypesChain(node: LitecoinNode): Promise<number> {
  await node.mine(MATURE_BLOCKS);
  const addr = (type: string) => node.rpc<string>("getnewaddress", ["", type]);
  const legacy = await addr("legacy");
  const p2shSegwit = await addr("p2sh-segwit");
  const bech32 = await addr("bech32");
  const keyA = (await node.rpc("getaddressinfo", [legacy])).pubkey as string;
  const keyB = (await node.rpc("getaddressinfo", [bech32])).pubkey as string;
  const multisig = async (type: string) =>
    (await node.rpc<{ address: string }>("addmultisigaddress", [1, [keyA, keyB], "", type])).address;
  const p2shMultisig = await multisig("legacy");
  const p2shP2wsh = await multisig("p2sh-segwit");
  const p2wsh = await multisig("bech32");

  // The wallet's kinds, in one sendmany (legacy and segwit inputs of the coinbases).
  const paid = [legacy, p2shSegwit, bech32, p2shMultisig, p2shP2wsh, p2wsh];
  const fund = await node.rpc<string>("sendmany", ["", Object.fromEntries(paid.map((a) => [a, 1.5]))]);
  await node.rpc("sendrawtransaction", [await fundAndSign(node, Object.values(STANDARD_SCRIPTS))]);
  await node.mine(1);
  // Spends of each kind: the multisigs one by one (first: the wallet would pick them as well), then
  // P2PKH, P2SH-P2WPKH and P2WPKH by the wallet.
  for (const address of [p2shMultisig, p2shP2wsh, p2wsh]) {
    const out = await outputTo(node, fund, address);
    await spend(node, fund, out.vout, out.value, legacy);
  }
  await node.rpc("sendtoaddress", [bech32, 4.2]);
  await node.mine(1);
  const nonstandard = await fundAndSign(node, Object.values(NONSTANDARD_SCRIPTS));
  await node.rpc("generateblock", [node.address, [nonstandard]]);
  // Every wallet output spent at once: inputs of every kind in one transaction.
  const balance = await node.rpc<number>("getbalance");
  await node.rpc("sendtoaddress", [legacy, Math.floor(balance) - 1]);
  await node.mine(1);

  const height = await node.rpc<number>("getblockcount");
  await node.mine(BELOW_MWEB - height);
  const mweb = await addr("mweb");
  await node.rpc("sendtoaddress", [mweb, 7]);
  await node.mine(1);
  await node.rpc("sendtoaddress", [await addr("mweb"), 2]);
  await node.mine(1);
  await node.rpc("sendtoaddress", [legacy, 3]);
  await node.rpc("sendtoaddress", [bech32, 1]);
  await node.mine(2);
  return node.rpc<number>("getblockcount");
}
