/**
 * TRON watch-filter results (design §14 "Watch filters"; docs/interface.md §17): a block's indexed
 * movements matched with the key's filters (watchMatchQueries.ts): `trx` (TRX moved by TransferContract or
 * a contract call's call_value; check_v2 adds the internal TRX transfers the index keeps, as check_v2 adds
 * the value moved inside contract execution on EVM chains), `trc20` (a TRC-20 Transfer), `approval` (a
 * TRC-20 Approval, for filters `with_approval`) and `trc10` (TransferAssetContract: `contract_address` the
 * asset id, `currency` its abbreviation, `decimals` its precision). Addresses base58, hashes as TRON writes
 * them (64 hex digits, no 0x), `fee` the transaction info's in sun, `trx_success` false where the
 * transaction's contractRet is not SUCCESS (it moved nothing). Blocks are published as soon as the index
 * holds them (`followsHead`), so a reorg's dropped results come again as removed over the subscription.
 */
import { rfc3339 } from "../../json";
import { TransferKind } from "../../transferKind";
import {
  byKeyHash,
  type FilterResultOut,
  type ProcessedBlock,
  type WatchMatcher,
  type WatchMatcherOptions,
} from "../../watch/watchMatcher";
import { tronAddresses } from "./addresses";
import { readTrc20Metadata } from "./tokenReads";
import { APPROVAL_KIND, createTronWatchMatchQueries, type TronMovementMatch } from "./watchMatchQueries";

/** The result types of the family, as FilterType lists them in its API document. */
export const TRON_FILTER_TYPES = ["trx", "trc20", "approval", "trc10"] as const;

const TYPE_OF: Record<number, (typeof TRON_FILTER_TYPES)[number]> = {
  [TransferKind.trx]: "trx",
  [TransferKind.erc20]: "trc20",
  [TransferKind.trc10]: "trc10",
  [APPROVAL_KIND]: "approval",
};

const base58 = (hex41: string) => tronAddresses.fromBytes(Buffer.from(hex41, "hex"));

function direction(m: TronMovementMatch) {
  if (m.kind === APPROVAL_KIND || (m.from === m.filterAddress && m.to === m.filterAddress)) {
    return "unknown" as const;
  }
  return m.to === m.filterAddress ? ("deposit" as const) : ("withdrawal" as const);
}

export function createTronWatchMatcher(options: WatchMatcherOptions): WatchMatcher {
  const { chain, engine } = options;
  const queries = options.guard(createTronWatchMatchQueries(options.sql));

  function result(m: TronMovementMatch, block: ProcessedBlock): FilterResultOut {
    const trx = m.kind === TransferKind.trx;
    const sun = (value: string) => ({ value: BigInt(value), decimals: chain.nativeDecimals });
    return {
      from_address: [base58(m.from)],
      to_address: m.to === null ? [] : [base58(m.to)],
      contract_address: m.contract !== null ? base58(m.contract) : (m.assetId ?? ""),
      type: TYPE_OF[m.kind]!,
      value: trx ? sun(m.value) : { value: BigInt(m.value), decimals: m.decimals },
      currency: trx ? chain.nativeSymbol : m.symbol,
      transaction: { hash: m.transactionHash, fee: sun(m.fee), fee_symbol: chain.nativeSymbol },
      filter_id: m.filterId,
      filter_target: { address: base58(m.filterAddress), direction: direction(m) },
      block: { hash: block.hash, number: Number(block.number), created_at: rfc3339(block.timestamp) },
      trx_success: !m.error,
    };
  }

  return {
    types: TRON_FILTER_TYPES,
    followsHead: true,

    async results(keyHash, block, version, page) {
      const matches = await queries.matches(keyHash, block.number, version === "v2", page);
      return matches.map((m) => result(m, block));
    },

    async resultsOfKeys(keyHashes, block, version) {
      const matches = await queries.matchesOfKeys(keyHashes, block.number, version === "v2");
      return byKeyHash(
        matches,
        (m) => m.keyHash,
        (m) => result(m, block),
      );
    },

    /**
     * A filter's contract must be a TRC-20: one the index knows as a token, or one whose `decimals()` the
     * node answers (a contract the index has not met yet). A TRC-721, an account or a contract of no
     * token is refused naming why; a node that cannot answer is an error of its own (503), never a "no".
     */
    async refusesContract(contract) {
      const known = await queries.tokenOf(contract);
      const isToken =
        known?.isToken ?? (await readTrc20Metadata(engine, Buffer.from(contract).toString("hex"))).isToken;
      if (isToken) return undefined;
      return `${tronAddresses.fromBytes(contract)} is not a TRC-20 contract (it answers no decimals(): an account, a TRC-721 or another contract); a filter names a TRC-20 contract, or null for TRX, TRC-10 and every token`;
    },
  };
}
