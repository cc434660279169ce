/**
 * The follower's reorg walk on blocks recorded from anvil (chainFollower.test.json: branch a, blocks 0 to 4; branch b,
 * blocks 3 to 5 forked after block 2), through a fake pool that answers block reads from whichever branch is
 * canonical now, and reports the heads a test pushes as an upstream would. A family's follower test reads
 * its own recorded blocks the same way, through its node protocol and block references.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { BlockHeader } from "../blockHeader";
import { NodeError } from "../errors";
import { evmBlockRefs } from "../families/evm/blockRef";
import { evmFinalityTags, evmNodeProtocol } from "../families/evm/nodeProtocol";
import { createLogger } from "../log";
import {
  type ChainChange,
  type ChainFollower,
  createChainFollower,
  type FollowedPool,
} from "./chainFollower";
import recorded from "./chainFollower.test.json";

/** The error a 2-deep reorg from block 3, the last taken as final, logs at head 5. */
const pastFinalityFrom3 = {
  time: expect.any(String),
  level: "error",
  msg: "chain reorganization 2 blocks deep, past the finality depth: blocks from 3 up were taken as final; answers about them are dropped from every cache tier and the index is rewound",
  from: "3",
  depth: 2,
  head: "5",
  finalized: "3",
} as never;

/** More than the chain's length: nothing is final, so the walk may go down to the fork. */
const CONFIRMATIONS = 64;
const POLL_MS = 1_000;

const rawOf = (block: object) => JSON.stringify(block);
const A = recorded.a.map(rawOf);
const B = recorded.b.map(rawOf);
const header = (raw: string) => evmNodeProtocol.parseHeader(raw)!;
/** Branch a up to `top`, then branch b's blocks from 3 up to `bTop` (none when undefined). */
function branch(top: number, bTop?: number): string[] {
  return bTop === undefined ? A.slice(0, top + 1) : [...A.slice(0, 3), ...B.slice(0, bTop - 2)];
}
const short = (blocks: BlockHeader[]) => blocks.map((b) => `${b.number}:${b.hash.slice(0, 10)}`);
const named = (raws: string[]) => short(raws.map(header));

interface FakePool extends FollowedPool {
  /** The canonical chain now, by height: each block's JSON. */
  chain: string[];
  /** The height the node's `finalized` tag names now; undefined: the node lacks the tag. */
  finalized?: number;
  /** The heights the follower read, in order. */
  reads: bigint[];
  /** Reports a head, as an upstream's push or poll does. */
  push(raw: string): void;
}

/** An EVM node behind a pool: block reads by number from `chain`; `finalized` as set, no `safe`. */
function fakePool(): FakePool {
  const listeners: ((header: BlockHeader, upstream: string) => void)[] = [];
  const pool: FakePool = {
    chain: [],
    reads: [],
    push(raw) {
      for (const listener of listeners) listener(header(raw), "upstream-1");
    },
    async call(method, params) {
      expect(method).toBe("eth_getBlockByNumber");
      const ref = params[0] as string;
      if (ref === "finalized" && pool.finalized !== undefined) {
        return { raw: pool.chain[pool.finalized]!, upstream: "upstream-1" };
      }
      const n = evmBlockRefs.numberOf(ref);
      if (n === undefined) {
        const error = { code: -32602, message: `unknown block tag ${ref}` };
        throw new NodeError(error.code, error.message, undefined, JSON.stringify(error), "request");
      }
      pool.reads.push(n);
      return { raw: pool.chain[Number(n)] ?? "null", upstream: "upstream-1" };
    },
    onHead: (listener) => void listeners.push(listener),
    pushing: () => true,
    async pollNow() {
      pool.push(pool.chain[pool.chain.length - 1]!);
    },
  };
  return pool;
}

let follower: ChainFollower | undefined;
afterEach(() => follower?.stop());

/**
 * A follower of `pool` at the head of its chain, with every change it reports, every reorg's height and
 * every line it logs.
 */
async function follow(pool: FakePool, confirmations = CONFIRMATIONS) {
  const lines: { level: string; msg: string; depth?: number; from?: string }[] = [];
  const head = createChainFollower({
    pool,
    node: evmNodeProtocol,
    refs: evmBlockRefs,
    finalityTags: evmFinalityTags,
    confirmations,
    pollMs: POLL_MS,
    log: createLogger({ level: "warn", write: (line) => lines.push(JSON.parse(line)) }),
  });
  follower = head;
  const changes: { removed: string[]; added: string[] }[] = [];
  const reorgs: bigint[] = [];
  head.onChange((change: ChainChange) =>
    changes.push({ removed: short(change.removed), added: short(change.added) }),
  );
  head.onReorg((from) => reorgs.push(from));
  await head.refresh();
  pool.reads.length = 0;
  return { head, changes, reorgs, lines };
}

