/**
 * Address watch filters (docs/interface.md §5): registration per API key, which blocks are published, and
 * the pages of a block's results callers ask for. The results themselves (which movements match, and how
 * they read) are the chain family's WatchMatcher (watch/watchMatcher.ts); addresses are the family's
 * AddressCodec's (addresses.ts).
 */
import type { Static } from "@sinclair/typebox";
import type { AddressCodec } from "../addresses";
import type { ChainInfo } from "../blockchain";
import type { Caller } from "../caller";
import type { BlockQueries } from "../db/blockQueries";
import type { FilterStore, StoredFilter } from "../db/filterStore";
import type { ChainFollower } from "../engine/chainFollower";
import {
  InternalError,
  NotFoundError,
  QuotaExceededError,
  RequestValidationError,
  toServiceError,
} from "../errors";
import { rfc3339, toJson } from "../json";
import type { Logger } from "../log";
import { EVM_FILTER_TYPES, type FilterInfo } from "../schemas";
import type { FilterResultOut, ProcessedBlock, WatchMatcher, WatchVersion } from "./watchMatcher";

/** Results of one check call; a client pages with `offset` until it gets fewer. */
export const CHECK_PAGE = 1_000;
/** Filters read at a time for /watch_filters/all. */
const ALL_PAGE = 1_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type FilterInfoOut = Static<typeof FilterInfo>;

/** A filter as /watch_filters/add takes it (its addresses checked against the family's codec). */
export interface FilterBody {
  address: string;
  contract_address?: string | null;
  with_approval?: boolean | null;
}

export interface WatchFilters {
  /** The chain's name, and whether a filter may name a token contract (the routes' schemas say which). */
  readonly chain: string;
  readonly contracts: boolean;
  /** The result types the family gives (the routes' schemas list them). */
  readonly types: readonly string[];
  /** The last processed block as /watch_filters/lastBlockNumber answers it (-1 before any). */
  lastBlockNumber(): Promise<{ block_number: number }>;
  add(caller: Caller, body: FilterBody): Promise<{ filter_id: string }>;
  remove(caller: Caller, filterId: string): Promise<{ detail: string; filter_id: string }>;
  /** The caller's filters on one address. */
  info(caller: Caller, address: string): Promise<{ filters: FilterInfoOut[] }>;
  /** `{filters: [...]}` of every filter of the key, written as it is read (docs/interface.md §5.2). */
  all(caller: Caller): Promise<ReadableStream<Uint8Array>>;
  /** A page of CHECK_PAGE results of a processed block, from `offset`. */
  check(caller: Caller, number: number, offset: number): Promise<{ filters: FilterResultOut[] }>;
  /** As check, with what the family reads besides its index (EVM: value moved inside contract execution). */
  checkV2(caller: Caller, number: number, offset: number): Promise<{ filters: FilterResultOut[] }>;
  /** The last processed block (lastBlockNumber), -1 before any. */
  processedUpTo(): Promise<bigint>;
  /**
   * Every result of a processed block for the caller's filters, in check's (or check_v2's) order, and the
   * block's hash as the index holds it (hex digits).
   */
  results(
    caller: Caller,
    number: number,
    version: WatchVersion,
  ): Promise<{ hash: string; results: FilterResultOut[] }>;
  /**
   * As `results`, for each of the keys (their filters'; null: open mode's), the block checked and its
   * movements read once: a key with no result is absent.
   */
  resultsOfKeys(
    keyHashes: readonly (string | null)[],
    number: number,
    version: WatchVersion,
  ): Promise<{ hash: string; results: Map<string | null, FilterResultOut[]> }>;
}

/** The result types where filters name no contract (a coin's chain). */
const COIN_TYPES = ["trx"] as const;

