/**
 * The TRON family's chains: mainnet (CHAIN=TRON) and the Nile testnet (CHAIN=NILE), told apart by their
 * nodes' identity (nodeProtocol.ts): `eth_chainId` and block 0's `blockID`, as `<chain id>:<block id>`. A
 * TRON chain id is the last 4 bytes of its genesis block's id, so the two must agree as well.
 */
import type { Blockchain, ChainInfo } from "../../blockchain";
import { ConfigError } from "../../config";

interface TronChain {
  /** `eth_chainId`, in minimal 0x hex. */
  chainId: string;
  /** Block 0's `blockID`. */
  genesis: string;
}

export const TRON_NETWORKS: Readonly<Record<"TRON" | "NILE", TronChain>> = {
  TRON: {
    chainId: "0x2b6653dc",
    genesis: "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
  },
  NILE: {
    chainId: "0xcd8690dc",
    genesis: "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
  },
};

export const TRON_CHAINS: ReadonlySet<Blockchain> = new Set(Object.keys(TRON_NETWORKS) as Blockchain[]);

/** TRX has 6 decimals: amounts are in sun. */
const TRX_DECIMALS = 6;
/** A block every 3 s. */
const BLOCK_TIME_MS = 3_000;
/**
 * The deepest a block may be and not be final, where the solidity face cannot say (finality follows the
 * solidified block, which java-tron moves once 2/3 of the 27 super representatives built on a block: 19
 * blocks behind the head). The last final block is the lower of the two (engine/chainFollower.ts).
 */
const CONFIRMATIONS = 19;

const identityOf = (c: TronChain) => `${c.chainId}:${c.genesis}`;

export function describeTronChain(
  identity: string,
  overrides: { blockchain?: Blockchain; confirmations?: number },
): ChainInfo {
  const blockchain = overrides.blockchain;
  const network = blockchain === "TRON" || blockchain === "NILE" ? TRON_NETWORKS[blockchain] : undefined;
  if (blockchain === undefined || network === undefined) {
    throw new ConfigError(`a java-tron node serves TRON or NILE: set CHAIN to one of them`);
  }
  if (identity.toLowerCase() !== identityOf(network)) {
    throw new ConfigError(`CHAIN=${blockchain} takes nodes of chain ${identityOf(network)}`);
  }
  return {
    chainId: BigInt(network.chainId),
    blockchain,
    nativeSymbol: "TRX",
    nativeDecimals: TRX_DECIMALS,
    confirmations: overrides.confirmations ?? CONFIRMATIONS,
    blockTimeMs: BLOCK_TIME_MS,
    devChain: false,
  };
}
