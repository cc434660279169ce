/** java-tron's identity and headers, on answers recorded on Nile (test/fixtures/tron/). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeTronChain } from "./chains";
import { parseTronHeader, tronNodeProtocol } from "./nodeProtocol";

const fixtures = join(import.meta.dir, "../../../test/fixtures/tron");
const read = (path: string) => readFileSync(join(fixtures, path), "utf8");
const result = (path: string) => JSON.stringify((JSON.parse(read(path)) as { result: unknown }).result);

test("a block of the HTTP API: its header from blockID and parentHash, hashes as the JSON-RPC writes them", () => {
  const header = parseTronHeader(read("nile/getblockbynum.json"))!;
  expect(header.number).toBe(66_987_565n);
  expect(header.hash).toBe("0x0000000003fe262d52bfa4b2814f816fd2e57af5b98a33d60d8630a03a908e0e");
  expect(header.parentHash).toBe("0x0000000003fe262c85cd6b02033f4c3e5c1efa35de256a17bd906dc61fb1aeed");
  expect(header.timestamp).toBe(1_777_445_121);
  expect(parseTronHeader("{}")).toBeUndefined();
});

test("a block of the JSON-RPC: the same forms", () => {
  const header = parseTronHeader(result("jsonrpc/eth_getBlockByNumber.json"))!;
  expect(header.number).toBe(0x3fe1c00n);
  expect(header.hash).toBe("0x0000000003fe1c00462b498ddae67717e96c785078adb5ccb7279148916e6f97");
  expect(header.parentHash).toBe("0x0000000003fe1bff062fa008dcd68f6ab2a96a25bc175df22a04baa0cd391573");
  expect(parseTronHeader("null")).toBeUndefined();
});

test("identity: eth_chainId and block 0's blockID; Nile's is Nile's, and not mainnet's", async () => {
  const genesis =
    '{"blockID":"0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc","block_header":{"raw_data":{"parentHash":"957dc2d350daecc7bb6a38f3938ebde0a0c1cedafe15f0edae4256a2907449f6"}}}';
  const asked: string[] = [];
  const identity = await tronNodeProtocol.readIdentity(async (method) => {
    asked.push(method);
    return method === "eth_chainId" ? result("nile/jsonrpc-eth_chainId.json") : genesis;
  });
  expect(asked.sort()).toEqual(["eth_chainId", "wallet/getblockbynum"]);
  expect(identity).toBe("0xcd8690dc:0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc");
  expect(describeTronChain(identity!, { blockchain: "NILE" })).toEqual({
    chainId: 0xcd8690dcn,
    blockchain: "NILE",
    nativeSymbol: "TRX",
    nativeDecimals: 6,
    confirmations: 19,
    blockTimeMs: 3_000,
    devChain: false,
  });
  expect(() => describeTronChain(identity!, { blockchain: "TRON" })).toThrow(
    "CHAIN=TRON takes nodes of chain 0x2b6653dc:00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
  );
});
