/**
 * The live members of the Bitcoin family's answers by hash (cache/policy.ts `LiveAnswer`): a block, a header
 * or a confirmed transaction never changes but for `confirmations` (and a block's `nextblockhash`), which
 * the node writes for its head. The cache keeps the answer for ever and a hit gives it with those members as
 * the node would write them at the followed head, spliced into the stored text:
 *  - `confirmations`: head height - block height + 1 on the main chain, -1 off it (a block; Bitcoin Core's
 *    ComputeNextBlockAndDepth), as Bitcoin Core, Litecoin Core 0.21 and Dogecoin Core 1.14 write it;
 *  - `nextblockhash`: the main chain's block at height + 1; absent at the tip and off the main chain. Where
 *    it is added, it goes right after `previousblockhash`, where every one of those nodes writes it (after
 *    Litecoin's MWEB members and Dogecoin's `auxpow`; in Bitcoin Core 23+ before `strippedsize`).
 * Which block is on the main chain is the followed chain's word from the last final block up; below it, the
 * stored text's own: a block it says was deeper than CONFIRMATIONS when written stays on the main chain, and
 * so does the next block it names once that one was. Anything else the head cannot tell (a block past the
 * followed head, a transaction whose block's height is not known, block 0 gaining its next) is a miss: the
 * node answers, and its answer is kept in place of the old one.
 */
import type { LiveAnswer, LiveChain } from "../../cache/policy";
import {
  type Edit,
  integerAt,
  isJsonString,
  type MemberSpan,
  memberRemovalStart,
  membersOf,
  splice,
  stringAt,
} from "./members";

const BLOCK_MEMBERS = ["hash", "confirmations", "height", "previousblockhash", "nextblockhash"] as const;
/** What `keeps` reads of a block: they come before its transactions in every node's order. */
const BLOCK_PLACE = ["hash", "height", "confirmations"] as const;
const TRANSACTION_MEMBERS = ["blockhash", "confirmations"] as const;
/** `getrawtransaction`'s block param (txid, verbose, blockhash). */
const BLOCKHASH_PARAM = 2;

/** Whether a block is on the main chain at the followed head; undefined when the head cannot tell. */
function onMainChain(hash: string, height: bigint, storedConfirmations: bigint, chain: LiveChain) {
  const canonical = chain.canonicalHash(height);
  if (canonical !== undefined) return canonical === hash;
  // Past the followed head (the node is ahead of it), or a height the followed window does not hold.
  if (height > chain.head.number || height > chain.finalized) return undefined;
  // Final: on the main chain for good if it was final on it when the text was written.
  return storedConfirmations > depthOf(chain) ? true : undefined;
}

/** CONFIRMATIONS: how far below the head a block is final (these nodes name no final block). */
const depthOf = (chain: LiveChain) => chain.head.number - chain.finalized;

/** The main chain's block after a block on it: null at the tip; undefined when the head cannot tell. */
function nextOf(
  text: string,
  members: Map<string, MemberSpan>,
  height: bigint,
  storedConfirmations: bigint,
  chain: LiveChain,
): string | null | undefined {
  if (height >= chain.head.number) return null;
  const canonical = chain.canonicalHash(height + 1n);
  if (canonical !== undefined) return canonical;
  // Below the followed window: the stored one, if it was final when the text was written.
  const stored = stringAt(text, members.get("nextblockhash"));
  return stored !== undefined && storedConfirmations - 1n > depthOf(chain) ? stored : undefined;
}

/** The edit that makes `nextblockhash` say `next` (null: absent); undefined when it cannot be placed. */
function nextEdit(
  text: string,
  members: Map<string, MemberSpan>,
  next: string | null,
): Edit | null | undefined {
  const span = members.get("nextblockhash");
  if (span !== undefined) {
    if (next === null) {
      const start = memberRemovalStart(text, span);
      return start === undefined ? undefined : { start, end: span.end, text: "" };
    }
    return stringAt(text, span) === next ? null : { start: span.start, end: span.end, text: `"${next}"` };
  }
  if (next === null) return null;
  // Block 0 has no previousblockhash to follow: the node answers instead.
  const previous = members.get("previousblockhash");
  if (previous === undefined) return undefined;
  return { start: previous.end, end: previous.end, text: `,"nextblockhash":"${next}"` };
}

