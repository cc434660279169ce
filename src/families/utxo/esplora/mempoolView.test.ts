import { expect, test } from "bun:test";
import { backlogJson } from "./mempoolView";

test("the backlog as electrs writes it: vsize ceil(weight / 4), rates over weight / 4, bins of 50,000 vB", () => {
  expect(JSON.parse(backlogJson([]))).toEqual({ count: 0, vsize: 0, total_fee: 0, fee_histogram: [] });
  // A segwit transaction's weight is seldom a multiple of four: 561 is 140.25 vbytes, counted as 141.
  expect(JSON.parse(backlogJson([{ fee: 1_410n, weight: 561 }]))).toEqual({
    count: 1,
    vsize: 141,
    total_fee: 1_410,
    fee_histogram: [[1_410 / 140.25, 141]],
  });
  // From the highest rate: a bin closes past 50,000 vbytes where the rate changes, at its lowest rate.
  const vb = (n: number) => n * 4;
  const txs = [
    { fee: 300_000n, weight: vb(30_000) },
    { fee: 150_000n, weight: vb(30_000) },
    { fee: 300_000n, weight: vb(30_000) },
    { fee: 60_000n, weight: vb(20_000) + 1 },
  ];
  expect(JSON.parse(backlogJson(txs))).toEqual({
    count: 4,
    vsize: 110_001,
    total_fee: 810_000,
    // 30,000 at 5 closes nothing: the last bin holds it with the 20,001 after it, at their lowest rate.
    fee_histogram: [
      [10, 60_000],
      [60_000 / ((vb(20_000) + 1) / 4), 50_001],
    ],
  });
});
