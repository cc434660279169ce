/**
 * How the service speaks to Bitcoin-family nodes (Bitcoin Core, Litecoin Core, Dogecoin Core) of its own
 * accord (upstream/protocol.ts):
 * - identity: `getblockchaininfo.chain` and the hash of block 0, as `<chain>:<genesis hash>` ("regtest:
 *   530827f3…"): the chain's name alone does not tell Bitcoin's main chain from Litecoin's;
 * - heads: `getbestblockhash` (the latest block), `getblockhash <height>` (a block at a height), then
 *   `getblockheader <hash>`; block references are heights in decimal (BlockRefs.encode), block hashes, or
 *   `latest`;
 * - pushed heads: these nodes have no pub/sub (and Debian's litecoind no ZMQ), so one `waitfornewblock`
 *   is held open per upstream: it answers the moment the node has a new block. Each one takes one of the
 *   node's RPC threads while it waits (`-rpcthreads`, 4 by default): a node serving several instances or
 *   WORKERS needs more threads than they hold long-polls;
 * - errors: answered with HTTP 500 (404 for an unknown method) and the JSON-RPC body, which is the node's
 *   answer (errorsWithHttpStatus); what they mean: nodeErrors.ts.
 */
import { NodeError } from "../../errors";
import type { NodeProtocol, NodeSend } from "../../upstream/protocol";
import { parseUtxoHeader } from "./blockHeader";
import { utxoNodeErrorKind } from "./nodeErrors";

/** The node-form reference of the latest block: these nodes have no tags, so it is ours. */
export const UTXO_LATEST = "latest";
/**
 * How long one `waitfornewblock` is held open by the node, in ms. Short enough that a thread a stopped
 * service leaves waiting on the node comes back soon; long enough that re-arming costs nothing.
 */
export const LONG_POLL_MS = 10_000;

/** A block hash as these nodes write it: 64 hex digits, no 0x. */
const HASH = /^[0-9a-fA-F]{64}$/;
/** A height as BlockRefs.encode writes it. */
const HEIGHT = /^(0|[1-9][0-9]{0,15})$/;
/** Calls a batch to these nodes carries (NodeProtocol.batchMaxSize): a page's reads over several RPC threads. */
const UTXO_BATCH_MAX_SIZE = 8;
/**
 * HTTP requests in flight to one of these nodes (NodeProtocol.maxInFlight). Bitcoin Core (before 29), Litecoin
 * Core and Dogecoin Core run 4 RPC threads with a queue of 16 requests by default and refuse any request past
 * them; each service process holds a thread in its long-poll. 8 keeps every thread busy with as many waiting,
 * and leaves room for a second process or another client of the node (64 overflowed the queue of a loaded
 * litecoind: every refused call was sent again).
 */
const UTXO_MAX_IN_FLIGHT = 8;
/** Bitcoin Core's refusal of a request when its RPC work queue is full (httpserver.cpp). */
const WORK_QUEUE_FULL = /^Work queue depth exceeded/;

/** `<chain>:<genesis hash>` from the node's `getblockchaininfo` and `getblockhash 0`. */
async function readIdentity(send: NodeSend): Promise<string | undefined> {
  const [info, genesis] = await Promise.all([send("getblockchaininfo", []), send("getblockhash", [0])]);
  const chain = (JSON.parse(info) as { chain?: unknown } | null)?.chain;
  const hash = JSON.parse(genesis) as unknown;
  if (typeof chain !== "string" || chain === "" || typeof hash !== "string" || !HASH.test(hash)) {
    return undefined;
  }
  return `${chain}:${hash.toLowerCase()}`;
}

/** The block hash a reference names; undefined when the node has no block there (a height past its head). */
export async function hashOf(ref: string, send: NodeSend): Promise<string | undefined> {
  if (HASH.test(ref)) return ref;
  if (ref === UTXO_LATEST) return JSON.parse(await send("getbestblockhash", [])) as string;
  if (!HEIGHT.test(ref)) throw new TypeError(`not a block reference of a Bitcoin-family node: ${ref}`);
  try {
    // Heights are JSON numbers in these nodes' params.
    return JSON.parse(await send("getblockhash", [Number(ref)])) as string;
  } catch (error) {
    if (error instanceof NodeError && error.kind === "block_not_found") return undefined;
    throw error;
  }
}

async function readHeader(ref: string, send: NodeSend) {
  const hash = await hashOf(ref, send);
  if (typeof hash !== "string" || !HASH.test(hash)) return undefined;
  try {
    return parseUtxoHeader(await send("getblockheader", [hash, true]));
  } catch (error) {
    // Gone between the two calls (a reorg), or a hash the node never had.
    if (error instanceof NodeError && error.kind === "block_not_found") return undefined;
    throw error;
  }
}

/** The block `waitfornewblock` names: `{"hash": …, "height": …}`, the node's head when it answered. */
function blockOf(result: string): { number: bigint; hash: string } | undefined {
  const block = JSON.parse(result) as { hash?: unknown; height?: unknown } | null;
  const height = block?.height;
  if (typeof block?.hash !== "string" || !HASH.test(block.hash)) return undefined;
  if (typeof height !== "number" || !Number.isSafeInteger(height) || height < 0) return undefined;
  return { number: BigInt(height), hash: block.hash.toLowerCase() };
}

export const utxoNodeProtocol: NodeProtocol = {
  readIdentity,
  latest: UTXO_LATEST,
  readHeader,
  parseHeader: parseUtxoHeader,
  errorKind: utxoNodeErrorKind,
  errorsWithHttpStatus: true,
  // A page of 25 transactions read in one batch of getrawtransaction took 59.5 ms on litecoind, one call after
  // another; in batches of 8, 13.9 ms (README, the utxoscale figures).
  batchMaxSize: UTXO_BATCH_MAX_SIZE,
  maxInFlight: UTXO_MAX_IN_FLIGHT,
  busyAnswer: WORK_QUEUE_FULL,
  longPoll: {
    timeoutMs: LONG_POLL_MS,
    call: (timeoutMs) => ({ method: "waitfornewblock", params: [timeoutMs] }),
    blockOf,
  },
};
