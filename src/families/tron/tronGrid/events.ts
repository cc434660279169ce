/**
 * Contract events as TronGrid's v1 API writes them (`/v1/.../events`), decoded from a transaction info's
 * logs (java-tron's `log`: the address without 41, topics and data in hex without 0x). TronGrid decodes each
 * event with its contract's ABI; the service reads no ABI, so it decodes the events whose form the standard
 * fixes, with the standard's parameter names:
 *  - TRC-20 `Transfer(address indexed from, address indexed to, uint256 value)` (3 topics, one data word),
 *  - TRC-721 `Transfer(address indexed from, address indexed to, uint256 indexed tokenId)` (4 topics),
 *  - TRC-20 `Approval(address indexed owner, address indexed spender, uint256 value)`,
 *  - TRC-721 `Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)`.
 * Every other log (ApprovalForAll, a DEX's Swap, ...) is not listed. `event_index` is the log's position in
 * its transaction's logs; `result` holds each value by position and by name, addresses as TronGrid writes
 * them there (`0x` + 20 bytes, lower-case), numbers as decimal text.
 */
import { tronAddressOf } from "../addresses";
import { APPROVAL_TOPIC, TRANSFER_TOPIC } from "../decode";

const WORD = /^[0-9a-f]{64}$/;
const LOG_ADDRESS = /^[0-9a-f]{40}$/;

interface EventForm {
  name: "Transfer" | "Approval";
  event: string;
  params: readonly (readonly [name: string, type: "address" | "uint256"])[];
}

const form = (name: EventForm["name"], event: string, names: readonly string[]): EventForm => ({
  name,
  event,
  params: names.map((n, i) => [n, i < 2 ? "address" : "uint256"] as const),
});
const TRC20_TRANSFER = form("Transfer", "Transfer(address indexed from, address indexed to, uint256 value)", [
  "from",
  "to",
  "value",
]);
const TRC721_TRANSFER = form(
  "Transfer",
  "Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  ["from", "to", "tokenId"],
);
const TRC20_APPROVAL = form(
  "Approval",
  "Approval(address indexed owner, address indexed spender, uint256 value)",
  ["owner", "spender", "value"],
);
const TRC721_APPROVAL = form(
  "Approval",
  "Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)",
  ["owner", "approved", "tokenId"],
);

export interface LogJson {
  address?: string;
  topics?: string[];
  data?: string;
}

/** A decoded event of a transaction. */
export interface TronGridEvent {
  /** Its position among the transaction's logs (TronGrid's `event_index`). */
  eventIndex: number;
  /** The emitting contract, `41` + 40 hex digits. */
  contract: string;
  form: EventForm;
  /** Its three values' words (64 hex digits each). */
  words: [string, string, string];
  /** Whether the index keeps it (families/tron/decode.ts: every form here but TRC-721's Approval). */
  indexed: boolean;
}

/** The logs' events of the four forms above, in order. */
export function decodeEvents(logs: readonly LogJson[] | undefined): TronGridEvent[] {
  const out: TronGridEvent[] = [];
  (logs ?? []).forEach((log, eventIndex) => {
    const topics = (log.topics ?? []).map((t) => t.toLowerCase());
    const address = (log.address ?? "").toLowerCase();
    if (!LOG_ADDRESS.test(address) || !topics.every((t) => WORD.test(t))) return;
    const data = (log.data ?? "").toLowerCase();
    const three = topics.length === 3 && WORD.test(data);
    const four = topics.length === 4;
    let found: EventForm | undefined;
    if (topics[0] === TRANSFER_TOPIC) found = three ? TRC20_TRANSFER : four ? TRC721_TRANSFER : undefined;
    else if (topics[0] === APPROVAL_TOPIC)
      found = three ? TRC20_APPROVAL : four ? TRC721_APPROVAL : undefined;
    if (found === undefined) return;
    out.push({
      eventIndex,
      contract: `41${address}`,
      form: found,
      words: [topics[1]!, topics[2]!, three ? data : topics[3]!],
      indexed: found !== TRC721_APPROVAL,
    });
  });
  return out;
}

/** Where an event happened, for its row. */
export interface EventPlace {
  blockNumber: bigint;
  blockTimestamp: bigint;
  /** The contract the transaction called (`41...`); the emitting one where it names none. */
  caller: string | undefined;
  transactionId: string;
}

const base58 = (hex41: string) => tronAddressOf(Buffer.from(hex41.slice(2), "hex"));
const wordValue = (type: "address" | "uint256", word: string) =>
  type === "address" ? `0x${word.slice(24)}` : BigInt(`0x${word}`).toString();

/** The event as TronGrid's row (its members in TronGrid's order). */
export function eventJson(e: TronGridEvent, place: EventPlace): string {
  const result: Record<string, string> = {};
  const types: Record<string, string> = {};
  e.form.params.forEach(([name, type], i) => {
    result[i] = wordValue(type, e.words[i]!);
    types[name] = type;
  });
  e.form.params.forEach(([name], i) => {
    result[name] = result[i]!;
  });
  return JSON.stringify({
    block_number: Number(place.blockNumber),
    block_timestamp: Number(place.blockTimestamp),
    caller_contract_address: base58(place.caller ?? e.contract),
    contract_address: base58(e.contract),
    event_index: e.eventIndex,
    event_name: e.form.name,
    result,
    result_type: types,
    event: e.form.event,
    transaction_id: place.transactionId,
  });
}
