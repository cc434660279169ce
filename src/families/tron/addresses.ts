/**
 * TRON addresses (the family's AddressCodec, addresses.ts at the root of src/): 21 bytes, 0x41 then the
 * 20 bytes an EVM address has, written in base58check as java-tron and tronweb write them (`T...`, 34
 * characters, case-sensitive). Input also takes the hex forms java-tron's HTTP API and its JSON-RPC write:
 * `41` + 40 hex digits, and `0x` + 40 hex digits. The canonical form is base58check; the index keeps the 21
 * bytes.
 */
import type { AddressCodec } from "../../addresses";
import { base58checkDecode, base58checkEncode, base58Decode } from "../utxo/addressEncodings";

/** The version byte of every TRON address, mainnet and Nile alike. */
export const TRON_ADDRESS_PREFIX = 0x41;
const ADDRESS_BYTES = 20;
const HEX_41 = /^41[0-9a-fA-F]{40}$/;
const HEX_0X = /^0x[0-9a-fA-F]{40}$/;
/** A base58check address's bytes (the version, the 20 bytes, 4 of checksum), and its characters. */
const BASE58_BYTES = 1 + ADDRESS_BYTES + 4;
const BASE58_LENGTH = 34;

/** The base58check text of an address's 20 bytes. */
export function tronAddressOf(bytes20: Uint8Array): string {
  return base58checkEncode(TRON_ADDRESS_PREFIX, bytes20);
}

/** The 20 bytes of a TRON address in any accepted form; undefined for anything else (a bad checksum too). */
export function tronAddressBytes(text: string): Uint8Array | undefined {
  if (HEX_41.test(text)) return Buffer.from(text.slice(2), "hex");
  if (HEX_0X.test(text)) return Buffer.from(text.slice(2), "hex");
  const decoded = base58checkDecode(text);
  if (decoded?.version !== TRON_ADDRESS_PREFIX || decoded.payload.length !== ADDRESS_BYTES) return undefined;
  return decoded.payload;
}

export const tronAddresses: AddressCodec = {
  description:
    "a TRON address: base58check T... (34 characters), 41 followed by 40 hex digits, or 0x and 40 hex digits",
  canonical(text) {
    const bytes = tronAddressBytes(text);
    return bytes && tronAddressOf(bytes);
  },
  // A typo in a base58 address fails its checksum: said so, not only that the text is no address.
  problem(text) {
    if (tronAddressBytes(text) !== undefined) return undefined;
    const bytes = text.length === BASE58_LENGTH ? base58Decode(text) : undefined;
    return bytes?.length === BASE58_BYTES && bytes[0] === TRON_ADDRESS_PREFIX
      ? "bad base58check checksum"
      : "not a TRON address";
  },
  toBytes: (canonical) => Buffer.concat([Buffer.of(TRON_ADDRESS_PREFIX), tronAddressBytes(canonical)!]),
  fromBytes: (bytes) => tronAddressOf(bytes.subarray(1)),
};
