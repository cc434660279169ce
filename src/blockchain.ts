/**
 * The interface's `Blockchain` enumeration (docs/interface.md §4.9), and what the service knows of the chain
 * an instance serves, whatever its family (families/: each family describes the chains it serves).
 */

export const BLOCKCHAINS = [
  "ETH",
  "ROPSTEN",
  "BSC",
  "BTC",
  "BTC_TESTNET",
  "TRON",
  "NILE",
  "GOERLI",
  "SEPOLIA",
  "POLYGON",
  "CATAMITE",
  "SATURN",
  "BAHAMUT",
  "TON",
  "DOGE",
  "LTC",
  "SOLANA",
] as const;
export type Blockchain = (typeof BLOCKCHAINS)[number];

export interface ChainInfo {
  chainId: bigint;
  blockchain: Blockchain;
  nativeSymbol: string;
  /** Native coin decimals; every EVM chain uses 18. */
  nativeDecimals: number;
  confirmations: number;
  blockTimeMs: number;
  devChain: boolean;
  /**
   * Which of the coin's networks the node serves, where one CHAIN takes several that differ beyond their
   * blocks (the Bitcoin family: `getblockchaininfo.chain`, main, test, regtest, ..., whose addresses are
   * written with other version bytes and prefixes); unset where the chain says it all (EVM).
   */
  network?: string;
}
