/**
 * TronGrid's `fingerprint`: an opaque cursor naming the last row of a page by its position in the index
 * (keyset paging: the next page reads from that position on, never by an offset). Written as base64url of
 * `<kind>:<n>:<n>...`, so a fingerprint of one listing is refused by another; anything this did not write
 * is a 400.
 */
import { BadRequestError } from "../../../errors";

const NUMBER = /^-?\d{1,19}$/;

export function writeFingerprint(kind: string, position: readonly (bigint | number)[]): string {
  return Buffer.from(`${kind}:${position.join(":")}`).toString("base64url");
}

/** The position a fingerprint names, of `count` numbers; a BadRequestError for anything else. */
export function readFingerprint(kind: string, text: string, count: number): bigint[] {
  const parts = /^[A-Za-z0-9_-]{1,200}$/.test(text)
    ? Buffer.from(text, "base64url").toString().split(":")
    : [];
  if (parts.length !== count + 1 || parts[0] !== kind || !parts.slice(1).every((p) => NUMBER.test(p))) {
    throw new BadRequestError("Invalid fingerprint.");
  }
  return parts.slice(1).map(BigInt);
}
