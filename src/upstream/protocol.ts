/**
 * What the upstream floor says to a family's nodes of its own accord (every other call is a caller's, passed
 * through): how a node names the chain it serves, how a block's header is read and written, what a node's
 * error means and how it answers one over HTTP, and how it pushes new heads where it can (a WebSocket's
 * pub/sub, or a call held open). The composition root hands the family's to
 * createUpstreamPool; the chain follower (engine/chainFollower.ts) and the fleet's shared heads
 * (fleet/sharedHeads.ts) read headers through it too.
 */
import type { BlockHeader } from "../blockHeader";
import type { NodeErrorKind } from "../errors";

/** A call to a node: its method and params. */
export interface NodeCall {
  readonly method: string;
  readonly params: unknown[];
}

/** Sends one call to a node: its result's JSON text, or a rejection with the node's error or the transport's. */
export type NodeSend = (method: string, params: unknown[]) => Promise<string>;

/** What a node's JSON-RPC error means, from its code and, where nodes differ only by their words, its message. */
export type NodeErrorClassifier = (code: number, message: string) => NodeErrorKind;

/**
 * A node's WebSocket pub/sub: JSON-RPC requests to subscribe and unsubscribe, and notifications
 * `{"method": notification, "params": {"subscription": id, "result": item}}`.
 */
export interface PubSubProtocol {
  /** The method that subscribes (its params say to what); the node answers the subscription's id. */
  readonly subscribe: string;
  /** The method that ends a subscription: its only param is the subscription's id. */
  readonly unsubscribe: string;
  /** The method of the node's notifications. */
  readonly notification: string;
  /** The `subscribe` params of new heads: each item is a block's JSON that `parseHeader` reads. */
  readonly newHeads: unknown[];
}

/**
 * A call a node holds open until it has a new block (Bitcoin Core's `waitfornewblock`), for nodes without
 * pub/sub: upstream.ts keeps one open per upstream, outside the batcher, and reads the head at once when
 * it answers. Each one held open takes one of the node's RPC threads for as long as it waits.
 */
export interface LongPollProtocol {
  /** The call, asking the node to answer within `timeoutMs` (with its head) when no block comes. */
  call(timeoutMs: number): NodeCall;
  /** How long the node is asked to hold one call open, in ms. */
  readonly timeoutMs: number;
  /** The block (head) the answer's JSON text names; undefined when it names none. */
  blockOf(result: string): { number: bigint; hash: string } | undefined;
}

/**
 * Where a family's nodes answer more than JSON-RPC (java-tron: its HTTP API's paths beside `/jsonrpc`, under
 * one base URL or on a bare node's three ports): what an upstream's configured URL says, read once per
 * upstream. Unsaid (EVM, the Bitcoin family): the URL is the JSON-RPC endpoint, and every call is JSON-RPC.
 */
export interface NodeEndpoints {
  /** Where JSON-RPC is POSTed. */
  readonly rpcUrl: string;
  /** Headers every request to this upstream carries (a provider's key): never shown anywhere. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The URL a method is POSTed to with its only param as the JSON body, where the method is a path of the
   * node's own API rather than a JSON-RPC method (the answer is the body as the node wrote it, errors and
   * all); undefined: a JSON-RPC method, batched.
   */
  pathUrl(method: string): string | undefined;
}

export interface NodeProtocol {
  /**
   * The chain a node serves, read through `send` (one call or several), as text: EVM its chain id (0x
   * hex), the Bitcoin family `<chain>:<genesis hash>`. Undefined when the node names none. Asked before a
   * node is used, and again after it failed; two nodes serve the same chain when their texts are equal.
   */
  readIdentity(send: NodeSend): Promise<string | undefined>;
  /** The node-form reference of a node's latest block, as `readHeader` takes it. */
  readonly latest: string;
  /**
   * The header of the block a node-form reference (a number, a tag, or where the family has one, a hash)
   * names, read through `send`; undefined when the node has no such block.
   */
  readHeader(ref: string, send: NodeSend): Promise<BlockHeader | undefined>;
  /** A block's header from the node's JSON of it; undefined for `null` or anything without number, hash and parent. */
  parseHeader(raw: string): BlockHeader | undefined;
  readonly errorKind: NodeErrorClassifier;
  /**
   * True where the family's nodes answer a JSON-RPC error with an HTTP error status and the JSON-RPC
   * response as the body (Bitcoin Core: 500, 404 for an unknown method, 400 for an invalid request): such
   * an answer is the node's own, passed through, not a failure of the transport. Otherwise (EVM) an HTTP 5xx
   * is the node's trouble whatever its body.
   */
  readonly errorsWithHttpStatus?: boolean;
  /**
   * The most calls a batch to these nodes carries where BATCH_MAX_SIZE does not say; undefined: the
   * service's default. Bitcoin Core answers a batch's calls one after another on one of its RPC threads, so
   * smaller batches in flight at once spread a request's reads over its threads.
   */
  readonly batchMaxSize?: number;
  /**
   * The most HTTP requests in flight to one of these nodes where UPSTREAM_MAX_IN_FLIGHT does not say;
   * undefined: the service's default. Bitcoin Core refuses a request past its RPC threads and work queue.
   */
  readonly maxInFlight?: number;
  /**
   * The body with which these nodes refuse a request unread because their request queue is full (Bitcoin
   * Core's "Work queue depth exceeded" with an HTTP 5xx: 500 from litecoind 0.21): the upstream is
   * saturated, not failing, so the call is sent again after backoff and not counted against its circuit.
   */
  readonly busyAnswer?: RegExp;
  /** Undefined where the family's nodes have none: heads are then polled only, and nothing passes through. */
  readonly pubsub?: PubSubProtocol;
  /** Heads pushed by a call held open, where the nodes have no pub/sub; undefined: polled only. */
  readonly longPoll?: LongPollProtocol;
  /**
   * An upstream's endpoints from its configured URL, where the family's nodes have more than JSON-RPC;
   * throws a ConfigError for a URL the family cannot read. Undefined: the URL is the JSON-RPC endpoint.
   */
  endpoints?(url: string): NodeEndpoints;
}
