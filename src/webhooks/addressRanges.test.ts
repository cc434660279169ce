import { expect, test } from "bun:test";
import { isPublicAddress } from "./addressRanges";

test("IPv4: every special-purpose range is refused, at its first and last address", () => {
  const special = [
    ["0.0.0.0", "0.255.255.255"],
    ["10.0.0.0", "10.255.255.255"],
    ["100.64.0.0", "100.127.255.255"],
    ["127.0.0.0", "127.255.255.255"],
    ["169.254.0.0", "169.254.255.255"],
    ["172.16.0.0", "172.31.255.255"],
    ["192.0.0.0", "192.0.0.255"],
    ["192.0.2.0", "192.0.2.255"],
    ["192.88.99.0", "192.88.99.255"],
    ["192.168.0.0", "192.168.255.255"],
    ["198.18.0.0", "198.19.255.255"],
    ["198.51.100.0", "198.51.100.255"],
    ["203.0.113.0", "203.0.113.255"],
    ["224.0.0.0", "239.255.255.255"],
    ["240.0.0.0", "255.255.255.255"],
  ];
  for (const [first, last] of special) {
    expect([first, isPublicAddress(first!)]).toEqual([first, false]);
    expect([last, isPublicAddress(last!)]).toEqual([last, false]);
  }
  expect(isPublicAddress("127.0.0.1")).toBe(false);
  expect(isPublicAddress("169.254.169.254")).toBe(false);
});

test("IPv4: the public addresses just outside each range, and ordinary ones, are accepted", () => {
  const outside = [
    "1.0.0.0",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.0",
    "192.0.3.0",
    "192.88.98.255",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "198.51.99.255",
    "203.0.112.255",
    "223.255.255.255",
    "8.8.8.8",
    "93.184.215.14",
  ];
  for (const ip of outside) expect([ip, isPublicAddress(ip)]).toEqual([ip, true]);
});

test("IPv6: loopback, unspecified, unique local, link-local, site-local, multicast, documentation are refused", () => {
  const special = [
    "::",
    "::1",
    "0:0:0:0:0:0:0:1",
    "fc00::",
    "fd12:3456:789a::1",
    "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "fe80::1",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "ff0e::1",
    "100::1", // discard-only
    "5f00::1", // SRv6
    "2001::1", // Teredo
    "2001:1ff::1", // IETF protocol assignments, end of the /23
    "2001:db8::1",
    "3fff::1",
    "3fff:fff::1",
    "64:ff9b:1::1", // local-use NAT64
    "::127.0.0.1", // IPv4-compatible (deprecated)
    "1::",
    "4000::1",
    "e000::1",
  ];
  for (const ip of special) expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
});

test("IPv6 carrying an IPv4 address (mapped, NAT64, 6to4) is judged by that address", () => {
  expect(isPublicAddress("::ffff:127.0.0.1")).toBe(false);
  expect(isPublicAddress("::ffff:7f00:1")).toBe(false);
  expect(isPublicAddress("0:0:0:0:0:ffff:a00:1")).toBe(false);
  expect(isPublicAddress("::ffff:169.254.169.254")).toBe(false);
  expect(isPublicAddress("::ffff:192.168.1.1")).toBe(false);
  expect(isPublicAddress("64:ff9b::10.0.0.1")).toBe(false);
  expect(isPublicAddress("2002:7f00:1::1")).toBe(false);
  expect(isPublicAddress("2002:c0a8:101::")).toBe(false);
  expect(isPublicAddress("::ffff:8.8.8.8")).toBe(true);
  expect(isPublicAddress("64:ff9b::8.8.8.8")).toBe(true);
  expect(isPublicAddress("2002:808:808::1")).toBe(true);
});

test("IPv6 global unicast is accepted, just outside the special parts of it too", () => {
  for (const ip of [
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "2001:200::1",
    "2001:db9::1",
    "3ffe::1",
  ]) {
    expect([ip, isPublicAddress(ip)]).toEqual([ip, true]);
  }
  expect(isPublicAddress("3fff:1000::1")).toBe(true);
});

test("not an address, or an address with a zone, is not public", () => {
  for (const text of [
    "",
    "localhost",
    "example.com",
    "127.1",
    "0x7f000001",
    "[::1]",
    "8.8.8.8.",
    "fe80::1%eth0",
    "2606:4700::1%1",
    "1.2.3.256",
  ]) {
    expect([text, isPublicAddress(text)]).toEqual([text, false]);
  }
});
