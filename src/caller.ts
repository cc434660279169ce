/** Who is asking: known once the request is authenticated (http/auth.ts), used by what it may touch. */
import type { Rate } from "./config";

export interface Caller {
  /** The key as the caller sent it; null in open mode. */
  key: string | null;
  /** Its SHA-256 hex: how the caller is told apart without keeping the key itself. */
  keyHash: string | null;
  /** Its rate limit; undefined: unlimited. */
  rate: Rate | undefined;
}
