/**
 * API keys (docs/interface.md §6): query `api_key`, header `x-api-key` or header `api_key`; any one is
 * enough, two different ones are refused. Keys come from API_KEYS and from the database, which keeps only
 * their SHA-256. Each key carries its rate limit.
 *
 * Auth never opens by itself: the service runs open only when no key exists anywhere at start (no API_KEYS,
 * an empty key table), and a key table that cannot be read at start stops the start. Closed stays closed:
 * revoking the last key means 401 for everyone. An open service closes once a key appears in the database.
 */
import type { Caller } from "../caller";
import type { Rate } from "../config";
import { hashKey, type KeySource } from "../db/apiKeys";
import { UnauthorizedError } from "../errors";
import type { Logger } from "../log";

/** How often database keys are reloaded, and how soon an unknown key may force a reload. */
const KEY_REFRESH_MS = 30_000;
const UNKNOWN_KEY_REFRESH_MS = 2_000;

export interface Auth {
  /** True when no key existed anywhere at start, until one is added. */
  readonly open: boolean;
  /** The caller; a Promise only when an unknown key makes it reload the database's keys. */
  authenticate(request: Request): Caller | Promise<Caller>;
  stop(): void;
}

/** The key a request carries: query `api_key`, header `x-api-key` or header `api_key`. */
export function requestKey(request: Request): string | undefined {
  const url = request.url;
  const q = url.indexOf("?");
  const fromQuery = q >= 0 ? new URLSearchParams(url.slice(q + 1)).get("api_key") : null;
  const fromHeader = request.headers.get("x-api-key");
  const fromAltHeader = request.headers.get("api_key");
  let key: string | undefined;
  for (const candidate of [fromQuery, fromHeader, fromAltHeader]) {
    if (candidate === null || candidate === "") continue;
    if (key !== undefined && key !== candidate) {
      throw new UnauthorizedError("the request carries two different API keys; send one");
    }
    key = candidate;
  }
  return key;
}

export async function createAuth(options: {
  apiKeys: string[];
  /** Rates of particular API_KEYS keys. */
  keyRates?: { key: string; rate: Rate }[];
  /** The rate of every caller with no rate of its own. */
  defaultRate?: Rate;
  keySource?: KeySource;
  log: Logger;
}): Promise<Auth> {
  const { keySource, log, defaultRate } = options;
  const rates = new Map((options.keyRates ?? []).map((r) => [hashKey(r.key), r.rate]));
  const configured = new Map(options.apiKeys.map((k) => [hashKey(k), rates.get(hashKey(k)) ?? defaultRate]));
  let stored = new Map<string, Rate | undefined>();
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  async function reload(): Promise<void> {
    if (!keySource) return;
    loading ??= keySource
      .loadKeys()
      .then((keys) => {
        stored = new Map(keys.map((k) => [k.hash, k.rate ?? defaultRate]));
        loadedAt = Date.now();
      })
      .catch((error) => log.warn("could not load API keys from the database", { error }))
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  if (keySource) {
    try {
      const keys = await keySource.loadKeys();
      stored = new Map(keys.map((k) => [k.hash, k.rate ?? defaultRate]));
      loadedAt = Date.now();
    } catch (error) {
      throw new Error(
        `the API key table cannot be read, so whether the service may run open is unknown: ${(error as Error).message}`,
      );
    }
  }
  let open = configured.size === 0 && stored.size === 0;
  const timer = keySource ? setInterval(reload, KEY_REFRESH_MS) : undefined;
  timer?.unref?.();

  const isOpen = () => {
    if (open && stored.size > 0) {
      open = false;
      log.warn("an API key was added: the service now requires keys");
    }
    return open;
  };
  const anonymous: Caller = { key: null, keyHash: null, rate: defaultRate };
  const known = (hash: string) => configured.has(hash) || stored.has(hash);
  const caller = (key: string, hash: string): Caller => ({
    key,
    keyHash: hash,
    rate: configured.has(hash) ? configured.get(hash) : stored.get(hash),
  });

  return {
    get open() {
      return isOpen();
    },
    authenticate(request) {
      if (isOpen()) return anonymous;
      const key = requestKey(request);
      if (key === undefined) {
        throw new UnauthorizedError(
          "missing API key: pass it as the api_key query parameter or the x-api-key header",
        );
      }
      const hash = hashKey(key);
      if (known(hash)) return caller(key, hash);
      // A key added to the database since the last load is honoured without waiting for the timer.
      if (keySource && Date.now() - loadedAt > UNKNOWN_KEY_REFRESH_MS) {
        return reload().then(() => {
          if (known(hash)) return caller(key, hash);
          throw new UnauthorizedError("invalid API key");
        });
      }
      throw new UnauthorizedError("invalid API key");
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
