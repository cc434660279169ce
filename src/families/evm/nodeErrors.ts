/**
 * The one place that says what a node's JSON-RPC error means (its NodeErrorKind, see errors.ts). The code
 * decides where it is specific (EIP-1474 and JSON-RPC 2.0 codes); where nodes answer the same condition
 * with a generic code (-32000, -32602, -32600) and only their words differ, the message is read against
 * the patterns below, each with the nodes it was seen from. Transport failures (HTTP status, refused
 * connections, timeouts) are typed where they happen, in http.ts.
 */
import type { NodeErrorKind } from "../../errors";

/** JSON-RPC 2.0 and EIP-1474 codes that say what happened on their own. */
const BY_CODE: ReadonlyMap<number, NodeErrorKind> = new Map([
  [-32601, "method_unsupported"], // method not found (every node)
  [-32603, "internal"], // internal error
  [-32005, "rate_limited"], // limit exceeded (EIP-1474; geth, Infura, Alchemy)
  [-32002, "unavailable"], // resource unavailable (EIP-1474)
]);

/** Message patterns, in order; the first that matches names the kind. */
const BY_MESSAGE: readonly { kind: NodeErrorKind; pattern: RegExp; nodes: string }[] = [
  {
    kind: "method_unsupported",
    // geth/Infura "the method X does not exist/is not available", Nethermind "Method X is not supported",
    // Erigon "method not found", Alchemy "Unsupported method: X"
    pattern:
      /method .*(not found|does not exist|not available|not supported|unsupported)|unsupported method/i,
    nodes: "geth, Infura, Nethermind, Erigon, Alchemy",
  },
  {
    kind: "batch_too_large",
    // Alchemy/QuickNode "batch size too large", geth "batch too large", Infura "batch requests ... limit"
    pattern: /batch/i,
    nodes: "geth, Alchemy, QuickNode, Infura",
  },
  {
    kind: "block_not_found",
    // geth "header not found", "unknown block"; Erigon "block not found"; a pruned node "missing trie node"
    pattern: /unknown block|header not found|block not found|missing trie node/i,
    nodes: "geth, Erigon, Besu",
  },
  {
    kind: "already_known",
    // geth "already known", OpenEthereum "already imported", Besu "Known transaction", Erigon "already
    // exists", Nethermind "AlreadyKnown"
    pattern: /already known|already imported|known transaction|already exists|alreadyknown/i,
    nodes: "geth, OpenEthereum, Besu, Erigon, Nethermind",
  },
];

export function nodeErrorKind(code: number, message: string): NodeErrorKind {
  const byCode = BY_CODE.get(code);
  if (byCode !== undefined) return byCode;
  for (const { kind, pattern } of BY_MESSAGE) if (pattern.test(message)) return kind;
  return "request";
}
