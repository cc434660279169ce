/**
 * The fleet's Redis (REDIS_URL), shared by every instance of one chain: final answers (fleet/sharedCache.ts),
 * rate-limit buckets (fleet/sharedLimiter.ts) and heads (fleet/sharedHeads.ts); answers and heads only with
 * the fleet's secret to sign them (REDIS_SECRET, fleet/mac.ts), as an instance serves and follows what it
 * reads. Redis is never on the path to a failure: each use has a deadline and is skipped at once while the
 * connection is down, and the caller then does what a lone instance does. The connection is remade in the
 * background every RECONNECT_MS, for as long as it takes.
 */
import { RedisClient } from "bun";
import { hashDigits } from "../blockHeader";
import type { Logger } from "../log";
import { withTimeout } from "../timeout";

/** How long one use may take before the caller goes on without Redis (an answer not shared, a local limit). */
export const REDIS_TIMEOUT_MS = 250;
/** The wait between two attempts to connect. */
const RECONNECT_MS = 1_000;
/** How long a connection attempt may take. */
const CONNECT_TIMEOUT_MS = 2_000;
/** Failures are logged at most this often. */
const WARN_EVERY_MS = 60_000;

export type RedisUse = "cache" | "rate_limit" | "heads";

export interface FleetEvents {
  /** The connection came up (true) or went down (false). */
  connected?(up: boolean): void;
  /** A use that failed or missed its deadline. */
  error?(use: RedisUse): void;
}

export interface Fleet {
  /** What every key of this chain starts with: its chain id and genesis hash. */
  readonly prefix: string;
  readonly up: boolean;
  /** `work` on the connection within REDIS_TIMEOUT_MS; undefined when Redis is down, failed or late. */
  run<T>(use: RedisUse, work: (client: RedisClient) => Promise<T>): Promise<T | undefined>;
  /** Messages of a channel, from now on and again after every reconnection. */
  subscribe(channel: string, listener: (message: string) => void): void;
  stop(): void;
}

class Late extends Error {}

/** What every Redis key and channel of a chain starts with: its id and genesis hash. */
export const fleetPrefix = (chainId: bigint, genesisHash: string) =>
  `gw:${chainId}:${hashDigits(genesisHash).slice(0, 16)}:`;

/** A connection remade every RECONNECT_MS while it is down; `ready` runs on each new connection. */
function keepConnected(options: {
  url: string;
  ready: (client: RedisClient) => Promise<void>;
  changed: (up: boolean) => void;
  warn: (message: string, error: unknown) => void;
}) {
  const client = new RedisClient(options.url, {
    autoReconnect: false,
    enableOfflineQueue: false,
    connectionTimeout: CONNECT_TIMEOUT_MS,
  });
  let up = false;
  let stopped = false;
  let retry: Timer | undefined;
  const setUp = (value: boolean) => {
    if (up === value) return;
    up = value;
    options.changed(value);
  };
  const schedule = () => {
    if (!stopped && retry === undefined) retry = setTimeout(connect, RECONNECT_MS);
  };
  async function connect() {
    retry = undefined;
    if (stopped) return;
    try {
      await client.connect();
      await options.ready(client);
      setUp(true);
    } catch (error) {
      options.warn("Redis unreachable; trying again", error);
      client.close();
      schedule();
    }
  }
  client.onclose = () => {
    setUp(false);
    schedule();
  };
  void connect();
  return {
    client,
    get up() {
      return up;
    },
    /** Drops a connection that hangs: the uses after it skip Redis until a new one answers. */
    reset() {
      client.close();
      setUp(false);
      schedule();
    },
    stop() {
      stopped = true;
      clearTimeout(retry);
      client.onclose = null;
      client.close();
    },
  };
}

export function createFleet(options: {
  url: string;
  /** Redis's memory budget (REDIS_CACHE_MB), set with CONFIG SET when the server allows it. */
  maxMemoryMb: number;
  chainId: bigint;
  genesisHash: string;
  /** What the instance shares through Redis, for the log: "rate limits", or more with REDIS_SECRET. */
  sharing: string;
  log: Logger;
  events?: FleetEvents;
}): Fleet {
  const { log, events } = options;
  let lastWarning = 0;
  const warn = (message: string, error: unknown) => {
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = Date.now();
    log.warn(message, { error: (error as Error).message });
  };
  const listeners = new Map<string, (message: string) => void>();

  const commands = keepConnected({
    url: options.url,
    // The budget and eviction policy: the fleet's Redis is a cache, least recently used goes first.
    async ready(client) {
      try {
        await client.send("CONFIG", ["SET", "maxmemory", `${options.maxMemoryMb}mb`]);
        await client.send("CONFIG", ["SET", "maxmemory-policy", "allkeys-lru"]);
      } catch (error) {
        log.warn("Redis refused CONFIG SET: its own maxmemory and eviction policy apply", {
          error: (error as Error).message,
        });
      }
    },
    changed(up) {
      events?.connected?.(up);
      if (up) log.info(`Redis connected: ${options.sharing} shared with the fleet`);
      else log.warn("Redis lost: this instance goes on alone until it is back");
    },
    warn,
  });
  // Subscriptions take a connection of their own (it can send nothing else); remade like the other.
  const subscriber = keepConnected({
    url: options.url,
    async ready(client) {
      for (const [channel, listener] of listeners) await client.subscribe(channel, listener);
    },
    changed: () => {},
    warn,
  });

  return {
    prefix: fleetPrefix(options.chainId, options.genesisHash),
    get up() {
      return commands.up;
    },
    async run(use, work) {
      if (!commands.up) return undefined;
      try {
        return await withTimeout(work(commands.client), REDIS_TIMEOUT_MS, () => new Late());
      } catch (error) {
        events?.error?.(use);
        if (error instanceof Late) {
          warn(`Redis did not answer within ${REDIS_TIMEOUT_MS} ms: reconnecting`, error);
          commands.reset();
        } else warn("Redis failed", error);
        return undefined;
      }
    },
    subscribe(channel, listener) {
      listeners.set(channel, listener);
      if (subscriber.up)
        void subscriber.client
          .subscribe(channel, listener)
          .catch((error) => warn("Redis subscribe failed", error));
    },
    stop() {
      subscriber.stop();
      commands.stop();
    },
  };
}
