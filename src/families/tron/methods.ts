/**
 * java-tron's JSON-RPC as the service serves it (docs/interface.md, "The TRON family"): the EVM family's rows
 * of the methods java-tron has (families/evm/methods.ts: the same params, results, REST forms and cache
 * rules), with finality from the solidified block. The EVM methods java-tron refuses
 * (`eth_sendRawTransaction`, `eth_getTransactionCount`, traces, ...) have no row here: they are refused as
 * the EVM family's methods (-32601 naming the chain, compose/unserved.ts) and never reach a node. The
 * `pending` and `safe` tags are refused as java-tron refuses them, before any node call; so are the state
 * reads (`eth_getBalance`, `eth_call`, ...) of any block but `latest`, which java-tron answers at its head
 * only.
 */
import type { MethodPolicy } from "../../cache/policy";
import type { MethodTable } from "../../engine/methodTable";
import { InvalidParamsError } from "../../errors";
import type { FamilyOperationDeps, FamilyOperations } from "../../operations/familyOperations";
import type { Operation } from "../../operations/operation";
import { evmOperations } from "../evm/evmOperations";
import { EVM_POLICIES } from "../evm/methods";
import { PATH_POLICIES } from "./httpApi";
import { createTronFetch } from "./tronFetch";

/** The EVM node methods java-tron's JSON-RPC has (its TronJsonRpc interface, 4.7), beside the filters. */
export const TRON_JSON_RPC: ReadonlySet<string> = new Set([
  "web3_clientVersion",
  "net_version",
  "net_listening",
  "net_peerCount",
  "eth_chainId",
  "eth_protocolVersion",
  "eth_syncing",
  "eth_gasPrice",
  "eth_estimateGas",
  "eth_accounts",
  "eth_blockNumber",
  "eth_getBalance",
  "eth_getStorageAt",
  "eth_getCode",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getTransactionByHash",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionReceipt",
  // Assembled from the block's receipts where a node lacks it (java-tron before 4.7.6): evmFetch.ts.
  "eth_getBlockReceipts",
  "ext_getBlockReceipts",
  "eth_call",
  "eth_getLogs",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_getUncleByBlockHashAndIndex",
  "eth_getUncleByBlockNumberAndIndex",
]);

/** The filters the service keeps (eth_newFilter & co.); java-tron has no pending transactions to filter. */
const TRON_FILTERS: ReadonlySet<string> = new Set([
  "eth_newFilter",
  "eth_newBlockFilter",
  "eth_getFilterChanges",
  "eth_getFilterLogs",
  "eth_uninstallFilter",
]);

/** java-tron's words for the tags its block reads refuse (its Wallet and TronJsonRpcImpl). */
const REFUSED_TAGS: ReadonlyMap<string, string> = new Map([
  ["pending", "TAG pending not supported"],
  ["safe", "TAG safe not supported"],
]);

/**
 * The state reads, and where their block param is: java-tron answers them at its head only, and refuses
 * any other block (TronJsonRpcImpl): kept for a block time (memory), `latest` never resolved to a number.
 */
const STATE_READS: ReadonlyMap<string, number> = new Map([
  ["eth_getBalance", 1],
  ["eth_getCode", 1],
  ["eth_getStorageAt", 2],
  ["eth_call", 1],
]);
const STATE_TAG_REFUSED = "TAG [earliest | pending | finalized | safe] not supported";
const STATE_HEIGHT_REFUSED = "QUANTITY not supported, just support TAG as latest";

/** Why java-tron would refuse a state read's block; undefined for `latest` (or none: the same). */
function stateBlockRefusal(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "latest") return undefined;
  const ref = typeof value === "object" ? (value as { blockNumber?: unknown }).blockNumber : value;
  if (ref === "latest") return undefined;
  return typeof ref === "string" && /^[a-z]+$/.test(ref) ? STATE_TAG_REFUSED : STATE_HEIGHT_REFUSED;
}

