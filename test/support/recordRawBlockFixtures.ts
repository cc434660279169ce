/**
 * Records what src/families/utxo/rawBlock.test.ts reads of real raw blocks into
 * src/families/utxo/fixtures/litecoind-0.21-raw.json: a regtest litecoind 0.21.2.1 (Debian's) builds the chain
 * of support/scriptTypesChain.ts (every script type, nonstandard ones, MWEB peg-in, HogEx and peg-out), and
 * each block holding more than its coinbase is kept as the node answered it: `getblock <hash> 0`,
 * `getblockheader <hash>` and `getblock <hash> 2`, each the node's result text, byte for byte.
 *
 * The file is committed as recorded data. Run: bun test/support/recordRawBlockFixtures.ts, then
 * node_modules/.bin/biome format --write src/families/utxo/fixtures/litecoind-0.21-raw.json
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLitecoind } from "./litecoind";
import { buildScriptTypesChain } from "./scriptTypesChain";
import { teardownAll } from "./shared";

const OUT = join(
  import.meta.dir,
  "..",
  "..",
  "src",
  "families",
  "utxo",
  "fixtures",
  "litecoind-0.21-raw.json",
);

try {
  const node = await startLitecoind();
  const tip = await buildScriptTypesChain(node);
  const text = async (method: string, params: unknown[]) => {
    const { text: body } = await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }));
    return body.slice(body.indexOf('"result":') + '"result":'.length, body.lastIndexOf(',"error":'));
  };
  const blocks: { height: number; raw: string; header: string; verbose: string }[] = [];
  for (let height = 0; height <= tip; height++) {
    const hash = JSON.parse(await text("getblockhash", [height])) as string;
    const verbose = await text("getblock", [hash, 2]);
    if (JSON.parse(verbose).tx.length < 2) continue;
    blocks.push({
      height,
      raw: await text("getblock", [hash, 0]),
      header: await text("getblockheader", [hash]),
      verbose,
    });
  }
  const source =
    "recorded from Debian's litecoind 0.21.2.1 (Litecoin Core) in regtest by test/support/recordRawBlockFixtures.ts: the chain of test/support/scriptTypesChain.ts (P2PKH, P2SH, P2SH-P2WPKH, P2WPKH, P2SH, P2SH-P2WSH and P2WSH multisig and their spends, bare keys, bare multisig, OP_RETURN, witness versions 1 and 2, nonstandard scripts mined with generateblock; after MWEB activates, a peg-in, an MWEB payment and a peg-out with their HogEx), every block holding more than its coinbase: getblock <hash> 0, getblockheader <hash> and getblock <hash> 2, each the node's result text, byte for byte";
  writeFileSync(OUT, `${JSON.stringify({ source, blocks }, null, 2)}\n`);
  console.log(`recorded ${blocks.length} blocks to ${OUT}`);
} finally {
  await teardownAll();
}
