/**
 * eth_newFilter's criteria as geth checks them, and the matching of logs (recorded anvil logs' shape): the
 * rules the filters kept by the service follow (test/rpc-filters.test.ts runs them against real nodes).
 */
import { expect, test } from "bun:test";
import { InvalidParamsError } from "../../errors";
import { boundsOf, logMatch, newFilterCriteria } from "./rpcFilterCriteria";

const TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const ZERO_TOPIC = `0x${"0".repeat(64)}`;
const ALICE_TOPIC = `0x${"0".repeat(24)}f39fd6e51aad88f6f4ce6ab8827279cfffb92266`;
/** A mint's Transfer log as anvil writes it. */
const LOG = {
  address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  topics: [TRANSFER, ZERO_TOPIC, ALICE_TOPIC],
  data: `0x${"0".repeat(63)}5`,
  blockNumber: "0x2",
  logIndex: "0x0",
  removed: false,
};

test("the criteria kept: the four members, as given; what geth refuses is -32602", () => {
  expect(newFilterCriteria({ address: TOKEN, topics: [TRANSFER], extra: 1 })).toEqual({
    address: TOKEN,
    topics: [TRANSFER],
  });
  for (const ok of [
    {},
    { fromBlock: "earliest" },
    { fromBlock: "0x5", toBlock: "0x5" },
    { fromBlock: "0x5", toBlock: "latest" },
    { fromBlock: "latest", toBlock: "latest" },
  ]) {
    expect(newFilterCriteria(ok)).toEqual(ok);
  }
  const refused = (filter: Record<string, unknown>) => {
    try {
      newFilterCriteria(filter);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidParamsError);
      return (error as Error).message;
    }
    throw new Error("not refused");
  };
  expect(refused({ blockHash: TRANSFER })).toBe(
    "invalid params: eth_newFilter takes no blockHash: a filter follows new blocks (read one block's logs with eth_getLogs)",
  );
  expect(refused({ toBlock: "pending" })).toBe("invalid params: pending logs are not supported");
  expect(refused({ fromBlock: "0x6", toBlock: "0x5" })).toBe(
    "invalid params: invalid block range params: toBlock 0x5 must be latest or at least fromBlock 0x6",
  );
  expect(refused({ fromBlock: "latest", toBlock: "0x5" })).toContain("invalid block range params");
  expect(refused({ fromBlock: "safe" })).toBe(
    "invalid params: invalid block range params: fromBlock safe is no block a filter can follow (a number, earliest or latest)",
  );
  expect(refused({ toBlock: "finalized" })).toContain("toBlock finalized is no block a filter can follow");
});

test("the bounds of the changes: numbers only (a tag bounds nothing)", () => {
  expect(boundsOf({ fromBlock: "0x10", toBlock: "0x20" })).toEqual({ from: 16n, to: 32n });
  expect(boundsOf({ fromBlock: "earliest", toBlock: "latest" })).toEqual({ from: undefined, to: undefined });
  expect(boundsOf({})).toEqual({ from: undefined, to: undefined });
});

test("matching: any address of the list, per position any alternative; null, [] and [.., null] match anything", () => {
  const matches = (criteria: Parameters<typeof logMatch>[0]) => logMatch(criteria)(LOG);
  expect(matches({})).toBe(true);
  expect(matches({ address: TOKEN })).toBe(true);
  expect(matches({ address: [`0x${"1".repeat(40)}`, TOKEN] })).toBe(true);
  expect(matches({ address: [] })).toBe(true);
  expect(matches({ address: `0x${"1".repeat(40)}` })).toBe(false);
  expect(matches({ topics: [TRANSFER] })).toBe(true);
  expect(matches({ topics: [null, null, ALICE_TOPIC] })).toBe(true);
  expect(matches({ topics: [[ZERO_TOPIC, TRANSFER]] })).toBe(true);
  expect(matches({ topics: [[], [ZERO_TOPIC]] })).toBe(true);
  expect(matches({ topics: [[ZERO_TOPIC, null]] })).toBe(true);
  expect(matches({ topics: [ZERO_TOPIC] })).toBe(false);
  expect(matches({ topics: [TRANSFER, ALICE_TOPIC] })).toBe(false);
  // A position past the log's topics: a wildcard matches it (anvil, reth), a topic does not.
  expect(matches({ topics: [TRANSFER, null, null, null] })).toBe(true);
  expect(matches({ topics: [TRANSFER, null, null, ZERO_TOPIC] })).toBe(false);
  // A log with no address (a malformed node answer) matches no address filter.
  expect(logMatch({ address: TOKEN })({ topics: [] })).toBe(false);
});