describe("the follower's reorg walk", () => {
  test("a head on another branch: walked back to the common ancestor, dropped and added blocks lowest first", async () => {
    const pool = fakePool();
    pool.chain = branch(2);
    const { head, changes, reorgs } = await follow(pool);
    expect(head.headBlock()?.number).toBe(2n);

    // Heads that extend the chain are taken as they come, without a read.
    pool.chain = branch(4);
    pool.push(A[3]!);
    pool.push(A[4]!);
    expect(changes).toEqual([
      { removed: [], added: named([A[3]!]) },
      { removed: [], added: named([A[4]!]) },
    ]);
    expect(pool.reads).toEqual([]);

    // The nodes move to branch b: its head at 5 does not link to 4, so the follower reads down to the fork.
    pool.chain = branch(2, 5);
    pool.push(B[2]!);
    await head.refresh();
    expect(pool.reads).toEqual([4n, 3n]);
    expect(reorgs).toEqual([3n]);
    expect(changes.slice(2)).toEqual([{ removed: named([A[3]!, A[4]!]), added: named(B) }]);
    for (const [i, raw] of B.entries()) expect(head.canonicalHash(BigInt(i + 3))).toBe(header(raw).hash);
    expect(head.canonicalHash(2n)).toBe(header(A[2]!).hash);
    expect(head.latest()).toBe(5n);
  });

  test("a branch pushed block by block links without a read; one of the same height replaces the head", async () => {
    const pool = fakePool();
    pool.chain = branch(4);
    const { head, changes, reorgs } = await follow(pool);
    pool.chain = branch(2, 4);
    // Lower than the head: lag (or a branch not longer yet), never a reorg by itself.
    pool.push(B[0]!);
    expect(changes).toEqual([]);
    pool.push(B[1]!);
    await head.refresh();
    expect(pool.reads).toEqual([]);
    expect(reorgs).toEqual([3n]);
    expect(changes).toEqual([{ removed: named([A[3]!, A[4]!]), added: named([B[0]!, B[1]!]) }]);
    pool.chain = branch(2, 5);
    pool.push(B[2]!);
    expect(changes.slice(1)).toEqual([{ removed: [], added: named([B[2]!]) }]);
    expect(head.latest()).toBe(5n);
  });

  test("a lower head from a lagging upstream is lag: nothing changes", async () => {
    const pool = fakePool();
    pool.chain = branch(2, 5);
    const { head, changes, reorgs } = await follow(pool);
    // An upstream still on branch a reports its blocks 3 and 4: both below the head at 5.
    pool.push(A[4]!);
    pool.push(A[3]!);
    pool.push(A[2]!);
    await head.refresh();
    expect(changes).toEqual([]);
    expect(reorgs).toEqual([]);
    expect(pool.reads).toEqual([]);
    expect(head.latest()).toBe(5n);
    expect(head.canonicalHash(4n)).toBe(header(B[1]!).hash);
    expect(head.canonicalHash(3n)).toBe(header(B[0]!).hash);
  });

  test("a reorg deeper than the finality depth: walked from the node as any other, logged as an error naming its depth", async () => {
    const pool = fakePool();
    pool.chain = branch(4);
    // One block deep: 3 is final at head 4, and branch b replaces it.
    const { head, changes, reorgs, lines } = await follow(pool, 1);
    expect(head.finalized()).toBe(3n);
    pool.chain = branch(2, 5);
    pool.push(B[2]!);
    await head.refresh();
    expect(pool.reads).toEqual([4n, 3n]);
    expect(reorgs).toEqual([3n]);
    expect(changes).toEqual([{ removed: named([A[3]!, A[4]!]), added: named(B) }]);
    expect(lines).toEqual([pastFinalityFrom3]);
    // The dropped branch, from its fork, for a block delivered before the reorg; none for a canonical one.
    const a = (i: number) => ({ number: BigInt(i), hash: header(A[i]!).hash });
    expect(head.droppedBranch(4n, a(4).hash)).toEqual([a(3), a(4)]);
    expect(head.droppedBranch(3n, a(3).hash)).toEqual([a(3)]);
    expect(head.droppedBranch(5n, header(B[2]!).hash)).toBeUndefined();
    expect(head.numberOf(header(B[0]!).hash)).toBe(3n);
    expect(head.numberOf(a(3).hash)).toBeUndefined();
  });

  test("a node's finalized block read lower before a reorg (the node amid it): the reorg is still past what was taken as final", async () => {
    const pool = fakePool();
    pool.chain = branch(4);
    pool.finalized = 3;
    const { head, reorgs, lines } = await follow(pool, 0);
    expect(head.finalized()).toBe(3n);
    // anvil_reorg rolls its chain back before it mines the new branch: its `finalized` read meanwhile is lower.
    pool.finalized = 1;
    await head.refresh();
    expect(head.finalized()).toBe(1n);
    pool.chain = branch(2, 5);
    pool.push(B[2]!);
    await head.refresh();
    expect(reorgs).toEqual([3n]);
    expect(lines).toEqual([pastFinalityFrom3]);
  });

  test("a reorg within the depth is a warning; blocks below finality stay followed for a deeper one", async () => {
    const pool = fakePool();
    pool.chain = branch(2);
    const { head, lines } = await follow(pool, 0);
    pool.chain = branch(4);
    pool.push(A[3]!);
    pool.push(A[4]!);
    // Final at once: yet the blocks followed below the head stay followed, so a reorg there is walked.
    expect(head.finalized()).toBe(4n);
    for (let i = 2; i <= 4; i++) expect(head.canonicalHash(BigInt(i))).toBe(header(A[i]!).hash);
    pool.chain = branch(2, 5);
    pool.push(B[2]!);
    await head.refresh();
    expect(lines.map((l) => [l.level, l.depth])).toEqual([["error", 2]]);
    const shallow = fakePool();
    shallow.chain = branch(4);
    const followed = await follow(shallow, 3);
    shallow.chain = branch(2, 5);
    shallow.push(B[2]!);
    await followed.head.refresh();
    expect(followed.lines.map((l) => [l.level, l.msg, l.depth])).toEqual([
      ["warn", "chain reorganization", 2],
    ]);
  });

  test("readHash reads the node, not the followed chain", async () => {
    const pool = fakePool();
    pool.chain = branch(4);
    const { head } = await follow(pool);
    pool.chain = branch(2, 4);
    expect(await head.readHash(3n)).toBe(header(B[0]!).hash);
    expect(head.canonicalHash(3n)).toBe(header(A[3]!).hash);
    expect(await head.readHash(9n)).toBeUndefined();
  });
});
