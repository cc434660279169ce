/**
 * EVM watch-filter results (docs/interface.md §5): a processed block's indexed movements (native and
 * ERC-20 transfers, approvals) matched with the key's filters, and for check_v2 the native value moved
 * inside contract execution, read from the block's traces (final blocks' traces are cached, so a block's
 * results never change).
 */
import { LRUCache } from "lru-cache";
import { callText } from "../../engine/engineApi";
import { rfc3339 } from "../../json";
import { TransferKind } from "../../transferKind";
import {
  byKeyHash,
  type FilterResultOut,
  type ProcessedBlock,
  type WatchMatcher,
  type WatchMatcherOptions,
} from "../../watch/watchMatcher";
import { quantity } from "./blockRef";
import { blockTraces } from "./blockTraces";
import { type RawBlock, type RawReceipt, transactionFee } from "./decode";
import {
  type InternalTransfer,
  internalTransfersOfCallTraces,
  internalTransfersOfParity,
} from "./internalTransfers";
import {
  APPROVAL_KIND,
  createWatchMatchQueries,
  type MovementMatch,
  type NativeFilter,
} from "./watchMatchQueries";

/** Blocks whose internal transfers are kept (by hash: a block's traces never change). */
const INTERNAL_BLOCKS_KEPT = 256;

/** A result with where it sorts in check_v2's list: transaction, own movement (0) or internal (1), order, filter. */
interface Keyed {
  key: [number, number, number, string];
  out: FilterResultOut;
}

function byKey(a: Keyed, b: Keyed): number {
  for (let i = 0; i < 3; i++) {
    const d = (a.key[i] as number) - (b.key[i] as number);
    if (d !== 0) return d;
  }
  return a.key[3] < b.key[3] ? -1 : a.key[3] > b.key[3] ? 1 : 0;
}

function direction(filterAddress: string, from: string, to: string | null, kind: number) {
  if (kind === APPROVAL_KIND || (from === filterAddress && to === filterAddress)) return "unknown" as const;
  return to === filterAddress ? ("deposit" as const) : ("withdrawal" as const);
}

export function createEvmWatchMatcher(options: WatchMatcherOptions): WatchMatcher {
  const { engine, chain } = options;
  const queries = options.guard(createWatchMatchQueries(options.sql));
  const internalByHash = new LRUCache<string, InternalTransfer[]>({ max: INTERNAL_BLOCKS_KEPT });

  function result(m: MovementMatch, block: ProcessedBlock): FilterResultOut {
    const native = m.kind === TransferKind.trx;
    return {
      from_address: [m.from],
      to_address: m.to === null ? [] : [m.to],
      contract_address: native ? "" : m.contract!,
      type: native ? "trx" : m.kind === APPROVAL_KIND ? "approval" : "erc20",
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
      block: { hash: `0x${block.hash}`, number: Number(block.number), created_at: rfc3339(block.timestamp) },
      trx_success: !m.error,
    };
  }

  /** A processed block's internal transfers, read from its traces once (kept by block hash). */
  async function internalTransfers(block: ProcessedBlock): Promise<InternalTransfer[]> {
    const kept = internalByHash.get(block.hash);
    if (kept) return kept;
    const traces = await blockTraces(engine, quantity(block.number));
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
      callText(engine, "eth_getBlockByNumber", [ref, true]),
      callText(engine, "eth_getBlockReceipts", [ref]),
    ]);
    const transactions = (JSON.parse(full) as RawBlock).transactions;
    const list = JSON.parse(receipts) as RawReceipt[];
    return list.map((receipt, i) => transactionFee(receipt, transactions[i]!).fee);
  }

  /**
   * The internal transfers that move the native coin of one of the keys' filters, as sortable results, each
   * with its filter's key.
   */
  async function internalResults(
    keyHashes: readonly (string | null)[],
    block: ProcessedBlock,
    internal: InternalTransfer[],
  ): Promise<{ keyHash: string | null; keyed: Keyed }[]> {
    const addresses = [...new Set(internal.flatMap((t) => [t.from, t.to]))];
    const watching = new Map<string, NativeFilter[]>();
    for (const f of await queries.nativeFilters(keyHashes, addresses)) {
      watching.set(f.address, [...(watching.get(f.address) ?? []), f]);
    }
    const matched = internal.flatMap((t) => {
      const targets = new Map<string, NativeFilter>();
      for (const f of [...(watching.get(t.from) ?? []), ...(watching.get(t.to) ?? [])])
        targets.set(f.filterId, f);
      return [...targets.values()].map((f) => ({ t, f }));
    });
    const feeOf = matched.length > 0 ? await fees(block.number) : [];
    return matched.map(({ t, f }) => ({
      keyHash: f.keyHash,
      keyed: {
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
      },
    }));
  }

  /** An indexed movement's result with where it sorts in check_v2's list. */
  const own = (m: MovementMatch, block: ProcessedBlock): Keyed => ({
    key: [m.transactionIndex, 0, m.logIndex, m.filterId],
    out: result(m, block),
  });

  /**
   * check_v2's list for a block: the indexed movements and the internal value transfers, sorted; the first
   * `limit` of them when a limit is given.
   */
  async function resultsV2(keyHash: string | null, block: ProcessedBlock, limit?: number) {
    const [matches, internal] = await Promise.all([
      queries.matches(keyHash, block.number, limit === undefined ? undefined : { offset: 0, limit }),
      internalTransfers(block),
    ]);
    // Sort keys: the transaction, then its own movements (native first, then by log) before the value
    // its execution moved, then the filter.
    const keyed = matches.map((m) => own(m, block));
    if (internal.length > 0)
      for (const k of await internalResults([keyHash], block, internal)) keyed.push(k.keyed);
    keyed.sort(byKey);
    return (limit === undefined ? keyed : keyed.slice(0, limit)).map((k) => k.out);
  }

  /** check_v2's lists of a block for several keys: their movements read once, the block's traces once. */
  async function resultsV2OfKeys(keyHashes: readonly (string | null)[], block: ProcessedBlock) {
    const [matches, internal] = await Promise.all([
      queries.matchesOfKeys(keyHashes, block.number),
      internalTransfers(block),
    ]);
    const moved = internal.length > 0 ? await internalResults(keyHashes, block, internal) : [];
    const owned = matches.map((m) => ({ keyHash: m.keyHash, keyed: own(m, block) }));
    const keyed = byKeyHash(
      [...owned, ...moved],
      (k) => k.keyHash,
      (k) => k.keyed,
    );
    return new Map([...keyed].map(([key, list]) => [key, list.sort(byKey).map((k) => k.out)]));
  }

  return {
    async results(keyHash, block, version, page) {
      if (version === "v1")
        return (await queries.matches(keyHash, block.number, page)).map((m) => result(m, block));
      if (page === undefined) return resultsV2(keyHash, block);
      // The page's first offset + limit results hold at most that many indexed matches: no more are read.
      const first = await resultsV2(keyHash, block, page.offset + page.limit);
      return first.slice(page.offset, page.offset + page.limit);
    },

    async resultsOfKeys(keyHashes, block, version) {
      if (keyHashes.length === 0) return new Map();
      if (version === "v2") return resultsV2OfKeys(keyHashes, block);
      const matches = await queries.matchesOfKeys(keyHashes, block.number);
      return byKeyHash(
        matches,
        (m) => m.keyHash,
        (m) => result(m, block),
      );
    },
  };
}
