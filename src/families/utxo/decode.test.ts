/**
 * The index's block decoder on recorded node answers: litecoind 0.21 recorded from the real node
 * (fixtures/litecoind-0.21.json: a sendmany of several inputs and outputs; fixtures/litecoind-0.21-mweb.json:
 * Litecoin's first MWEB block, with a peg-in and the integrating transaction), Bitcoin Core 22+ and Dogecoin
 * Core 1.14 written from their documentation and source (fixtures/bitcoin-core-22.json and
 * fixtures/dogecoin-1.14.json say where from). What needs the previous outputs (fees, who pays whom) is
 * checked against the node's own getblockstats of the MWEB block.
 */
import { describe, expect, test } from "bun:test";
import { blockSums, decodeUtxoBlock, parseAmountsExact, settleBlock } from "./decode";
import core from "./fixtures/bitcoin-core-22.json";
import doge from "./fixtures/dogecoin-1.14.json";
import ltc from "./fixtures/litecoind-0.21.json";
import mweb from "./fixtures/litecoind-0.21-mweb.json";
import { resolveInGroup } from "./prevouts";

describe("decodeUtxoBlock", () => {
  test("litecoind 0.21 (verbosity 2, `addresses`): header, coinbase, inputs, outputs, exact values", () => {
    const block = decodeUtxoBlock({ block: ltc.answers["getblock verbosity 2"] });
    const raw = JSON.parse(ltc.answers["getblock verbosity 2"]);
    expect({
      number: block.number,
      hash: block.hash,
      parentHash: block.parentHash,
      headerTime: block.headerTime,
      medianTime: block.medianTime,
      size: block.size,
      weight: block.weight,
    }).toEqual({
      number: 106n,
      hash: raw.hash,
      parentHash: raw.previousblockhash,
      headerTime: BigInt(raw.time),
      medianTime: BigInt(raw.mediantime),
      size: raw.size,
      weight: raw.weight,
    });
    const [coinbase, send] = block.transactions;
    expect(coinbase).toMatchObject({ position: 0, coinbase: true, inputs: [], vsize: 142, weight: 568 });
    expect(coinbase!.outputs.map((o) => [o.vout, o.value, o.address])).toEqual([
      [0, 5_000_003_420n, "rltc1qp9e4kkk2uzvg2rhlznez4tycgxcg37j8l3unjy"],
      // The witness commitment: OP_RETURN, no address.
      [1, 0n, null],
    ]);
    expect(send!.coinbase).toBe(false);
    expect(send!.inputs.map((i) => `${i.txid}:${i.vout}`)).toEqual(
      raw.tx[1].vin.map((v: { txid: string; vout: number }) => `${v.txid}:${v.vout}`),
    );
    expect(send!.outputs).toHaveLength(raw.tx[1].vout.length);
    expect(send!.outputs[0]).toMatchObject({ vout: 0, value: 4_550_000_000n });
    // What write groups count: every output of the block.
    expect(block.transfers).toHaveLength(coinbase!.outputs.length + send!.outputs.length);
  });

  test("Bitcoin Core 22+ (`address`, and a `fee` the index does not read)", () => {
    const block = decodeUtxoBlock({ block: core.answers["getblock verbosity 2 (22.0 order)"] });
    expect(block.number).toBe(800_000n);
    const [coinbase, spend] = block.transactions;
    expect(coinbase!.outputs.map((o) => o.address)).toEqual([
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
      null,
    ]);
    expect(spend!.outputs.map((o) => [o.address, o.value])).toEqual([
      ["1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", 1_500_000n],
      // 21,000,000 coins: exact.
      ["3P14159f73E4gFr7JterCCQh9QjiTjiZrG", 2_100_000_000_000_000n],
    ]);
    // The fee is inputs minus outputs, once the inputs are resolved; the node's 0.00012345 is not it.
    spend!.inputs[0]!.value = 2_100_000_001_600_000n;
    settleBlock(block);
    expect(spend!.fee).toBe(100_000n);
  });

  test("Dogecoin Core 1.14 (ids, then getrawtransaction verbose; `addresses`, no vsize or weight)", () => {
    const tx = JSON.parse(doge.answers["getrawtransaction verbose"]);
    // getblock <hash> true, as Dogecoin Core 1.14's blockToJSON writes it (the transactions as ids).
    const block = JSON.stringify({
      hash: tx.blockhash,
      confirmations: 5_000_000,
      size: 1000,
      height: 42,
      version: 2,
      merkleroot: tx.txid,
      tx: [tx.txid],
      time: tx.blocktime,
      mediantime: tx.blocktime - 60,
      nonce: 0,
      bits: "1e0ffff0",
      difficulty: 1,
      previousblockhash: "0".repeat(63) + "1",
    });
    const decoded = decodeUtxoBlock({ block, transactions: [doge.answers["getrawtransaction verbose"]] });
    const [only] = decoded.transactions;
    expect(only!.txid).toBe(tx.txid);
    expect(only!.outputs.map((o) => [o.address, o.value])).toEqual([
      ["DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", 100_000_000_000n],
      // A bare multisig names two addresses: it pays no one address.
      [null, 12_345_678n],
    ]);
    expect({ vsize: only!.vsize, weight: only!.weight, blockWeight: decoded.weight }).toEqual({
      vsize: 191,
      weight: 764,
      blockWeight: 4000,
    });
  });

  test("litecoind 0.21's MWEB block: the peg-in and the integrating transaction, fees as the node counts them", () => {
    const block = decodeUtxoBlock({ block: mweb.answers["getblock verbosity 2"] });
    const [coinbase, pegin, hogex] = block.transactions;
    expect(pegin!.outputs.map((o) => o.address)).toEqual([null]);
    expect(hogex!.outputs.map((o) => o.address)).toEqual([null]);
    // The integrating transaction spends the peg-in's output, in the same block: resolved in the group.
    const left = resolveInGroup([block]);
    expect(left).toEqual([pegin!.inputs[0]!]);
    expect(hogex!.inputs[0]).toMatchObject({
      txid: pegin!.txid,
      vout: 0,
      indexed: true,
      value: 1_249_998_370n,
    });
    // The peg-in's own input, as the node's getrawtransaction of its previous transaction says.
    const prev = parseAmountsExact(mweb.answers["getrawtransaction verbose (the peg-in's prevout)"]) as any;
    Object.assign(pegin!.inputs[0]!, {
      value: 1_250_000_000n,
      address: prev.vout[0].scriptPubKey.addresses[0],
    });
    expect(prev.vout[0].value).toBe("12.50000000");
    settleBlock(block);
    const stats = JSON.parse(mweb.answers.getblockstats);
    const sums = blockSums(block);
    expect({
      fees: [pegin!.fee, hogex!.fee],
      totalFees: sums.totalFees,
      totalOutput: sums.totalOutput,
      minersReward: sums.minersReward,
      transactions: sums.transactionCount,
      transfers: sums.transferCount,
    }).toEqual({
      fees: [1_630n, 3_900n],
      totalFees: BigInt(stats.totalfee),
      totalOutput: BigInt(stats.total_out),
      minersReward: BigInt(stats.subsidy) + BigInt(stats.totalfee),
      transactions: stats.txs,
      // The coinbase's reward only: MWEB's outputs pay no address.
      transfers: 1,
    });
    expect(coinbase!.outputs[0]!.pays).toBe(true);
  });
});

