/**
 * The interface's transfer types (`transferType`: trx, erc20transfer, erc721transfer; the TRON family's own
 * trc10), as the index stores them.
 */
export const TransferKind = { trx: 0, erc20: 1, erc721: 2, trc10: 3 } as const;
export type TransferKind = (typeof TransferKind)[keyof typeof TransferKind];
