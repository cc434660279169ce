/** The family of the chain an instance serves: chosen once, at start, from CHAIN. */
import type { Blockchain } from "../blockchain";
import { ConfigError } from "../config";
import { evm } from "./evm/evm";
import type { ChainFamily } from "./family";
import { tron } from "./tron/tron";
import { utxo } from "./utxo/utxo";

/** Every family the service has, in the order CHAIN is matched against them. */
export const FAMILIES: readonly ChainFamily[] = [evm, utxo, tron];

/** CHAIN names a chain no family serves yet: a configuration error, found when the service starts. */
export class UnservedChainError extends ConfigError {}

/** The family serving `chain` (undefined: no CHAIN, the family that reads its chain from the node). */
export function familyOf(chain: Blockchain | undefined): ChainFamily {
  const family = FAMILIES.find((f) => f.serves(chain));
  if (!family) {
    throw new UnservedChainError(
      `CHAIN=${chain}: no family of this service serves it yet (served: ${FAMILIES.map((f) => f.name).join(", ")})`,
    );
  }
  return family;
}
