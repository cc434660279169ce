/**
 * How the service speaks to EVM nodes of its own accord (upstream/protocol.ts): the chain id, blocks read by
 * number or tag with transaction hashes only, the node error classifier of nodeErrors.ts, `eth_subscribe`;
 * and what the head follower and the engine take from them (engine/chainFollower.ts, engine/headMethods.ts).
 */
import type { FinalityTags } from "../../engine/chainFollower";
import type { HeadMethod } from "../../engine/headMethods";
import type { NodeProtocol, NodeSend } from "../../upstream/protocol";
import { parseHeader } from "./blockHeader";
import { parseQuantity, quantity } from "./blockRef";
import { nodeErrorKind } from "./nodeErrors";

/**
 * The chain id the node's `eth_chainId` names (a 0x-hex quantity, any case), in one form (minimal lower-case
 * 0x hex), so that "0x01" and "0x1" are one chain.
 */
async function readChainId(send: NodeSend): Promise<string | undefined> {
  const result = await send("eth_chainId", []);
  try {
    const value = JSON.parse(result) as unknown;
    return typeof value === "string" ? quantity(parseQuantity(value)) : undefined;
  } catch {
    return undefined;
  }
}

export const evmNodeProtocol: NodeProtocol = {
  readIdentity: readChainId,
  latest: "latest",
  // The block without its transactions: a header is all the follower reads.
  readHeader: async (ref, send) => parseHeader(await send("eth_getBlockByNumber", [ref, false])),
  parseHeader,
  errorKind: nodeErrorKind,
  pubsub: {
    subscribe: "eth_subscribe",
    unsubscribe: "eth_unsubscribe",
    notification: "eth_subscription",
    newHeads: ["newHeads"],
  },
};

/** Post-merge nodes name the last final block `finalized` and the safe one `safe` (older ones lack both). */
export const evmFinalityTags: FinalityTags = { finalized: "finalized", safe: "safe" };

/** `eth_blockNumber` answers the head's number as a JSON string of its quantity. */
export const evmHeadNumber: HeadMethod = {
  method: "eth_blockNumber",
  answer: ({ number }) => `"${quantity(number)}"`,
};
