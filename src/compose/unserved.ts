/**
 * What an instance refuses by name: methods and routes the service has, but not on this instance. A call
 * of one is refused as any method not served (-32601 over JSON-RPC, 404 over REST), with a message naming
 * the chain and why, where a name the service never heard of keeps the plain refusal:
 *  - another family's names (`eth_blockNumber`, `/node/rest/eth_getBlockByNumber` on LTC), by the
 *    namespaces each family declares (families/family.ts `namespaces`): the EVM's token data methods
 *    (`watch_getTokenBalances`, `watch_getTokenMetadata`) among them, so an LTC instance with its index
 *    serves the other `watch_*` methods and refuses these as the EVM family's;
 *  - the service's data methods (`watch_*`), watch-filter routes and webhook routes (they send watch-filter
 *    results), where the family keeps no index;
 *  - over the WebSocket, `eth_subscribe`'s kinds: `watch_filters` where the family keeps no index, and those
 *    its nodes have nothing for (families/family.ts `refusesSubscription`: TRON's pending transactions).
 */
import type { Blockchain } from "../blockchain";
import { NotServedError, type ServiceError } from "../errors";
import type { ChainFamily } from "../families/family";
import type { Unserved } from "../http/app";
import { SOCKET_METHODS } from "../http/websocket";

/** The service's data methods (docs/interface.md §2, §4): every one reads the index. */
const DATA_METHOD_PREFIX = "watch_";
/** The watch-filter routes (docs/interface.md §5), which match processed blocks of the index. */
const WATCH_FILTER_PATHS = "/watch_filters/";
/** The webhook endpoints' routes (docs/interface.md §18): they send watch-filter results. */
const WEBHOOK_PATHS = /^\/webhooks(\/|$)/;
/** The hub's kind that matches the watch filters (realtime/watchFiltersSubscription.ts). */
const WATCH_FILTERS_KIND = "watch_filters";
/** Where an operation's REST route and bulk stream are, by the operation's name. */
const NAMED_PATHS = ["/node/rest/", "/node/stream/"] as const;

export function createUnserved(options: {
  /** The family of this instance. */
  family: ChainFamily;
  /** Every family of the service (families/familyOf.ts), whose namespaces are known. */
  families: readonly ChainFamily[];
  chain: Blockchain;
  /** The data operations are in the table (the family keeps an index). */
  dataOperations: boolean;
  /** The watch-filter routes are served. */
  watchFilters: boolean;
  /**
   * Whether the instance serves some method or REST route named with the prefix (its operation table): the
   * summary leaves out another family's prefixes it serves names of (TRON: `eth_*`, `get_token_*`).
   */
  servesPrefix?: (prefix: string) => boolean;
}): Unserved {
  const { family, chain } = options;
  const own = family.namespaces ?? [];
  const noIndex = `it reads the index, which the ${family.name} family does not keep yet`;
  const noWatchFilters = watchFiltersUnserved(family);

  /** Why `name` (a method's, or a REST route's) is not served here; undefined: no name the service has. */
  function why(name: string): string | undefined {
    // Every instance's WebSocket serves these: over HTTP they are the plain refusal, as on an EVM instance.
    if (SOCKET_METHODS.has(name)) return undefined;
    const refused = family.refuses?.(name);
    if (refused !== undefined) return refused;
    if (!own.some((prefix) => name.startsWith(prefix))) {
      for (const other of options.families) {
        if (other === family || !other.namespaces?.some((prefix) => name.startsWith(prefix))) continue;
        return `it is a method of the ${other.name} family, and ${chain} is served by the ${family.name} family`;
      }
    }
    if (!options.dataOperations && name.startsWith(DATA_METHOD_PREFIX)) return noIndex;
    return undefined;
  }

  return {
    summary: summaryOf(options),
    method(name): ServiceError | undefined {
      const reason = why(name);
      return reason === undefined ? undefined : new NotServedError(`the method ${name}`, chain, reason);
    },
    path(pathname): ServiceError | undefined {
      if (!options.watchFilters && pathname.startsWith(WATCH_FILTER_PATHS)) {
        return new NotServedError(pathname, chain, noWatchFilters);
      }
      if (!options.watchFilters && WEBHOOK_PATHS.test(pathname)) {
        return new NotServedError(pathname, chain, `webhooks send watch-filter results: ${noWatchFilters}`);
      }
      for (const prefix of NAMED_PATHS) {
        if (!pathname.startsWith(prefix)) continue;
        const name = pathname.slice(prefix.length);
        const reason = name.includes("/") ? undefined : why(name);
        return reason === undefined ? undefined : new NotServedError(pathname, chain, reason);
      }
      return undefined;
    },
  };
}

const watchFiltersUnserved = (family: ChainFamily) =>
  `watch filters match blocks of the index, which the ${family.name} family does not keep yet`;

/**
 * `eth_subscribe`'s refusal of a kind this instance has not and can say why of (realtime/subscriptions.ts
 * `refused`): -32601 naming the chain; undefined for a kind the service never heard of (the plain refusal).
 */
export function unservedSubscription(options: {
  family: ChainFamily;
  chain: Blockchain;
  /** The `watch_filters` kind is served. */
  watchFilters: boolean;
}): (kind: string) => ServiceError | undefined {
  const { family, chain } = options;
  return (kind) => {
    const reason =
      kind === WATCH_FILTERS_KIND && !options.watchFilters
        ? watchFiltersUnserved(family)
        : family.refusesSubscription?.(kind);
    return reason === undefined ? undefined : new NotServedError(`the subscription ${kind}`, chain, reason);
  };
}

/** What the instance refuses naming its chain, one sentence for the API docs; undefined: nothing. */
function summaryOf(options: Parameters<typeof createUnserved>[0]): string | undefined {
  const { family, chain } = options;
  const refused: string[] = [];
  for (const other of options.families) {
    const prefixes =
      other === family ? [] : (other.namespaces ?? []).filter((p) => options.servesPrefix?.(p) !== true);
    if (prefixes.length === 0) continue;
    refused.push(`the ${other.name} family's names (${prefixes.map((p) => `\`${p}*\``).join(", ")})`);
  }
  if (!options.dataOperations) {
    refused.push(
      `the service's data methods (\`watch_*\`) and watch filters, which read an index the ${family.name} family does not keep yet`,
    );
  }
  if (refused.length === 0) return undefined;
  return `Not served on ${chain}, and refused the same way (over REST: 404) with a message naming the chain and why: ${refused.join("; ")}.`;
}
