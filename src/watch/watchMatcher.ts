/**
 * What the watch filters need of a chain's family: a processed block's results for a key's filters. The
 * floor (watch/watchFilters.ts) keeps the registration, which blocks are published, and the pages callers
 * ask for; which movements a filter matches, and how a result reads, are the family's (EVM:
 * families/evm/watchMatcher.ts), from its index and its node.
 */
import type { Static } from "@sinclair/typebox";
import type { ChainInfo } from "../blockchain";
import type { Sql } from "../db/database";
import type { Engine } from "../engine/engineApi";
import type { filterResult } from "../schemas";

/** A result as a family writes it: its `type` one of the family's (`WatchMatcher.types`). */
export type FilterResultOut = Static<ReturnType<typeof filterResult>>;

/** check's results (v1), or check_v2's (v2): the family adds what it reads besides its index. */
export type WatchVersion = "v1" | "v2";

/** A processed block: indexed, and CONFIRMATIONS deep, so its results never change. */
export interface ProcessedBlock {
  number: bigint;
  /** Its hash's hex digits as the index stores them (no 0x: each family writes it in its nodes' form). */
  hash: string;
  timestamp: bigint;
}

/** The part of a block's results a caller asked for. */
export interface ResultPage {
  offset: number;
  limit: number;
}

export interface WatchMatcher {
  /**
   * Whether a filter may name a token contract (`contract_address`); false where the chain has none (the
   * Bitcoin family): such a filter is refused (422 naming the chain). Unsaid: true.
   */
  readonly contracts?: boolean;
  /**
   * The result types it gives, as the API document lists them. Unsaid: the EVM's (`trx`, `erc20`, `trc20`,
   * `approval`) where filters name contracts, `trx` where they do not.
   */
  readonly types?: readonly string[];
  /**
   * true: a block's results are published as soon as the index holds it (`lastBlockNumber` the index's last
   * block, TRON's: design §14), so a reorg can drop results already published; the `watch_filters`
   * subscription sends those again with `"removed": true`. Unsaid: blocks are published `CONFIRMATIONS`
   * deep (docs/interface.md §5.3).
   */
  readonly followsHead?: boolean;
  /**
   * Why a filter may not name this contract (the index's bytes of it), as the 422's message; undefined: it
   * may. Unsaid: any address may be named.
   */
  refusesContract?(contract: Uint8Array): Promise<string | undefined>;
  /**
   * The last block whose results can be read now, where the family's index may hold blocks it cannot answer
   * for yet (the Bitcoin family's bulk load: families/utxo/bulkReads.ts): `lastBlockNumber` stays at or
   * below it. Undefined (or unsaid): every indexed block.
   */
  readableUpTo?(): Promise<bigint | undefined>;
  /**
   * A processed block's results for the filters registered under `keyHash` (db/filterStore.ts; null in
   * open mode), in the order check and check_v2 page them; only `page` of them when given.
   */
  results(
    keyHash: string | null,
    block: ProcessedBlock,
    version: WatchVersion,
    page?: ResultPage,
  ): Promise<FilterResultOut[]>;
  /**
   * A processed block's results for each of the keys (a block's deliveries for every key with a webhook
   * endpoint, webhooks/producer.ts): each key's exactly as `results(keyHash, block, version)` gives them,
   * read at once (one query of the block's movements with those keys' filters). A key with no result is
   * absent.
   */
  resultsOfKeys(
    keyHashes: readonly (string | null)[],
    block: ProcessedBlock,
    version: WatchVersion,
  ): Promise<Map<string | null, FilterResultOut[]>>;
}

export interface WatchMatcherOptions {
  /** The database the indexer writes (the primary: a processed block is read right after it is written). */
  sql: Sql;
  /** The service's statement deadline and retries (db/guardDatabase.ts), put on the family's queries. */
  guard<T extends object>(queries: T): T;
  engine: Engine;
  chain: ChainInfo;
}

/** Items of several keys in the order given, each key's in a list of its own (in the same order). */
export function byKeyHash<T, R>(
  items: readonly T[],
  keyOf: (item: T) => string | null,
  map: (item: T, index: number) => R,
): Map<string | null, R[]> {
  const out = new Map<string | null, R[]>();
  items.forEach((item, i) => {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(map(item, i));
    else out.set(key, [map(item, i)]);
  });
  return out;
}
