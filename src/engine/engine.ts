/**
 * The engine: block tags resolved against the followed head, a canonical key, the cache, identical calls
 * in flight coalesced, then the method's way to the upstreams (the family's: engine/methodTable.ts) and the
 * pool (batching, failover). Results stay raw JSON text or bytes.
 */

import type { BlockRefs } from "../blockRef";
import type { Cache } from "../cache/cache";
import { blockOfParams, type MethodPolicy, wrongBlock } from "../cache/policy";
import { UpstreamProtocolError } from "../errors";
import { fastJson, type RawJson } from "../json";
import type { UpstreamPool } from "../upstream/pool";
import { blockAtTag, type ChainFollower } from "./chainFollower";
import { createCoalescer } from "./coalescer";
import type { Engine, EngineResult } from "./engineApi";
import type { HeadMethod } from "./headMethods";
import type { MethodTable } from "./methodTable";

export interface EngineEvents {
  coalesced?(method: string): void;
}

interface Resolved {
  value: unknown;
  /** The block number the value names, when it names one. */
  n?: bigint;
}

/**
 * Params prepared (tags as numbers), the block an upstream must have reached to answer them, and what
 * their tags were resolved to.
 */
interface Prepared {
  params: unknown[];
  minBlock?: bigint;
  /** Each moving tag the params named, and the block it named. */
  named: TagAt[];
  /** Some moving value named no block (`pending`, or a head not fresh): the preparation holds only now. */
  unpinned: boolean;
}

/** A moving tag a call named, and the block it named then. */
interface TagAt {
  tag: "latest" | "safe" | "finalized";
  n: bigint;
}

/** A call made ready for the cache: its params prepared, its key, and where it may be cached. */
interface PlannedCall {
  method: string;
  prepared: Prepared;
  key: string;
  policy?: MethodPolicy;
  /** The cache, when an answer to these params could be kept. */
  tiers?: Cache;
}

