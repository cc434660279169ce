/**
 * The richer scenario chain for TRON part 2 (the index, data operations, watch filters, TronGrid's v1 API):
 * `startTronNode({ scenario: "part2" })`. Part 1's chain (test/support/tronNode.ts) is left as it was.
 *
 * Block by block (times UTC; the scenario's genesis is 2024-12-31T23:59:31.5Z, one block a 3 s slot):
 * - 1 (2024-12-31): issuer → carol 200 TRX and issuer → dave 100 TRX (both new accounts: 1.1 TRX burned each),
 *   alice → bob 1.5 TRX, issuer → alice 250 STT (TRC-10 1000001);
 * - 2 (2024-12-31): USDT alice → bob 12.345678 (`transfer`), bob → carol 20 USDT reverted (bob holds less),
 *   alice `approve`s carol for 50 USDT (an Approval);
 * - 3 (2024-12-31): carol `transferFrom` alice → dave 30 USDT (carol's allowance 50 → 20);
 * - 4 (2025-01-01, from 10:00): bob creates the payout contract (CreateSmartContract), issuer → the payout
 *   contract 100 STT;
 * - 5 (2025-01-01): alice calls `payout` with 10 TRX (`call_value`): internal transfers to carol 3 TRX, dave
 *   2 TRX, bob 6 TRX (`rejected`: 5 TRX are left), dave 5 STT (a TRC-10 internal transfer, `tokenId`); alice
 *   calls the payout contract with an unknown function and 1 TRX: REVERT, nothing moves;
 * - 6 (2025-01-02, from 12:00): issuer → alice TRC-721 token 3 (a Transfer with 4 topics), bob → dave 5 TRX,
 *   USDT issuer → dave 1;
 * - then `emptyBlocks` empty blocks (default solidifyDepth + 3), so blocks 1 to 6 are solidified;
 * - the tip (`tipBlock`): alice → dave 4 TRX, then up to 2 empty blocks: above the solidified block.
 * `reorg()` drops the tip's blocks (the 4 TRX to dave) and mines a longer branch whose first block holds a
 * USDT transfer alice → dave 2 (`replacement`).
 */
import { createdContractAddress, SCENARIO_KEYS, type SignedTx, TRC10, type TronScenario } from "./scenario";

export interface Part2Txs {
  fundCarol: SignedTx;
  fundDave: SignedTx;
  trx: SignedTx;
  trc10: SignedTx;
  trc20: SignedTx;
  reverted: SignedTx;
  approve: SignedTx;
  transferFrom: SignedTx;
  deploy: SignedTx;
  fundPayout: SignedTx;
  payout: SignedTx;
  failedCall: SignedTx;
  trc721: SignedTx;
  daveTrx: SignedTx;
  daveUsdt: SignedTx;
  /** In the tip block: dropped by `reorg()`. */
  tip: SignedTx;
}

export interface Part2 {
  txs: Part2Txs;
  /** The payout contract bob creates in block 4 (`41...` hex). */
  payoutContract: string;
  /** The block holding `txs.tip`, above the solidified block until the chain grows past it. */
  tipBlock: number;
  /** Blocks above the tip block before the reorg. */
  tipDepth: number;
  /** The replacement branch's transfer (USDT alice → dave 2), once `reorg()` ran. */
  replacement?: SignedTx;
  /** Drops the tip's blocks and mines a longer branch holding `replacement` (once). */
  reorg(): { dropped: string[]; added: string[] };
}

/** Dates the scenario's blocks fall on (part2's blocks 1–3, 4–5, 6 onward). */
export const PART2_DAYS = ["2024-12-31", "2025-01-01", "2025-01-02"] as const;

const TRX = 1_000_000n;
const USDT = 1_000_000n;

/** Builds part 2's chain on a new scenario (genesis only). */
export function buildPart2(chain: TronScenario, emptyBlocks: number): Part2 {
  if (chain.headNumber() !== 0) throw new Error("part 2 starts from genesis");
  if (chain.solidifyDepth < 2) throw new Error("part 2's tip needs a solidifyDepth of at least 2");
  const { alice, bob, carol, dave, issuer } = SCENARIO_KEYS;
  const fundCarol = chain.trx(issuer, carol.hex, 200n * TRX);
  const fundDave = chain.trx(issuer, dave.hex, 100n * TRX);
  const trx = chain.trx(alice, bob.hex, 1_500_000n);
  const trc10 = chain.trc10(issuer, alice.hex, 250_000_000n);
  chain.mine(1, [fundCarol, fundDave, trx, trc10]);

  const trc20 = chain.trc20Transfer(alice, bob.hex, 12_345_678n);
  const reverted = chain.trc20Transfer(bob, carol.hex, 20n * USDT);
  const approve = chain.trc20Approve(alice, carol.hex, 50n * USDT);
  chain.mine(1, [trc20, reverted, approve]);

  const transferFrom = chain.trc20TransferFrom(carol, alice.hex, dave.hex, 30n * USDT);
  chain.mine(1, [transferFrom]);

  chain.skipTo(Date.UTC(2025, 0, 1, 10));
  const deploy = chain.deploy(bob);
  const payoutContract = createdContractAddress(deploy);
  const fundPayout = chain.trc10(issuer, payoutContract, 100_000_000n);
  chain.mine(1, [deploy, fundPayout]);

  const payout = chain.payout(
    alice,
    payoutContract,
    [
      { to: carol.hex, amount: 3n * TRX },
      { to: dave.hex, amount: 2n * TRX },
      { to: bob.hex, amount: 6n * TRX },
      { to: dave.hex, amount: 5_000_000n, tokenId: TRC10.id },
    ],
    10n * TRX,
  );
  const failedCall = chain.trigger(alice, payoutContract, "deadbeef", 1n * TRX);
  chain.mine(1, [payout, failedCall]);

  chain.skipTo(Date.UTC(2025, 0, 2, 12));
  const trc721 = chain.trc721Transfer(issuer, alice.hex, 3n);
  const daveTrx = chain.trx(bob, dave.hex, 5n * TRX);
  const daveUsdt = chain.trc20Transfer(issuer, dave.hex, 1n * USDT);
  chain.mine(1, [trc721, daveTrx, daveUsdt]);
  if (chain.headNumber() !== 6 || chain.blocks.some((b) => b.number > 0 && b.txs.length === 0)) {
    throw new Error("part 2: a scenario transaction did not run"); // the layout above is what truth.ts tests
  }

  chain.mine(emptyBlocks);
  const tip = chain.trx(alice, dave.hex, 4n * TRX);
  const [tipBlock] = chain.mine(1, [tip]);
  const tipDepth = Math.min(2, chain.solidifyDepth - 1);
  chain.mine(tipDepth);

  const part2: Part2 = {
    txs: {
      ...{ fundCarol, fundDave, trx, trc10, trc20, reverted, approve, transferFrom },
      ...{ deploy, fundPayout, payout, failedCall, trc721, daveTrx, daveUsdt, tip },
    },
    payoutContract,
    tipBlock: tipBlock!.block_header.raw_data.number,
    tipDepth,
    reorg() {
      if (part2.replacement) throw new Error("part 2's reorg ran already");
      return chain.reorg(chain.headNumber() - part2.tipBlock + 1, (c) => {
        part2.replacement = c.trc20Transfer(alice, dave.hex, 2n * USDT);
        return [part2.replacement];
      });
    },
  };
  return part2;
}
