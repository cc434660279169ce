/**
 * Rate limits the fleet shares: each charge is one atomic script on Redis over the caller's token bucket
 * (refilled by Redis's own clock, so instances whose clocks differ agree), so a key's rate holds for the
 * fleet, not per instance. While Redis is unusable each charge goes to the instance's own limiter (the
 * per-instance behaviour), and comes back to the shared bucket with the connection.
 */
import type { Rate } from "../config";
import { rateExceeded } from "../errors";
import type { Fleet } from "./redis";

/** The bucket's tokens and last refill (ms), refilled, charged if it can pay, and kept while it refills. */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local wait = 0
if tokens >= cost then tokens = tokens - cost else wait = math.ceil((cost - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
`;

/** Refusals remembered at most (each ends on its caller's next request, or all at once past this). */
const MAX_REFUSED = 100_000;

/** What the guard asks of a limiter (http/rateLimit.ts): `take` may wait for the fleet's answer. */
export interface Limiter {
  admit(identity: string, rate: Rate | undefined): void;
  take(identity: string, count: number, rate: Rate | undefined): void | Promise<void>;
  stop(): void;
}

export function createSharedLimiter(options: { fleet: Fleet; local: Limiter }): Limiter {
  const { fleet, local } = options;
  const sha = new Bun.CryptoHasher("sha1").update(TAKE).digest("hex");
  /** Callers the fleet refused, until when (ms): refused again before anything is read. */
  const refusedUntil = new Map<string, number>();
  const exceeded = (rate: Rate, waitMs: number) => rateExceeded(rate, waitMs / 1000);

  async function take(identity: string, count: number, rate: Rate): Promise<void> {
    const args = [String(rate.perSecond), String(rate.burst), String(count)];
    const key = `${fleet.prefix}r:${identity}`;
    const wait = await fleet.run("rate_limit", async (client) => {
      try {
        return (await client.send("EVALSHA", [sha, "1", key, ...args])) as number;
      } catch (error) {
        // The script is not in this server's cache yet (a new or restarted Redis): send it whole once.
        if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
        return (await client.send("EVAL", [TAKE, "1", key, ...args])) as number;
      }
    });
    if (wait === undefined) return local.take(identity, count, rate);
    if (wait > 0) {
      if (refusedUntil.size >= MAX_REFUSED) refusedUntil.clear();
      refusedUntil.set(identity, Date.now() + wait);
      throw exceeded(rate, wait);
    }
  }

  return {
    admit(identity, rate) {
      if (!rate) return;
      const until = refusedUntil.get(identity);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left > 0) throw exceeded(rate, left);
      refusedUntil.delete(identity);
    },
    take(identity, count, rate) {
      if (!rate) return;
      // A charge no bucket could pay is refused as the local limiter refuses it, without asking.
      if (count > rate.burst || !fleet.up) return local.take(identity, count, rate);
      return take(identity, count, rate);
    },
    stop() {
      local.stop();
    },
  };
}
