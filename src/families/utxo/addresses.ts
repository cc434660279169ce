/**
 * The Bitcoin family's addresses (AddressCodec, addresses.ts at the root of src/): one codec per network,
 * since each writes its own. Valid are the texts the chain's node reads as a destination:
 *  - base58check P2PKH and P2SH with the network's version bytes. Litecoin reads a P2SH address under two
 *    versions (its own, `M`/`Q`, and Bitcoin's older `3`/`2`) and writes its own: the older form is taken
 *    and made the node's, so both name the one script the index keeps under the node's text;
 *  - segwit addresses (bech32 for witness version 0, bech32m for 1 to 16) with the network's prefix, where
 *    the network has segwit (Dogecoin Core 1.14 has none).
 * Canonical: base58 as written (case is meaning there), bech32 in lower case (an all-upper-case one is the
 * same address; mixed case is none). The index and the watch filters keep the canonical text (its UTF-8
 * bytes in `watch_filters`), which is what the node writes in its answers.
 *
 * Version bytes and prefixes, from each client's src/chainparams.cpp (`base58Prefixes`, `bech32_hrp`):
 * Bitcoin Core (src/kernel/chainparams.cpp): main 0/5 `bc`; testnet3, testnet4 and signet 111/196 `tb`;
 * regtest 111/196 `bcrt`. Litecoin Core 0.21 (litecoin-project/litecoin): main 48/50 and 5 `ltc`; testnet4
 * 111/58 and 196 `tltc`; regtest 111/58 and 196 `rltc` (MWEB's `ltcmweb`/`tmweb` addresses pay no output
 * the nodes show, so they are not taken). Dogecoin Core 1.14 (dogecoin/dogecoin 1.14 branch): main 30/22,
 * testnet 113/196, regtest 111/196, no segwit.
 */
import type { AddressCodec } from "../../addresses";
import type { Blockchain, ChainInfo } from "../../blockchain";
import { base58checkDecode, base58checkEncode, segwitDecode, segwitEncode } from "./addressEncodings";

/** How one network writes addresses. */
export interface AddressNetwork {
  /** Its name for people, in messages ("Litecoin's regtest"). */
  label: string;
  /** P2PKH's version byte. */
  pubkeyHash: number;
  /** P2SH's version byte, as the node writes it. */
  scriptHash: number;
  /** Another P2SH version byte the node reads (Litecoin's older form), rewritten to `scriptHash`. */
  olderScriptHash?: number;
  /** The segwit prefix; none where the chain has no segwit. */
  segwit?: string;
}

/** A P2PKH or P2SH payload: a 20-byte hash. */
const HASH160_BYTES = 20;

const btc = (label: string, pubkeyHash: number, scriptHash: number, segwit: string): AddressNetwork => ({
  label,
  pubkeyHash,
  scriptHash,
  segwit,
});
const BTC_MAIN = btc("Bitcoin's main chain", 0, 5, "bc");
const BTC_TEST = btc("Bitcoin's test networks", 111, 196, "tb");
const BTC_REGTEST = btc("Bitcoin's regtest", 111, 196, "bcrt");

/** Each coin's networks by `getblockchaininfo.chain` (ChainInfo.network). */
const NETWORKS: Readonly<Partial<Record<Blockchain, Readonly<Record<string, AddressNetwork>>>>> = {
  BTC: { main: BTC_MAIN, regtest: BTC_REGTEST },
  BTC_TESTNET: { test: BTC_TEST, testnet4: BTC_TEST, signet: BTC_TEST, regtest: BTC_REGTEST },
  LTC: {
    main: {
      label: "Litecoin's main chain",
      pubkeyHash: 48,
      scriptHash: 50,
      olderScriptHash: 5,
      segwit: "ltc",
    },
    test: {
      label: "Litecoin's testnet4",
      pubkeyHash: 111,
      scriptHash: 58,
      olderScriptHash: 196,
      segwit: "tltc",
    },
    regtest: {
      label: "Litecoin's regtest",
      pubkeyHash: 111,
      scriptHash: 58,
      olderScriptHash: 196,
      segwit: "rltc",
    },
  },
  DOGE: {
    main: { label: "Dogecoin's main chain", pubkeyHash: 30, scriptHash: 22 },
    test: { label: "Dogecoin's testnet", pubkeyHash: 113, scriptHash: 196 },
    regtest: { label: "Dogecoin's regtest", pubkeyHash: 111, scriptHash: 196 },
  },
};

/** How a chain of the family writes addresses; undefined for a network the family does not serve. */
export function addressNetworkOf(
  blockchain: Blockchain,
  network: string | undefined,
): AddressNetwork | undefined {
  return network === undefined ? undefined : NETWORKS[blockchain]?.[network];
}

function describe(network: AddressNetwork): string {
  const older = network.olderScriptHash === undefined ? "" : ` or ${network.olderScriptHash}`;
  const base58 = `base58check P2PKH (version ${network.pubkeyHash}) or P2SH (version ${network.scriptHash}${older})`;
  const segwit = network.segwit === undefined ? "" : `, or bech32/bech32m with the prefix ${network.segwit}`;
  return `an address of ${network.label}: ${base58}${segwit}`;
}

/** A base58check address's canonical form, when it is one of the network's. */
function canonicalBase58(network: AddressNetwork, text: string): string | undefined {
  const decoded = base58checkDecode(text);
  if (decoded === undefined || decoded.payload.length !== HASH160_BYTES) return undefined;
  if (decoded.version === network.pubkeyHash || decoded.version === network.scriptHash) return text;
  if (decoded.version === network.olderScriptHash)
    return base58checkEncode(network.scriptHash, decoded.payload);
  return undefined;
}

/** A segwit address's canonical form (lower case), when it has the network's prefix. */
function canonicalSegwit(network: AddressNetwork, text: string): string | undefined {
  if (network.segwit === undefined) return undefined;
  const decoded = segwitDecode(text);
  if (decoded === undefined || decoded.prefix !== network.segwit) return undefined;
  return segwitEncode(decoded.prefix, decoded.version, decoded.program);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export function createUtxoAddressCodec(network: AddressNetwork): AddressCodec {
  return {
    description: describe(network),
    canonical: (text) => canonicalBase58(network, text) ?? canonicalSegwit(network, text),
    toBytes: (canonical) => encoder.encode(canonical),
    fromBytes: (bytes) => decoder.decode(bytes),
  };
}

function unknownChain(): never {
  throw new TypeError("the Bitcoin family's addresses are its chain's: read them from addressesFor(chain)");
}

/**
 * The family's codec before its chain is known (ChainFamily.addresses): no text is an address of it. Which
 * texts are depends on the network its node serves, so the composition root takes the chain's codec from
 * `utxoAddressesFor` once the node is identified.
 */
export const utxoAddresses: AddressCodec = {
  description: "an address of the chain served (read once its node says which network it is)",
  canonical: () => undefined,
  toBytes: unknownChain,
  fromBytes: unknownChain,
};

/** The codec of the chain served (ChainFamily.addressesFor): its network's version bytes and prefix. */
export function utxoAddressesFor(chain: ChainInfo): AddressCodec {
  const network = addressNetworkOf(chain.blockchain, chain.network);
  if (network === undefined) {
    throw new TypeError(`no address network for ${chain.blockchain} ${chain.network ?? "(no network)"}`);
  }
  return createUtxoAddressCodec(network);
}
