/**
 * A stand-in java-tron for the test suite (java-tron cannot run here): `/wallet/*`, `/walletsolidity/*` and
 * `/jsonrpc` on 127.0.0.1, served from one scenario chain (test/support/tron/scenario.ts) in the forms the
 * recordings under test/fixtures/tron/ hold. test/tron-standin.test.ts holds it to those recordings and to
 * tronweb. One base URL serves the three faces (as TronGrid does), or three ports (a bare node's 8090, 8091,
 * 8545) with `faces: "three"`.
 */

import { onTeardown } from "./shared";
import { answerWallet, type Params } from "./tron/http";
import { createTronJsonRpc, type TronChainView as JsonRpcView, TronCallReverted } from "./tron/jsonrpc";
import { buildPart2, type Part2 } from "./tron/part2";
import {
  CHAIN_ID,
  SCENARIO_KEYS,
  type SignedTx,
  type TronBlockJson,
  type TronChainView,
  type TronNetwork,
  TronScenario,
} from "./tron/scenario";

export type { Part2, Part2Txs } from "./tron/part2";
export { GENESIS_TRC20, GENESIS_TRX, SCENARIO_KEYS, TRC10, TRC20, TRC721 } from "./tron/scenario";

/** The energy price of the scenario, in sun (test/support/tron/scenario.ts). */
const ENERGY_PRICE_SUN = 420;

export type { SignedTx, TronBlockJson, TronChainView, TronNetwork };

export type TronFace = "full" | "solidity" | "jsonrpc";
export interface TronCall {
  face: TronFace;
  /** `/wallet/getnowblock`, `/walletsolidity/getaccount`, `/jsonrpc` */
  path: string;
  /** The request's parameters: the JSON body merged over the query (java-tron reads either). */
  body: unknown;
}

export interface TronNodeOptions {
  network?: TronNetwork;
  /** Blocks between the head and the solidified block (java-tron's mainnet: 19). */
  solidifyDepth?: number;
  /** With a key, requests without `TRON-PRO-API-KEY: <key>` get TronGrid's 401. */
  apiKey?: string;
  faces?: "one" | "three";
  /** java-tron's JSON-RPC face; unsaid: test/support/tron/jsonrpc.ts's, over this node's scenario chain. */
  jsonrpc?: (body: unknown, chain: TronChainView) => unknown;
  /** Empty blocks mined after the scenario's transactions, so they are solidified (default solidifyDepth + 3). */
  emptyBlocks?: number;
  /**
   * The chain: part 1's (default; TRX, TRC-10, TRC-20 transfers and a reverted call in blocks 1 and 2) or
   * part 2's richer one over three UTC days with a tip above the solidified block (test/support/tron/part2.ts).
   */
  scenario?: "part1" | "part2";
}

export interface TronNode {
  /** One base URL serving the three faces (with `faces: "three"`, the full node's port). */
  url: string;
  urls: { full: string; solidity: string; jsonrpc: string };
  chain: TronScenario;
  calls: TronCall[];
  /** The scenario's transactions, mined in blocks 1 and 2 (in both scenarios). */
  scenario: { trx: SignedTx; trc10: SignedTx; trc20: SignedTx; reverted: SignedTx };
  /** Part 2's transactions, its tip and its reorg (with `scenario: "part2"`). */
  part2?: Part2;
  mine(count?: number, txs?: SignedTx[]): TronBlockJson[];
  reorg(
    depth: number,
    replacement?: SignedTx[] | ((chain: TronScenario) => SignedTx[]),
  ): { dropped: string[]; added: string[] };
  /** Broadcast transactions waiting for the next mined block. */
  readonly broadcastPool: SignedTx[];
  /** Fault hook: a Response here answers the call instead of the chain. */
  fail?: (call: TronCall) => Response | undefined;
  /** Added before every answer. */
  delayMs: number;
  stop(): Promise<void>;
}

const DEFAULT_SOLIDIFY_DEPTH = 19;
/** TronGrid's answer to a request without a valid key (test/fixtures/tron/trongrid/401-apikey-not-exists.json). */
const TRONGRID_401 = { Error: "ApiKey not exists" };

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

async function readParams(req: Request, url: URL): Promise<Params | "bad-json"> {
  const params: Params = Object.fromEntries(url.searchParams);
  if (req.method !== "POST") return params;
  const text = await req.text();
  if (text.trim() === "") return params;
  try {
    const body = JSON.parse(text);
    return typeof body === "object" && body !== null && !Array.isArray(body) ? { ...params, ...body } : body;
  } catch {
    return "bad-json";
  }
}

