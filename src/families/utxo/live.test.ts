/**
 * The live members of kept answers (live.ts), on answers recorded from a real litecoind 0.21 in regtest
 * (fixtures/litecoind-0.21-live.json: one block and one transaction answered at four moments): the answer
 * kept at one moment, made live for the chain of a later one, is byte for byte what the node answered then.
 * And on Bitcoin Core 23+'s member order (fixtures/bitcoin-core-22.json, written from its docs), where
 * `nextblockhash` sits before the transactions.
 */
import { describe, expect, test } from "bun:test";
import type { LiveChain } from "../../cache/policy";
import core from "./fixtures/bitcoin-core-22.json";
import recorded from "./fixtures/litecoind-0.21-live.json";
import { blockLive, transactionLive } from "./live";

const HEIGHT = 107n;
/** The CONFIRMATIONS of these chains: the followed window holds the last 7 blocks. */
const DEPTH = 6n;

/** A followed chain: its head and the canonical hashes from the last final block up. */
function chainAt(canonical: Record<string, string>, options: { heights?: Record<string, bigint> } = {}) {
  let head = 0n;
  for (const n of Object.keys(canonical).map(BigInt)) if (n > head) head = n;
  const finalized = head - DEPTH;
  const noted = new Map<string, bigint>(Object.entries(options.heights ?? {}));
  const chain: LiveChain = {
    head: { number: head, hash: canonical[head.toString()]! },
    finalized,
    canonicalHash: (n) => (n >= finalized ? canonical[n.toString()] : undefined),
    heightOf(hash) {
      for (const [n, h] of Object.entries(canonical))
        if (h === hash && BigInt(n) >= finalized) return BigInt(n);
      return noted.get(hash);
    },
    noteHeight: (hash, height) => void noted.set(hash, height),
  };
  return { chain, noted };
}

const { atTip, twoBlocksLater, nextReplaced, leftMainChain } = recorded;
const [next, nextTip] = twoBlocksLater.mined;
const [branchNext, branch2, branchTip] = nextReplaced.mined;

/** The chains the node was at, as the service follows them. */
const twoLater = () => chainAt({ "107": recorded.block, "108": next!, "109": nextTip! });
const replaced = () =>
  chainAt({ "107": recorded.block, "108": branchNext!, "109": branch2!, "110": branchTip! });
/** The follower never goes down: the block left the chain once a longer branch without it came. */
const left = () => chainAt({ "107": "0".repeat(64), "108": "1".repeat(64) });

const BLOCK_FORMS = ["getblock 1", "getblock 2", "getblockheader"] as const;

