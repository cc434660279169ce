/** The EVM chains of the interface's `Blockchain` enumeration: chain ids, native coins, block times, depths. */
import type { Blockchain, ChainInfo } from "../../blockchain";
import { ConfigError } from "../../config";

const BY_CHAIN_ID: ReadonlyMap<bigint, Blockchain> = new Map([
  [1n, "ETH"],
  [3n, "ROPSTEN"],
  [5n, "GOERLI"],
  [11155111n, "SEPOLIA"],
  [56n, "BSC"],
  [137n, "POLYGON"],
  [5165n, "BAHAMUT"],
  [728126428n, "TRON"],
  [3448148188n, "NILE"],
]);

/** Chain ids of local development chains (anvil, hardhat, ganache): blocks are final at once. */
const DEV_CHAIN_IDS: ReadonlySet<bigint> = new Set([31337n, 1337n]);

const NATIVE_SYMBOL: Record<Blockchain, string> = {
  ETH: "ETH",
  ROPSTEN: "ETH",
  GOERLI: "ETH",
  SEPOLIA: "ETH",
  BSC: "BNB",
  POLYGON: "POL",
  TRON: "TRX",
  NILE: "TRX",
  BAHAMUT: "FTN",
  BTC: "BTC",
  BTC_TESTNET: "BTC",
  TON: "TON",
  DOGE: "DOGE",
  LTC: "LTC",
  SOLANA: "SOL",
  CATAMITE: "CATAMITE",
  SATURN: "SATURN",
};

/** Typical time between blocks: how long an answer about an unfinalized block is worth keeping. */
const BLOCK_TIME_MS: Partial<Record<Blockchain, number>> = {
  BSC: 3_000,
  POLYGON: 2_000,
};
const DEFAULT_BLOCK_TIME_MS = 12_000;
const DEV_BLOCK_TIME_MS = 1_000;

// Reorg depth beyond which a block is treated as final when the node has no `finalized` tag.
const CONFIRMATIONS: Partial<Record<Blockchain, number>> = { BSC: 15, POLYGON: 128 };
const DEFAULT_CONFIRMATIONS = 12;

/** Chains whose nodes answer Ethereum's JSON-RPC but are another family's (java-tron's): CHAIN names them. */
const OTHER_FAMILY: ReadonlySet<Blockchain> = new Set(["TRON", "NILE"]);

export function describeChain(
  chainId: bigint,
  overrides: { blockchain?: Blockchain; confirmations?: number },
): ChainInfo {
  const devChain = DEV_CHAIN_IDS.has(chainId);
  const named = BY_CHAIN_ID.get(chainId);
  if (overrides.blockchain === undefined && named !== undefined && OTHER_FAMILY.has(named)) {
    throw new ConfigError(`chain id ${chainId} is ${named}'s, served by the TRON family: set CHAIN=${named}`);
  }
  const blockchain = overrides.blockchain ?? named ?? "ETH";
  const confirmations =
    overrides.confirmations ?? (devChain ? 0 : (CONFIRMATIONS[blockchain] ?? DEFAULT_CONFIRMATIONS));
  const blockTimeMs = devChain ? DEV_BLOCK_TIME_MS : (BLOCK_TIME_MS[blockchain] ?? DEFAULT_BLOCK_TIME_MS);
  return {
    chainId,
    blockchain,
    nativeSymbol: NATIVE_SYMBOL[blockchain],
    nativeDecimals: 18,
    confirmations,
    blockTimeMs,
    devChain,
  };
}
