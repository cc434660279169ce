/**
 * A reorg drops the tiers this process shares with others (docs/interface.md §8.2) from its fork up, whatever
 * this process itself took as final: several workers share one disk directory, and a fleet's instances one
 * Redis, and another whose finality is deeper (another upstream, or this one lagging) may have kept final
 * answers about blocks this process now sees reorganized. Two caches on one LMDB directory (two workers), and
 * two on one real Redis (two instances), each with a followed chain the test moves: the one that sees the
 * reorg, its finality below the other's answer, must then miss that answer and not keep it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CanonicalChain, createCache, type SharedTier } from "../src/cache/cache";
import { createDiskTier, type DiskTier } from "../src/cache/disk";
import { createMemoryTier, type MemoryTier } from "../src/cache/memory";
import { evmBlockRefs } from "../src/families/evm/blockRef";
import { EVM_POLICIES } from "../src/families/evm/methods";
import { createFleet, type Fleet } from "../src/fleet/redis";
import { createSharedCache, type SharedCache } from "../src/fleet/sharedCache";
import { createLogger } from "../src/log";
import { type RedisServer, startRedis } from "./support/redis";
import { until } from "./support/until";

const log = createLogger({ level: "silent" });
const SECRET = "a-fleet-secret-of-at-least-32-characters";
const GENESIS = `0x${"ab".repeat(32)}`;
const DISK_BYTES = 64 * 1024 * 1024;
const MEMORY_BYTES = 1024 * 1024;
const HEAD = 10n;

/** eth_getBalance at block 7: an answer that does not name its block (nothing to check it against). */
const BALANCE = EVM_POLICIES.eth_getBalance!;
const PARAMS = ["0x00000000000000000000000000000000000000aa", "0x7"];
const KEY = `eth_getBalance\u0000${JSON.stringify(PARAMS)}`;
const STALE = '"0x1"';
const noFault = () => undefined;

/** A followed chain whose finality and reorgs the test moves, as chainFollower.ts would tell them. */
function followed(final: bigint) {
  const reorgs: ((from: bigint) => void)[] = [];
  const finals: ((final: bigint) => void)[] = [];
  const state = { final };
  const chain: CanonicalChain = {
    latest: () => HEAD,
    finalized: () => state.final,
    canonicalHash: (n) => (n <= HEAD ? `0x${n.toString(16).padStart(64, "0")}` : undefined),
    numberOf: () => undefined,
    onReorg: (listener) => void reorgs.push(listener),
    onFinalized: (listener) => void finals.push(listener),
  };
  return {
    chain,
    finalize(to: bigint) {
      state.final = to;
      for (const listener of finals) listener(to);
    },
    reorg: (from: bigint) => {
      for (const listener of reorgs) listener(from);
    },
  };
}

/** A process's cache: its own memory, and the disk directory or fleet tier given. */
function cacheOf(final: bigint, tiers: { disk?: DiskTier; shared?: SharedTier }) {
  const follower = followed(final);
  const memory: MemoryTier = createMemoryTier({ maxBytes: MEMORY_BYTES });
  const cache = createCache({
    chain: follower.chain,
    refs: evmBlockRefs,
    memory,
    ...tiers,
    headTtlMs: 1_000,
    unfinalizedTtlMs: 1_000,
  });
  // As the follower names its last final block once it has read it: a reorg above the final block this
  // process has seen once left the shared tiers alone.
  follower.finalize(final);
  return { cache, memory, ...follower };
}

