/**
 * The Bitcoin family's transfer rows (docs/interface.md §16.5): `trx` only, one per output paying an address
 * that is not among its transaction's input addresses, amounts in satoshis, with the extension member
 * `fromAddresses`. The rows are read by the family's TransferQueries.
 */
import { Type as T } from "@sinclair/typebox";
import type { TransferShape } from "../../operations/transferQueries";
import { TransferKind } from "../../transferKind";

/** Satoshis: written with all their digits (a chain's whole supply fits a double, but is never rounded). */
export const Satoshis = (description: string) => T.Integer({ minimum: 0, description });

/** The interface's Transfer as this family fills it (same title: one Transfer in an instance's document). */
export const UtxoTransfer = T.Object(
  {
    blockNumber: T.Integer(),
    blockTimestamp: T.String({
      format: "date-time",
      description: "the block's time: the running maximum of header times up to it",
    }),
    transactionHash: T.String({ description: "the txid: 64 hex digits, no 0x" }),
    transactionIndex: T.Integer({ description: "the transaction's position in its block" }),
    logIndex: T.Integer({ description: "the output's index (vout)" }),
    contractAddress: T.Null(),
    transferType: T.Literal("trx"),
    from: T.String({ description: "the first input's address; `coinbase` for a coinbase" }),
    fromAddresses: T.Array(T.String(), {
      description: "an extension: every distinct input address, in input order (`[]` for a coinbase)",
    }),
    to: T.String({ description: "the address the output pays" }),
    value: Satoshis("the output's value in satoshis"),
    fee: Satoshis("the transaction's fee in satoshis (inputs minus outputs; 0 for a coinbase)"),
    transactionError: T.Literal(false),
    asset: T.String({ description: "the coin's symbol" }),
    decimals: T.Literal(8),
  },
  { title: "Transfer" },
);

export const utxoTransferShape: TransferShape = { kinds: [TransferKind.trx], schema: UtxoTransfer };
