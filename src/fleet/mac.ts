/**
 * What the fleet writes to Redis is signed with its secret (REDIS_SECRET): whoever can reach Redis without
 * it could otherwise make every instance serve and keep an answer of theirs, or follow a head of theirs. A
 * CRC catches corruption, not forgery; an HMAC-SHA256 catches both. Each use signs with a key of its own,
 * HMAC(secret, the Redis name it writes under: the chain's key prefix or channel), so a value of one chain
 * or one use is never taken for another's.
 */
import { timingSafeEqual } from "node:crypto";

/** A MAC as written to Redis: lower-case hex of the 32 bytes of HMAC-SHA256. */
export const MAC_HEX_LENGTH = 64;
const MAC_BYTES = 32;

export type MacPart = string | Uint8Array;

export interface Signer {
  /** The MAC of the parts, one after the other, as hex. */
  sign(...parts: MacPart[]): string;
  /** Whether `mac` (hex) is the MAC of the parts, compared in constant time. */
  verify(mac: string, ...parts: MacPart[]): boolean;
}

export function createSigner(secret: string, name: string): Signer {
  const key = new Bun.CryptoHasher("sha256", secret).update(name).digest();
  const digest = (parts: MacPart[]) => {
    const hmac = new Bun.CryptoHasher("sha256", key);
    for (const part of parts) hmac.update(part);
    return hmac.digest();
  };
  return {
    sign: (...parts) => digest(parts).toString("hex"),
    verify(mac, ...parts) {
      const given = Buffer.from(mac, "hex");
      return given.length === MAC_BYTES && timingSafeEqual(given, digest(parts));
    },
  };
}
