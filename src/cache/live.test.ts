/**
 * The cache's side of live answers (live.ts, policy.ts `live`) and of the `brief` rule, with a toy family:
 * a hit is the family's `now` for the followed head, made once per head and kept; a head not fresh, or a
 * `now` that cannot tell, is a miss; `keeps` decides what is kept and notes heights `now` reads later; the
 * disk tier's copy is made live too. Nothing changes for a policy without `live`.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlockRefs } from "../blockRef";
import { createLogger } from "../log";
import { type CanonicalChain, createCache } from "./cache";
import { createDiskTier } from "./disk";
import { createMemoryTier } from "./memory";
import type { LiveAnswer, MethodPolicy } from "./policy";

const refs = {
  encode: (n: bigint) => n.toString(),
  numberOf: (ref: unknown) => (typeof ref === "number" ? BigInt(ref) : undefined),
  tags: false,
  normalize: () => undefined,
  isHash: (v: string) => /^[0-9a-f]{4}$/.test(v),
  normalizeHash: (h: string) => h,
} satisfies BlockRefs;

/** A followed chain whose head the test moves. */
function followed() {
  const state = { head: 10n as bigint | undefined, hashes: new Map<bigint, string>(), final: 5n };
  for (let n = 5n; n <= 10n; n++) state.hashes.set(n, `h${n}`.padStart(4, "0"));
  const chain: CanonicalChain = {
    latest: () => state.head,
    finalized: () => state.final,
    canonicalHash: (n) => state.hashes.get(n),
    numberOf: (hash) => [...state.hashes].find(([, h]) => h === hash)?.[0],
    onReorg() {},
    onFinalized() {},
  };
  return { chain, state };
}

/** A toy answer `{"block":"<hash>","height":N,"seen":<head>}` whose `seen` follows the head. */
const calls = { now: 0, keeps: 0 };
const toy: LiveAnswer = {
  keeps(raw, heights) {
    calls.keeps++;
    const { block, height } = JSON.parse(raw) as { block: string; height?: number };
    if (height !== undefined) heights.noteHeight(block, BigInt(height));
    return block !== "none";
  },
  now(stored, chain) {
    calls.now++;
    const { block } = JSON.parse(stored) as { block: string };
    const height = chain.heightOf(block);
    if (height === undefined) return undefined;
    return stored.replace(/"seen":\d+/, `"seen":${chain.head.number - height + 1n}`);
  },
};
const LIVE: MethodPolicy = { cache: "static", live: toy };

function cacheWith(options: { disk?: ReturnType<typeof createDiskTier> } = {}) {
  const { chain, state } = followed();
  const memory = createMemoryTier({ maxBytes: 1 << 20 });
  const cache = createCache({
    chain,
    refs,
    memory,
    disk: options.disk,
    headTtlMs: 1_000,
    unfinalizedTtlMs: 1_000,
  });
  return { cache, state, memory };
}

describe("live answers", () => {
  test("a hit is `now` at the followed head, made once per head; a head not fresh is a miss", () => {
    const { cache, state } = cacheWith();
    calls.now = 0;
    cache.store("k", LIVE, [], '{"block":"00h8","seen":1}');
    expect(cache.lookup("k", LIVE)?.body).toBe('{"block":"00h8","seen":3}');
    expect(cache.lookup("k", LIVE)?.body).toBe('{"block":"00h8","seen":3}');
    expect(calls.now).toBe(1);
    state.head = 11n;
    state.hashes.set(11n, "0h11");
    expect(cache.lookup("k", LIVE)?.body).toBe('{"block":"00h8","seen":4}');
    expect(calls.now).toBe(2);
    state.head = undefined;
    expect(cache.lookup("k", LIVE)).toBeUndefined();
  });

  test("`now` that cannot tell is a miss; `keeps` false is never kept; heights noted by `keeps` are read", () => {
    const { cache } = cacheWith();
    cache.store("unknown", LIVE, [], '{"block":"beef","seen":1}');
    expect(cache.lookup("unknown", LIVE)).toBeUndefined();
    expect(cache.store("none", LIVE, [], '{"block":"none","seen":1}')).toBeUndefined();
    expect(cache.lookup("none", LIVE)).toBeUndefined();
    // A block out of the followed window, its height noted when an answer about it was kept.
    cache.store("noted", LIVE, [], '{"block":"cafe","height":2,"seen":1}');
    expect(cache.lookup("noted", LIVE)?.body).toBe('{"block":"cafe","height":2,"seen":9}');
  });

  test("the disk tier's copy (a restart) is made live as the memory's is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cg-live-"));
    try {
      const disk = createDiskTier({ dir, maxBytes: 1 << 24, log: createLogger({ level: "error" }) });
      const first = cacheWith({ disk });
      first.cache.store("k", LIVE, [], '{"block":"00h7","seen":1}');
      await disk.flush();
      const second = cacheWith({ disk });
      second.state.head = 9n;
      const hit = second.cache.lookup("k", LIVE);
      expect(hit).toEqual({ body: '{"block":"00h7","seen":3}', tier: "disk" });
      expect(second.cache.lookup("k", LIVE)).toEqual({ body: '{"block":"00h7","seen":3}', tier: "memory" });
      await disk.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a policy without `live` is the stored text as it is", () => {
    const { cache, state } = cacheWith();
    const plain: MethodPolicy = { cache: "static" };
    cache.store("p", plain, [], '{"block":"00h8","seen":1}');
    state.head = 11n;
    expect(cache.lookup("p", plain)?.body).toBe('{"block":"00h8","seen":1}');
  });
});

test("`brief` answers are kept their TTL in memory only, whatever the head does", async () => {
  const { cache } = cacheWith();
  const brief: MethodPolicy = { cache: "brief", ttlMs: 50 };
  expect(cache.cacheable(brief, [])).toBe(true);
  cache.store("m", brief, [], '{"size":1}');
  expect(cache.lookup("m", brief)?.body).toBe('{"size":1}');
  await Bun.sleep(80);
  expect(cache.lookup("m", brief)).toBeUndefined();
});
