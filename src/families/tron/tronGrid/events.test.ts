import { describe, expect, test } from "bun:test";
import { APPROVAL_TOPIC, TRANSFER_TOPIC } from "../decode";
import { decodeEvents, eventJson } from "./events";
import { readFingerprint, writeFingerprint } from "./fingerprint";

const CONTRACT = "a614f803b6fd780986a42c78ec9c7f77e6ded13c"; // mainnet USDT, as a log writes it
const A = "7786419e40637f99f279efb3172ab0fd221c37fd";
const B = "0ba2f183815e185f1880aad8ce870d0ff72900ad";
const word = (hex: string) => hex.padStart(64, "0");
const place = { blockNumber: 7n, blockTimestamp: 1_000n, caller: undefined, transactionId: "ab".repeat(32) };

describe("decodeEvents", () => {
  test("TRC-20 Transfer and Approval, TRC-721 Transfer and Approval; other logs left out, positions kept", () => {
    const events = decodeEvents([
      { address: CONTRACT, topics: [TRANSFER_TOPIC, word(A), word(B)], data: word("3e8") },
      { address: CONTRACT, topics: [word("1234")], data: "" },
      { address: CONTRACT, topics: [APPROVAL_TOPIC, word(A), word(B)], data: word("ff") },
      { address: CONTRACT, topics: [TRANSFER_TOPIC, word(A), word(B), word("5")] },
      { address: CONTRACT, topics: [APPROVAL_TOPIC, word(A), word(B), word("6")] },
      // A Transfer with three topics and no data word is no TRC-20 Transfer.
      { address: CONTRACT, topics: [TRANSFER_TOPIC, word(A), word(B)], data: "" },
    ]);
    expect(events.map((e) => [e.eventIndex, e.form.event, e.indexed])).toEqual([
      [0, "Transfer(address indexed from, address indexed to, uint256 value)", true],
      [2, "Approval(address indexed owner, address indexed spender, uint256 value)", true],
      [3, "Transfer(address indexed from, address indexed to, uint256 indexed tokenId)", true],
      [4, "Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)", false],
    ]);
    expect(JSON.parse(eventJson(events[1]!, place))).toEqual({
      block_number: 7,
      block_timestamp: 1000,
      caller_contract_address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
      contract_address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
      event_index: 2,
      event_name: "Approval",
      result: { 0: `0x${A}`, 1: `0x${B}`, 2: "255", owner: `0x${A}`, spender: `0x${B}`, value: "255" },
      result_type: { owner: "address", spender: "address", value: "uint256" },
      event: "Approval(address indexed owner, address indexed spender, uint256 value)",
      transaction_id: place.transactionId,
    });
    expect(JSON.parse(eventJson(events[2]!, place)).result).toEqual({
      0: `0x${A}`,
      1: `0x${B}`,
      2: "5",
      from: `0x${A}`,
      to: `0x${B}`,
      tokenId: "5",
    });
  });
});

describe("fingerprints", () => {
  test("read back as written; another kind, another length or any other text refused", () => {
    const f = writeFingerprint("trc20", [123n, 4]);
    expect(readFingerprint("trc20", f, 2)).toEqual([123n, 4n]);
    expect(() => readFingerprint("event", f, 2)).toThrow("Invalid fingerprint.");
    expect(() => readFingerprint("trc20", f, 3)).toThrow("Invalid fingerprint.");
    expect(() => readFingerprint("trc20", "not a fingerprint", 2)).toThrow("Invalid fingerprint.");
  });
});
