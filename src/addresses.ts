/**
 * Addresses, whatever the chain's family: no shared code parses or lower-cases one. The family's
 * `AddressCodec` (the EVM's: families/evm/addresses.ts) says which texts are addresses, gives each its one
 * canonical form (so equal addresses look equal in keys, filters and the index), and how the index stores
 * it. Requests name addresses through the `address` string format (schemas.ts `Address`), which the
 * composition root registers from the codec (validation.ts `useAddressCodec`).
 */

/** The TypeBox string format of an address in a request. */
export const ADDRESS_FORMAT = "address";

export interface AddressCodec {
  /** What a valid address looks like, for messages and the docs ("a 20-byte address: ..."). */
  readonly description: string;
  /** A valid address's canonical form; undefined when the text is no address of the family. */
  canonical(text: string): string | undefined;
  /**
   * What is wrong with a text that is no address (TRON: "bad base58check checksum"), for the 422 after the
   * description; undefined where the family says nothing more (or the text is an address).
   */
  problem?(text: string): string | undefined;
  /** The bytes the index keeps (bytea) for a canonical address. */
  toBytes(canonical: string): Uint8Array;
  /** The canonical address of bytes the index kept. */
  fromBytes(bytes: Uint8Array): string;
}
