/**
 * The engine: block tags resolved against the followed head, a canonical key, the cache, identical calls
 * in flight coalesced, then the method's way to the upstreams (engine/methods.ts) and the pool (batching,
 * failover). Results stay raw JSON text or bytes.
 */
import type { Cache } from "../cache/cache";
import { type MethodPolicy, wrongBlock } from "../cache/policy";
import { UpstreamProtocolError } from "../errors";
import { isBlockNumberHex, quantity } from "../families/evm/blockRef";
import { fastJson, type RawJson } from "../json";
import type { UpstreamPool } from "../upstream/pool";
import type { NodeClient, NodeResult } from "./client";
import { createCoalescer } from "./coalescer";
import { blockAtTag, type ChainHead } from "./head";
import { createMethods, METHODS } from "./methods";

export interface EngineEvents {
  coalesced?(method: string): void;
}

interface Resolved {
  value: unknown;
  /** The block number the value names, as node-form hex, when it names one. */
  hex?: string;
}

/** Params prepared (tags as numbers), and the block an upstream must have reached to answer them. */
interface Prepared {
  params: unknown[];
  minBlock?: string;
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
  head: ChainHead;
  /** Undefined: nothing is cached (CACHE_MEMORY_MB=0). */
  cache?: Cache;
  events?: EngineEvents;
}): NodeClient {
  const { pool, head, cache, events } = options;
  const coalescer = createCoalescer<{ raw: RawJson; upstream: string; fleet?: boolean }>();
  const methods = createMethods({ pool, head, node: () => engine });

  // The hex of the last tag resolution (and the JSON of eth_blockNumber), reused while the chain stays.
  let lastN: bigint | undefined;
  let lastHex = "";
  let lastJson = "";
  const hexOf = (n: bigint) => {
    if (n !== lastN) {
      lastN = n;
      lastHex = quantity(n);
      lastJson = `"${lastHex}"`;
    }
    return lastHex;
  };

  /**
   * What the last preparation resolved its tags to (set by `prepare`, read by `plan`): each tag and the
   * block it named, and whether some moving value named none (`pending`, or a head not fresh).
   */
  let named: TagAt[] = [];
  let unpinned = false;

  function resolve(ref: unknown): Resolved {
    if (typeof ref !== "string") return { value: ref };
    switch (ref) {
      case "latest":
      case "safe":
      case "finalized": {
        const n = blockAtTag(head, ref);
        if (n === undefined) {
          unpinned = true;
          return { value: ref };
        }
        named.push({ tag: ref, n });
        const hex = hexOf(n);
        return { value: hex, hex };
      }
      case "earliest":
        return { value: "0x0", hex: "0x0" };
      case "pending":
        unpinned = true;
        return { value: ref };
      default:
        return isBlockNumberHex(ref) ? { value: ref, hex: ref } : { value: ref };
    }
  }

  /** The params with tags as numbers (while the head is fresh), and the block they are about. */
  function prepare(method: string, params: unknown[]): Prepared {
    named = [];
    unpinned = false;
    const block = METHODS[method]?.block;
    if (!block) return { params };
    const out = params.slice();
    if (block.kind === "filter") {
      const filter = { ...(out[block.index] as Record<string, unknown>) };
      if (filter.blockHash !== undefined) return { params };
      const from = resolve(filter.fromBlock ?? "latest");
      const to = resolve(filter.toBlock ?? "latest");
      if (from.hex !== undefined) filter.fromBlock = from.value;
      if (to.hex !== undefined) filter.toBlock = to.value;
      out[block.index] = filter;
      // The upstream must have reached the end of the range.
      return { params: out, minBlock: to.hex ?? from.hex };
    }
    if (out.length <= block.index) {
      // An omitted optional block means latest; naming it makes equal questions share a key.
      if (!block.optional || out.length !== block.index) return { params };
      const r = resolve("latest");
      if (r.hex === undefined) return { params };
      out.push(r.value);
      return { params: out, minBlock: r.hex };
    }
    const value = out[block.index];
    if (typeof value === "object" && value !== null) {
      const selector = value as { blockNumber?: unknown };
      if (selector.blockNumber === undefined) return { params };
      const r = resolve(selector.blockNumber);
      out[block.index] = { blockNumber: r.value };
      return { params: out, minBlock: r.hex };
    }
    const r = resolve(value);
    out[block.index] = r.value;
    return { params: out, minBlock: r.hex };
  }

  /**
   * A call prepares to the same params and key for as long as the blocks its tags name stay the same (for
   * ever when it names no tag): prepared once per params object and kept with those blocks. The fast path
   * shares one frozen params object among every request that sends the same text (http/paramsMemo.ts), so
   * a repeated hit skips preparing, the key's JSON and the cacheability check; a bot's `latest` call is
   * prepared again only when the head moves. The key names the block by number either way, and the cache
   * checks that number's block against the canonical chain on every lookup.
   */
  const plans = new WeakMap<unknown[], { call: PlannedCall; named: TagAt[] }>();
  function plan(method: string, params: unknown[]): PlannedCall {
    const known = plans.get(params);
    if (known !== undefined && known.call.method === method && stillNamed(known.named)) return known.call;
    const prepared = prepare(method, params);
    const policy = METHODS[method];
    const call: PlannedCall = {
      method,
      prepared,
      key: keyOf(method, prepared.params),
      policy,
      tiers: policy && cache?.cacheable(policy, prepared.params) ? cache : undefined,
    };
    if (!unpinned && Object.isFrozen(params)) plans.set(params, { call, named });
    return call;
  }

  function stillNamed(tags: TagAt[]): boolean {
    for (const { tag, n } of tags) if (blockAtTag(head, tag) !== n) return false;
    return true;
  }

  /** Canonical: normalized params (lower-case hex, tags resolved) and the method. */
  const keyOf = (method: string, params: unknown[]) => `${method}\u0000${fastJson(params)}`;

  const engine: NodeClient = {
    /** A cache hit is answered synchronously; only a call that must wait returns a Promise. */
    call(method, params): NodeResult | Promise<NodeResult> {
      if (method === "eth_blockNumber") {
        // The followed head answers, so eth_blockNumber and every `latest` name the same block.
        const latest = head.latest();
        if (latest !== undefined) {
          hexOf(latest);
          return { raw: lastJson, source: "memory" };
        }
      }
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
                wrongBlock(policy, prepared.params, raw),
              )
            : undefined;
        const found = fromFleet && (await fromFleet);
        if (found !== undefined) return { raw: found, upstream: "", fleet: true };
        const minBlock = prepared.minBlock === undefined ? undefined : BigInt(prepared.minBlock);
        const reached = policy?.block?.kind === "filter";
        const result = await methods.fetch(method, prepared.params, { minBlock, reached });
        // An answer about another block than the one asked, or that does not name its block, or of the wrong
        // shape, is the node's fault: never kept, never given (checked only on a miss).
        const wrong = policy && wrongBlock(policy, prepared.params, result.raw);
        if (wrong) throw new UpstreamProtocolError(wrong);
        // An answer about a block past the head says the chain has got there.
        if (minBlock !== undefined && result.raw !== "null") head.sawBlock(minBlock);
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
        (result): NodeResult => ({
          raw: result.raw,
          source: shared ? "coalesced" : result.fleet ? "shared" : "miss",
          upstream: result.upstream || undefined,
        }),
      );
    },
    readStored(method, params, use) {
      const policy = METHODS[method];
      if (!cache || !policy || !cache.cacheable(policy, params)) return false;
      return cache.readFinal(keyOf(method, params), use);
    },
    blockTraces: (block) => methods.blockTraces(block),
  };
  return engine;
}