describe("a block kept by hash, made live", () => {
  test("two blocks later: confirmations 3 and the next block, as the node answered (verbosity 1, 2, header)", () => {
    for (const form of BLOCK_FORMS) {
      expect(blockLive.now(atTip[form], twoLater().chain)).toBe(twoBlocksLater[form]);
    }
  });

  test("its next block replaced by a longer branch: the new next block, as the node answered", () => {
    for (const form of BLOCK_FORMS) {
      expect(blockLive.now(twoBlocksLater[form], replaced().chain)).toBe(nextReplaced[form]);
      expect(blockLive.now(atTip[form], replaced().chain)).toBe(nextReplaced[form]);
    }
  });

  test("off the main chain: confirmations -1 and no next block, as the node answered", () => {
    for (const form of BLOCK_FORMS) {
      expect(blockLive.now(nextReplaced[form], left().chain)).toBe(leftMainChain[form]);
      expect(blockLive.now(atTip[form], left().chain)).toBe(leftMainChain[form]);
    }
  });

  test("at the head the kept answer is the node's; back on the main chain it is again", () => {
    const tip = chainAt({ "107": recorded.block });
    for (const form of BLOCK_FORMS) {
      expect(blockLive.now(atTip[form], tip.chain)).toBe(atTip[form]);
      expect(blockLive.now(leftMainChain[form], twoLater().chain)).toBe(twoBlocksLater[form]);
    }
  });

  test("hex (verbosity 0, verbose false) has nothing live: kept and given as it is", () => {
    expect(atTip["getblock 0"]).toBe(leftMainChain["getblock 0"]);
    expect(blockLive.now(atTip["getblock 0"], left().chain)).toBe(atTip["getblock 0"]);
    expect(blockLive.now(atTip["getblockheader hex"], twoLater().chain)).toBe(atTip["getblockheader hex"]);
    const { noted } = twoLater();
    expect(blockLive.keeps(atTip["getblock 0"], { noteHeight: (h, n) => void noted.set(h, n) }, [])).toBe(
      true,
    );
  });

  test("every block answer is kept (off the main chain too), noting the block's height", () => {
    const noted = new Map<string, bigint>();
    const heights = { noteHeight: (hash: string, height: bigint) => void noted.set(hash, height) };
    expect(blockLive.keeps(leftMainChain["getblock 2"], heights, [])).toBe(true);
    expect(noted.get(recorded.block)).toBe(HEIGHT);
    expect(blockLive.keeps('{"hash":"00"}', heights, [])).toBe(false);
  });

  test("past the followed head (the node is ahead): the node answers", () => {
    const behind = chainAt({ "106": "2".repeat(64) });
    expect(blockLive.now(atTip["getblock 1"], behind.chain)).toBeUndefined();
  });
});

describe("below the followed window (final blocks)", () => {
  /** The same chain 93 blocks on: 107 and 108 are final, out of the window. */
  const far = () => {
    const canonical: Record<string, string> = {};
    for (let n = 194; n <= 200; n++) canonical[n] = n.toString(16).padStart(64, "0");
    return chainAt(canonical);
  };

  test("a text written when the block and its next were final says both for good", () => {
    // Made live at head 113 (the block at the window's floor), then at 114: 8 confirmations, its next 7.
    const canonical: Record<string, string> = { "107": recorded.block, "108": next! };
    for (let n = 109; n <= 113; n++) canonical[n] = n.toString(16).padStart(64, "0");
    const at113 = blockLive.now(atTip["getblock 1"], chainAt(canonical).chain)!;
    canonical["114"] = "e".repeat(64);
    const at114 = blockLive.now(at113, chainAt(canonical).chain)!;
    expect(at114).toBe(twoBlocksLater["getblock 1"].replace('"confirmations":3,', '"confirmations":8,'));
    expect(blockLive.now(at114, far().chain)).toBe(
      at114.replace('"confirmations":8,', '"confirmations":94,'),
    );
  });

  test("a text written while the block was shallow cannot say: the node answers (its answer is kept)", () => {
    expect(blockLive.now(twoBlocksLater["getblock 1"], far().chain)).toBeUndefined();
    expect(blockLive.now(atTip["getblockheader"], far().chain)).toBeUndefined();
  });

  test("a next block that was not yet final when written cannot be told either", () => {
    const canonical: Record<string, string> = { "107": recorded.block, "108": next! };
    for (let n = 109; n <= 113; n++) canonical[n] = n.toString(16).padStart(64, "0");
    // 7 confirmations: the block was final (6 deep), its next one was not.
    const at113 = blockLive.now(atTip["getblock 1"], chainAt(canonical).chain)!;
    expect(blockLive.now(at113, far().chain)).toBeUndefined();
  });
});

