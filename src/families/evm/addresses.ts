/**
 * EVM addresses (the family's AddressCodec, addresses.ts at the root of src/): 20 bytes written as 0x and
 * 40 hex digits in any case; canonical in lower case (the checksum case of EIP-55 is not required), as
 * nodes answer them and the index keeps them.
 */
import type { AddressCodec } from "../../addresses";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const PREFIX_LENGTH = 2;

export const evmAddresses: AddressCodec = {
  description: "a 20-byte address: 0x followed by 40 hex digits",
  canonical: (text) => (ADDRESS.test(text) ? text.toLowerCase() : undefined),
  toBytes: (canonical) => Buffer.from(canonical.slice(PREFIX_LENGTH), "hex"),
  fromBytes: (bytes) => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`,
};
