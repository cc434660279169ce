/** API keys kept in the database: only their SHA-256, never the key. */
import type { Rate } from "../config";
import type { Sql } from "./database";

/** A key as the database knows it: its hash, and its own rate where it has one. */
export interface StoredKey {
  hash: string;
  rate?: Rate;
}

/** Where keys beyond API_KEYS come from (the database's api_keys table). */
export interface KeySource {
  loadKeys(): Promise<StoredKey[]>;
}

/** The SHA-256 hex of a key: all that is stored, logged or compared. */
export function hashKey(key: string): string {
  return new Bun.CryptoHasher("sha256").update(key).digest("hex");
}

export interface ApiKeyRow {
  keyHash: string;
  label: string;
  createdAt: Date;
  /** Its own rate, where it has one (else the service's RATE_LIMIT). */
  rate?: Rate;
}

export function createApiKeyStore(sql: Sql) {
  return {
    async loadKeys(): Promise<StoredKey[]> {
      const rows = await sql`select encode(key_hash, 'hex') as hash, rate_per_second, burst
        from api_keys where revoked_at is null`;
      return rows.map((r) =>
        r.rate_per_second !== null && r.burst !== null
          ? { hash: r.hash as string, rate: { perSecond: Number(r.rate_per_second), burst: Number(r.burst) } }
          : { hash: r.hash as string },
      );
    },
    async add(keyHash: string, label: string, rate?: Rate): Promise<void> {
      await sql`insert into api_keys (key_hash, label, rate_per_second, burst)
        values (decode(${keyHash}, 'hex'), ${label}, ${rate?.perSecond ?? null}, ${rate?.burst ?? null})`;
    },
    async revoke(keyHashPrefix: string): Promise<number> {
      const rows = await sql`update api_keys set revoked_at = now()
        where revoked_at is null and encode(key_hash, 'hex') like ${`${keyHashPrefix}%`} returning 1`;
      return rows.length;
    },
    async list(): Promise<ApiKeyRow[]> {
      const rows = await sql`select encode(key_hash, 'hex') as hash, label, created_at, rate_per_second, burst
        from api_keys where revoked_at is null order by created_at`;
      return rows.map((r) => ({
        keyHash: r.hash as string,
        label: r.label as string,
        createdAt: r.created_at as Date,
        ...(r.rate_per_second !== null && r.burst !== null
          ? { rate: { perSecond: Number(r.rate_per_second), burst: Number(r.burst) } }
          : {}),
      }));
    },
  };
}
