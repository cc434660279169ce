/**
 * Per-key rate limits: a token bucket per caller (its API key, or its IP address in open mode). A batch
 * takes one token per call. Idle buckets are swept so the map stays bounded.
 */
import type { Rate } from "../config";
import { RateLimitedError, rateExceeded } from "../errors";

/** Buckets untouched this long are dropped (they would be full again anyway). */
const SWEEP_INTERVAL_MS = 60_000;

interface Bucket {
  tokens: number;
  updated: number;
  rate: Rate;
}

export interface RateLimiter {
  /**
   * Throws RateLimitedError when `identity` has not a whole token left, taking nothing: a refusal made
   * before a request is read further. Unlimited callers always pass.
   */
  admit(identity: string, rate: Rate | undefined): void;
  /**
   * Takes `count` tokens for `identity`, or throws RateLimitedError (rejects, when the buckets are shared
   * by the fleet: fleet/sharedLimiter.ts). Unlimited callers always pass.
   */
  take(identity: string, count: number, rate: Rate | undefined): void | Promise<void>;
  stop(): void;
}

const exceeded = rateExceeded;

export function createRateLimiter(): RateLimiter {
  const buckets = new Map<string, Bucket>();
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [identity, bucket] of buckets) {
      if (now - bucket.updated > (bucket.rate.burst / bucket.rate.perSecond) * 1000) buckets.delete(identity);
    }
  }, SWEEP_INTERVAL_MS);
  timer.unref?.();

  /**
   * The caller's bucket, refilled for the time since it was last touched. A key whose rate was read again
   * (keys reload) or changed keeps its bucket: what it spent stays spent, capped at the new burst.
   */
  function refilled(identity: string, rate: Rate): Bucket {
    const now = performance.now();
    let bucket = buckets.get(identity);
    if (!bucket) {
      bucket = { tokens: rate.burst, updated: now, rate };
      buckets.set(identity, bucket);
    }
    const old = bucket.rate;
    bucket.tokens = Math.min(old.burst, bucket.tokens + ((now - bucket.updated) / 1000) * old.perSecond);
    bucket.updated = now;
    if (old !== rate) {
      bucket.rate = rate;
      bucket.tokens = Math.min(bucket.tokens, rate.burst);
    }
    return bucket;
  }

  return {
    admit(identity, rate) {
      if (!rate) return;
      const bucket = refilled(identity, rate);
      if (bucket.tokens < 1) throw exceeded(rate, (1 - bucket.tokens) / rate.perSecond);
    },
    take(identity, count, rate) {
      if (!rate) return;
      const bucket = refilled(identity, rate);
      if (count > rate.burst) {
        throw new RateLimitedError(
          `rate limit: this request counts as ${count} calls, more than this key may make at once (${rate.burst})`,
          Math.ceil(rate.burst / rate.perSecond),
        );
      }
      if (bucket.tokens < count) throw exceeded(rate, (count - bucket.tokens) / rate.perSecond);
      bucket.tokens -= count;
    },
    stop: () => clearInterval(timer),
  };
}
