/** Transfer history from the index (SPEC.md §4.1, DESIGN.md §3). */
import { Type as T } from "@sinclair/typebox";
import { NotAvailableError } from "../errors";
import { defineOperation, type Operation } from "./operation";
import { Transfer, TransfersBody, TransfersByAddressBody } from "./schemas";

export function createTransferOperations(): Operation[] {
  return [
    defineOperation({
      method: "watch_getTransfersByAddress",
      group: "Methods",
      summary: "A page of native and token transfers from or to the given addresses.",
      params: [{ name: "query", schema: TransfersByAddressBody }],
      result: T.Array(Transfer),
      rest: {
        name: "watch_getTransfersByAddress",
        body: TransfersByAddressBody,
        toParams: (b) => [b],
        response: T.Array(Transfer),
      },
      run: async () => {
        throw new NotAvailableError("watch_getTransfersByAddress");
      },
    }),
    defineOperation({
      method: "watch_getTransfers",
      group: "Methods",
      summary: "A page of native and token transfers of a block range.",
      params: [{ name: "query", schema: TransfersBody, optional: true }],
      result: T.Array(Transfer),
      rest: {
        name: "watch_getTransfers",
        body: TransfersBody,
        toParams: (b) => [b],
        response: T.Array(Transfer),
      },
      run: async () => {
        throw new NotAvailableError("watch_getTransfers");
      },
    }),
  ];
}
