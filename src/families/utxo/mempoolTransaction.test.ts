import { expect, test } from "bun:test";
import { netResults, readMempoolTransaction } from "./mempoolTransaction";

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

test("a verbose transaction: its outpoints and each output's address and satoshis, read from the text", () => {
  expect(readMempoolTransaction(LITECOIN_TX)).toEqual({
    txid: "66c546606d81e0a747f36eccd02ba33f0e9a4d5eb37804497d661fa5aeb5dfc4",
    inputs: [{ txid: "33f418c0d4c85f9925a829aa69aa38e8e514c0feb447fb6a29111ea4e9edcd0b", vout: 0 }],
    outputs: [
      { address: CHANGE, value: 4_849_998_590n },
      { address: PAID, value: 150_000_000n },
    ],
  });
});

test("Bitcoin Core 22's `address`, an OP_RETURN, a bare multisig naming two; a coinbase spends nothing", () => {
  // Bitcoin Core 22 and later write `address` (one) where older nodes write `addresses` (doc/release-notes-22.0).
  const modern = LITECOIN_TX.replace(
    `"reqSigs":1,"type":"witness_v0_keyhash","addresses":["${PAID}"]`,
    `"type":"witness_v0_keyhash","address":"${PAID}"`,
  ).replace(
    `"value":48.49998590,"n":0,"scriptPubKey":{"asm":"0 d894eeb50d503e01071828db515392f52bf67759","hex":"0014d894eeb50d503e01071828db515392f52bf67759","reqSigs":1,"type":"witness_v0_keyhash","addresses":["${CHANGE}"]}`,
    `"value":0.00000000,"n":0,"scriptPubKey":{"asm":"OP_RETURN 636861696e","hex":"6a05636861696e","type":"nulldata"}`,
  );
  expect(readMempoolTransaction(modern).outputs).toEqual([
    { address: null, value: 0n },
    { address: PAID, value: 150_000_000n },
  ]);
  const multisig = LITECOIN_TX.replace(`"addresses":["${PAID}"]`, `"addresses":["${PAID}","${CHANGE}"]`);
  expect(readMempoolTransaction(multisig).outputs[1]).toEqual({ address: null, value: 150_000_000n });
  const coinbase = LITECOIN_TX.replace(
    /"vin":\[\{.*?"sequence":4294967294\}\]/,
    '"vin":[{"coinbase":"510101","sequence":4294967295}]',
  );
  expect(readMempoolTransaction(coinbase).inputs).toEqual([]);
  expect(() => readMempoolTransaction('{"txid":"00"}')).toThrow(SyntaxError);
});

test("the net rule: deposit, withdrawal with its fee, change back to the sender, one result per filter", () => {
  const tx = readMempoolTransaction(LITECOIN_TX);
  const spent = [{ address: COINBASE_OWNER, value: 5_000_000_000n }];
  const fee = 5_000_000_000n - 4_849_998_590n - 150_000_000n;
  expect(fee).toBe(1_410n);
  const results = netResults(tx, spent, [
    { filterId: "a", address: PAID },
    { filterId: "b", address: COINBASE_OWNER },
    { filterId: "c", address: CHANGE },
    { filterId: "d", address: "rltc1q9cp8am4j95xlzpf5ccrzzwef49xtccm5qstkkf" },
    { filterId: "e", address: PAID },
  ]);
  const common = { txid: tx.txid, fee, inputs: [COINBASE_OWNER], outputs: [CHANGE, PAID] };
  expect(results).toEqual([
    { filterId: "a", address: PAID, net: 150_000_000n, ...common },
    { filterId: "b", address: COINBASE_OWNER, net: -5_000_000_000n, ...common },
    { filterId: "c", address: CHANGE, net: 4_849_998_590n, ...common },
    { filterId: "e", address: PAID, net: 150_000_000n, ...common },
  ]);
  // Change back to the spender: the spender's net is what left it, the fee included.
  const own = netResults(
    tx,
    [{ address: CHANGE, value: 5_000_000_000n }],
    [{ filterId: "a", address: CHANGE }],
  );
  expect(own[0]!.net).toBe(-(150_000_000n + fee));
  // Paid back exactly what it spends: net 0 (unknown).
  const even = netResults(
    tx,
    [
      { address: PAID, value: 150_000_000n },
      { address: null, value: 4_850_000_000n },
    ],
    [{ filterId: "a", address: PAID }],
  );
  expect(even[0]!.net).toBe(0n);
  expect(even[0]!.inputs).toEqual([PAID]);
});
