/**
 * The shared tier of final answers, between an instance's own tiers and the node: what one instance of the
 * fleet fetched, the others read from Redis. Only final answers go there (they never change). A value is
 * the full cache key and the answer's bytes, with a CRC32 over both: a value that does not verify (or
 * names another key) is a miss. Keys are the SHA-1 of the cache key under the chain's prefix, so two chains
 * (or two dev chains with the same id) on one Redis never meet.
 */
import type { Fleet } from "./redis";

/** A final answer never changes; the expiry only lets Redis forget what nobody asks for. */
const TTL_S = 30 * 24 * 60 * 60;
/** Answers larger than this are not shared (one value would take a large share of Redis). */
const MAX_VALUE_BYTES = 8 * 1024 * 1024;
const HEADER_BYTES = 8;

export interface SharedCacheEvents {
  stored?(): void;
  bad?(): void;
}

export interface SharedCache {
  /** The answer's bytes, or undefined (not there, bad, or Redis unusable). */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Shares a final answer; never waits and never fails the caller. */
  set(key: string, body: Uint8Array): void;
}

const encoder = new TextEncoder();

export function createSharedCache(fleet: Fleet, events?: SharedCacheEvents): SharedCache {
  const redisKey = (key: string) => `${fleet.prefix}c:${Bun.SHA1.hash(key, "hex")}`;
  return {
    async get(key) {
      if (!fleet.up) return undefined;
      const value = await fleet.run("cache", (client) => client.getBuffer(redisKey(key)));
      if (!value) return undefined;
      const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
      const keyBytes = encoder.encode(key);
      const keyLength = value.byteLength >= HEADER_BYTES ? view.getUint32(4) : -1;
      const valid =
        keyLength === keyBytes.length &&
        value.byteLength >= HEADER_BYTES + keyLength &&
        Bun.hash.crc32(value.subarray(HEADER_BYTES)) === view.getUint32(0) &&
        Buffer.compare(value.subarray(HEADER_BYTES, HEADER_BYTES + keyLength), keyBytes) === 0;
      if (!valid) {
        events?.bad?.();
        return undefined;
      }
      return value.subarray(HEADER_BYTES + keyLength);
    },
    set(key, body) {
      if (!fleet.up || body.length > MAX_VALUE_BYTES) return;
      const keyBytes = encoder.encode(key);
      const value = new Uint8Array(HEADER_BYTES + keyBytes.length + body.length);
      value.set(keyBytes, HEADER_BYTES);
      value.set(body, HEADER_BYTES + keyBytes.length);
      const view = new DataView(value.buffer);
      view.setUint32(4, keyBytes.length);
      view.setUint32(0, Bun.hash.crc32(value.subarray(HEADER_BYTES)));
      void fleet
        .run("cache", (client) => client.set(redisKey(key), value, "EX", TTL_S))
        .then((done) => done && events?.stored?.());
    },
  };
}
