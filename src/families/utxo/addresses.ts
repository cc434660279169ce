/**
 * The Bitcoin family's AddressCodec (addresses.ts at the root of src/), for part 1 of the family: no text is
 * taken as an address yet. An instance of this family serves its nodes' own methods, whose params carry
 * addresses as the nodes read them (`validateaddress` passes any text to the node), and none of the
 * operations that take an address in the service's own form (transfers, watch filters): those come with
 * the family's index, and with them its codec, which validates base58check and bech32 per chain (base58
 * is case-sensitive; bech32's canonical form is lower case).
 */
import type { AddressCodec } from "../../addresses";

function noAddresses(): never {
  throw new TypeError("the Bitcoin family keeps no address yet: it has no index");
}

export const utxoAddresses: AddressCodec = {
  description: "none yet: this instance takes no address in the service's own operations",
  canonical: () => undefined,
  toBytes: noAddresses,
  fromBytes: noAddresses,
};
