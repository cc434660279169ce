/**
 * The TRON family: java-tron FullNodes (4.7 and later) and TronGrid-style providers, for TRON mainnet
 * (CHAIN=TRON) and the Nile testnet (CHAIN=NILE) (docs/interface.md, "The TRON family"): the three faces of
 * its nodes (endpoints.ts), the head polled and finality from the solidified block (nodeProtocol.ts), its
 * JSON-RPC from the EVM family's rows (methods.ts), its HTTP API at the node's own paths (httpApi.ts), and
 * the WebSocket java-tron lacks, from the followed head (logs: the EVM family's kind; no pending
 * transactions), and its index (tronIndex.ts; sql/tron/) with the shared data operations over it: transfers
 * (transferQueries.ts, transferShape.ts), daily figures (dayStats.ts), blocks by time.
 */
import { ConfigError } from "../../config";
import { logsSubscription } from "../evm/logsSubscription";
import type { ChainFamily } from "../family";
import { tronAddresses } from "./addresses";
import { tronBlockRefs } from "./blockRef";
import { describeTronChain, TRON_CHAINS } from "./chains";
import { tronDayStats } from "./dayStats";
import { tronNodePaths } from "./httpApi";
import { tronMethods, tronOperations, tronRefusal, tronSubscriptionRefusal } from "./methods";
import { tronFinalityTags, tronHeadNumber, tronNodeProtocol } from "./nodeProtocol";
import { createTronTransferQueries } from "./transferQueries";
import { tronTransferShape } from "./transferShape";
import { createTronGrid } from "./tronGrid/tronGrid";
import { tronIndex } from "./tronIndex";
import { createTronWatchMatcher } from "./watchMatcher";

export const tron: ChainFamily = {
  name: "tron",
  serves: (chain) => chain !== undefined && TRON_CHAINS.has(chain),
  blockRefs: tronBlockRefs,
  describe: describeTronChain,
  startDevNode() {
    // java-tron is a JDK 8 jar from release downloads: no package installs one here.
    return Promise.reject(
      new ConfigError(
        'CHAIN=TRON and CHAIN=NILE need a java-tron node or a provider: set UPSTREAM_URLS (e.g. https://nile.trongrid.io, or http://10.0.0.1:8090#solidity=8091&jsonrpc=8545 for a bare node; README, "In front of a TRON node")',
      ),
    );
  },
  node: tronNodeProtocol,
  finalityTags: tronFinalityTags,
  headMethods: [tronHeadNumber],
  methods: tronMethods,
  operations: tronOperations,
  nodePaths: ({ engine }) => tronNodePaths(engine),
  addresses: tronAddresses,
  index: tronIndex,
  createTransferQueries: createTronTransferQueries,
  createTronGrid,
  transferShape: tronTransferShape,
  dayStats: tronDayStats,
  createWatchMatcher: createTronWatchMatcher,
  subscriptions: [logsSubscription],
  summary:
    "java-tron's JSON-RPC (blocks, transactions, receipts, logs, calls) cached by the solidified block, its HTTP API at the node's own paths (/wallet/..., /walletsolidity/...) for tronweb, and newHeads and logs subscriptions over WebSocket, which java-tron lacks.",
  refuses: tronRefusal,
  refusesSubscription: tronSubscriptionRefusal,
};
