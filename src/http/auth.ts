/**
 * API keys (docs/interface.md §6): query `api_key`, header `x-api-key`, `api_key` or TronGrid's
 * `TRON-PRO-API-KEY`, or for the APIs whose clients take a base URL only, the path (PATH_KEY_PREFIXES: the
 * Esplora API's `/esplora/key/<KEY>/...`, TronGrid's v1 API's `/tron/key/<KEY>/v1/...`); any one is enough, two different ones are refused. Keys come from API_KEYS and from the database, which keeps only
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

/** How soon after a reading of the keys an unknown key may make them be read again. */
const UNKNOWN_KEY_REFRESH_MS = 2_000;

export interface Auth {
  /** True when no key existed anywhere at start, until one is added. */
  readonly open: boolean;
  /** The caller; a Promise only when an unknown key makes it reload the database's keys. */
  authenticate(request: Request): Caller | Promise<Caller>;
  /**
   * A caller authenticated earlier (a WebSocket's, at its upgrade) as the keys say now: the same object
   * while nothing changed, a new one when its rate did, undefined once its key is revoked or, for a caller
   * without a key, once the service requires keys.
   */
  recheck(caller: Caller): Caller | undefined;
  /** Called after every reading of the database's keys (revocations, new keys and rates take effect). */
  onReload(listener: () => void): void;
  stop(): void;
}

/**
 * The headers that may carry a key, besides the query's `api_key`: the service's own, and TronGrid's
 * (`TRON-PRO-API-KEY`), which tronweb sends as its `headers` option says.
 */
const KEY_HEADERS = ["x-api-key", "api_key", "tron-pro-api-key"] as const;
/** Where a key may ride in the path: the Esplora API's base URL (http/esplora/esploraRoutes.ts). */
export const PATH_KEY_PREFIX = "/esplora/key/";
/** TronGrid's v1 API's (http/tronGrid/tronGridRoutes.ts): `/tron/key/<KEY>/v1/...`. */
export const TRON_PATH_KEY_PREFIX = "/tron/key/";
/** Every base URL a key may ride in: `<prefix><KEY>/...`. */
const PATH_KEY_PREFIXES = [PATH_KEY_PREFIX, TRON_PATH_KEY_PREFIX] as const;

/** The key of a path under one of PATH_KEY_PREFIXES (percent-decoded); undefined for any other path. */
function pathKey(url: string): string | undefined {
  // Only in the path itself: from its start (after the authority), before any query.
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const prefix = PATH_KEY_PREFIXES.find((p) => url.startsWith(p, pathStart));
  if (prefix === undefined) return undefined;
  const query = url.indexOf("?");
  if (query >= 0 && query < pathStart + prefix.length) return undefined;
  const start = pathStart + prefix.length;
  const end = url.indexOf("/", start);
  const raw = url.slice(start, end < 0 ? (query < 0 ? url.length : query) : end);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The key a request carries: query `api_key`, header `x-api-key`, `api_key` or `tron-pro-api-key`, or the path under
 * one of PATH_KEY_PREFIXES. Every value counts:
 * a query parameter given twice, and a header sent twice, which Bun hands over as one value joined by ", "
 * (RFC 9110 §5.3). No key holds a comma (API_KEYS is a comma-separated list; `npm run keys` makes base64url
 * keys), so a comma in a header only ever joins values. Two different keys are refused, wherever they are;
 * the same key repeated is one key.
 */
export function requestKey(request: Request): string | undefined {
  const url = request.url;
  const q = url.indexOf("?");
  let key: string | undefined;
  const take = (candidate: string) => {
    if (candidate === "") return;
    if (key !== undefined && key !== candidate) {
      throw new UnauthorizedError("the request carries two different API keys; send one");
    }
    key = candidate;
  };
  if (q >= 0) for (const value of new URLSearchParams(url.slice(q + 1)).getAll("api_key")) take(value);
  const inPath = pathKey(url);
  if (inPath !== undefined) take(inPath);
  for (const name of KEY_HEADERS) {
    const value = request.headers.get(name);
    if (value === null) continue;
    if (value.includes(",")) for (const part of value.split(",")) take(part.trim());
    else take(value);
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
  /** How often the database's keys are read again (KEYS_REFRESH_MS). */
  refreshMs: number;
  log: Logger;
}): Promise<Auth> {
  const { keySource, log, defaultRate } = options;
  const rates = new Map((options.keyRates ?? []).map((r) => [hashKey(r.key), r.rate]));
  const configured = new Map(options.apiKeys.map((k) => [hashKey(k), rates.get(hashKey(k)) ?? defaultRate]));
  let stored = new Map<string, Rate | undefined>();
  let loadedAt = 0;
  let loading: Promise<void> | undefined;
  const reloadListeners: (() => void)[] = [];

  async function reload(): Promise<void> {
    if (!keySource) return;
    loading ??= keySource
      .loadKeys()
      .then((keys) => {
        stored = new Map(keys.map((k) => [k.hash, k.rate ?? defaultRate]));
        loadedAt = Date.now();
        for (const listener of reloadListeners) {
          try {
            listener();
          } catch (error) {
            log.error("a key reload listener failed", { error });
          }
        }
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
  const timer = keySource ? setInterval(reload, options.refreshMs) : undefined;
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
  const rateOf = (hash: string) => (configured.has(hash) ? configured.get(hash) : stored.get(hash));
  const caller = (key: string, hash: string): Caller => ({ key, keyHash: hash, rate: rateOf(hash) });
  const sameRate = (a: Rate | undefined, b: Rate | undefined) =>
    a === b || (a !== undefined && b !== undefined && a.perSecond === b.perSecond && a.burst === b.burst);

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
    recheck(given) {
      if (given.keyHash === null) return isOpen() ? given : undefined;
      if (!known(given.keyHash)) return undefined;
      const rate = rateOf(given.keyHash);
      return sameRate(rate, given.rate) ? given : { ...given, rate };
    },
    onReload: (listener) => void reloadListeners.push(listener),
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
