/**
 * The node engine operations call: block tags resolved against the shared head, a canonical key, identical
 * calls in flight coalesced, then the upstream pool (batching, failover). Results stay raw JSON text.
 */
import { keccak256 } from "ethers";
import type { Cache } from "../cache/cache";
import { METHOD_POLICY } from "../cache/policy";
import { quantity } from "../chain/blockRef";
import { blockAtTag, type ChainHead } from "../chain/head";
import { NodeError } from "../errors";
import { fastJson, type RawJson } from "../json";
import type { NodeClient } from "../operations/node";
import type { OperationResult } from "../operations/operation";
import { createCoalescer } from "./coalescer";
import type { PoolCallResult, UpstreamPool } from "./pool";

/** How nodes say a transaction sent again is one they already hold. */
const ALREADY_KNOWN = /already known|already imported|known transaction|already exists|alreadyknown/i;
const HEX_NUMBER = /^0x[0-9a-f]{1,16}$/;

export interface EngineEvents {
  coalesced?(method: string): void;
}

interface Resolved {
  value: unknown;
  /** The block number the value names, as node-form hex, when it names one. */
  hex?: string;
}

export function createNodeEngine(options: {
  pool: UpstreamPool;
  head: ChainHead;
  cache?: Cache;
  events?: EngineEvents;
}): NodeClient {
  const { pool, head, cache, events } = options;
  const coalescer = createCoalescer<{ raw: RawJson; upstream: string }>();

  // The hex of the last tag resolution, reused while the chain stays where it is.
  let lastN: bigint | undefined;
  let lastHex = "";
  const hexOf = (n: bigint) => {
    if (n !== lastN) {
      lastN = n;
      lastHex = quantity(n);
    }
    return lastHex;
  };

  function resolve(ref: unknown): Resolved {
    if (typeof ref !== "string") return { value: ref };
    switch (ref) {
      case "latest":
      case "safe":
      case "finalized": {
        const n = blockAtTag(head, ref);
        if (n === undefined) return { value: ref };
        const hex = hexOf(n);
        return { value: hex, hex };
      }
      case "earliest":
        return { value: "0x0", hex: "0x0" };
      case "pending":
        return { value: ref };
      default:
        return HEX_NUMBER.test(ref) ? { value: ref, hex: ref } : { value: ref };
    }
  }

  /** The params with tags as numbers (while the head is fresh), and the block they are about. */
  function prepare(method: string, params: unknown[]): { params: unknown[]; minBlock?: string } {
    const block = METHOD_POLICY[method]?.block;
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

  async function sendRawTransaction(params: unknown[]): Promise<PoolCallResult> {
    try {
      const result = await pool.call("eth_sendRawTransaction", params);
      // The head will move: learn it now rather than at the next poll.
      void pool.pollNow();
      return result;
    } catch (error) {
      // Sent again, or retried after an upstream that took it timed out: it is in the pool, and that
      // is success. Its hash is the keccak of the raw transaction.
      if (error instanceof NodeError && ALREADY_KNOWN.test(error.message)) {
        return { raw: JSON.stringify(keccak256(params[0] as string)), upstream: "" };
      }
      throw error;
    }
  }

  return {
    /** A cache hit is answered synchronously; only a call that must wait returns a Promise. */
    call(method, params): OperationResult | Promise<OperationResult> {
      const prepared = prepare(method, params);
      // Canonical: normalized params (lower-case hex, tags resolved) and the method.
      const key = `${method}\u0000${fastJson(prepared.params)}`;
      const policy = METHOD_POLICY[method];
      const cached = cache && policy && cache.cacheable(policy, prepared.params);
      if (cached) {
        const hit = cache.lookup(key, policy);
        if (hit) return { raw: hit.body, source: hit.tier };
      }
      const { promise, shared } = coalescer.run(key, async () => {
        if (method === "eth_sendRawTransaction") return sendRawTransaction(prepared.params);
        const minBlock = prepared.minBlock === undefined ? undefined : BigInt(prepared.minBlock);
        const result = await pool.call(method, prepared.params, { minBlock });
        // Answer in the form kept (bytes for a large answer): it splices without a copy.
        const kept = cached ? cache.store(key, policy, prepared.params, result.raw) : undefined;
        return kept === undefined ? result : { raw: kept, upstream: result.upstream };
      });
      if (shared) events?.coalesced?.(method);
      return promise.then(
        (result): OperationResult => ({
          raw: result.raw,
          source: shared ? "coalesced" : "miss",
          upstream: result.upstream || undefined,
        }),
      );
    },
  };
}
