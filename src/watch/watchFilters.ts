/**
 * Address watch filters (docs/interface.md §5): registration per API key, and per-block results from the
 * index: a join of the block's movements with the caller's filters. `check_v2` adds the native value moved
 * inside contract execution, read from the block's traces when asked (final blocks' traces are cached, so
 * a block's results never change).
 */
import type { Static } from "@sinclair/typebox";
import { LRUCache } from "lru-cache";
import type { ChainInfo } from "../blockchain";
import type { Caller } from "../caller";
import type { BlockQueries } from "../db/blockQueries";
import { APPROVAL_KIND, type FilterStore, type MovementMatch, type StoredFilter } from "../db/filterStore";
import { callText, type NodeClient } from "../engine/client";
import type { ChainHead } from "../engine/head";
import { InternalError, NotFoundError, QuotaExceededError, toServiceError } from "../errors";
import { quantity } from "../families/evm/blockRef";
import { type RawBlock, type RawReceipt, transactionFee } from "../families/evm/decode";
import {
  type InternalTransfer,
  internalTransfersOfCallTraces,
  internalTransfersOfParity,
} from "../families/evm/internalTransfers";
import { rfc3339, toJson } from "../json";
import type { Logger } from "../log";
import type { FilterInfo, FilterResult } from "../schemas";
import { TransferKind } from "../transferKind";

/** Results of one check call; a client pages with `offset` until it gets fewer. */
export const CHECK_PAGE = 1_000;
/** Filters read at a time for /watch_filters/all. */
const ALL_PAGE = 1_000;
/** Blocks whose internal transfers are kept (by hash: a block's traces never change). */
const INTERNAL_BLOCKS_KEPT = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type FilterInfoOut = Static<typeof FilterInfo>;
type FilterResultOut = Static<typeof FilterResult>;

