/**
 * Heads the fleet shares: each instance publishes every block its follower adopts (reorgs included: the new
 * branch's blocks, lowest first) on the chain's channel, and takes what the others publish as pushed heads
 * (engine/head.ts `offer`), so every instance resolves `latest` to the same block as soon as one has seen it,
 * and a reorg seen by one reaches the others' caches without waiting for their own nodes. Its own messages
 * come back to it and change nothing (the block is already followed).
 */
import { type BlockHeader, parseHeader } from "../chain/blockHeader";
import type { Fleet } from "./redis";

export interface HeadSource {
  onChange(listener: (change: { added: BlockHeader[] }) => void): void;
  offer(header: BlockHeader): void;
}

export function shareHeads(options: { fleet: Fleet; head: HeadSource; received?: () => void }): void {
  const { fleet, head } = options;
  const channel = `${fleet.prefix}heads`;
  head.onChange(({ added }) => {
    for (const block of added) {
      void fleet.run("heads", (client) => client.publish(channel, block.raw));
    }
  });
  fleet.subscribe(channel, (message) => {
    let header: BlockHeader | undefined;
    try {
      header = parseHeader(message);
    } catch {
      return;
    }
    if (!header) return;
    options.received?.();
    head.offer(header);
  });
}
