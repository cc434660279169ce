/**
 * The TRON family's transfer rows (the design's §14 "Forms in the data API"): trx (sun, 6 decimals),
 * erc20transfer (TRC-20), erc721transfer (TRC-721) and this family's own trc10; addresses base58 `T...`,
 * hashes 64 hex digits without 0x, amounts exact.
 */
import { Type as T } from "@sinclair/typebox";
import type { TransferShape } from "../../operations/transferQueries";
import { TransferKind } from "../../transferKind";

const Exact = (description: string) => T.Integer({ minimum: 0, description: `${description}; exact` });
const Base58 = (description: string) => T.String({ description: `${description}: base58check T...` });

/** The interface's Transfer as this family fills it (same title: one Transfer in an instance's document). */
export const TronTransfer = T.Object(
  {
    blockNumber: T.Integer(),
    blockTimestamp: T.String({ format: "date-time", description: "the block's time, to the second" }),
    transactionHash: T.String({ description: "the transaction id: 64 hex digits, no 0x" }),
    transactionIndex: T.Integer(),
    logIndex: T.Union([T.Integer(), T.Null()], {
      description:
        "the log's block-wide position (java-tron's JSON-RPC logIndex); an internal TRX transfer's 1000000000 + its position among the transaction's; null for the transaction's own transfer",
    }),
    contractAddress: T.Union([T.String(), T.Null()], {
      description: "a TRC-20/721 contract (base58); a TRC-10 asset's id (decimal text); null for TRX",
    }),
    transferType: T.Union(
      ["trx", "erc20transfer", "erc721transfer", "trc10"].map((t) => T.Literal(t)),
      { title: "TransferType" },
    ),
    from: Base58("the sender"),
    to: T.Union([Base58("the receiver"), T.Null()]),
    value: Exact("sun, token units, or a TRC-721 token id"),
    fee: Exact("the transaction info's fee in sun (TRX burned)"),
    transactionError: T.Boolean({ description: "its contractRet is not SUCCESS: it moved nothing" }),
    asset: T.Union([T.String(), T.Null()], {
      description: "TRX, the token's symbol, or the TRC-10 asset's abbreviation",
    }),
    decimals: T.Union([T.Integer(), T.Null()]),
  },
  { title: "Transfer" },
);

export const tronTransferShape: TransferShape = {
  kinds: [TransferKind.trx, TransferKind.erc20, TransferKind.erc721, TransferKind.trc10],
  schema: TronTransfer,
};