export function createWatchFilters(options: {
  filters: FilterStore;
  /** The family's matching of a block against the filters. */
  matcher: WatchMatcher;
  /** The family's addresses. */
  addresses: AddressCodec;
  blocks: BlockQueries;
  head: ChainFollower;
  chain: ChainInfo;
  /** MAX_FILTERS_PER_KEY. */
  maxFilters: number;
  /** Told of a bug that cut a list short after its answer began (nobody else sees it then). */
  log?: Logger;
}): WatchFilters {
  const { filters, matcher, addresses, blocks, head, chain, maxFilters } = options;

  /** A body's address as stored; the route checked it with the same codec, so this refusal is a backstop. */
  function stored(text: string, field: string): Uint8Array {
    const canonical = addresses.canonical(text);
    if (canonical === undefined) {
      throw new RequestValidationError([
        {
          loc: ["body", field],
          msg: `Input should be ${addresses.description}`,
          type: "string_pattern_mismatch",
        },
      ]);
    }
    return addresses.toBytes(canonical);
  }

  function info(caller: Caller, f: StoredFilter): FilterInfoOut {
    return {
      api_key: caller.key ?? "",
      blockchain: chain.blockchain,
      address: addresses.fromBytes(f.address),
      contract_address: f.contract === null ? "" : addresses.fromBytes(f.contract),
      created_at: rfc3339(f.createdAt),
      filter_id: f.filterId,
      with_approval: f.withApproval,
    };
  }

  /**
   * The end of a filter list cut short once its answer began (the status line is sent): the array closed
   * and an `error` member after it, `{detail}` as a REST error body would have it, so the JSON stays valid
   * and says the list is incomplete.
   */
  function cutShort(error: unknown): string {
    const e = toServiceError(error);
    if (e instanceof InternalError) options.log?.error("a watch filter list failed", { error });
    return `],"error":${toJson({ detail: e.detail })}}`;
  }

  /** The last block whose results are published: indexed, and CONFIRMATIONS deep (or indexed: followsHead). */
  async function lastBlockNumber(): Promise<{ first: bigint; last: bigint }> {
    const [progress, readable] = await Promise.all([blocks.progress(), matcher.readableUpTo?.()]);
    if (!progress) return { first: 0n, last: -1n };
    let { last } = progress;
    if (readable !== undefined && readable < last) last = readable;
    if (matcher.followsHead) return { first: progress.first, last };
    // The last head seen, fresh or not: a stale head must not let a block under the depth be published.
    const top = head.headBlock()?.number;
    const deep = top === undefined ? -1n : top - BigInt(chain.confirmations);
    return { first: progress.first, last: deep < last ? deep : last };
  }

  async function processedBlock(number: number): Promise<ProcessedBlock> {
    const { first, last } = await lastBlockNumber();
    const n = BigInt(number);
    if (n > last) {
      throw new NotFoundError(`block ${number} is not processed yet; the last processed block is ${last}`);
    }
    if (n < first) throw new NotFoundError(`block ${number} is before the first indexed block, ${first}`);
    const block = await blocks.block(n);
    if (!block) throw new NotFoundError(`block ${number} is not in the index`);
    return { number: n, ...block };
  }

  /** A page of a processed block's results. */
  async function checkPage(caller: Caller, number: number, offset: number, version: WatchVersion) {
    const block = await processedBlock(number);
    return { filters: await matcher.results(caller.keyHash, block, version, { offset, limit: CHECK_PAGE }) };
  }

  return {
    chain: chain.blockchain,
    contracts: matcher.contracts !== false,
    types: matcher.types ?? (matcher.contracts === false ? COIN_TYPES : EVM_FILTER_TYPES),
    async lastBlockNumber() {
      return { block_number: Number((await lastBlockNumber()).last) };
    },

    async add(caller, body) {
      // Where the chain has no token contracts, the route's schema took null only (http/watchFilterRoutes.ts).
      const named = body.contract_address;
      const contract = named === null || named === undefined ? null : stored(named, "contract_address");
      const refused = contract && (await matcher.refusesContract?.(contract));
      if (refused) {
        throw new RequestValidationError([
          { loc: ["body", "contract_address"], msg: refused, type: "value_error" },
        ]);
      }
      const filterId = await filters.add(
        caller.keyHash,
        stored(body.address, "address"),
        contract,
        body.with_approval ?? false,
        maxFilters,
      );
      if (filterId === undefined) {
        throw new QuotaExceededError(
          `this key holds ${maxFilters} watch filters, the most it may (MAX_FILTERS_PER_KEY); remove some first`,
        );
      }
      return { filter_id: filterId };
    },

    async remove(caller, filterId) {
      if (!UUID.test(filterId) || !(await filters.remove(caller.keyHash, filterId.toLowerCase()))) {
        throw new NotFoundError(`no filter ${filterId} for this API key`);
      }
      return { detail: "filter removed", filter_id: filterId };
    },

    async info(caller, address) {
      return {
        filters: (await filters.list(caller.keyHash, stored(address, "address"))).map((f) => info(caller, f)),
      };
    },

    /**
     * `{filters: [...]}` of every filter of the key, written as it is read, a page of ALL_PAGE at a time: a key
     * may hold MAX_FILTERS_PER_KEY filters, and the answer never needs to be whole in memory. The first page
     * is read before the answer begins, so a failure there is an ordinary error answer (a 503 {detail});
     * one after it ends the list with an `error` member (docs/interface.md §5.2).
     */
    async all(caller) {
      let next: StoredFilter[] | undefined = await filters.page(caller.keyHash, undefined, ALL_PAGE);
      const encoder = new TextEncoder();
      let last: StoredFilter | undefined;
      let written = 0;
      let begun = false;
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const opening = begun ? "" : '{"filters":[';
            try {
              const page = next ?? (await filters.page(caller.keyHash, last, ALL_PAGE));
              next = undefined;
              let text = opening;
              for (const f of page) text += `${written++ > 0 ? "," : ""}${toJson(info(caller, f))}`;
              last = page[page.length - 1] ?? last;
              const end = page.length < ALL_PAGE;
              controller.enqueue(encoder.encode(end ? `${text}]}` : text));
              begun = true;
              if (end) controller.close();
            } catch (error) {
              controller.enqueue(encoder.encode(`${opening}${cutShort(error)}`));
              controller.close();
            }
          },
        },
        { highWaterMark: 1 },
      );
    },

    check: (caller, number, offset) => checkPage(caller, number, offset, "v1"),

    checkV2: (caller, number, offset) => checkPage(caller, number, offset, "v2"),

    async processedUpTo() {
      return (await lastBlockNumber()).last;
    },

    async results(caller, number, version) {
      const block = await processedBlock(number);
      return { hash: block.hash, results: await matcher.results(caller.keyHash, block, version) };
    },

    async resultsOfKeys(keyHashes, number, version) {
      const block = await processedBlock(number);
      return { hash: block.hash, results: await matcher.resultsOfKeys(keyHashes, block, version) };
    },
  };
}