/** A block or header (verbose) as the node would write it at the followed head. */
function blockNow(text: string, chain: LiveChain): string | undefined {
  const members = membersOf(text, BLOCK_MEMBERS);
  const hash = stringAt(text, members.get("hash"));
  const height = integerAt(text, members.get("height"));
  const stored = integerAt(text, members.get("confirmations"));
  if (hash === undefined || height === undefined || stored === undefined) return undefined;
  chain.noteHeight(hash, height);
  const onMain = onMainChain(hash, height, stored, chain);
  if (onMain === undefined) return undefined;
  const next = onMain ? nextOf(text, members, height, stored, chain) : null;
  if (next === undefined) return undefined;
  const toNext = nextEdit(text, members, next);
  if (toNext === undefined) return undefined;
  const confirmations = onMain ? chain.head.number - height + 1n : -1n;
  const span = members.get("confirmations")!;
  const edits: Edit[] = [{ start: span.start, end: span.end, text: confirmations.toString() }];
  if (toNext !== null) edits.push(toNext);
  return splice(text, edits);
}

/**
 * `getblock <hash> [verbosity]` and `getblockheader <hash> [verbose]`: every answer is kept (a block that
 * left the main chain too: the node answers it with -1); the hex ones (verbosity 0, verbose false) have
 * nothing live.
 */
export const blockLive: LiveAnswer = {
  keeps(raw, heights) {
    if (isJsonString(raw)) return true;
    const members = membersOf(raw, BLOCK_PLACE);
    const hash = stringAt(raw, members.get("hash"));
    const height = integerAt(raw, members.get("height"));
    if (hash === undefined || height === undefined || !members.has("confirmations")) return false;
    heights.noteHeight(hash, height);
    return true;
  },
  now: (stored, chain) => (isJsonString(stored) ? stored : blockNow(stored, chain)),
};

/**
 * `getrawtransaction <txid> true [blockhash]`: kept once in a block of the main chain (a transaction in the
 * mempool, or in a block that left the main chain, is the node's to answer); its `confirmations` counted
 * from its block's height, which the answer does not carry: the followed window's, or one noted from a
 * block answer (utxoFetch.ts reads the block's header for it). The hex form (verbose false) is kept where
 * the call names the block, and has nothing live: the block commits to its transactions' bytes, witnesses
 * too (the node answers them for a block that left the main chain as well). Without a block it is not: a
 * transaction's witnesses may change until it is mined.
 */
export const transactionLive: LiveAnswer = {
  keeps(raw, _heights, params) {
    if (isJsonString(raw)) return typeof params[BLOCKHASH_PARAM] === "string";
    const members = membersOf(raw, TRANSACTION_MEMBERS);
    const confirmations = integerAt(raw, members.get("confirmations"));
    return (
      stringAt(raw, members.get("blockhash")) !== undefined &&
      confirmations !== undefined &&
      confirmations > 0n
    );
  },
  now(stored, chain) {
    if (isJsonString(stored)) return stored;
    const members = membersOf(stored, TRANSACTION_MEMBERS);
    const block = stringAt(stored, members.get("blockhash"));
    const confirmations = integerAt(stored, members.get("confirmations"));
    const height = block === undefined ? undefined : chain.heightOf(block);
    if (height === undefined || confirmations === undefined) return undefined;
    if (onMainChain(block!, height, confirmations, chain) !== true) return undefined;
    const span = members.get("confirmations")!;
    return splice(stored, [
      { start: span.start, end: span.end, text: (chain.head.number - height + 1n).toString() },
    ]);
  },
};