describe("Bitcoin Core 23+'s order: nextblockhash before the transactions", () => {
  const text = core.answers["getblock verbosity 1 (23.0+ order)"];
  const hash = "00000000000000000002a7c4c1e48d76c5a37902165a270156b7a8d72728a054";
  const nextHash = "00000000000000000000e26b239cf19ec7ace5edd9694d51a3f6933247720947";

  test("at the tip: no next block, removed with its comma; confirmations 1", () => {
    const live = blockLive.now(text, chainAt({ "800000": hash }).chain);
    expect(live).toBe(
      text
        .replace('"confirmations":25877,', '"confirmations":1,')
        .replace(`,"nextblockhash":"${nextHash}"`, ""),
    );
    expect(JSON.parse(live!).strippedsize).toBe(786115);
  });

  test("another next block: replaced in place", () => {
    const other = "f".repeat(64);
    const live = blockLive.now(text, chainAt({ "800000": hash, "800001": other }).chain);
    expect(live).toBe(text.replace('"confirmations":25877,', '"confirmations":2,').replace(nextHash, other));
  });

  test("block 0 gaining a next block: the node answers (there is no previousblockhash to follow)", () => {
    const genesis =
      '{"hash":"530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9","confirmations":1,"height":0,"nTx":1}';
    const chain = chainAt({
      "0": "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9",
      "1": "a".repeat(64),
    });
    expect(blockLive.now(genesis, chain.chain)).toBeUndefined();
  });
});

describe("a confirmed transaction kept by id, made live", () => {
  const forms = ["getrawtransaction verbose", "getrawtransaction verbose in block"] as const;

  test("confirmations from its block's height, as the node answered (with and without the block asked)", () => {
    for (const form of forms) {
      expect(transactionLive.now(atTip[form], twoLater().chain)).toBe(twoBlocksLater[form]);
      expect(transactionLive.now(atTip[form], replaced().chain)).toBe(nextReplaced[form]);
    }
  });

  test("its block's height known only from a note (out of the window): still counted", () => {
    const canonical: Record<string, string> = {};
    for (let n = 194; n <= 200; n++) canonical[n] = n.toString(16).padStart(64, "0");
    const { chain } = chainAt(canonical, { heights: { [recorded.block]: HEIGHT } });
    // Written with 3 confirmations: not final then, so not told now.
    expect(transactionLive.now(twoBlocksLater[forms[0]], chain)).toBeUndefined();
    const final = twoBlocksLater[forms[0]].replace('"confirmations":3,', '"confirmations":9,');
    expect(transactionLive.now(final, chain)).toBe(
      final.replace('"confirmations":9,', '"confirmations":94,'),
    );
  });

  test("its block off the main chain, or its height unknown: the node answers", () => {
    for (const form of forms) expect(transactionLive.now(atTip[form], left().chain)).toBeUndefined();
    const unknown = chainAt({ "200": "3".repeat(64) });
    expect(transactionLive.now(atTip[forms[0]], unknown.chain)).toBeUndefined();
  });

  test("kept only once in a block of the main chain: not from the mempool, not off the chain, not hex", () => {
    const heights = { noteHeight() {} };
    const txid = "1".repeat(64);
    const block = "2".repeat(64);
    expect(transactionLive.keeps(atTip[forms[0]], heights, [txid, true])).toBe(true);
    expect(transactionLive.keeps(atTip[forms[1]], heights, [txid, true, block])).toBe(true);
    // Back in the mempool (no block), and asked in its block that left the chain (confirmations 0).
    expect(transactionLive.keeps(leftMainChain[forms[0]], heights, [txid, true])).toBe(false);
    expect(transactionLive.keeps(leftMainChain[forms[1]], heights, [txid, true, block])).toBe(false);
    // Hex without a block: its witnesses may change until it is mined.
    expect(transactionLive.keeps('"0200"', heights, [txid, false])).toBe(false);
    expect(transactionLive.keeps('"0200"', heights, [txid, false, null])).toBe(false);
  });

  test("hex asked in a block: kept, answered as it is whatever the head", () => {
    const heights = { noteHeight() {} };
    expect(transactionLive.keeps('"0200"', heights, ["1".repeat(64), false, "2".repeat(64)])).toBe(true);
    for (const at of [twoLater(), replaced(), left()])
      expect(transactionLive.now('"0200"', at.chain)).toBe('"0200"');
  });
});
