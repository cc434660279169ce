/**
 * What the upstream floor says to a family's nodes of its own accord (every other call is a caller's, passed
 * through): how a node names the chain it serves, how a block's header is read and written, what a node's
 * error means, and its WebSocket pub/sub where it has one. The composition root hands the family's to
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

export interface NodeProtocol {
  /** The call whose answer names the chain a node serves: asked before a node is used, and after it failed. */
  readonly identity: NodeCall;
  /** The chain's identity in the JSON text of the `identity` call's result; undefined when it names none. */
  identityOf(result: string): bigint | undefined;
  /** An identity as logs write it. */
  identityText(identity: bigint): string;
  /** The node-form reference of a node's latest block, as `readHeader` takes it. */
  readonly latest: string;
  /**
   * The header of the block a node-form reference (a number, or a tag) names, read through `send`;
   * undefined when the node has no such block.
   */
  readHeader(ref: string, send: NodeSend): Promise<BlockHeader | undefined>;
  /** A block's header from the node's JSON of it; undefined for `null` or anything without number, hash and parent. */
  parseHeader(raw: string): BlockHeader | undefined;
  readonly errorKind: NodeErrorClassifier;
  /** Undefined where the family's nodes have none: heads are then polled only, and nothing passes through. */
  readonly pubsub?: PubSubProtocol;
}
