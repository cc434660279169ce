/**
 * Which scripts name an address, client by client (scriptAddress.ts). Litecoin Core 0.21's are its own
 * answers: `decodescript` of each script on a regtest litecoind 0.21.2.1 (its `addresses` when it lists
 * exactly one); the raw-block tests check the same on whole blocks (rawBlock.test.ts, test/utxo-rawblock.test.ts).
 * Bitcoin Core 22's and Dogecoin Core 1.14's follow their source (src/core_write.cpp ScriptPubKeyToUniv;
 * 0.14's ExtractDestinations): a bare key names none from Core 22 on and its P2PKH address in 0.14.
 */
import { describe, expect, test } from "bun:test";
import { addressNetworkOf } from "./addresses";
import { dialectOf } from "./dialect";
import core from "./fixtures/bitcoin-core-22.json";
import doge from "./fixtures/dogecoin-1.14.json";
import ltc from "./fixtures/litecoind-0.21.json";
import { createScriptAddresser } from "./scriptAddress";

const G = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";
const script = (hex: string) => Buffer.from(hex, "hex");
const name = (addressOf: ReturnType<typeof createScriptAddresser>, hex: string) =>
  addressOf(script(hex), 0, hex.length / 2);

describe("the address a script names", () => {
  const litecoin = createScriptAddresser(
    addressNetworkOf("LTC", "regtest")!,
    dialectOf(ltc.answers.getnetworkinfo),
  );

  test("Litecoin Core 0.21, as its decodescript answers", () => {
    expect(name(litecoin, `21${G}ac`)).toBeNull();
    expect(name(litecoin, `5121${G}51ae`)).toBe("mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r");
    expect(name(litecoin, `5221${G}21${G}52ae`)).toBeNull();
    expect(name(litecoin, `5120${"ab".repeat(32)}`)).toBe(
      "rltc1p4w46h2at4w46h2at4w46h2at4w46h2at4w46h2at4w46h2at4w4sfmslr2",
    );
    expect(name(litecoin, "5202abcd")).toBe("rltc1z40xs7thjdc");
    expect(name(litecoin, `0014${"ab".repeat(20)}`)).toBe("rltc1q4w46h2at4w46h2at4w46h2at4w46h2atukufw5");
    // MWEB's programs name none; a version 0 program of another length is nonstandard.
    expect(name(litecoin, `5920${"ab".repeat(32)}`)).toBeNull();
    expect(name(litecoin, `0019${"ab".repeat(25)}`)).toBeNull();
  });

  test("Bitcoin Core 22: a bare key and a bare multisig name none", () => {
    const bitcoin = createScriptAddresser(
      addressNetworkOf("BTC", "main")!,
      dialectOf(core.answers["getnetworkinfo (22.0)"]),
    );
    expect(name(bitcoin, `21${G}ac`)).toBeNull();
    expect(name(bitcoin, `5121${G}51ae`)).toBeNull();
    expect(name(bitcoin, "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac")).toBe(
      "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
    );
    expect(name(bitcoin, "0014751e76e8199196d454941c45d1b3a323f1433bd6")).toBe(
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
    );
  });

  test("Dogecoin Core 1.14: a bare key names its P2PKH address; no segwit addresses", () => {
    const dogecoin = createScriptAddresser(
      addressNetworkOf("DOGE", "main")!,
      dialectOf(doge.answers.getnetworkinfo),
    );
    // G's hash160 is 751e76e8199196d454941c45d1b3a323f1433bd6 (BIP-173's example program).
    const p2pkh = name(dogecoin, "76a914751e76e8199196d454941c45d1b3a323f1433bd688ac");
    expect(p2pkh).toStartWith("D");
    expect(name(dogecoin, `21${G}ac`)).toBe(p2pkh);
    expect(name(dogecoin, `4c21${G}ac`)).toBe(p2pkh);
    expect(name(dogecoin, `5121${G}2105${"11".repeat(32)}52ae`)).toBe(p2pkh);
    expect(name(dogecoin, "0014751e76e8199196d454941c45d1b3a323f1433bd6")).toBeNull();
  });
});
