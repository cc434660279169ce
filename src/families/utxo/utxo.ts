/**
 * The Bitcoin family: chains whose nodes speak Bitcoin Core's JSON-RPC (Bitcoin Core 22 and later, Litecoin
 * Core 0.21 and later, Dogecoin Core 1.14): BTC, BTC_TESTNET, LTC and DOGE (the design's §12). Part 1: the
 * gateway to the nodes' own methods (methods.ts: the allow-list and its cache rules, live.ts: the members of
 * kept answers that follow the head), the head and identity (nodeProtocol.ts), the dev node (devNode.ts).
 * No index yet: no data operations, streams, watch filters or subscriptions beyond the hub's.
 */
import type { ChainFamily } from "../family";
import { utxoAddresses } from "./addresses";
import { utxoBlockRefs } from "./blockRef";
import { describeUtxoChain, UTXO_CHAINS } from "./chains";
import { startUtxoDevNode } from "./devNode";
import { UTXO_HEAD_METHODS, utxoMethods, utxoOperations } from "./methods";
import { utxoNodeProtocol } from "./nodeProtocol";

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
  addresses: utxoAddresses,
  summary:
    "The nodes' own JSON-RPC methods of an allow-list (chain reads, mempool and fees, tools, writes), cached by finality, with confirmations answered for the current head.",
};
