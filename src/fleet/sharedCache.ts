/**
 * The shared tier of final answers, between an instance's own tiers and the node: what one instance of the
 * fleet fetched, the others read from Redis. Only final answers go there (they never change). A value is
 * `<MAC><key length><cache key><answer>`: the MAC (fleet/mac.ts, under REDIS_SECRET) as hex over all that
 * follows it, the key's length as KEY_LENGTH_DIGITS hex digits (in UTF-16 units, as JavaScript measures
 * the key). A value that does not verify (forged, corrupt, another key's, or cut off by the read's bound)
 * is a miss, and counted. Keys are the SHA-1 of the cache key under the chain's prefix, so two chains (or
 * two dev chains with the same id) on one Redis never meet.
 *
 * A value that verifies was written by a holder of the secret; it is still only a candidate: the engine
 * checks it as it checks a node's answer before it is kept or given.
 *
 * An answer about a block is also named, by its key, in a sorted set scored by the block's height (the
 * heights of the last HEIGHTS_KEPT blocks written, the reach of a reorg the chain follower can walk): a reorg
 * deletes the values from its fork up, so no instance reads them again. Any reorg an instance sees does,
 * as another instance's finality may be deeper than its own: with nothing to delete, that is one
 * ZRANGEBYSCORE on the sorted set (a seek, never a scan of the keyspace) in one round trip.
 */
import { createSigner, MAC_HEX_LENGTH, type Signer } from "./mac";
import type { Fleet } from "./redis";

/** A final answer never changes; the expiry only lets Redis forget what nobody asks for. */
const TTL_S = 30 * 24 * 60 * 60;
/**
 * The largest value written, and the most bytes one read takes from Redis: a larger answer is not shared
 * (one value would take a large share of Redis), and a larger value is never read whole.
 */
export const MAX_VALUE_BYTES = 8 * 1024 * 1024;
const KEY_LENGTH_DIGITS = 8;
const KEY_AT = MAC_HEX_LENGTH + KEY_LENGTH_DIGITS;
/** Heights named in the sorted set below the highest written: deeper reorgs are past the follower's reach. */
const HEIGHTS_KEPT = 1_024;
/** The sorted set is trimmed to HEIGHTS_KEPT once per this many answers named in it. */
const TRIM_EVERY = 64;
/** Values deleted per round trip when a reorg drops them, and the most rounds (a bound on the loop). */
const DROP_BATCH = 512;
const DROP_ROUNDS = 64;

export interface SharedCacheEvents {
  stored?(): void;
  bad?(): void;
}

export interface SharedCache {
  /** The answer's text, verified as the fleet's; undefined: not there, bad, or Redis unusable. */
  get(key: string): Promise<string | undefined>;
  /** Shares a final answer (about block `height`, where it is about one); never waits nor fails the caller. */
  set(key: string, body: Uint8Array, height?: bigint): void;
  /**
   * Deletes the answers about blocks at or above `height` (after a reorg); never fails.
   * Resolves true once done, false when Redis could not be reached for all of it.
   */
  dropFrom(height: bigint): Promise<boolean>;
  /** A verified value that failed the checks of a node's answer: counted as bad. */
  refused(): void;
}

const encoder = new TextEncoder();

/** The Redis key of a cache key, under the fleet's prefix (Fleet.prefix). */
export const sharedKey = (prefix: string, key: string) => `${prefix}c:${Bun.SHA1.hash(key, "hex")}`;

/** The sorted set naming the values about blocks, scored by height. */
const heightsKey = (prefix: string) => `${prefix}h`;

/** The signer of the shared tier's values of a chain, from the fleet's secret. */
export const cacheSigner = (secret: string, prefix: string) => createSigner(secret, `${prefix}c:`);

const keyLength = (key: string) => key.length.toString(16).padStart(KEY_LENGTH_DIGITS, "0");

/** A value as written to Redis: the cache key and the answer's bytes, signed. */
export function sealValue(signer: Signer, key: string, body: Uint8Array): Uint8Array {
  const signed = encoder.encode(`${keyLength(key)}${key}`);
  const value = new Uint8Array(MAC_HEX_LENGTH + signed.length + body.length);
  value.set(encoder.encode(signer.sign(signed, body)));
  value.set(signed, MAC_HEX_LENGTH);
  value.set(body, MAC_HEX_LENGTH + signed.length);
  return value;
}

/** The answer a value read from Redis holds for `key`, when it is whole, the key's and signed. */
function openValue(signer: Signer, key: string, value: string): string | undefined {
  const bodyAt = KEY_AT + key.length;
  if (
    value.length <= bodyAt ||
    value.slice(MAC_HEX_LENGTH, KEY_AT) !== keyLength(key) ||
    !value.startsWith(key, KEY_AT) ||
    !signer.verify(value.slice(0, MAC_HEX_LENGTH), value.slice(MAC_HEX_LENGTH))
  ) {
    return undefined;
  }
  return value.slice(bodyAt);
}

export function createSharedCache(fleet: Fleet, secret: string, events?: SharedCacheEvents): SharedCache {
  const signer = cacheSigner(secret, fleet.prefix);
  let named = 0;
  return {
    async get(key) {
      if (!fleet.up) return undefined;
      // Bounded in one round trip: a value past the bound comes cut off, and fails its MAC.
      const value = await fleet.run("cache", (client) =>
        client.getrange(sharedKey(fleet.prefix, key), 0, MAX_VALUE_BYTES - 1),
      );
      if (!value) return undefined;
      const body = openValue(signer, key, value);
      if (body === undefined) events?.bad?.();
      return body;
    },
    set(key, body, height) {
      if (!fleet.up || body.length > MAX_VALUE_BYTES) return;
      const value = sealValue(signer, key, body);
      if (value.length > MAX_VALUE_BYTES) return;
      const redisKey = sharedKey(fleet.prefix, key);
      void fleet
        .run("cache", async (client) => {
          if (height !== undefined) {
            const heights = heightsKey(fleet.prefix);
            // Named before it is written: a reorg that drops it can always find it.
            await client.send("ZADD", [heights, height.toString(), redisKey]);
            const below = height - BigInt(HEIGHTS_KEPT);
            if (++named % TRIM_EVERY === 0 && below > 0n) {
              await client.send("ZREMRANGEBYSCORE", [heights, "-inf", `(${below}`]);
            }
          }
          return client.set(redisKey, value, "EX", TTL_S);
        })
        .then((done) => done && events?.stored?.());
    },
    async dropFrom(height) {
      const heights = heightsKey(fleet.prefix);
      for (let round = 0; round < DROP_ROUNDS; round++) {
        const keys = (await fleet.run("cache", (client) =>
          client.send("ZRANGEBYSCORE", [
            heights,
            height.toString(),
            "+inf",
            "LIMIT",
            "0",
            String(DROP_BATCH),
          ]),
        )) as string[] | undefined;
        if (keys === undefined) return false;
        if (keys.length === 0) return true;
        const done = await fleet.run("cache", async (client) => {
          await client.del(...keys);
          return client.send("ZREM", [heights, ...keys]);
        });
        if (done === undefined) return false;
        if (keys.length < DROP_BATCH) return true;
      }
      return false;
    },
    refused: () => events?.bad?.(),
  };
}
