import { expect, test } from "bun:test";
import { segwitDecode } from "./addressEncodings";
import { type NodeTransaction, type Prevout, parseNode } from "./esplora/esploraJson";
import { scriptHash } from "./esplora/script";
import { createMempoolStore, type MempoolEntry, mempoolEntry } from "./mempoolStore";

/**
 * `getrawtransaction <txid> true` as Litecoin Core 0.21.2.1 (regtest) answered it: a wallet send of 1.5 LTC
 * to a bech32 address, spending a 50 LTC coinbase, change first. Amounts are the node's decimal text.
 */
const LITECOIN_TX =
  '{"txid":"66c546606d81e0a747f36eccd02ba33f0e9a4d5eb37804497d661fa5aeb5dfc4","hash":"6778ac8dff13f7e6321901de0537dcc246c57b5f1512de6297be461f6c7651e5","version":2,"size":222,"vsize":141,"weight":561,"locktime":101,"vin":[{"ismweb":false,"txid":"33f418c0d4c85f9925a829aa69aa38e8e514c0feb447fb6a29111ea4e9edcd0b","vout":0,"scriptSig":{"asm":"","hex":""},"txinwitness":["3044022015cea8d8d2979153bf533d2e39b501516a0ddb18d36e5c154f2ae6f65ec4ac7b022048406b1b11b28e88d6195c3d609b59de42b3be7839d00313c95cb015743dcb9a01","0349b0e8c8ef53d854b12636692124bbd59ab0ee92b2f3fcce8c9fb048a8fb7bd5"],"sequence":4294967294}],"vout":[{"ismweb":false,"value":48.49998590,"n":0,"scriptPubKey":{"asm":"0 d894eeb50d503e01071828db515392f52bf67759","hex":"0014d894eeb50d503e01071828db515392f52bf67759","reqSigs":1,"type":"witness_v0_keyhash","addresses":["rltc1qmz2wadgd2qlqzpcc9rd4z5uj754lva6e8r02sz"]}},{"ismweb":false,"value":1.50000000,"n":1,"scriptPubKey":{"asm":"0 5b228b545f285f7c726bbcdbef5e470bc818acc5","hex":"00145b228b545f285f7c726bbcdbef5e470bc818acc5","reqSigs":1,"type":"witness_v0_keyhash","addresses":["rltc1qtv3gk4zl9p0hcunthnd77hj8p0yp3tx9ynexcy"]}}],"hex":"020000000001010bcdede9a41e11296afb47b4fec014e5e838aa69aa29a825995fc8d4c018f4330000000000feffffff02fe1a152101000000160014d894eeb50d503e01071828db515392f52bf6775980d1f008000000001600145b228b545f285f7c726bbcdbef5e470bc818acc502473044022015cea8d8d2979153bf533d2e39b501516a0ddb18d36e5c154f2ae6f65ec4ac7b022048406b1b11b28e88d6195c3d609b59de42b3be7839d00313c95cb015743dcb9a01210349b0e8c8ef53d854b12636692124bbd59ab0ee92b2f3fcce8c9fb048a8fb7bd565000000"}';
const CHANGE = "rltc1qmz2wadgd2qlqzpcc9rd4z5uj754lva6e8r02sz";
const PAID = "rltc1qtv3gk4zl9p0hcunthnd77hj8p0yp3tx9ynexcy";
/** The coinbase it spends paid this address 50 LTC (getblock of block 1 at verbosity 2). */
const COINBASE_OWNER = "rltc1q5vw5vjn6sertx0huaet2jrxu7l8kmyg0wcte7f";

/** A P2WPKH address's script. */
const p2wpkh = (address: string) =>
  Buffer.concat([Buffer.from([0x00, 0x14]), segwitDecode(address)!.program]);
const coinbaseOutput: Prevout = {
  script: p2wpkh(COINBASE_OWNER),
  value: 5_000_000_000n,
  address: COINBASE_OWNER,
};
const TIME = 1_583_020_800;

