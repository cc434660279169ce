import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { merkleBranch } from "./merkle";
import { innerScripts, opcodeName, paysAddress, scriptAsm, scriptHash, scriptType } from "./script";

const bytes = (hex: string) => Buffer.from(hex, "hex");

// A P2SH multisig spend as Blockstream's Esplora answers it (blockstream.info, transaction 9d3ea0d1...):
// its prevout, scriptSig and their assembly, written by electrs.
const P2SH = "a914c9848245ae4f5d5934b5cbdfb79e04cdd337470b87";
const SIG1 =
  "304502210099219ee0cd5da341650078e3c63885b3cc2211069f2551cf436e0100f421e1760220349b4ec284255b458d6da539fa17314e8330459e0a653c254f775d4ec8f32b3f01";
const SIG2 =
  "304402203a8353c5ee76a2e266432e5f993f882e05725297e64c0833cf44719f7dda8d3b022058a2f72e7739efd21657b4943cac60a0a3c749e712787f0e85726da4c3adcf8e01";
const KEYS = [
  "027f2a0df8e86535d08ca3e766a178f90c813d2dd1d55b0166e82518efbffb18c0",
  "03556a35844b517e2fc8216701e2e0a64dbcbe62ad420ac6dd73dc79e69efeb695",
  "031ef21bd55171032b7aec21ec82932735fb986f1d4d8611feee62ab38acf4a6bb",
];
const REDEEM = `52${KEYS.map((k) => `21${k}`).join("")}53ae`;
const SCRIPTSIG = `0048${SIG1}47${SIG2}4c69${REDEEM}`;

test("asm as electrs writes it: pushes named by their opcode, OP_0, PUSHDATA, PUSHNUM", () => {
  expect(scriptAsm(bytes(P2SH))).toBe(
    "OP_HASH160 OP_PUSHBYTES_20 c9848245ae4f5d5934b5cbdfb79e04cdd337470b OP_EQUAL",
  );
  expect(scriptAsm(bytes(SCRIPTSIG))).toBe(
    `OP_0 OP_PUSHBYTES_72 ${SIG1} OP_PUSHBYTES_71 ${SIG2} OP_PUSHDATA1 ${REDEEM}`,
  );
  const inner = innerScripts(bytes(P2SH), bytes(SCRIPTSIG), []);
  expect(scriptAsm(inner.redeem!)).toBe(
    `OP_PUSHNUM_2 ${KEYS.map((k) => `OP_PUSHBYTES_33 ${k}`).join(" ")} OP_PUSHNUM_3 OP_CHECKMULTISIG`,
  );
  expect(inner.witness).toBeUndefined();
  expect(scriptAsm(bytes("76a91489abcdefabbaabbaabbaabbaabbaabbaabbaabba88ac"))).toBe(
    "OP_DUP OP_HASH160 OP_PUSHBYTES_20 89abcdefabbaabbaabbaabbaabbaabbaabbaabba OP_EQUALVERIFY OP_CHECKSIG",
  );
  expect(scriptAsm(bytes("6a0d636861696e2d67617465776179"))).toBe(
    "OP_RETURN OP_PUSHBYTES_13 636861696e2d67617465776179",
  );
  // A push running off the script, a length field cut short, soft-fork and unknown opcodes.
  expect(scriptAsm(bytes("0301"))).toBe("OP_PUSHBYTES_3 <push past end>");
  expect(scriptAsm(bytes("764d01"))).toBe("OP_DUP<unexpected end>");
  expect(scriptAsm(bytes("b1b2b3ba4fbbff"))).toBe(
    "OP_CLTV OP_CSV OP_NOP4 OP_CHECKSIGADD OP_PUSHNUM_NEG1 OP_RETURN_187 OP_INVALIDOPCODE",
  );
  expect(opcodeName(0x87)).toBe("OP_EQUAL");
  expect(opcodeName(0x61)).toBe("OP_NOP");
  expect(opcodeName(0xaf)).toBe("OP_CHECKMULTISIGVERIFY");
});

test("types and the address a script pays, as Esplora names them", () => {
  const hash20 = "11".repeat(20);
  const hash32 = "22".repeat(32);
  const cases: [string, string, boolean][] = [
    ["", "empty", false],
    ["6a", "op_return", false],
    [`21${"02".padEnd(66, "0")}ac`, "p2pk", false],
    [`76a914${hash20}88ac`, "p2pkh", true],
    [`a914${hash20}87`, "p2sh", true],
    [`0014${hash20}`, "v0_p2wpkh", true],
    [`0020${hash32}`, "v0_p2wsh", true],
    [`5120${hash32}`, "v1_p2tr", true],
    [`5210${"33".repeat(16)}`, "unknown", true],
    ["50", "provably_unspendable", false],
    [`52${KEYS.map((k) => `21${k}`).join("")}53ae`, "unknown", false],
  ];
  for (const [script, type, pays] of cases) {
    expect([script, scriptType(bytes(script)), paysAddress(bytes(script))]).toEqual([script, type, pays]);
  }
});

test("scripthash: SHA-256 of the script in the order computed, as electrs names it (not Electrum's reversal)", () => {
  // As `sha256sum` writes the digests of these bytes (the empty script's is SHA-256's known empty digest).
  const script = `76a914${"ab".repeat(20)}88ac`;
  expect(scriptHash(bytes(script))).toBe("9b3d17f20d5a288ba906c5207090556eecb2f89622150e55a50d06b65ad297c5");
  expect(scriptHash(bytes(""))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
});

test("a merkle branch leads from the transaction to the block's root", () => {
  const sha256d = (b: Buffer) =>
    createHash("sha256").update(createHash("sha256").update(b).digest()).digest();
  const txids = Array.from({ length: 7 }, (_, i) => createHash("sha256").update(String(i)).digest("hex"));
  const { root } = merkleBranch(txids, 0);
  for (let position = 0; position < txids.length; position++) {
    const { branch } = merkleBranch(txids, position);
    let hash = bytes(txids[position]!).reverse();
    let index = position;
    for (const sibling of branch) {
      const s = bytes(sibling).reverse();
      hash = index % 2 === 0 ? sha256d(Buffer.concat([hash, s])) : sha256d(Buffer.concat([s, hash]));
      index >>= 1;
    }
    expect(Buffer.from(hash).reverse().toString("hex")).toBe(root);
  }
  expect(merkleBranch([txids[0]!], 0)).toEqual({ branch: [], root: txids[0]! });
});