export function createEngine(options: {
  pool: UpstreamPool;
  head: ChainFollower;
  /** Undefined: nothing is cached (CACHE_MEMORY_MB=0). */
  cache?: Cache;
  events?: EngineEvents;
  /** The family's node methods: their cache policies and their way to the upstreams. */
  methods: MethodTable;
  /** How the family's nodes write block numbers and hashes. */
  refs: BlockRefs;
  /** The family's methods answered from the followed head (its number, its hash). */
  headMethods?: readonly HeadMethod[];
}): Engine {
  const { pool, head, cache, events } = options;
  const coalescer = createCoalescer<{ raw: RawJson; upstream: string; fleet?: boolean }>();
  const { methods } = options;
  const fetchMiss = methods.createFetch({ pool, head, engine: () => engine });

  const { refs } = options;
  const earliest = refs.encode(0n);
  // The node form of the last tag resolution, reused while the chain stays (head methods: createHeadAnswers).
  let lastN: bigint | undefined;
  let lastRef = "";
  const refOf = (n: bigint) => {
    if (n !== lastN) {
      lastN = n;
      lastRef = refs.encode(n);
    }
    return lastRef;
  };
  const headAnswers = createHeadAnswers(head, options.headMethods ?? []);

  /** A block reference in node form, tags resolved; what a moving tag named is noted in `into`. */
  function resolve(ref: unknown, into: Prepared): Resolved {
    // A height as a JSON number (the Bitcoin family), or a family whose nodes take no tags.
    if (typeof ref !== "string" || !refs.tags) {
      const n = refs.numberOf(ref);
      return n === undefined ? { value: ref } : { value: ref, n };
    }
    switch (ref) {
      case "latest":
      case "safe":
      case "finalized": {
        const n = blockAtTag(head, ref);
        if (n === undefined) {
          into.unpinned = true;
          return { value: ref };
        }
        into.named.push({ tag: ref, n });
        return { value: refOf(n), n };
      }
      case "earliest":
        return { value: earliest, n: 0n };
      case "pending":
        into.unpinned = true;
        return { value: ref };
      default: {
        const n = refs.numberOf(ref);
        return n === undefined ? { value: ref } : { value: ref, n };
      }
    }
  }

  /** The params with tags as numbers (while the head is fresh), the block they are about, the tags named. */
  function prepare(method: string, params: unknown[]): Prepared {
    const prepared: Prepared = { params, named: [], unpinned: false };
    const ready = (out: unknown[], minBlock: bigint | undefined) => {
      prepared.params = out;
      prepared.minBlock = minBlock;
      return prepared;
    };
    const policy = methods.policy(method);
    const block = policy?.block;
    if (!block) return prepared;
    const out = params.slice();
    if (block.kind === "filter") {
      const filter = { ...(out[block.index] as Record<string, unknown>) };
      if (filter.blockHash !== undefined) return prepared;
      const from = resolve(filter.fromBlock ?? "latest", prepared);
      const to = resolve(filter.toBlock ?? "latest", prepared);
      if (from.n !== undefined) filter.fromBlock = from.value;
      if (to.n !== undefined) filter.toBlock = to.value;
      out[block.index] = filter;
      // The upstream must have reached the end of the range.
      return ready(out, to.n ?? from.n);
    }
    if (block.kind === "member") {
      // A number in a body (the node's own API): no tags there, only the block the upstream must have.
      return ready(out, blockOfParams(policy!, out, refs));
    }
    if (out.length <= block.index) {
      // An omitted optional block means latest; naming it makes equal questions share a key.
      if (!block.optional || out.length !== block.index || !refs.tags) return prepared;
      const r = resolve("latest", prepared);
      if (r.n === undefined) return prepared;
      out.push(r.value);
      return ready(out, r.n);
    }
    const value = out[block.index];
    if (typeof value === "object" && value !== null) {
      const selector = value as { blockNumber?: unknown };
      if (selector.blockNumber === undefined) return prepared;
      const r = resolve(selector.blockNumber, prepared);
      out[block.index] = { blockNumber: r.value };
      return ready(out, r.n);
    }
    const r = resolve(value, prepared);
    out[block.index] = r.value;
    return ready(out, r.n);
  }

  /**
   * A call prepares to the same params and key for as long as the blocks its tags name stay the same (for
   * ever when it names no tag): prepared once per params object and kept with those blocks. The fast path
   * shares one frozen params object among every request that sends the same text (http/paramsMemo.ts), so
   * a repeated hit skips preparing, the key's JSON and the cacheability check; a bot's `latest` call is
   * prepared again only when the head moves. The key names the block by number either way, and the cache
   * checks that number's block against the canonical chain on every lookup.
   */
  const plans = new WeakMap<unknown[], PlannedCall>();
  function plan(method: string, params: unknown[]): PlannedCall {
    const known = plans.get(params);
    if (known !== undefined && known.method === method && stillNamed(known.prepared.named)) return known;
    const prepared = prepare(method, params);
    const policy = methods.policy(method);
    const call: PlannedCall = {
      method,
      prepared,
      key: keyOf(method, prepared.params),
      policy,
      tiers: policy && cache?.cacheable(policy, prepared.params) ? cache : undefined,
    };
    if (!prepared.unpinned && Object.isFrozen(params)) plans.set(params, call);
    return call;
  }

  function stillNamed(tags: TagAt[]): boolean {
    for (const { tag, n } of tags) if (blockAtTag(head, tag) !== n) return false;
    return true;
  }

  /** Canonical: normalized params (lower-case hex, tags resolved) and the method. */
  const keyOf = (method: string, params: unknown[]) => `${method}\u0000${fastJson(params)}`;

  const engine: Engine = {
    /** A cache hit is answered synchronously; only a call that must wait returns a Promise. */
    call(method, params): EngineResult | Promise<EngineResult> {
      // The followed head answers, so the head methods and every `latest` name the same block.
      const fromHead = headAnswers(method);
      if (fromHead !== undefined) return { raw: fromHead, source: "memory" };
      const { prepared, key, policy, tiers } = plan(method, params);
      if (tiers && policy) {
        const hit = tiers.lookup(key, policy);
        if (hit) return { raw: hit.body, source: hit.tier };
      }
      const { promise, shared } = coalescer.run(key, async () => {
        // A final answer another instance of the fleet fetched costs no node call, once it passes the
        // checks a node's answer passes (the secret proves who wrote it, not that it is right).
        const fromFleet =
          tiers && policy
            ? tiers.lookupShared(key, policy, prepared.params, (raw) =>
                wrongBlock(policy, prepared.params, raw, refs),
              )
            : undefined;
        const found = fromFleet && (await fromFleet);
        if (found !== undefined) return { raw: found, upstream: "", fleet: true };
        const { minBlock } = prepared;
        const reached = policy?.block?.kind === "filter";
        const result = await fetchMiss(method, prepared.params, { minBlock, reached });
        // An answer about another block than the one asked, or that does not name its block, or of the wrong
        // shape, is the node's fault: never kept, never given (checked only on a miss).
        const wrong = policy && wrongBlock(policy, prepared.params, result.raw, refs);
        if (wrong) throw new UpstreamProtocolError(wrong);
        // An answer about a block past the head says the chain has got there (a "none" does not: `null`,
        // or the family's own form of it).
        if (minBlock !== undefined && result.raw !== "null" && !policy?.unkept?.(result.raw)) {
          head.sawBlock(minBlock);
        }
        // Answer in the form kept (bytes for a large answer): it splices without a copy. An upstream known
        // to be behind the block asked may answer, but not for keeps.
        const kept =
          tiers && policy && !result.behind
            ? tiers.store(key, policy, prepared.params, result.raw)
            : undefined;
        return kept === undefined ? result : { raw: kept, upstream: result.upstream };
      });
      if (shared) events?.coalesced?.(method);
      return promise.then(
        (result): EngineResult => ({
          raw: result.raw,
          source: shared ? "coalesced" : result.fleet ? "shared" : "miss",
          upstream: result.upstream || undefined,
        }),
      );
    },
    readStored(method, params, use) {
      const policy = methods.policy(method);
      // A live answer is never read as stored: its live members follow the head (call answers them).
      if (!cache || !policy || policy.live || !cache.cacheable(policy, params)) return false;
      return cache.readFinal(keyOf(method, params), use);
    },
  };
  return engine;
}

/**
 * The answer of a head method (HeadMethod) at the followed head, made once per head and method; undefined for
 * any other method, or while the head is not fresh (the node is asked then).
 */
function createHeadAnswers(
  head: ChainFollower,
  methods: readonly HeadMethod[],
): (method: string) => string | undefined {
  const made = new Map(methods.map((m) => [m.method, { method: m, hash: "", text: "" }]));
  return (method) => {
    const answer = made.get(method);
    if (answer === undefined) return undefined;
    const number = head.latest();
    const hash = number === undefined ? undefined : head.canonicalHash(number);
    if (hash === undefined) return undefined;
    if (hash !== answer.hash) {
      answer.hash = hash;
      answer.text = answer.method.answer({ number: number!, hash });
    }
    return answer.text;
  };
}