test("a transaction read: its fee from what its inputs spend, its outputs, addresses, scripts and JSON", () => {
  const tx = parseNode<NodeTransaction>(LITECOIN_TX);
  const e = mempoolEntry(tx, { time: TIME, fees: { base: 1_410n } }, [coinbaseOutput], 3);
  const { json, bytes, ...rest } = e;
  expect(rest).toEqual({
    txid: "66c546606d81e0a747f36eccd02ba33f0e9a4d5eb37804497d661fa5aeb5dfc4",
    time: TIME,
    fee: 1_410n,
    weight: 561,
    spends: [{ txid: "33f418c0d4c85f9925a829aa69aa38e8e514c0feb447fb6a29111ea4e9edcd0b", vout: 0 }],
    prevouts: [coinbaseOutput],
    outputs: [
      { script: p2wpkh(CHANGE), value: 4_849_998_590n, address: CHANGE },
      { script: p2wpkh(PAID), value: 150_000_000n, address: PAID },
    ],
    addresses: [COINBASE_OWNER, CHANGE, PAID],
    scripts: [COINBASE_OWNER, CHANGE, PAID].map((a) => [scriptHash(p2wpkh(a)), a]),
    listed: 3,
  });
  expect(bytes).toBeGreaterThan(json.length);
  const esplora = JSON.parse(json);
  expect([esplora.txid, esplora.fee, esplora.weight, esplora.status]).toEqual([
    e.txid,
    1_410,
    561,
    { confirmed: false },
  ]);
  expect(esplora.vin[0].prevout.scriptpubkey_address).toBe(COINBASE_OWNER);
});

test("an input's output unknown: the node's fee (fees.base, or an older node's fee); no weight: four times the size", () => {
  const tx = parseNode<NodeTransaction>(LITECOIN_TX);
  expect(mempoolEntry(tx, { time: TIME, fees: { base: 1_411n } }, [undefined], 1).fee).toBe(1_411n);
  expect(mempoolEntry(tx, { time: TIME, fee: 1_412n }, [undefined], 1).fee).toBe(1_412n);
  const dogecoin = { ...tx, weight: undefined };
  expect(mempoolEntry(dogecoin, { time: TIME, fee: 1n }, [coinbaseOutput], 1).weight).toBe(222 * 4);
});

const X = "rltc1qxxxxxxxx";
const Y = "rltc1qyyyyyyyy";
const Z = "rltc1qzzzzzzzz";
const out = (address: string | null, value: bigint): Prevout => ({
  script: new Uint8Array(),
  value,
  address,
});

/** An entry made by hand: what it spends and pays, its fee, weight and bytes. */
function entry(
  txid: string,
  made: {
    time?: number;
    fee?: bigint;
    weight?: number;
    spends?: [string, number, Prevout | undefined][];
    outputs?: Prevout[];
    scripts?: [string, string][];
    bytes?: number;
  },
): MempoolEntry {
  const spends = made.spends ?? [];
  const prevouts = spends.map((s) => s[2]);
  const outputs = made.outputs ?? [];
  const addresses = new Set(
    [...prevouts, ...outputs].flatMap((p) => (p?.address == null ? [] : [p.address])),
  );
  return {
    txid,
    time: made.time ?? TIME,
    fee: made.fee ?? 1_000n,
    weight: made.weight ?? 400,
    spends: spends.map(([t, vout]) => ({ txid: t, vout })),
    prevouts,
    outputs,
    addresses: [...addresses],
    scripts: made.scripts ?? [],
    json: `{"txid":"${txid}"}`,
    listed: 1,
    bytes: made.bytes ?? 100,
  };
}

