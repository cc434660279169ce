/**
 * Heads the fleet shares: each instance publishes every block its follower adopts (reorgs included: the new
 * branch's blocks, lowest first) on the chain's channel, and takes what the others publish as pushed heads
 * (engine/chainFollower.ts `offer`), so every instance resolves `latest` to the same block as soon as one has seen it,
 * and a reorg seen by one reaches the others' caches without waiting for their own nodes. Its own messages
 * come back to it and change nothing (the block is already followed).
 *
 * A message is the time it was sent and the block's JSON, after their MAC (fleet/mac.ts, under
 * REDIS_SECRET): a head is taken as pushed, and adopted at once when it extends the chain, so one published
 * by whoever can reach Redis without the secret is ignored, and counted, and so is a signed one published
 * again later than HEAD_MAX_AGE_MS (an old branch's block replayed).
 */

import type { BlockHeader } from "../blockHeader";
import { createSigner, MAC_HEX_LENGTH, type Signer } from "./mac";
import type { Fleet } from "./redis";

export interface HeadSource {
  onChange(listener: (change: { added: BlockHeader[] }) => void): void;
  offer(header: BlockHeader): void;
}

/** A block's header from the node's JSON of it (the family's, upstream/protocol.ts `parseHeader`). */
export type HeaderParser = (raw: string) => BlockHeader | undefined;

export interface SharedHeadsEvents {
  /** A message that failed verification, or that holds no header: ignored. */
  bad?(): void;
}

/** How old a head message may be when it is read: the fleet's clocks agree far better than this. */
export const HEAD_MAX_AGE_MS = 30_000;
/** The sending time, in ms since the epoch, as fixed-width hex after the MAC. */
const SENT_DIGITS = 12;

/** The channel of a chain's heads, under the fleet's prefix (Fleet.prefix). */
export const headsChannel = (prefix: string) => `${prefix}heads`;

/** The signer of a chain's head messages, from the fleet's secret. */
export const headsSigner = (secret: string, prefix: string) => createSigner(secret, headsChannel(prefix));

/** A message as published: the time and the block's JSON, signed. */
export function sealHead(signer: Signer, raw: string, sentAt = Date.now()): string {
  const signed = `${sentAt.toString(16).padStart(SENT_DIGITS, "0")}${raw}`;
  return `${signer.sign(signed)}${signed}`;
}

function openHead(signer: Signer, message: string, parseHeader: HeaderParser): BlockHeader | undefined {
  const signed = message.slice(MAC_HEX_LENGTH);
  if (!signer.verify(message.slice(0, MAC_HEX_LENGTH), signed)) return undefined;
  const sentAt = Number.parseInt(signed.slice(0, SENT_DIGITS), 16);
  if (!(Math.abs(Date.now() - sentAt) <= HEAD_MAX_AGE_MS)) return undefined;
  try {
    return parseHeader(signed.slice(SENT_DIGITS));
  } catch {
    return undefined;
  }
}

export function shareHeads(options: {
  fleet: Fleet;
  head: HeadSource;
  secret: string;
  /** Reads a published block's JSON: the family's header parser. */
  parseHeader: HeaderParser;
  events?: SharedHeadsEvents;
}): void {
  const { fleet, head, parseHeader, events } = options;
  const channel = headsChannel(fleet.prefix);
  const signer = headsSigner(options.secret, fleet.prefix);
  head.onChange(({ added }) => {
    for (const block of added) {
      void fleet.run("heads", (client) => client.publish(channel, sealHead(signer, block.raw)));
    }
  });
  fleet.subscribe(channel, (message) => {
    const header = openHead(signer, message, parseHeader);
    if (header) head.offer(header);
    else events?.bad?.();
  });
}
