/**
 * The calls to java-tron that take more than passing one call to the pool (engine/methodTable.ts):
 * - `/wallet/getnowblock` is the block at the followed head, read by number (so it and `eth_blockNumber`
 *   name the same block, and it is kept as that block is);
 * - a transaction or its info by id is asked of the solidity face first, whose answers are final (kept for
 *   ever); only a transaction not solidified yet is asked of the full node's face, and not kept;
 * - writes go to one upstream at a time: never hedged;
 * - the rest as on EVM nodes (evmFetch.ts: block receipts assembled where a node lacks them).
 */
import type { ChainFollower } from "../../engine/chainFollower";
import { callText, type Engine } from "../../engine/engineApi";
import type { MethodFetch } from "../../engine/methodTable";
import type { UpstreamPool } from "../../upstream/pool";
import { createEvmFetch } from "../evm/evmFetch";
import { isNodeRefusal, PATH_WRITES, pathMethod } from "./httpApi";

/** The full node's reads answered by the solidity face first, by the engine's name. */
const SOLIDIFIED_FIRST: ReadonlyMap<string, string> = new Map(
  ["gettransactionbyid", "gettransactioninfobyid"].map((name) => [
    pathMethod("wallet", name),
    pathMethod("walletsolidity", name),
  ]),
);
const NOW_BLOCK = pathMethod("wallet", "getnowblock");
const BLOCK_BY_NUMBER = pathMethod("wallet", "getblockbynum");

/** A body with `num` set, its members in the order every body is keyed in (httpApi.ts). */
function withNumber(body: Record<string, unknown>, num: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of [...Object.keys(body).filter((n) => n !== "num"), "num"].sort()) {
    out[name] = name === "num" ? num : body[name];
  }
  return out;
}

export function createTronFetch(options: {
  pool: UpstreamPool;
  head: ChainFollower;
  engine: () => Engine;
}): MethodFetch {
  const { pool, head, engine } = options;
  const evmFetch = createEvmFetch(options);

  return async (method, params, callOptions) => {
    if (PATH_WRITES.has(method)) return pool.call(method, params, { ...callOptions, hedge: false });
    if (method === NOW_BLOCK) {
      const latest = head.latest();
      if (latest === undefined) return pool.call(method, params, callOptions);
      const body = withNumber((params[0] ?? {}) as Record<string, unknown>, Number(latest));
      return { raw: await callText(engine(), BLOCK_BY_NUMBER, [body]), upstream: "" };
    }
    const solidity = SOLIDIFIED_FIRST.get(method);
    if (solidity !== undefined) {
      const solidified = await callText(engine(), solidity, params);
      if (!isNodeRefusal(solidified)) return { raw: solidified, upstream: "" };
    }
    return evmFetch(method, params, callOptions);
  };
}