test("an address's transactions newest first, its figures kept as they enter and leave, spends, scripts", () => {
  const store = createMempoolStore(1 << 20);
  const a = entry("aa", { outputs: [out(X, 100n), out(Y, 50n)], scripts: [["h-x", X]] });
  const b = entry("bb", { spends: [["aa", 0, out(X, 100n)]], outputs: [out(Z, 90n)], scripts: [["h-x", X]] });
  const c = entry("cc", { time: TIME + 1, outputs: [out(X, 10n), out(null, 0n)] });
  store.add([a, b, c]);
  expect(store.ofAddress(X).map((e) => e.txid)).toEqual(["cc", "aa", "bb"]);
  expect(store.stats(X)).toEqual({
    fundedCount: 2n,
    fundedSum: 110n,
    spentCount: 1n,
    spentSum: 100n,
    txCount: 3n,
  });
  expect(store.stats(Z)).toEqual({
    fundedCount: 1n,
    fundedSum: 90n,
    spentCount: 0n,
    spentSum: 0n,
    txCount: 1n,
  });
  expect([store.spendOf("aa", 0), store.spendOf("aa", 1)]).toEqual([{ txid: "bb", vin: 0 }, undefined]);
  expect(store.addressOfScripthash("h-x")).toBe(X);
  expect([store.get("bb"), store.has("bb"), [...store.txids()].sort()]).toEqual([
    b,
    true,
    ["aa", "bb", "cc"],
  ]);
  const version = store.version;
  store.remove(["bb", "nothing"]);
  expect(store.version).toBeGreaterThan(version);
  expect(store.stats(X)).toEqual({
    fundedCount: 2n,
    fundedSum: 110n,
    spentCount: 0n,
    spentSum: 0n,
    txCount: 2n,
  });
  expect([store.spendOf("aa", 0), store.ofAddress(Z), store.addressOfScripthash("h-x")]).toEqual([
    undefined,
    [],
    X,
  ]);
  store.remove(["aa", "cc"]);
  expect([store.ofAddress(X), store.stats(X).txCount, store.addressOfScripthash("h-x"), store.bytes]).toEqual(
    [[], 0n, undefined, 0],
  );
  const still = store.version;
  store.remove(["aa"]);
  expect(store.version).toBe(still);
});

test("past the bound: the lowest fee rates left out with what spends them, down to 90%; still counted", () => {
  const store = createMempoolStore(1_000);
  // Fee rates (fee over weight): low 1, its child 50, mid 5, high 10 and 20.
  const low = entry("low", { fee: 400n, outputs: [out(X, 1n)], bytes: 300 });
  const child = entry("child", {
    fee: 20_000n,
    spends: [["low", 0, out(X, 1n)]],
    outputs: [out(Y, 1n)],
    bytes: 300,
  });
  const mid = entry("mid", { fee: 2_000n, outputs: [out(Y, 1n)], bytes: 300 });
  const high = entry("high", { fee: 4_000n, bytes: 300 });
  const higher = entry("higher", { fee: 8_000n, bytes: 200 });
  // 1,200 bytes, past 1,000: the lowest (low) goes with its child (the highest rate), down to 600 <= 900.
  store.add([low, child, mid, high]);
  expect([store.get("low"), store.get("child"), store.has("low"), store.has("child")]).toEqual([
    undefined,
    undefined,
    true,
    true,
  ]);
  expect([store.counts, store.bytes, store.ofAddress(X), store.stats(Y).txCount]).toEqual([
    { kept: 2, leftOut: 2 },
    600,
    [],
    1n,
  ]);
  // Whatever spends a transaction left out is left out as it comes; the backlog counts them all.
  const grandchild = entry("grandchild", { spends: [["child", 0, out(Y, 1n)]], bytes: 100 });
  store.add([higher, grandchild]);
  expect([store.counts, store.bytes]).toEqual([{ kept: 3, leftOut: 3 }, 800]);
  expect([...store.feeInfo()].map((f) => f.fee).sort((a, b) => Number(a - b))).toEqual([
    400n,
    1_000n,
    2_000n,
    4_000n,
    8_000n,
    20_000n,
  ]);
  store.remove(["low", "child", "grandchild"]);
  expect([store.counts, [...store.txids()].sort()]).toEqual([
    { kept: 3, leftOut: 0 },
    ["high", "higher", "mid"],
  ]);
  store.clear();
  expect([store.counts, store.bytes]).toEqual([{ kept: 0, leftOut: 0 }, 0]);
});
