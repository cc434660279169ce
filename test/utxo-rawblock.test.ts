/**
 * Raw blocks decoded in the service (src/families/utxo/rawBlock.ts) against a real regtest Litecoin Core:
 * on a chain whose blocks hold every output script and input serialization the decoder must read
 * (support/scriptTypesChain.ts: P2PKH, P2SH, P2SH-P2WPKH, P2WPKH, P2SH and P2SH-P2WSH and P2WSH multisig
 * and their spends, bare keys, bare multisig, OP_RETURN, witness versions 1 and 2, nonstandard scripts,
 * MWEB peg-in, HogEx and peg-out), every block from 0 to the tip decoded from `getblock <hash> 0` with its
 * `getblockheader <hash>` must equal what decode.ts reads of the node's `getblock <hash> 2` of it: header,
 * sizes and weight, every transaction's txid, sizes, inputs, and every output's value, script and address.
 */
import { beforeAll, expect, test } from "bun:test";
import { addressNetworkOf } from "../src/families/utxo/addresses";
import { decodeUtxoBlock } from "../src/families/utxo/decode";
import { dialectOf } from "../src/families/utxo/dialect";
import { decodeRawBlock, type RawBlockFormat } from "../src/families/utxo/rawBlock";
import { createScriptAddresser } from "../src/families/utxo/scriptAddress";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { buildScriptTypesChain } from "./support/scriptTypesChain";

/** Building the chain mines about 450 blocks and sends a dozen transactions. */
const BUILD_MS = 120_000;

let node: LitecoinNode;
let tip: number;
let format: RawBlockFormat;

/** A call's result as the node's JSON text (its amounts kept as written). */
async function text(method: string, params: unknown[]): Promise<string> {
  const { status, text: body } = await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
  if (status !== 200) throw new Error(`${method} answered ${status}: ${body}`);
  const start = body.indexOf('"result":') + '"result":'.length;
  const end = body.lastIndexOf(',"error":');
  return body.slice(start, end);
}

beforeAll(async () => {
  node = await startLitecoind();
  tip = await buildScriptTypesChain(node);
  const dialect = dialectOf(await text("getnetworkinfo", []));
  format = { auxpow: false, addressOf: createScriptAddresser(addressNetworkOf("LTC", "regtest")!, dialect) };
}, BUILD_MS);

test("every block decoded from its raw bytes equals the node's verbosity-2 answer, on every script type", async () => {
  const types = new Set<string>();
  let transactions = 0;
  for (let height = 0; height <= tip; height++) {
    const hash = JSON.parse(await text("getblockhash", [height])) as string;
    const [raw, header, verbose] = await Promise.all([
      text("getblock", [hash, 0]),
      text("getblockheader", [hash]),
      text("getblock", [hash, 2]),
    ]);
    const decoded = decodeRawBlock(JSON.parse(raw), header, format);
    expect(decoded).toEqual(decodeUtxoBlock({ block: verbose }));
    for (const tx of JSON.parse(verbose).tx) for (const out of tx.vout) types.add(out.scriptPubKey.type);
    transactions += decoded.transactions.length;
  }
  // The chain holds what it was built to: every type the node names, MWEB's included.
  expect([...types].sort()).toEqual([
    "multisig",
    "nonstandard",
    "nulldata",
    "pubkey",
    "pubkeyhash",
    "scripthash",
    "witness_mweb_hogaddr",
    "witness_mweb_pegin",
    "witness_unknown",
    "witness_v0_keyhash",
    "witness_v0_scripthash",
    "witness_v1_taproot",
  ]);
  expect(transactions).toBeGreaterThan(tip + 10);
}, 60_000);
