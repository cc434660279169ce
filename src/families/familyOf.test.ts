import { expect, test } from "bun:test";
import { ConfigError } from "../config";
import { evm } from "./evm/evm";
import { familyOf } from "./familyOf";
import { tron } from "./tron/tron";
import { utxo } from "./utxo/utxo";

test("CHAIN picks the family once: EVM chains and no CHAIN are EVM's, BTC, BTC_TESTNET, LTC and DOGE the Bitcoin family's, TRON and NILE the TRON family's; a chain of no family is a configuration error", () => {
  expect(familyOf(undefined)).toBe(evm);
  for (const chain of ["ETH", "BSC", "POLYGON", "SEPOLIA"] as const) expect(familyOf(chain)).toBe(evm);
  for (const chain of ["BTC", "BTC_TESTNET", "LTC", "DOGE"] as const) expect(familyOf(chain)).toBe(utxo);
  for (const chain of ["TRON", "NILE"] as const) expect(familyOf(chain)).toBe(tron);
  for (const chain of ["TON", "SOLANA"] as const) {
    expect(() => familyOf(chain)).toThrow(
      new ConfigError(`CHAIN=${chain}: no family of this service serves it yet (served: evm, utxo, tron)`),
    );
  }
});
