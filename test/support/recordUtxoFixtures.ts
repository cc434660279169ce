/**
 * Records the Litecoin Core answers the Bitcoin family's node-protocol unit tests read
 * (src/families/utxo/nodeProtocol.test.ts, nodeErrors.test.ts, src/upstream/http.test.ts) into
 * src/families/utxo/fixtures/nodeProtocolAnswers.json: each exchange's request text, HTTP status and body
 * exactly as a regtest litecoind 0.21.2.1 (Debian's) answered them. The -28 ("warming up") answer is
 * caught by asking while the node starts, which takes a few tries at most.
 *
 * The file is committed as recorded data: record it again only to add to it, then update the tests. Run:
 * bun test/support/recordUtxoFixtures.ts, then node_modules/.bin/biome format --write
 * src/families/utxo/fixtures/nodeProtocolAnswers.json
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLitecoind } from "./litecoind";
import { freePort } from "./service";
import { teardownAll } from "./shared";

const OUT = join(
  import.meta.dir,
  "..",
  "..",
  "src",
  "families",
  "utxo",
  "fixtures",
  "nodeProtocolAnswers.json",
);
/** Starts of a fresh node tried to catch its warm-up answer. */
const WARMUP_TRIES = 20;

interface Exchange {
  request: string;
  status: number;
  body: string;
}

/** A node's answer while it loads: asked in a tight loop from its spawn on. */
async function warmUpAnswer(): Promise<Exchange | undefined> {
  const body = JSON.stringify({ jsonrpc: "1.0", id: 1, method: "getblockcount", params: [] });
  for (let attempt = 0; attempt < WARMUP_TRIES; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), "cg-ltc-warmup-"));
    const port = freePort();
    const child = Bun.spawn(
      [
        "litecoind",
        "-regtest",
        `-datadir=${dataDir}`,
        "-rpcuser=u",
        "-rpcpassword=p",
        `-rpcport=${port}`,
        "-listen=0",
        "-server=1",
        "-printtoconsole=0",
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    try {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        try {
          const response = await fetch(`http://127.0.0.1:${port}`, {
            method: "POST",
            body,
            headers: { authorization: `Basic ${btoa("u:p")}` },
          });
          const text = await response.text();
          if (text.includes("-28")) return { request: body, status: response.status, body: text };
          if (response.ok) break;
        } catch {
          // Not listening yet.
        }
      }
    } finally {
      child.kill("SIGKILL");
      await child.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return undefined;
}

async function record() {
  const node = await startLitecoind();
  const exchange = async (request: unknown): Promise<Exchange> => {
    const text = JSON.stringify(request);
    const { status, text: body } = await node.post(text);
    return { request: text, status, body };
  };
  const call = (method: string, params: unknown = []) => exchange({ jsonrpc: "1.0", id: 1, method, params });
  const genesis = await node.rpc<string>("getblockhash", [0]);
  const [first] = await node.mine(1);
  await node.mine(100);
  const spent = await node.rpc<string>("sendtoaddress", [node.address, "1.5"]);
  const raw = await node.rpc<string>("getrawtransaction", [spent]);
  const inPool = await call("sendrawtransaction", [raw]);
  await node.mine(1);
  const best = await node.rpc<string>("getbestblockhash");
  const answers = {
    recordedWith: "litecoind 0.21.2.1 (Debian), -regtest",
    getblockchaininfo: await call("getblockchaininfo"),
    getblockhash0: await call("getblockhash", [0]),
    getblockheaderGenesis: await call("getblockheader", [genesis, true]),
    getblockheaderFirst: await call("getblockheader", [first, true]),
    getbestblockhash: await call("getbestblockhash"),
    getblockheaderBest: await call("getblockheader", [best, true]),
    waitfornewblock: await call("waitfornewblock", [1]),
    getblockUnknown: await call("getblock", ["00".repeat(32)]),
    getblockheaderUnknown: await call("getblockheader", ["00".repeat(32), true]),
    getblockhashPastTip: await call("getblockhash", [1_000_000]),
    getblockstatsPastTip: await call("getblockstats", [1_000_000]),
    badHash: await call("getblockheader", ["zz", true]),
    unknownMethod: await call("nosuchmethod"),
    sendrawtransactionInPool: inPool,
    sendrawtransactionInChain: await call("sendrawtransaction", [raw]),
    batch: await exchange([
      { jsonrpc: "1.0", id: 1, method: "getblockcount", params: [] },
      { jsonrpc: "1.0", id: 2, method: "nosuchmethod", params: [] },
      { jsonrpc: "1.0", id: 3, method: "getblockhash", params: [1_000_000] },
      { jsonrpc: "2.0", id: 4, method: "getblockhash", params: [0] },
    ]),
    namedParams: await call("getblockheader", { blockhash: genesis, verbose: true }),
    unauthorized: await (async () => {
      const response = await fetch(node.bareUrl, {
        method: "POST",
        body: '{"id":1,"method":"getblockcount"}',
      });
      return {
        request: '{"id":1,"method":"getblockcount"}',
        status: response.status,
        body: await response.text(),
      };
    })(),
    warmingUp: await warmUpAnswer(),
  };
  writeFileSync(OUT, `${JSON.stringify(answers, null, 2)}\n`);
  console.log(`recorded ${Object.keys(answers).length - 1} exchanges into ${OUT}`);
}

try {
  await record();
} finally {
  await teardownAll();
}
