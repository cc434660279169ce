/**
 * The EVM family: chains whose nodes speak Ethereum's JSON-RPC (docs/interface.md). Everything
 * Ethereum-specific the shared floors are handed lives in this folder.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Blockchain } from "../../blockchain";
import type { ChainFamily } from "../family";
import { evmAddresses } from "./addresses";
import { evmBlockRefs } from "./blockRef";
import { describeChain } from "./chains";
import { evmDayStats } from "./dayStats";
import { DEV_ACCOUNTS, DEV_SEED, DEV_TOKEN, seedDevChain, startAnvil } from "./devChain";
import { evmIndex } from "./evmIndex";
import { evmOperations } from "./evmOperations";
import { logsSubscription } from "./logsSubscription";
import { EVM_STREAMS, evmMethods } from "./methods";
import { newPendingTransactionsSubscription } from "./newPendingTransactionsSubscription";
import { evmFinalityTags, evmHeadNumber, evmNodeProtocol } from "./nodeProtocol";
import { createEvmTransferQueries } from "./transferQueries";
import { createEvmWatchMatcher } from "./watchMatcher";

/** anvil mines a block per transaction: its head is followed closely. */
const DEV_HEAD_POLL_MS = 250;

/** The chains of the `Blockchain` enumeration whose nodes are EVM nodes. */
const EVM_CHAINS: ReadonlySet<Blockchain> = new Set([
  "ETH",
  "ROPSTEN",
  "GOERLI",
  "SEPOLIA",
  "BSC",
  "POLYGON",
  "CATAMITE",
  "SATURN",
  "BAHAMUT",
]);

/** Every member given (`satisfies`): the EVM family keeps an index, which its tests read without a check. */
export const evm = {
  name: "evm",
  serves: (chain) => chain === undefined || EVM_CHAINS.has(chain),
  blockRefs: evmBlockRefs,
  // The identity is the chain id in 0x hex (nodeProtocol.ts).
  describe: (identity, overrides) => describeChain(BigInt(identity), overrides),
  async startDevNode({ dataDir, log }) {
    const stateFile = join(dataDir, "devchain", "state.json");
    // Seeded once: a chain brought back from its state keeps what it had, the seed included.
    const fresh = !existsSync(stateFile);
    const anvil = await startAnvil({ stateFile, log });
    if (fresh) {
      try {
        await seedDevChain(anvil.url, log);
      } catch (error) {
        // anvil writes its state as it stops: a half-seeded chain must not pass for a seeded one next time.
        await anvil.stop();
        rmSync(stateFile, { force: true });
        throw error;
      }
    }
    log.info("UPSTREAM_URLS is unset: serving a local dev chain", { url: anvil.url });
    return { url: anvil.url, headPollMs: DEV_HEAD_POLL_MS, stop: () => anvil.stop() };
  },
  // What its dev chain's seed made, for the API docs' examples.
  examples: { account: DEV_ACCOUNTS[0], token: DEV_TOKEN, transaction: DEV_SEED[0]!.hash },
  // The node protocol, and what the chain follower and the engine take of it (upstream, engine)
  node: evmNodeProtocol,
  finalityTags: evmFinalityTags,
  headMethods: [evmHeadNumber],
  // Method rows, operations, streams (engine, operations, http)
  methods: evmMethods,
  operations: evmOperations,
  streams: EVM_STREAMS,
  // The index (indexer, db, the transfers operation)
  index: evmIndex,
  createTransferQueries: createEvmTransferQueries,
  dayStats: evmDayStats,
  // Addresses, watch filters, subscriptions (every floor, watch, realtime)
  addresses: evmAddresses,
  createWatchMatcher: createEvmWatchMatcher,
  subscriptions: [logsSubscription, newPendingTransactionsSubscription],
  // What the API docs and the refusals say of it
  summary:
    "Blocks, transactions, receipts, logs, traces, transfers, token balances and metadata over REST and JSON-RPC, and address watch filters.",
  // Its token data methods share the service's `watch_` prefix: named whole, so another family's instance
  // refuses them as this family's.
  namespaces: [
    "eth_",
    "net_",
    "web3_",
    "debug_",
    "trace_",
    "txpool_",
    "ext_",
    "get_token_",
    "watch_getToken",
  ],
} satisfies ChainFamily;
