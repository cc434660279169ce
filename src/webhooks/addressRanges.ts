/**
 * Which addresses a webhook may be sent to without WEBHOOK_ALLOW_PRIVATE: public unicast only. Everything in
 * IANA's special-purpose registries (RFC 6890 and its updates) is refused: loopback, private, shared (CGNAT),
 * link-local (where cloud metadata services answer), documentation, benchmarking, multicast, reserved. An
 * IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address it leads to.
 */
import { isIPv4, isIPv6 } from "node:net";

type Range = readonly [prefix: number[], bits: number];

/** Not public, IPv4 (as [bytes of the prefix], length). */
const IPV4_SPECIAL: readonly Range[] = [
  [[0], 8], // "this network"
  [[10], 8], // private
  [[100, 64], 10], // shared address space (carrier-grade NAT)
  [[127], 8], // loopback
  [[169, 254], 16], // link-local: cloud metadata (169.254.169.254)
  [[172, 16], 12], // private
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2], 24], // documentation (TEST-NET-1)
  [[192, 88, 99], 24], // 6to4 relay anycast
  [[192, 168], 16], // private
  [[198, 18], 15], // benchmarking
  [[198, 51, 100], 24], // documentation (TEST-NET-2)
  [[203, 0, 113], 24], // documentation (TEST-NET-3)
  [[224], 4], // multicast
  [[240], 4], // reserved, and the broadcast address
];

/**
 * IPv6 is public only inside 2000::/3, the global unicast space (everything outside it, ::1, ::, fc00::/7,
 * fe80::/10, fec0::/10, ff00::/8, 100::/64, 5f00::/16, is special), and not in these parts of it.
 */
const IPV6_GLOBAL: Range = [[0x20], 3];
const IPV6_SPECIAL: readonly Range[] = [
  [[0x20, 0x01, 0x00], 23], // IETF protocol assignments: Teredo, ORCHID, benchmarking (2001:2::/48)...
  [[0x20, 0x01, 0x0d, 0xb8], 32], // documentation
  [[0x3f, 0xff, 0x00], 20], // documentation (RFC 9637)
];
/** Prefixes whose addresses lead to an IPv4 address: [prefix, length, where the IPv4 bytes start]. */
const IPV6_CARRYING_IPV4: readonly (readonly [number[], number, number])[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 12], // IPv4-mapped ::ffff:a.b.c.d
  [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, 12], // NAT64 well-known prefix 64:ff9b::/96
  [[0x20, 0x02], 16, 2], // 6to4 2002:aabb:ccdd::/48
];

function inRange(bytes: Uint8Array, [prefix, bits]: Range): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Bytes(ip: string): Uint8Array {
  return Uint8Array.from(ip.split(".").map(Number));
}

/** The 16 bytes of an IPv6 address node:net accepts (`::` shorthand, a dotted IPv4 tail). */
function ipv6Bytes(ip: string): Uint8Array {
  let text = ip;
  const groups: number[] = [];
  const dotted = text.lastIndexOf(":");
  if (text.includes(".", dotted)) {
    const v4 = ipv4Bytes(text.slice(dotted + 1));
    text = `${text.slice(0, dotted + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  groups.push(...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right);
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

function isPublicIPv4(bytes: Uint8Array): boolean {
  return !IPV4_SPECIAL.some((range) => inRange(bytes, range));
}

/**
 * Whether `ip` (an IPv4 or IPv6 address as text, no brackets) is a public unicast address. Anything else is
 * not: a name, a malformed address, an IPv6 address with a zone (`fe80::1%eth0`).
 */
export function isPublicAddress(ip: string): boolean {
  if (isIPv4(ip)) return isPublicIPv4(ipv4Bytes(ip));
  if (!isIPv6(ip) || ip.includes("%")) return false;
  const bytes = ipv6Bytes(ip);
  for (const [prefix, bits, at] of IPV6_CARRYING_IPV4) {
    if (inRange(bytes, [prefix, bits])) return isPublicIPv4(bytes.subarray(at, at + 4));
  }
  return inRange(bytes, IPV6_GLOBAL) && !IPV6_SPECIAL.some((range) => inRange(bytes, range));
}
