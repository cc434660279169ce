/**
 * Internal transfers from block traces recorded from a real anvil (fixtures/anvilChain.json: recorded data,
 * see fixtures/anvilChain.ts), in both forms: Parity's `trace_block` and Geth's `debug_traceBlockByNumber`
 * with the call tracer must give the same exact rows. The amounts are those the recording sent
 * (test/support/recordEvmFixtures.ts).
 */
import { describe, expect, test } from "bun:test";
import { getCreateAddress } from "ethers";
import { blockHolding, readRecordedChain } from "./fixtures/anvilChain";
import {
  type InternalTransfer,
  internalTransfersOfCallTraces,
  internalTransfersOfParity,
} from "./internalTransfers";

const chain = readRecordedChain();
const tx = chain.transactions;
const [alice, bob] = chain.accounts as [string, string];
const { forwarder } = chain.contracts;

/** The internal transfers of the block holding `hash`, from each trace form. */
function bothForms(hash: string): { parity: InternalTransfer[]; callTracer: InternalTransfer[] } {
  const recorded = blockHolding(chain, hash);
  return {
    parity: internalTransfersOfParity(recorded.trace_block),
    callTracer: internalTransfersOfCallTraces(
      recorded.debug_traceBlockByNumber,
      recorded.block.transactions.map((t) => t.hash),
    ),
  };
}

const row = (hash: string, order: number, from: string, to: string, value: bigint): InternalTransfer => ({
  transactionIndex: 0,
  transactionHash: hash,
  order,
  from,
  to,
  value,
});

describe("internal transfers, from both trace forms", () => {
  test("a call that forwards the value it was sent", () => {
    const expected = [row(tx.internalValue, 0, forwarder, alice, 3n * 10n ** 17n)];
    expect(bothForms(tx.internalValue)).toEqual({ parity: expected, callTracer: expected });
  });

  test("two in one transaction, in execution order", () => {
    const half = 35n * 10n ** 14n;
    const expected = [row(tx.split, 0, forwarder, alice, half), row(tx.split, 1, forwarder, bob, half)];
    expect(bothForms(tx.split)).toEqual({ parity: expected, callTracer: expected });
  });

  test("a contract creation and a self-destruct that move value", () => {
    const created = blockHolding(chain, tx.createAndDestroy).receipts[0]!.contractAddress!;
    // The init code's CREATE is the new contract's first (nonce 1, EIP-161).
    const child = getCreateAddress({ from: created, nonce: 1 }).toLowerCase();
    const expected = [
      row(tx.createAndDestroy, 0, created, child, 1n),
      row(tx.createAndDestroy, 1, created, bob, 9n),
    ];
    expect(bothForms(tx.createAndDestroy)).toEqual({ parity: expected, callTracer: expected });
  });

  test("nothing moved under a failed frame: a reverted transaction whose first inner call succeeded", () => {
    const recorded = blockHolding(chain, tx.splitFailed);
    // The recording as the test reads it: the top frame failed, its first call did not, its second did.
    expect(recorded.trace_block.map((f) => [f.traceAddress.join(","), f.error ?? null])).toEqual([
      ["", "Reverted"],
      ["0", null],
      ["1", "Reverted"],
    ]);
    expect(bothForms(tx.splitFailed)).toEqual({ parity: [], callTracer: [] });
  });

  test("top-level value and failed transactions are no internal transfers", () => {
    for (const hash of [tx.legacy, tx.failed, tx.tokenDeploy]) {
      expect(bothForms(hash)).toEqual({ parity: [], callTracer: [] });
    }
    const big = chain.blocks[String(chain.bigBlock)]!;
    expect(internalTransfersOfParity(big.trace_block)).toEqual([]);
  });

  test("call traces without txHash (older Geth) take the block's transaction hashes, by position", () => {
    const recorded = blockHolding(chain, tx.split);
    const withoutHashes = recorded.debug_traceBlockByNumber.map(({ result }) => ({ result }));
    expect(internalTransfersOfCallTraces(withoutHashes, [tx.split])).toEqual(bothForms(tx.split).parity);
  });
});