/** A block reference among the params (a tag, a filter's bounds, a selector's blockNumber) java-tron refuses. */
function refusedTag(params: readonly unknown[]): string | undefined {
  for (const param of params) {
    const values =
      typeof param === "object" && param !== null
        ? [
            (param as { fromBlock?: unknown }).fromBlock,
            (param as { toBlock?: unknown }).toBlock,
            (param as { blockNumber?: unknown }).blockNumber,
          ]
        : [param];
    for (const value of values) {
      const refusal = typeof value === "string" ? REFUSED_TAGS.get(value) : undefined;
      if (refusal) return refusal;
    }
  }
  return undefined;
}

/** The operation, refusing the blocks java-tron refuses before its params go anywhere. */
function withoutRefusedBlocks(op: Operation): Operation {
  const stateBlock = STATE_READS.get(op.method);
  const checked = (params: unknown[]) => {
    const refusal = stateBlock === undefined ? refusedTag(params) : stateBlockRefusal(params[stateBlock]);
    if (refusal) throw new InvalidParamsError(refusal);
    return params;
  };
  return {
    ...op,
    prepare: (params) => checked(op.prepare(params)),
    prepareRest: (body) => checked(op.prepareRest(body)),
  };
}

/** The EVM's cache rules, but for the state reads: at the head only (STATE_READS). */
const TRON_RPC_POLICIES: ReadonlyMap<string, MethodPolicy> = new Map(
  [...TRON_JSON_RPC].flatMap((method) => {
    const policy = EVM_POLICIES[method];
    if (!policy) return [];
    return [[method, STATE_READS.has(method) ? { cache: "head" as const } : policy]];
  }),
);

export const tronMethods: MethodTable = {
  policy: (method) => PATH_POLICIES.get(method) ?? TRON_RPC_POLICIES.get(method),
  createFetch: createTronFetch,
};

/** Its node methods: the EVM's rows java-tron has, and the filters the service keeps. No data operations yet. */
export function tronOperations(deps: FamilyOperationDeps): FamilyOperations {
  const evm = evmOperations(deps);
  const served = (op: Operation) => TRON_JSON_RPC.has(op.method) || TRON_FILTERS.has(op.method);
  return { node: evm.node.filter(served).map(withoutRefusedBlocks), data: [], stop: evm.stop };
}

/** Why java-tron refuses the EVM methods it has no answer for, with what to use instead. */
const REFUSALS: readonly [RegExp, string][] = [
  [
    /^eth_sendRawTransaction$/,
    "java-tron's JSON-RPC takes no transactions: broadcast a signed one with POST /wallet/broadcasttransaction or /wallet/broadcasthex",
  ],
  [/^eth_getTransactionCount$/, "TRON accounts have no nonce (java-tron refuses it)"],
  [
    /^eth_(sendTransaction|sign|signTransaction|signTypedData.*)$/,
    "java-tron holds no keys for its callers (it refuses it)",
  ],
  [
    /^(trace_|debug_)/,
    "java-tron has no traces: a transaction's internal transactions are in /wallet/gettransactioninfobyid",
  ],
  [/^eth_newPendingTransactionFilter$/, "java-tron has no pending transactions to filter"],
];

/** eth_subscribe's kinds of the EVM family java-tron has nothing for (its JSON-RPC shows no pool). */
const SUBSCRIPTION_REFUSALS: ReadonlyMap<string, string> = new Map([
  [
    "newPendingTransactions",
    "java-tron has no pending transactions to show (its JSON-RPC has no transaction pool); subscribe to newHeads, logs or watch_filters",
  ],
]);

export const tronSubscriptionRefusal = (kind: string): string | undefined => SUBSCRIPTION_REFUSALS.get(kind);

export function tronRefusal(method: string): string | undefined {
  if (TRON_JSON_RPC.has(method) || TRON_FILTERS.has(method)) return undefined;
  return REFUSALS.find(([pattern]) => pattern.test(method))?.[1];
}
