/**
 * The Bitcoin family: chains whose nodes speak Bitcoin Core's JSON-RPC (Bitcoin Core 22 and later, Litecoin
 * Core 0.21 and later, Dogecoin Core 1.14): BTC, BTC_TESTNET, LTC and DOGE (docs/interface.md §16): the
 * gateway to the nodes' own methods (methods.ts: the allow-list and its cache rules, live.ts: the members of
 * kept answers that follow the head), the head and identity (nodeProtocol.ts), the dev node (devNode.ts);
 * the index (utxoIndex.ts, sql/utxo/), the data operations and watch filters over it, and the Esplora API
 * (esplora/). No streams, and no subscription kinds beyond the hub's.
 */
import type { ChainFamily } from "../family";
import { utxoAddresses, utxoAddressesFor } from "./addresses";
import { utxoBlockRefs } from "./blockRef";
import { describeUtxoChain, UTXO_CHAINS } from "./chains";
import { utxoDayStats } from "./dayStats";
import { startUtxoDevNode } from "./devNode";
import { createUtxoEsplora } from "./esplora/esplora";
import { createUtxoPendingWatch } from "./mempoolFeed";
import { createMempoolFollower } from "./mempoolFollower";
import { UTXO_HEAD_METHODS, utxoMethods, utxoOperations } from "./methods";
import { utxoNodeProtocol } from "./nodeProtocol";
import { createUtxoTransferQueries } from "./transferQueries";
import { utxoTransferShape } from "./transferShape";
import { utxoIndex } from "./utxoIndex";
import { createUtxoWatchMatcher } from "./watchMatcher";

export const utxo: ChainFamily = {
  name: "utxo",
  // CHAIN names the coin: these nodes say their network (main, test, regtest), not which coin they are.
  serves: (chain) => chain !== undefined && UTXO_CHAINS.has(chain),
  blockRefs: utxoBlockRefs,
  describe: describeUtxoChain,
  startDevNode: startUtxoDevNode,
  // The node protocol, and what the chain follower and the engine take of it (upstream, engine). No
  // finality tags: finality is CONFIRMATIONS blocks deep.
  node: utxoNodeProtocol,
  headMethods: UTXO_HEAD_METHODS,
  // The allow-list (engine, operations, http)
  methods: utxoMethods,
  operations: utxoOperations,
  // The index (utxoIndex.ts: blocks, transactions, every output and its spender, per-address rows, daily
  // figures; sql/utxo/), and the transfers operation's reads of it (transferQueries.ts).
  index: utxoIndex,
  createTransferQueries: createUtxoTransferQueries,
  // What the shared data operations answer here (docs/interface.md §16.5): trx rows per paying output with
  // `fromAddresses`, daily figures in satoshis, block times as their running maximum.
  transferShape: utxoTransferShape,
  dayStats: utxoDayStats,
  blockTimes: "runningMaximum",
  addresses: utxoAddresses,
  // Each network writes its own: the chain's codec once its node is identified.
  addressesFor: utxoAddressesFor,
  // Watch filters by the net rule (watchMatcher.ts), over the index.
  createWatchMatcher: createUtxoWatchMatcher,
  // One follower of the node's mempool (mempoolFollower.ts), read by the Esplora-compatible API (esplora/:
  // the index, the node, the mempool) and the watch_filters subscription's `"pending": true` (mempoolFeed.ts).
  followMempool(deps) {
    const follower = createMempoolFollower(deps);
    return {
      createEsplora: (esplora) => createUtxoEsplora(esplora, follower),
      createPendingWatch: (options) => createUtxoPendingWatch(options, follower),
      ready: () => follower.ready(),
      stop: () => follower.stop(),
    };
  },
  summary:
    "The nodes' own JSON-RPC methods of an allow-list (chain reads, mempool and fees, tools, writes), cached by finality, with confirmations answered for the current head; from the service's index of the chain, an address's transfers, blocks by time and day, daily figures in satoshis and watch filters by the net rule; and an Esplora-compatible API under /esplora/.",
};