/** Resolves after the timers due now (lmdb-js's read-snapshot renewal among them) have run. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("workers sharing a disk directory", () => {
  const dirs: string[] = [];
  const tiers: DiskTier[] = [];
  afterEach(async () => {
    for (const t of tiers.splice(0)) await t.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const diskAt = (dir: string) => {
    const t = createDiskTier({ dir, maxBytes: DISK_BYTES, log });
    tiers.push(t);
    return t;
  };

  test("a reorg above this worker's finality drops another's final record at or above its fork", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cg-reorg-tiers-"));
    dirs.push(dir);
    // Worker B's finality reaches block 8: its answer about block 7 is final, in memory and on disk.
    const diskB = diskAt(dir);
    const b = cacheOf(8n, { disk: diskB });
    expect(b.cache.store(KEY, BALANCE, PARAMS, STALE)).toBe(STALE);
    await diskB.flush();
    // Worker A lags at 5; the shared directory holds B's record, about a block A does not hold final.
    const diskA = diskAt(dir);
    const a = cacheOf(5n, { disk: diskA });
    await nextTurn();
    expect(diskA.get(KEY)).toEqual({ body: new TextEncoder().encode(STALE), height: 7n });
    // A sees blocks from 6 up replaced: B's record is about a block of the branch A left.
    a.reorg(6n);
    expect(a.cache.lookup(KEY, BALANCE)).toBeUndefined();
    expect(a.memory.peek(KEY)).toBeUndefined();
    expect(a.cache.readFinal(KEY, () => {})).toBe(false);
    // Gone from the directory, not only hidden from A: B misses it there too once the drop commits.
    await until("the drop to commit", async () => {
      await nextTurn();
      return diskB.get(KEY) === undefined ? true : undefined;
    });
    expect(a.cache.lookup(KEY, BALANCE)).toBeUndefined();
    expect(a.memory.peek(KEY)).toBeUndefined();
  });
});

describe("instances sharing the fleet's Redis", () => {
  let redis: RedisServer;
  const fleets: Fleet[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterEach(async () => {
    for (const f of fleets.splice(0)) f.stop();
    await redis.cli("flushall");
  });
  afterAll(() => redis.halt());

  /** An instance's fleet tier, once connected. */
  async function instance(): Promise<{ fleet: Fleet; shared: SharedCache }> {
    const fleet = createFleet({
      url: redis.url,
      maxMemoryMb: 64,
      chainId: 31337n,
      genesisHash: GENESIS,
      sharing: "final answers",
      log,
    });
    fleets.push(fleet);
    await until("the fleet to connect", async () => (fleet.up ? true : undefined));
    return { fleet, shared: createSharedCache(fleet, SECRET) };
  }

  /** B, final at 8, shares its answer about block 7; A, final at 5, has it to read. */
  async function sharedByB() {
    const b = await instance();
    const writer = cacheOf(8n, { shared: b.shared });
    expect(writer.cache.store(KEY, BALANCE, PARAMS, STALE)).toBe(STALE);
    await until("B's answer in Redis", () => b.shared.get(KEY));
    const a = await instance();
    return { a: { ...a, ...cacheOf(5n, { shared: a.shared }) }, b: { ...b, ...writer } };
  }

  test("a reorg above this instance's finality deletes another's final answer at or above its fork", async () => {
    const { a } = await sharedByB();
    a.reorg(6n);
    // A's finality then passes block 7 (the new branch's): the fleet's answer about it could be taken.
    a.finalize(8n);
    expect(await a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault)).toBeUndefined();
    await until("the answer to leave Redis", async () => ((await a.shared.get(KEY)) ? undefined : true));
    expect(await a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault)).toBeUndefined();
    expect(a.memory.peek(KEY)).toBeUndefined();
  });

  test("a drop Redis missed is made again as finality moves, and only then are the fleet's answers read", async () => {
    const { a, b } = await sharedByB();
    // Redis hangs through the reorg: the drop fails (the deadline), and A goes on without Redis.
    redis.freeze();
    try {
      a.reorg(6n);
      // A read of A's own misses its deadline too (whatever the reorg asked of Redis): A drops the connection.
      expect(await a.shared.get(KEY)).toBeUndefined();
      await until("A to give up on Redis", async () => (a.fleet.up ? undefined : true));
      a.finalize(8n);
      expect(await a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault)).toBeUndefined();
    } finally {
      redis.thaw();
    }
    await until("A to reconnect", async () => (a.fleet.up ? true : undefined));
    // Redis still holds B's answer of the branch A left: still a miss, until a drop reaches it.
    expect(await a.shared.get(KEY)).toBe(STALE);
    expect(await a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault)).toBeUndefined();
    a.finalize(9n);
    await until("the answer to leave Redis", async () => ((await a.shared.get(KEY)) ? undefined : true));
    // The drop done, the fleet's answers about those blocks are read again: B's of the new branch.
    const fresh = '"0x2"';
    b.memory.delete(KEY);
    expect(b.cache.store(KEY, BALANCE, PARAMS, fresh)).toBe(fresh);
    await until("B's new answer in Redis", () => b.shared.get(KEY));
    expect(await a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault)).toBe(fresh);
  });
});

test("the fleet's answers from the lowest fork up stay misses until a drop from there ends, whichever ends first", async () => {
  // Which of two drops Redis ends first, or that one fails while Redis is up, cannot be had on demand from a
  // real one: a tier whose drops the test ends, holding the other instance's answer about block 7 throughout.
  const held = new Map([[KEY, STALE]]);
  const drops: { from: bigint; end: (done: boolean) => void }[] = [];
  const shared: SharedTier = {
    get: async (key) => held.get(key),
    set: () => {},
    dropFrom: (from) => new Promise((end) => drops.push({ from, end })),
    refused: () => {},
  };
  const a = cacheOf(8n, { shared });
  const lookup = async () => {
    await nextTurn();
    return a.cache.lookupShared(KEY, BALANCE, PARAMS, noFault);
  };
  a.reorg(9n);
  a.reorg(6n);
  // The drop from 9 ends first: it left block 7's answer, the floor stays at 6.
  drops[0]!.end(true);
  expect(await lookup()).toBeUndefined();
  // The drop from 6 fails: still a miss. As finality moves it is made again, from 6.
  drops[1]!.end(false);
  expect(await lookup()).toBeUndefined();
  a.finalize(9n);
  a.finalize(10n);
  expect(drops.map((d) => d.from)).toEqual([9n, 6n, 6n]);
  expect(await lookup()).toBeUndefined();
  // Once it ends, the fleet's answers are read again (the new branch's, as another instance wrote it).
  held.set(KEY, '"0x2"');
  drops[2]!.end(true);
  expect(await lookup()).toBe('"0x2"');
});
