import { expect, test } from "bun:test";
import { netResults } from "./mempoolTransaction";

/**
 * A wallet send of 1.5 LTC to a bech32 address, spending a 50 LTC coinbase, change first, as Litecoin Core
 * 0.21.2.1 (regtest) answered it (mempoolStore.test.ts reads the node's text).
 */
const TXID = "66c546606d81e0a747f36eccd02ba33f0e9a4d5eb37804497d661fa5aeb5dfc4";
const CHANGE = "rltc1qmz2wadgd2qlqzpcc9rd4z5uj754lva6e8r02sz";
const PAID = "rltc1qtv3gk4zl9p0hcunthnd77hj8p0yp3tx9ynexcy";
/** The coinbase it spends paid this address 50 LTC (getblock of block 1 at verbosity 2). */
const COINBASE_OWNER = "rltc1q5vw5vjn6sertx0huaet2jrxu7l8kmyg0wcte7f";

test("the net rule: deposit, withdrawal with its fee, change back to the sender, one result per filter", () => {
  const tx = {
    txid: TXID,
    outputs: [
      { address: CHANGE, value: 4_849_998_590n },
      { address: PAID, value: 150_000_000n },
    ],
  };
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
