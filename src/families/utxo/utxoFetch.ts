/**
 * The Bitcoin family's way to the upstreams on a cache miss (engine/methodTable.ts `createFetch`): every
 * call goes to the pool as it is (its answer then checked by its policy's `verify`, answerChecks.ts), and
 *  - a confirmed transaction's block height is made known before its answer is kept, so that hits count its
 *    confirmations (live.ts): its block's header is read through the engine (cached for ever, coalesced);
 *  - a write goes to one upstream at a time (no hedging).
 */
import type { ChainFollower } from "../../engine/chainFollower";
import type { Engine } from "../../engine/engineApi";
import type { MethodFetch } from "../../engine/methodTable";
import type { UpstreamPool } from "../../upstream/pool";
import { integerAt, isJsonString, membersOf, stringAt } from "./members";

/** The block a confirmed transaction's answer names, when its height may be unknown to the followed window. */
function confirmedIn(raw: string, head: ChainFollower): string | undefined {
  if (isJsonString(raw) || raw === "null") return undefined;
  const members = membersOf(raw, ["blockhash", "confirmations"]);
  const block = stringAt(raw, members.get("blockhash"));
  const confirmations = integerAt(raw, members.get("confirmations"));
  if (block === undefined || confirmations === undefined || confirmations <= 0n) return undefined;
  return head.numberOf(block) === undefined ? block : undefined;
}

export function createUtxoFetch(deps: {
  pool: UpstreamPool;
  head: ChainFollower;
  engine: () => Engine;
}): MethodFetch {
  const { pool, head, engine } = deps;
  return async (method, params, options) => {
    // A write is never hedged: a second node would see it as sent twice.
    const result = await pool.call(
      method,
      params,
      method === "sendrawtransaction" ? { ...options, hedge: false } : options,
    );
    if (method === "getrawtransaction") {
      const block = confirmedIn(result.raw, head);
      // Its header's answer notes the block's height in the cache (live.ts); a failure only costs the hits.
      if (block !== undefined) {
        try {
          await engine().call("getblockheader", [block]);
        } catch {}
      }
    }
    return result;
  };
}
