/**
 * How the service speaks to java-tron of its own accord (upstream/protocol.ts):
 * - endpoints: its three faces, from the upstream's URL (endpoints.ts);
 * - identity: `eth_chainId` and block 0's `blockID` (`/wallet/getblockbynum {"num": 0}`), as
 *   `<chain id>:<block id>`;
 * - heads: polled (java-tron pushes nothing over HTTP: no pub/sub, no WebSocket), read as its JSON-RPC
 *   writes a block without its transactions (`eth_getBlockByNumber <ref> false`): the same bytes are the
 *   `newHeads` notifications the service sends, and they weigh a fraction of `/wallet/getnowblock`, which
 *   carries every transaction of the block;
 * - finality: the solidified block (`/walletsolidity/getnowblock`), read under the tag `solidified`;
 * - errors: its JSON-RPC errors read as the EVM family reads them; its HTTP API's errors are its answers
 *   (HTTP 200 `{"Error": ...}`), passed on as it writes them (httpApi.ts).
 */
import type { BlockHeader } from "../../blockHeader";
import type { FinalityTags } from "../../engine/chainFollower";
import type { HeadMethod } from "../../engine/headMethods";
import type { NodeProtocol, NodeSend } from "../../upstream/protocol";
import { parseHeader as parseEvmHeader } from "../evm/blockHeader";
import { parseQuantity, quantity } from "../evm/blockRef";
import { nodeErrorKind } from "../evm/nodeErrors";
import { numberOfBlockId, tronHash } from "./blockRef";
import { tronEndpoints } from "./endpoints";

/** The tag the follower reads the solidified block by (ours: java-tron names it by its solidity face). */
export const SOLIDIFIED = "solidified";

const BLOCK_ID = /^[0-9a-fA-F]{64}$/;

/** A block of java-tron's HTTP API, as far as its header goes. */
interface HttpBlock {
  blockID?: unknown;
  block_header?: { raw_data?: { number?: unknown; parentHash?: unknown; timestamp?: unknown } };
}

/** The header of a block as java-tron's HTTP API writes it; undefined for `{}` (none) or anything else. */
export function parseHttpHeader(raw: string): BlockHeader | undefined {
  const block = JSON.parse(raw) as HttpBlock | null;
  const header = block?.block_header?.raw_data;
  const id = block?.blockID;
  if (typeof id !== "string" || !BLOCK_ID.test(id) || typeof header?.parentHash !== "string")
    return undefined;
  if (!BLOCK_ID.test(header.parentHash)) return undefined;
  // Block 0's header has no number member (protobuf's default is left out): the id says it.
  const number = numberOfBlockId(id);
  const ms = header.timestamp;
  return {
    number,
    hash: tronHash(id),
    parentHash: tronHash(header.parentHash),
    timestamp: typeof ms === "number" && Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined,
    raw,
  };
}

/** A block of either face: the HTTP API's (with `blockID`) or the JSON-RPC's. */
export function parseTronHeader(raw: string): BlockHeader | undefined {
  if (raw === "null") return undefined;
  if (raw.includes('"blockID"')) return parseHttpHeader(raw);
  const header = parseEvmHeader(raw);
  return header && { ...header, hash: tronHash(header.hash), parentHash: tronHash(header.parentHash) };
}

/** `<chain id>:<block 0's id>`; undefined when either answer is not what java-tron writes. */
async function readIdentity(send: NodeSend): Promise<string | undefined> {
  const [chainId, genesis] = await Promise.all([
    send("eth_chainId", []),
    send("wallet/getblockbynum", [{ num: 0 }]),
  ]);
  const id = JSON.parse(chainId) as unknown;
  const block = JSON.parse(genesis) as HttpBlock | null;
  if (typeof id !== "string" || typeof block?.blockID !== "string" || !BLOCK_ID.test(block.blockID)) {
    return undefined;
  }
  try {
    return `${quantity(parseQuantity(id))}:${block.blockID.toLowerCase()}`;
  } catch {
    return undefined;
  }
}

async function readHeader(ref: string, send: NodeSend): Promise<BlockHeader | undefined> {
  if (ref === SOLIDIFIED) return parseHttpHeader(await send("walletsolidity/getnowblock", [{}]));
  return parseTronHeader(await send("eth_getBlockByNumber", [ref, false]));
}

export const tronNodeProtocol: NodeProtocol = {
  readIdentity,
  latest: "latest",
  readHeader,
  parseHeader: parseTronHeader,
  errorKind: nodeErrorKind,
  endpoints: tronEndpoints,
};

/** Finality is the solidified block; java-tron names no safe block. */
export const tronFinalityTags: FinalityTags = { finalized: SOLIDIFIED };

/** `eth_blockNumber` answers the followed head, as on every EVM chain. */
export const tronHeadNumber: HeadMethod = {
  method: "eth_blockNumber",
  answer: ({ number }) => `"${quantity(number)}"`,
};
