/**
 * Blocks of ~300 transactions for the TRON benches, made fast in the stand-in java-tron's scenario chain
 * (test/support/tron/scenario.ts): TRX transfers from alice and USDT-like TRC-20 transfers from the issuer,
 * half and half, one transfer each, to RECIPIENTS addresses of which the hot one is paid by one transfer
 * in HOT_EVERY of each kind.
 *
 * Unsigned: the stand-in checks a signature when a transaction is broadcast (TronScenario.validate), never
 * when a block is mined, and 300 secp256k1 signatures a block would take most of the phase's time. Each
 * transaction carries a signature's 65 bytes (zeros), so its size and bandwidth are those of a signed one.
 * Every amount differs within a block, so does every txID.
 *
 * Funded: a TRC-20 transfer burns ~27 TRX of energy in the scenario, and its genesis holds 50,000: the
 * senders are credited in the head's state (no transaction; what the node would have after a faucet).
 */

import { sha256Hex } from "../test/support/tron/codec";
import { type ContractParameter, encodeRawTransaction, hexToBytes } from "../test/support/tron/protobuf";
import {
  SCENARIO_KEYS,
  SELECTORS,
  type SignedTx,
  TRC20,
  type TronScenario,
} from "../test/support/tron/scenario";

export const TRANSFERS_OF_EACH = 150;
export const RECIPIENTS = 1_000;
export const HOT_EVERY = 10;
/** More sun than any bench spends (10^12 TRX). */
const FUNDS_SUN = 10n ** 18n;
const UNSIGNED = new Uint8Array(65);
/** A TRC-20 call's fee limit (100 TRX), as tronweb's default. */
const FEE_LIMIT_SUN = 100_000_000n;
/** Amounts cycle below this (so the issuer's 10^12 USDT units last). */
const AMOUNT_CYCLE = 1_000_000;

/** Recipient `i`'s address (`41` + 20 bytes); recipient 0 is the hot one. */
export const recipient = (i: number) => `41${(0xb0000000 + i).toString(16).padStart(40, "0")}`;
export const HOT = recipient(0);

function unsigned(chain: TronScenario, contract: ContractParameter, feeLimit?: bigint): SignedTx {
  const raw = chain.unsigned(contract, feeLimit);
  const rawBytes = encodeRawTransaction(raw);
  return { raw, rawBytes, txID: sha256Hex(rawBytes), signatures: [UNSIGNED] };
}

/** Credits alice and the issuer in the head's state (the next block starts from it). */
export function fundSenders(chain: TronScenario): void {
  for (const key of [SCENARIO_KEYS.alice, SCENARIO_KEYS.issuer]) {
    chain.head.state.accounts.get(key.hex)!.balance += FUNDS_SUN;
  }
}

/**
 * The `k`th transfer's recipient: the hot address for one pair in HOT_EVERY (a pair is a TRX transfer and a
 * TRC-20 one: the hot address gets both kinds), else the others in turn.
 */
const recipientOf = (k: number) =>
  Math.floor(k / 2) % HOT_EVERY === 0 ? HOT : recipient(1 + (k % (RECIPIENTS - 1)));

/** Mines one block of 2 × TRANSFERS_OF_EACH transactions; `k` numbers its first transfer. Its number. */
export function mineBulkBlock(chain: TronScenario, k: number): number {
  const { alice, issuer } = SCENARIO_KEYS;
  const txs: SignedTx[] = [];
  for (let i = 0; i < 2 * TRANSFERS_OF_EACH; i += 2) {
    const trxTo = recipientOf(k + i);
    const trc20To = recipientOf(k + i + 1);
    txs.push(
      unsigned(chain, {
        type: "TransferContract",
        value: {
          owner_address: hexToBytes(alice.hex),
          to_address: hexToBytes(trxTo),
          amount: BigInt(1 + ((k + i) % AMOUNT_CYCLE)),
        },
      }),
    );
    const amount = (1 + ((k + i + 1) % AMOUNT_CYCLE)).toString(16).padStart(64, "0");
    txs.push(
      unsigned(
        chain,
        {
          type: "TriggerSmartContract",
          value: {
            owner_address: hexToBytes(issuer.hex),
            contract_address: hexToBytes(TRC20.address),
            data: hexToBytes(`${SELECTORS.transfer}${"0".repeat(24)}${trc20To.slice(2)}${amount}`),
          },
        },
        FEE_LIMIT_SUN,
      ),
    );
  }
  const [block] = chain.mine(1, txs);
  const count = block!.transactions?.length ?? 0;
  if (count !== txs.length) throw new Error(`a bulk block holds ${count} transactions, not ${txs.length}`);
  return block!.block_header.raw_data.number;
}
