/**
 * The one place that says what a Bitcoin-family node's JSON-RPC error means (its NodeErrorKind, see
 * errors.ts). Bitcoin Core and its forks (Litecoin Core, Dogecoin Core) share the codes of Bitcoin Core's
 * src/rpc/protocol.h, and the code decides where it is specific. Where one code covers conditions that
 * call for different handling (-5 "Block not found" beside "Invalid address", -8 "Block height out of
 * range" beside any bad parameter, -26 for an already known transaction beside a rejected one, -1 for a
 * pruned block), the message is read against the patterns below, with the nodes they were seen from.
 * Transport failures (HTTP statuses without a JSON-RPC body, refused connections, timeouts) are typed in
 * upstream/http.ts.
 */
import type { NodeErrorKind } from "../../errors";

/** Bitcoin Core's RPC error codes that say what happened on their own (src/rpc/protocol.h). */
const BY_CODE: ReadonlyMap<number, NodeErrorKind> = new Map([
  [-32601, "method_unsupported"], // RPC_METHOD_NOT_FOUND (HTTP 404)
  [-32, "method_unsupported"], // RPC_METHOD_DEPRECATED: off on this node unless -deprecatedrpc
  [-32603, "internal"], // RPC_INTERNAL_ERROR
  [-7, "internal"], // RPC_OUT_OF_MEMORY
  [-20, "internal"], // RPC_DATABASE_ERROR
  [-28, "unavailable"], // RPC_IN_WARMUP: "Loading block index...", "Verifying blocks...", "Rewinding blocks..."
  [-2, "unavailable"], // RPC_FORBIDDEN_BY_SAFE_MODE (older nodes)
  [-9, "unavailable"], // RPC_CLIENT_NOT_CONNECTED: no peers
  [-10, "unavailable"], // RPC_CLIENT_IN_INITIAL_DOWNLOAD: still syncing
  [-27, "already_known"], // RPC_VERIFY_ALREADY_IN_CHAIN: "Transaction already in block chain"
  [-32005, "rate_limited"], // not Bitcoin Core's: hosted nodes in front of it (EIP-1474's "limit exceeded")
]);

/** Message patterns of codes that cover several conditions: the first matching one names the kind. */
const BY_MESSAGE: ReadonlyMap<number, readonly { kind: NodeErrorKind; pattern: RegExp; nodes: string }[]> =
  new Map([
    [
      -5, // RPC_INVALID_ADDRESS_OR_KEY
      [
        // getblock, getblockheader, getblockstats, getblockfilter of a hash the node has not got (yet)
        { kind: "block_not_found", pattern: /block not found/i, nodes: "Bitcoin Core, Litecoin Core 0.21" },
      ],
    ],
    [
      -8, // RPC_INVALID_PARAMETER
      [
        // getblockhash, getblockstats of a height past the node's head: another node may have reached it
        {
          kind: "block_not_found",
          pattern: /height out of range|target block height .* after current tip/i,
          nodes: "Bitcoin Core, Litecoin Core 0.21, Dogecoin Core 1.14",
        },
      ],
    ],
    [
      -26, // RPC_VERIFY_REJECTED
      [
        // sendrawtransaction of a transaction the node's pool already holds
        {
          kind: "already_known",
          pattern: /txn-already-(known|in-mempool)/i,
          nodes: "Bitcoin Core, Litecoin Core 0.21, Dogecoin Core 1.14",
        },
      ],
    ],
    [
      -1, // RPC_MISC_ERROR
      [
        // getblock on a pruned node: another node may keep the block
        {
          kind: "block_not_found",
          pattern: /pruned|not found on disk/i,
          nodes: "Bitcoin Core, Litecoin Core 0.21",
        },
      ],
    ],
  ]);

export function utxoNodeErrorKind(code: number, message: string): NodeErrorKind {
  const byCode = BY_CODE.get(code);
  if (byCode !== undefined) return byCode;
  for (const { kind, pattern } of BY_MESSAGE.get(code) ?? []) if (pattern.test(message)) return kind;
  return "request";
}