/** The scenario chain as java-tron's JSON-RPC face reads it (test/support/tron/jsonrpc.ts). */
function jsonRpcView(chain: TronChainView): JsonRpcView {
  return {
    chainId: chain.chainId,
    head: () => chain.headNumber(),
    solidified: () => chain.solidifiedNumber(),
    blockByNum: (n) => chain.block(n),
    blockById: (id) => chain.blockById(id),
    infosOf: (n) => chain.infos(n) ?? [],
    blockNumOfTx: (txId) => chain.transaction(txId)?.blockNumber,
    balanceOf: (address) => chain.balance(address),
    codeOf: (address) => chain.codeOf(address.toLowerCase()),
    call(to, data) {
      const answer = chain.call(to, data);
      if (answer === undefined) return "";
      if (!answer.ok) throw new TronCallReverted(answer.result);
      return answer.result;
    },
    energyFee: () => ENERGY_PRICE_SUN,
  };
}

/** Starts the stand-in with the scenario chain; stopped at the end of the run (and by `stop()`). */
export async function startTronNode(options: TronNodeOptions = {}): Promise<TronNode> {
  const network = options.network ?? "NILE";
  const chain = new TronScenario(network, options.solidifyDepth ?? DEFAULT_SOLIDIFY_DEPTH);
  const emptyBlocks = options.emptyBlocks ?? chain.solidifyDepth + 3;
  let scenario: TronNode["scenario"];
  let part2: Part2 | undefined;
  if (options.scenario === "part2") {
    part2 = buildPart2(chain, emptyBlocks);
    const { trx, trc10, trc20, reverted } = part2.txs;
    scenario = { trx, trc10, trc20, reverted };
  } else {
    const { alice, bob, carol, issuer } = SCENARIO_KEYS;
    const trx = chain.trx(alice, bob.hex, 1_500_000n);
    const trc10 = chain.trc10(issuer, alice.hex, 250_000_000n);
    chain.mine(1, [trx, trc10]);
    const trc20 = chain.trc20Transfer(alice, bob.hex, 12_345_678n);
    // bob holds no USDT before this block's first transfer lands 12.345678; 20 USDT is more than that.
    const reverted = chain.trc20Transfer(bob, carol.hex, 20_000_000n);
    chain.mine(1, [trc20, reverted]);
    chain.mine(emptyBlocks);
    scenario = { trx, trc10, trc20, reverted };
  }

  const calls: TronCall[] = [];
  const jsonRpcFace = createTronJsonRpc(jsonRpcView(chain));
  const jsonrpc = options.jsonrpc ?? ((body: unknown) => jsonRpcFace(body));
  const node: TronNode = {
    url: "",
    urls: { full: "", solidity: "", jsonrpc: "" },
    chain,
    calls,
    scenario,
    ...(part2 ? { part2 } : {}),
    mine: (count, txs) => chain.mine(count, txs),
    reorg: (depth, replacement) => chain.reorg(depth, replacement),
    broadcastPool: chain.pool,
    delayMs: 0,
    stop: async () => {
      for (const s of servers) s.stop(true);
    },
  };

  const serve = async (req: Request, serves: Set<TronFace>): Promise<Response> => {
    const url = new URL(req.url);
    const [, root, name = ""] = url.pathname.split("/");
    const face: TronFace | undefined =
      root === "wallet"
        ? "full"
        : root === "walletsolidity"
          ? "solidity"
          : root === "jsonrpc"
            ? "jsonrpc"
            : undefined;
    if (!face || !serves.has(face)) return new Response("Not Found", { status: 404 });
    if (options.apiKey !== undefined && req.headers.get("tron-pro-api-key") !== options.apiKey) {
      return json(TRONGRID_401, 401);
    }
    const params = await readParams(req, url);
    const call: TronCall = { face, path: url.pathname, body: params };
    calls.push(call);
    if (node.delayMs > 0) await Bun.sleep(node.delayMs);
    const injected = node.fail?.(call);
    if (injected) return injected;
    if (params === "bad-json") {
      return json({ Error: "class org.tron.json.JSONException : Unexpected character in the request body" });
    }
    if (face === "jsonrpc") {
      const answer = jsonrpc(params, chain);
      return answer === undefined ? new Response(null, { status: 200 }) : json(answer);
    }
    const answer = answerWallet(chain, face === "solidity", name.toLowerCase(), params);
    return answer === undefined ? new Response("Not Found", { status: 404 }) : json(answer);
  };

  const all = new Set<TronFace>(["full", "solidity", "jsonrpc"]);
  const groups: Set<TronFace>[] =
    options.faces === "three" ? [new Set(["full"]), new Set(["solidity"]), new Set(["jsonrpc"])] : [all];
  const servers = groups.map((serves) =>
    Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => serve(req, serves) }),
  );
  const base = servers.map((s) => `http://127.0.0.1:${s.port}`);
  node.url = base[0]!;
  node.urls = { full: base[0]!, solidity: base[1] ?? base[0]!, jsonrpc: base[2] ?? base[0]! };
  onTeardown(() => node.stop());
  return node;
}

export { CHAIN_ID };
