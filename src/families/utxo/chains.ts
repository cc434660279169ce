/**
 * The Bitcoin-family chains of the interface's `Blockchain` enumeration (BTC, BTC_TESTNET, LTC, DOGE): which
 * node identities (`<chain>:<genesis hash>`, nodeProtocol.ts) each CHAIN takes, and each one's coin, block
 * time and confirmation depth.
 *
 * `chainId` is the coin's SLIP-44 type (github.com/satoshilabs/slips, slip-0044.md): BTC 0, any testnet 1,
 * LTC 2, DOGE 3. These chains have no chain id of their own; SLIP-44's is the number wallets already use
 * for them, and it keeps `ChainInfo.chainId` a number for the parts that name a chain by one.
 */
import type { Blockchain, ChainInfo } from "../../blockchain";
import { ConfigError } from "../../config";
import { DECIMALS } from "./dialect";

/** What `getblockchaininfo.chain` says of a local test chain: blocks made on demand, final at once. */
const REGTEST = "regtest";

/** A network of a coin: its name in `getblockchaininfo.chain` and the hash of its block 0. */
interface Network {
  chain: string;
  genesis: string;
  /** Its name for people, in messages. */
  label: string;
}

/** Genesis hashes of each coin's networks (as `getblockhash 0` answers them). */
const BTC_MAIN: Network = {
  chain: "main",
  genesis: "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
  label: "Bitcoin's main chain",
};
const BTC_TESTNETS: Network[] = [
  {
    chain: "test",
    genesis: "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943",
    label: "Bitcoin's testnet3",
  },
  {
    chain: "testnet4",
    genesis: "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043",
    label: "Bitcoin's testnet4",
  },
  {
    chain: "signet",
    genesis: "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6",
    label: "Bitcoin's default signet",
  },
];
const BTC_REGTEST: Network = {
  chain: REGTEST,
  genesis: "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206",
  label: "Bitcoin's regtest",
};
const LTC_NETWORKS: Network[] = [
  {
    chain: "main",
    genesis: "12a765e31ffd4059bada1e25190f6e98c99d9714d334efa41a195a7e7e04bfe2",
    label: "Litecoin's main chain",
  },
  // The enumeration has no LTC testnet of its own: Litecoin's testnet is served as LTC.
  {
    chain: "test",
    genesis: "4966625a4b2851d9fdee139e56211a0d88575f59ed816ff5e6a63deb4e3e29a0",
    label: "Litecoin's testnet4",
  },
  {
    chain: REGTEST,
    genesis: "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9",
    label: "Litecoin's regtest",
  },
];
const DOGE_NETWORKS: Network[] = [
  {
    chain: "main",
    genesis: "1a91e3dace36e2be3bf030a65679fe821aa1d6ef92e7c9902eb318182c355691",
    label: "Dogecoin's main chain",
  },
  // As for Litecoin: Dogecoin's testnet is served as DOGE.
  {
    chain: "test",
    genesis: "bb0a78264637406b6360aad926284d544d7049f45189db5664f3c4d07350559e",
    label: "Dogecoin's testnet",
  },
  {
    chain: REGTEST,
    genesis: "3d2160a3b5dc4a9d62e7e66a295f70313ac808440ef7400d6c0772171ce973a5",
    label: "Dogecoin's regtest",
  },
];

/** What each CHAIN of the family is, and the networks whose nodes it takes. */
interface Coin {
  slip44: bigint;
  symbol: string;
  blockTimeMs: number;
  confirmations: number;
  networks: Network[];
}

const COINS: Readonly<Partial<Record<Blockchain, Coin>>> = {
  BTC: {
    slip44: 0n,
    symbol: "BTC",
    blockTimeMs: 600_000,
    confirmations: 6,
    networks: [BTC_MAIN, BTC_REGTEST],
  },
  BTC_TESTNET: {
    slip44: 1n,
    symbol: "BTC",
    blockTimeMs: 600_000,
    confirmations: 6,
    networks: [...BTC_TESTNETS, BTC_REGTEST],
  },
  LTC: { slip44: 2n, symbol: "LTC", blockTimeMs: 150_000, confirmations: 12, networks: LTC_NETWORKS },
  DOGE: { slip44: 3n, symbol: "DOGE", blockTimeMs: 60_000, confirmations: 40, networks: DOGE_NETWORKS },
};

/** The chains the family serves (CHAIN); none without CHAIN: these nodes do not say which coin they are. */
export const UTXO_CHAINS: ReadonlySet<Blockchain> = new Set(Object.keys(COINS) as Blockchain[]);

/** A regtest chain makes blocks on demand: answers about its blocks are kept about this long. */
const REGTEST_BLOCK_TIME_MS = 1_000;
/** CONFIRMATIONS on regtest. */
const REGTEST_CONFIRMATIONS = 1;

/**
 * The chain an identity (`<chain>:<genesis hash>`) names, for CHAIN; a ConfigError naming the identities
 * CHAIN takes when it is another chain's (or CHAIN is unset: these nodes do not name their coin).
 */
export function describeUtxoChain(
  identity: string,
  overrides: { blockchain?: Blockchain; confirmations?: number },
): ChainInfo {
  const blockchain = overrides.blockchain;
  const coin = blockchain === undefined ? undefined : COINS[blockchain];
  if (blockchain === undefined || coin === undefined) {
    throw new ConfigError(
      `a Bitcoin-family node does not say which coin it serves: set CHAIN to one of ${[...UTXO_CHAINS].join(", ")}`,
    );
  }
  const [chain, genesis] = identity.split(":");
  const network = coin.networks.find((n) => n.chain === chain && n.genesis === genesis?.toLowerCase());
  if (network === undefined) {
    const taken = coin.networks.map((n) => `${n.label} (${n.chain}:${n.genesis})`).join(", ");
    throw new ConfigError(`CHAIN=${blockchain} takes nodes of ${taken}`);
  }
  const devChain = network.chain === REGTEST;
  return {
    chainId: coin.slip44,
    blockchain,
    nativeSymbol: coin.symbol,
    nativeDecimals: DECIMALS,
    // Finality is counted in blocks (these nodes name no final block). On regtest one block deep: a dev
    // node's reorgs (invalidateblock) are what its users test, and a reorg past even that is followed.
    confirmations: overrides.confirmations ?? (devChain ? REGTEST_CONFIRMATIONS : coin.confirmations),
    blockTimeMs: devChain ? REGTEST_BLOCK_TIME_MS : coin.blockTimeMs,
    devChain,
    network: network.chain,
  };
}
