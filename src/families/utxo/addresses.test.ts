import { expect, test } from "bun:test";
import type { ChainInfo } from "../../blockchain";
import { base58checkDecode, base58checkEncode, segwitDecode } from "./addressEncodings";
import { addressNetworkOf, createUtxoAddressCodec, utxoAddresses, utxoAddressesFor } from "./addresses";

const codec = (blockchain: "BTC" | "BTC_TESTNET" | "LTC" | "DOGE", network: string) =>
  createUtxoAddressCodec(addressNetworkOf(blockchain, network)!);
const btcMain = codec("BTC", "main");
const btcTest = codec("BTC_TESTNET", "test");
const btcRegtest = codec("BTC", "regtest");
const ltcMain = codec("LTC", "main");
const ltcRegtest = codec("LTC", "regtest");
const dogeMain = codec("DOGE", "main");
const dogeTest = codec("DOGE", "test");

/** BIP-350's valid segwit addresses (bitcoin/bips bip-0350.mediawiki) and their scriptPubKeys. */
const BIP350_VALID: [string, string][] = [
  ["BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"],
  [
    "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
    "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262",
  ],
  [
    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
    "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6",
  ],
  ["BC1SW50QGDZ25J", "6002751e"],
  ["bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "5210751e76e8199196d454941c45d1b3a323"],
  [
    "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
    "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
  ],
  [
    "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
    "5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
  ],
  [
    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
    "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
  ],
];

/** BIP-350's invalid segwit addresses, each for its reason. */
const BIP350_INVALID = [
  "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", // prefix
  "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", // bech32 for v1
  "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf", // bech32 for v2
  "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", // bech32 for v16
  "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", // bech32m for v0
  "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47", // bech32m for v0
  "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", // character in the checksum
  "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", // witness version 17
  "bc1pw5dgrnzv", // a 1-byte program
  "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", // 41 bytes
  "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", // 16 bytes for v0
  "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq", // mixed case
  "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", // zero padding over 4 bits
  "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", // non-zero padding
  "bc1gmk9yu", // empty data
];

const scriptOf = (address: string) => {
  const s = segwitDecode(address)!;
  const op = s.version === 0 ? 0 : 0x50 + s.version;
  return Buffer.from([op, s.program.length, ...s.program]).toString("hex");
};

test("BIP-350's valid segwit addresses: their programs, lower case canonical, on their network only", () => {
  for (const [address, script] of BIP350_VALID) {
    expect(scriptOf(address)).toBe(script);
    const [own, other] = address.toLowerCase().startsWith("bc1") ? [btcMain, btcTest] : [btcTest, btcMain];
    expect(own.canonical(address)).toBe(address.toLowerCase());
    expect(other.canonical(address)).toBeUndefined();
    expect(btcRegtest.canonical(address)).toBeUndefined();
    expect(ltcMain.canonical(address)).toBeUndefined();
  }
});

test("BIP-350's invalid segwit addresses: none on any network", () => {
  for (const address of BIP350_INVALID) {
    // The first is a well-formed address of another prefix: no network of these takes it.
    if (!address.startsWith("tc1")) expect(segwitDecode(address)).toBeUndefined();
    for (const c of [btcMain, btcTest, btcRegtest]) expect(c.canonical(address)).toBeUndefined();
  }
});

test("base58check: real main-chain addresses on their chain, case kept; a changed letter or case is none", () => {
  // Bitcoin's genesis output address, Bitcoin Core's validateaddress example, BIP-13's P2SH example.
  for (const a of [
    "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
    "1PSSGeFHDnKNxiEyFrD1wcEaHr9hrQDDWc",
    "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
  ]) {
    expect(btcMain.canonical(a)).toBe(a);
    expect(btcTest.canonical(a)).toBeUndefined();
    expect(dogeMain.canonical(a)).toBeUndefined();
  }
  expect(btcMain.canonical("1111111111111111111114oLvT2")).toBe("1111111111111111111114oLvT2");
  const ltc = "LTVdcw8fdTTK4TcebTZ4jiiCbvTXaRxZNh";
  expect(ltcMain.canonical(ltc)).toBe(ltc);
  expect(btcMain.canonical(ltc)).toBeUndefined();
  const doge = "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L";
  expect(dogeMain.canonical(doge)).toBe(doge);
  expect(dogeTest.canonical(doge)).toBeUndefined();
  expect(ltcMain.canonical(doge)).toBeUndefined();
  // base58 is case-sensitive: another case is another text, whose checksum fails.
  expect(btcMain.canonical("1a1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")).toBeUndefined();
  expect(btcMain.canonical("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb")).toBeUndefined();
  // Characters outside the alphabet, an empty text, a 0x address.
  for (const bad of [
    "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0",
    "",
    "0x52908400098527886e0f7030069857d2e4169ee7",
  ]) {
    expect(btcMain.canonical(bad)).toBeUndefined();
  }
});

test("Litecoin's older P2SH form (version 5 on main, 196 on its test networks) is the node's form", () => {
  const payload = base58checkDecode("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")!.payload;
  const own = base58checkEncode(50, payload);
  expect(own.startsWith("M")).toBe(true);
  expect(ltcMain.canonical("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")).toBe(own);
  expect(ltcMain.canonical(own)).toBe(own);
  const older = base58checkEncode(196, payload);
  expect(ltcRegtest.canonical(older)).toBe(base58checkEncode(58, payload));
  // Bitcoin keeps 5 as its own P2SH version.
  expect(btcMain.canonical("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")).toBe("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy");
});

test("version bytes and prefixes per network; Dogecoin has no segwit; a 21-byte payload only", () => {
  const hash = new Uint8Array(20).fill(9);
  const cases: [ReturnType<typeof codec>, number, boolean][] = [
    [btcMain, 0, true],
    [btcMain, 5, true],
    [btcMain, 111, false],
    [btcTest, 111, true],
    [btcTest, 196, true],
    [ltcMain, 48, true],
    [ltcMain, 50, true],
    [ltcMain, 0, false],
    [ltcRegtest, 111, true],
    [ltcRegtest, 58, true],
    [dogeMain, 30, true],
    [dogeMain, 22, true],
    [dogeMain, 0, false],
    [dogeTest, 113, true],
    [dogeTest, 196, true],
    [dogeTest, 111, false],
  ];
  for (const [c, version, valid] of cases) {
    const text = base58checkEncode(version, hash);
    expect([version, c.canonical(text)]).toEqual([version, valid ? text : undefined]);
  }
  expect(btcMain.canonical(base58checkEncode(0, new Uint8Array(21)))).toBeUndefined();
  expect(btcMain.canonical(base58checkEncode(0, new Uint8Array(19)))).toBeUndefined();
  expect(addressNetworkOf("DOGE", "main")!.segwit).toBeUndefined();
  expect(addressNetworkOf("LTC", "test")!.segwit).toBe("tltc");
  expect(addressNetworkOf("BTC_TESTNET", "signet")!.segwit).toBe("tb");
  expect(addressNetworkOf("BTC", "test")).toBeUndefined();
});

test("the index's bytes are the canonical text's; the family's codec takes nothing before the chain is known", () => {
  const a = "rltc1q9cp8am4j95xlzpf5ccrzzwef49xtccm5qstkkf";
  expect(ltcRegtest.canonical(a.toUpperCase())).toBe(a);
  expect(ltcRegtest.canonical("Rltc1q9cp8am4j95xlzpf5ccrzzwef49xtccm5qstkkf")).toBeUndefined();
  expect(Buffer.from(ltcRegtest.toBytes(a)).toString()).toBe(a);
  expect(ltcRegtest.fromBytes(ltcRegtest.toBytes("QLqeQfW2dcfd89NEVbNtzHENPtxCjcZB1r"))).toBe(
    "QLqeQfW2dcfd89NEVbNtzHENPtxCjcZB1r",
  );
  expect(utxoAddresses.canonical(a)).toBeUndefined();
  const chain: ChainInfo = {
    chainId: 2n,
    blockchain: "LTC",
    nativeSymbol: "LTC",
    nativeDecimals: 8,
    confirmations: 0,
    blockTimeMs: 1_000,
    devChain: true,
    network: "regtest",
  };
  expect(utxoAddressesFor(chain).canonical(a)).toBe(a);
  expect(utxoAddressesFor(chain).description).toBe(
    "an address of Litecoin's regtest: base58check P2PKH (version 111) or P2SH (version 58 or 196), or bech32/bech32m with the prefix rltc",
  );
  expect(() => utxoAddressesFor({ ...chain, network: undefined })).toThrow(TypeError);
});
