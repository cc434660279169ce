/**
 * The JSON bodies of deliveries (docs/interface.md §18.2). A body is written once, when the delivery is made,
 * and sent as it is on every attempt (signed at each).
 */
import { parseJson, toJson } from "../json";

/** The most results one delivery holds: check's page. A block with more for an endpoint is sent in parts. */
export const RESULTS_PER_DELIVERY = 1_000;

/** What a delivery says happened: the kind column of webhook_deliveries is the short form. */
export const DELIVERY_TYPES = {
  block: "block",
  removed: "block.removed",
  pending: "pending",
  test: "webhook.test",
} as const;
export type DeliveryKind = keyof typeof DELIVERY_TYPES;

/** Crockford's base32, as ULIDs write it. */
const BASE32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * A delivery's id, its `webhook-id`: `msg_` and a ULID's 26 characters (48 bits of milliseconds, then 80
 * random bits), so ids sort roughly by when they were made and never repeat.
 */
export function newDeliveryId(nowMs = Date.now()): string {
  let time = "";
  for (let t = nowMs, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = BASE32[t % 32] + time;
  let random = "";
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) random += BASE32[byte & 31];
  return `msg_${time}${random}`;
}

/** A block as a body names it: its number, and its hash as its results write it (the nodes' form). */
export interface BodyBlock {
  number: number;
  hash: string;
}

/**
 * The bodies of one delivery's results, RESULTS_PER_DELIVERY to a body; several only when there are more,
 * each then with `"part": i, "parts": n` (1-based). No results: no body (an endpoint with nothing in a block
 * gets nothing).
 */
export function deliveryBodies(
  kind: DeliveryKind,
  chain: string,
  block: BodyBlock | null,
  results: readonly unknown[],
): string[] {
  const parts = Math.ceil(results.length / RESULTS_PER_DELIVERY);
  const bodies: string[] = [];
  for (let i = 0; i < parts; i++) {
    const page = results.slice(i * RESULTS_PER_DELIVERY, (i + 1) * RESULTS_PER_DELIVERY);
    const body = { type: DELIVERY_TYPES[kind], chain, block, results: page };
    bodies.push(toJson(parts > 1 ? { ...body, part: i + 1, parts } : body));
  }
  return bodies;
}

interface Body {
  type: string;
  chain: string;
  block: BodyBlock | null;
  results: Record<string, unknown>[];
  part?: number;
  parts?: number;
}

/**
 * The `block.removed` body of a block delivery whose block a reorg dropped: the same results, each with
 * `"removed": true`, in the same parts. Amounts stay exact (parsed with their bigints).
 */
export function removedBody(sent: string): string {
  const body = parseJson(sent) as Body;
  return toJson({
    ...body,
    type: DELIVERY_TYPES.removed,
    results: body.results.map((r) => ({ ...r, removed: true })),
  });
}

/** A block's hash as its results write it (every result of a block names it), for the body's `block`. */
export function resultsBlockHash(results: readonly unknown[]): string | undefined {
  const block = (results[0] as { block?: { hash?: unknown } } | undefined)?.block;
  return typeof block?.hash === "string" ? block.hash : undefined;
}