export function createWatchFilters(options: {
  filters: FilterStore;
  blocks: BlockQueries;
  node: NodeClient;
  head: ChainHead;
  chain: ChainInfo;
  /** MAX_FILTERS_PER_KEY. */
  maxFilters: number;
  /** Told of a bug that cut a list short after its answer began (nobody else sees it then). */
  log?: Logger;
}) {
  const { filters, blocks, node, head, chain, maxFilters } = options;
  const tokenType = chain.blockchain === "TRON" || chain.blockchain === "NILE" ? "trc20" : "erc20";
  const internalByHash = new LRUCache<string, InternalTransfer[]>({ max: INTERNAL_BLOCKS_KEPT });

  function info(caller: Caller, f: StoredFilter): FilterInfoOut {
    return {
      api_key: caller.key ?? "",
      blockchain: chain.blockchain,
      address: f.address,
      contract_address: f.contract ?? "",
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

  /** The last block whose results are published: indexed, and CONFIRMATIONS deep. */
  async function lastBlockNumber(): Promise<{ first: bigint; last: bigint }> {
    const progress = await blocks.progress();
    if (!progress) return { first: 0n, last: -1n };
    // The last head seen, fresh or not: a stale head must not let a block under the depth be published.
    const top = head.headBlock()?.number;
    const deep = top === undefined ? -1n : top - BigInt(chain.confirmations);
    return { first: progress.first, last: deep < progress.last ? deep : progress.last };
  }

  async function processedBlock(number: number) {
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

  function direction(filterAddress: string, from: string, to: string | null, kind: number) {
    if (kind === APPROVAL_KIND || (from === filterAddress && to === filterAddress)) return "unknown" as const;
    return to === filterAddress ? ("deposit" as const) : ("withdrawal" as const);
  }

  function result(
    m: MovementMatch,
    block: { number: bigint; hash: string; timestamp: bigint },
  ): FilterResultOut {
    const native = m.kind === TransferKind.trx;
    return {
      from_address: [m.from],
      to_address: m.to === null ? [] : [m.to],
      contract_address: native ? "" : m.contract!,
      type: native ? "trx" : m.kind === APPROVAL_KIND ? "approval" : tokenType,
      value: { value: BigInt(m.value), decimals: native ? chain.nativeDecimals : m.decimals },
      currency: native ? chain.nativeSymbol : m.symbol,
      transaction: {
        hash: m.transactionHash,
        fee: { value: BigInt(m.fee), decimals: chain.nativeDecimals },
        fee_symbol: chain.nativeSymbol,
      },
      filter_id: m.filterId,
      filter_target: {
        address: m.filterAddress,
        direction: direction(m.filterAddress, m.from, m.to, m.kind),
      },
      block: { hash: block.hash, number: Number(block.number), created_at: rfc3339(block.timestamp) },
      trx_success: !m.error,
    };
  }

  /** A processed block's internal transfers, read from its traces once (kept by block hash). */
  async function internalTransfers(block: { number: bigint; hash: string }): Promise<InternalTransfer[]> {
    const kept = internalByHash.get(block.hash);
    if (kept) return kept;
    const traces = await node.blockTraces(quantity(block.number));
    if (traces.traces === "null") return [];
    const found =
      traces.format === "parity"
        ? internalTransfersOfParity(JSON.parse(traces.traces))
        : internalTransfersOfCallTraces(JSON.parse(traces.traces), traces.transactions);
    internalByHash.set(block.hash, found);
    return found;
  }

  /** Each transaction's fee, for internal transfers (whose transactions may carry no indexed movement). */
  async function fees(block: bigint): Promise<bigint[]> {
    const ref = quantity(block);
    const [full, receipts] = await Promise.all([
      callText(node, "eth_getBlockByNumber", [ref, true]),
      callText(node, "eth_getBlockReceipts", [ref]),
    ]);
    const transactions = (JSON.parse(full) as RawBlock).transactions;
    const list = JSON.parse(receipts) as RawReceipt[];
    return list.map((receipt, i) => transactionFee(receipt, transactions[i]!).fee);
  }

  /**
   * check_v2's list for a block: the indexed movements and the internal value transfers, sorted; the first
   * `limit` of them when a limit is given.
   */
  async function resultsV2(
    caller: Caller,
    block: { number: bigint; hash: string; timestamp: bigint },
    limit?: number,
  ): Promise<FilterResultOut[]> {
    const [matches, internal] = await Promise.all([
      filters.matches(caller.keyHash, block.number, limit === undefined ? undefined : { offset: 0, limit }),
      internalTransfers(block),
    ]);
    // Sort keys: the transaction, then its own movements (native first, then by log) before the value
    // its execution moved, then the filter.
    const keyed: { key: [number, number, number, string]; out: FilterResultOut }[] = matches.map((m) => ({
      key: [m.transactionIndex, 0, m.logIndex, m.filterId],
      out: result(m, block),
    }));
    if (internal.length > 0) {
      const addresses = [...new Set(internal.flatMap((t) => [t.from, t.to]))];
      const watching = new Map<string, StoredFilter[]>();
      for (const f of await filters.nativeFilters(caller.keyHash, addresses)) {
        watching.set(f.address, [...(watching.get(f.address) ?? []), f]);
      }
      const matched = internal.flatMap((t) => {
        const targets = new Map<string, StoredFilter>();
        for (const f of [...(watching.get(t.from) ?? []), ...(watching.get(t.to) ?? [])])
          targets.set(f.filterId, f);
        return [...targets.values()].map((f) => ({ t, f }));
      });
      const feeOf = matched.length > 0 ? await fees(block.number) : [];
      for (const { t, f } of matched) {
        keyed.push({
          key: [t.transactionIndex, 1, t.order, f.filterId],
          out: result(
            {
              filterId: f.filterId,
              filterAddress: f.address,
              kind: TransferKind.trx,
              transactionIndex: t.transactionIndex,
              logIndex: t.order,
              transactionHash: t.transactionHash,
              contract: null,
              from: t.from,
              to: t.to,
              value: t.value.toString(),
              fee: (feeOf[t.transactionIndex] ?? 0n).toString(),
              error: false,
              symbol: null,
              decimals: null,
            },
            block,
          ),
        });
      }
    }
    keyed.sort((a, b) => {
      for (let i = 0; i < 3; i++) {
        const d = (a.key[i] as number) - (b.key[i] as number);
        if (d !== 0) return d;
      }
      return a.key[3] < b.key[3] ? -1 : a.key[3] > b.key[3] ? 1 : 0;
    });
    return (limit === undefined ? keyed : keyed.slice(0, limit)).map((k) => k.out);
  }

  return {
    async lastBlockNumber(): Promise<{ block_number: number }> {
      return { block_number: Number((await lastBlockNumber()).last) };
    },

    async add(
      caller: Caller,
      body: { address: string; contract_address?: string | null; with_approval?: boolean | null },
    ) {
      const filterId = await filters.add(
        caller.keyHash,
        body.address.toLowerCase(),
        body.contract_address?.toLowerCase() ?? null,
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

    async remove(caller: Caller, filterId: string) {
      if (!UUID.test(filterId) || !(await filters.remove(caller.keyHash, filterId.toLowerCase()))) {
        throw new NotFoundError(`no filter ${filterId} for this API key`);
      }
      return { detail: "filter removed", filter_id: filterId };
    },

    async info(caller: Caller, address: string) {
      return {
        filters: (await filters.list(caller.keyHash, address.toLowerCase())).map((f) => info(caller, f)),
      };
    },

    /**
     * `{filters: [...]}` of every filter of the key, written as it is read, a page of ALL_PAGE at a time: a key
     * may hold MAX_FILTERS_PER_KEY filters, and the answer never needs to be whole in memory. The first page
     * is read before the answer begins, so a failure there is an ordinary error answer (a 503 {detail});
     * one after it ends the list with an `error` member (docs/interface.md §5.2).
     */
    async all(caller: Caller): Promise<ReadableStream<Uint8Array>> {
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

    async check(caller: Caller, number: number, offset: number) {
      const block = await processedBlock(number);
      const matches = await filters.matches(caller.keyHash, block.number, { offset, limit: CHECK_PAGE });
      return { filters: matches.map((m) => result(m, block)) };
    },

    async checkV2(caller: Caller, number: number, offset: number) {
      // The page's first offset + 1000 results hold at most that many indexed matches: no more are read.
      const first = await resultsV2(caller, await processedBlock(number), offset + CHECK_PAGE);
      return { filters: first.slice(offset, offset + CHECK_PAGE) };
    },

    /** The last processed block (lastBlockNumber), -1 before any. */
    async processedUpTo(): Promise<bigint> {
      return (await lastBlockNumber()).last;
    },

    /** Every result of a processed block for the caller's filters, in check's (or check_v2's) order. */
    async results(caller: Caller, number: number, version: "v1" | "v2"): Promise<FilterResultOut[]> {
      const block = await processedBlock(number);
      if (version === "v2") return resultsV2(caller, block);
      return (await filters.matches(caller.keyHash, block.number)).map((m) => result(m, block));
    },
  };
}

export type WatchFilters = ReturnType<typeof createWatchFilters>;
