/**
 * The Bitcoin family's watch-filter results (docs/interface.md §16): one per (filter, transaction), by the
 * net rule: `net` = what the transaction pays the filter's address minus what it spends from it; `deposit`
 * when above 0, `withdrawal` when below (its value -net, so it includes the fee the address paid), `unknown`
 * when 0 (a consolidation to itself loses only the fee, so it is a withdrawal of the fee; a transaction
 * paying back exactly what it spends is unknown). `from_address` is the transaction's distinct input
 * addresses in input order (none for a coinbase), `to_address` its distinct output addresses in output order
 * (an OP_RETURN pays none), amounts in satoshis. check_v2 is check here: nothing moves value inside a
 * transaction beyond its inputs and outputs. Filters never name a contract on these chains.
 */
import type { ChainInfo } from "../../blockchain";
import { rfc3339 } from "../../json";
import {
  byKeyHash,
  type FilterResultOut,
  type ProcessedBlock,
  type WatchMatcher,
  type WatchMatcherOptions,
} from "../../watch/watchMatcher";
import { createBulkReads } from "./bulkReads";
import { createUtxoWatchQueries, type NetMatch } from "./watchMatchQueries";

export type Direction = "deposit" | "withdrawal" | "unknown";

/** What one transaction does to one filter's address, whether it is in a block or in the mempool. */
export interface NetResult {
  filterId: string;
  address: string;
  txid: string;
  net: bigint;
  fee: bigint;
  inputs: string[];
  outputs: string[];
}

export function directionOf(net: bigint): Direction {
  return net > 0n ? "deposit" : net < 0n ? "withdrawal" : "unknown";
}

/**
 * A result as check gives it; `block` null for a transaction of the mempool (the `watch_filters`
 * subscription's `"pending": true` results, which say so).
 */
export function filterResult(
  chain: ChainInfo,
  r: NetResult,
  block: { hash: string; number: number; created_at: string } | null,
): FilterResultOut {
  const amount = (value: bigint) => ({ value, decimals: chain.nativeDecimals });
  return {
    from_address: r.inputs,
    to_address: r.outputs,
    contract_address: "",
    type: "trx",
    value: amount(r.net < 0n ? -r.net : r.net),
    currency: chain.nativeSymbol,
    transaction: { hash: r.txid, fee: amount(r.fee), fee_symbol: chain.nativeSymbol },
    filter_id: r.filterId,
    filter_target: { address: r.address, direction: directionOf(r.net) },
    // The schema's block is an object: a pending result's null is the subscription's, documented there.
    block: block as FilterResultOut["block"],
    trx_success: true,
  };
}

export function createUtxoWatchMatcher(options: WatchMatcherOptions): WatchMatcher {
  const { chain } = options;
  const queries = options.guard(createUtxoWatchQueries(options.sql));
  const bulk = options.guard(createBulkReads(options.sql));

  /** A block's matches as results, in their order; the addresses their transactions pay read at once. */
  async function resultsOf(matches: NetMatch[], block: ProcessedBlock): Promise<FilterResultOut[]> {
    if (matches.length === 0) return [];
    const paid = await queries.outputAddresses(block.number, [...new Set(matches.map((m) => m.position))]);
    const where = {
      hash: block.hash,
      number: Number(block.number),
      created_at: rfc3339(block.timestamp),
    };
    return matches.map((m) => filterResult(chain, { ...m, outputs: paid.get(m.position) ?? [] }, where));
  }

  return {
    contracts: false,
    // During a bulk load the indexes by block and by address are dropped (bulkReads.ts): no block's
    // results are read, and none of its blocks is published before it ends.
    async readableUpTo() {
      const loading = await bulk.state();
      return loading && loading.fromBlock - 1n;
    },
    async results(keyHash, block: ProcessedBlock, _version, page) {
      await bulk.refuse("watch filter results");
      return resultsOf(await queries.matches(keyHash, block.number, page), block);
    },

    async resultsOfKeys(keyHashes, block) {
      await bulk.refuse("watch filter results");
      const matches = await queries.matchesOfKeys(keyHashes, block.number);
      const results = await resultsOf(matches, block);
      return byKeyHash(
        matches,
        (m) => m.keyHash,
        (_, i) => results[i]!,
      );
    },
  };
}