describe("settleBlock", () => {
  test("an output pays when its address is not among the inputs'; change and OP_RETURN do not", () => {
    const block = decodeUtxoBlock({ block: ltc.answers["getblock verbosity 2"] });
    const send = block.transactions[1]!;
    const change = send.outputs.find((o) => o.address !== null)!.address!;
    send.inputs.forEach((input, i) => {
      input.address = i === 1 ? change : `sender-${i}`;
      input.value = 1_000_000_000n + BigInt(i);
    });
    settleBlock(block);
    expect(send.fromAddresses).toEqual(["sender-0", change, "sender-2"]);
    for (const o of send.outputs) expect(o.pays).toBe(o.address !== null && o.address !== change);
    const paid = send.outputs.reduce((s, o) => s + o.value, 0n);
    expect(send.fee).toBe(3_000_000_003n - paid);
    expect(block.transactions[0]!.fee).toBe(0n);
  });
});

describe("parseAmountsExact", () => {
  test("amounts are read as their decimal text, never through a float", () => {
    // A Dogecoin amount past 2^53 satoshis (its supply has no cap).
    const text = '{"value":123456789012.34567891,"fee":0.00000001,"n":1.5}';
    const parsed = parseAmountsExact(text) as Record<string, unknown>;
    expect(parsed).toEqual({ value: "123456789012.34567891", fee: "0.00000001", n: 1.5 });
    const block = decodeUtxoBlock({
      block: JSON.stringify({ hash: "ab".repeat(32), height: 1, time: 1, mediantime: 1, size: 1, tx: [] }),
      transactions: [
        `{"txid":"${"cd".repeat(32)}","size":100,"vin":[{"coinbase":"00"}],"vout":[{"value":123456789012.34567891,"n":0,"scriptPubKey":{"hex":"51"}}]}`,
      ],
    });
    expect(block.transactions[0]!.outputs[0]!.value).toBe(12_345_678_901_234_567_891n);
    // What a float makes of it.
    expect(BigInt(Math.round(Number.parseFloat("123456789012.34567891") * 1e8))).not.toBe(
      12_345_678_901_234_567_891n,
    );
  });
});
