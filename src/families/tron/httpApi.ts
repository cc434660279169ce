/**
 * java-tron's HTTP API at the node's own paths (`/wallet/...`, `/walletsolidity/...`), as the service serves
 * it (docs/interface.md, "The TRON family"): one row per path of the allow-list, with its cache rule and its
 * cost. A path of the API without a row never reaches a node: those that take or make a private key are
 * refused with a 403 saying so, node administration and whatever else java-tron has with a 404.
 *
 * The engine's name of a path is the path without its leading slash (`wallet/getblockbynum`), its one param
 * the request's body; endpoints.ts sends it to the upstream's face at that path. java-tron's answers pass
 * through as it writes them, its errors too (HTTP 200 `{"Error": ...}`, `{}` for "not found"): neither is
 * ever kept.
 *
 * Cache rules (cache/policy.ts):
 * - a block by number or id, and the transaction infos of a block: kept for ever once solidified, in memory
 *   until then while canonical, dropped on a reorg; a block named by no number nor id (the head) never;
 * - `/wallet/getnowblock`: the block at the followed head (tronFetch.ts), so it and `eth_blockNumber` name
 *   the same block;
 * - a transaction and its info by id: the solidity face's answer is final once given (it answers only
 *   solidified transactions); the full node's face asks the solidity face first (tronFetch.ts);
 * - account and contract reads, prices and parameters: for a block time at most (memory);
 * - builders and writes never; writes are never hedged (tronFetch.ts).
 */
import type { MethodPolicy } from "../../cache/policy";
import type { Engine } from "../../engine/engineApi";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { objectMembers } from "../../json";
import type { NodePath, NodePaths } from "../../operations/nodePaths";
import { numberOfBlockId, tronHash } from "./blockRef";

type Face = "wallet" | "walletsolidity";

/** java-tron refuses a transaction larger than this (its TRANSACTION_MAX_BYTE_SIZE, 500 KiB). */
const MAX_TRANSACTION_BYTES = 500 * 1024;
/** java-tron answers at most this many blocks from the range reads (getblockbylimitnext, getblockbylatestnum). */
const MAX_RANGE_BLOCKS = 100;

/** Rate-limit tokens: a small answer 1, a block with its transactions (up to thousands) 5, a range a block each. */
const COST = { small: 1, block: 5, write: 2 } as const;

const BLOCK_ID = /^[0-9a-fA-F]{64}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const DIGITS = /^[0-9]{1,19}$/;
/** GET queries' members that java-tron reads as numbers or booleans (every other is text). */
const NUMBER_MEMBERS = new Set(["num", "startNum", "endNum"]);
const BOOLEAN_MEMBERS = new Set(["detail", "visible"]);

/** The paths that take or make a private key: never forwarded, whoever asks. */
const KEY_PATHS = new Set([
  "easytransfer",
  "easytransferbyprivate",
  "easytransferasset",
  "easytransferassetbyprivate",
  "gettransactionsign",
  "addtransactionsign",
  "createaddress",
  "generateaddress",
]);

/** `{}` (java-tron's "none") and `{"Error": ...}` (its errors, given with HTTP 200): passed on, never kept. */
export function isNodeRefusal(raw: string): boolean {
  let i = 0;
  while (raw.charCodeAt(i) <= 32) i++;
  if (raw.charCodeAt(i) !== 123) return false;
  i++;
  while (raw.charCodeAt(i) <= 32) i++;
  return raw.charCodeAt(i) === 125 || raw.startsWith('"Error"', i);
}

/** The member `name` of the answer's top level, as JSON text; undefined when absent or not an object. */
function topMember(raw: string, name: string): string | undefined {
  try {
    const span = objectMembers(raw, 0).get(name);
    return span && raw.slice(span.start, span.end);
  } catch {
    return undefined;
  }
}

/** The block a block answer is: its `blockID` (which starts with its number). */
export function blockOfAnswer(raw: string): { number: bigint; hash: string } | undefined {
  const text = topMember(raw, "blockID");
  const id = text?.startsWith('"') ? text.slice(1, -1) : undefined;
  if (id === undefined || !BLOCK_ID.test(id)) return undefined;
  return { number: numberOfBlockId(id), hash: tronHash(id) };
}

/** The block a transaction info names: its `blockNumber` only (java-tron writes no block hash in it). */
function blockOfInfo(raw: string): { number: bigint } | undefined {
  const text = topMember(raw, "blockNumber");
  return text !== undefined && DIGITS.test(text) ? { number: BigInt(text) } : undefined;
}

const bodyOf = (params: unknown[]) => (params[0] ?? {}) as Record<string, unknown>;

/** An answer about another block than the one asked is the node's fault: never kept, never given. */
function verifyBlockAsked(params: unknown[], raw: string): string | undefined {
  const block = blockOfAnswer(raw);
  if (!block) return undefined;
  const body = bodyOf(params);
  const asked = body.num ?? body.id_or_num ?? body.value;
  if (typeof asked === "number" && BigInt(asked) !== block.number) {
    return `upstream answered block ${block.number} when asked about block ${asked}`;
  }
  if (typeof asked === "string") {
    const byId = BLOCK_ID.test(asked) ? tronHash(asked) !== block.hash : false;
    const byNumber = DIGITS.test(asked) ? BigInt(asked) !== block.number : false;
    if (byId || byNumber) return `upstream answered block ${block.hash} when asked about block ${asked}`;
  }
  return undefined;
}

const member = (name: string) => ({ kind: "member" as const, index: 0, member: name });

/** A block by number, id, or either: the block is read from the answer. */
const BLOCK: MethodPolicy = {
  cache: "result",
  answerBlock: blockOfAnswer,
  verify: verifyBlockAsked,
  unkept: isNodeRefusal,
};
const BLOCK_BY_NUMBER: MethodPolicy = { ...BLOCK, block: member("num") };
/** `getblock` names the head where it names no block: kept only where it names one. */
const GETBLOCK: MethodPolicy = { ...BLOCK, keepsFor: (params) => bodyOf(params).id_or_num !== undefined };
/** The infos of a block's transactions, by its number: the block the params name. */
const INFOS_BY_NUMBER: MethodPolicy = { block: member("num"), cache: "block", unkept: isNodeRefusal };
/** The solidity face answers only what is solidified: final once given. */
const SOLIDIFIED: MethodPolicy = { cache: "static", unkept: isNodeRefusal };
/** A transaction info names its block's number only: kept once that block is final. */
const INFO: MethodPolicy = { cache: "result", answerBlock: blockOfInfo, unkept: isNodeRefusal };
/** About the state at the head: a block time at most. */
const HEAD: MethodPolicy = { cache: "head", unkept: isNodeRefusal };
/** The same answer for the same input, whatever the chain does. */
const PURE: MethodPolicy = { cache: "static", unkept: isNodeRefusal };
const NEVER: MethodPolicy = { cache: "never" };
const WRITE: MethodPolicy = { cache: "never", write: true };

interface PathRow {
  name: string;
  faces: readonly Face[];
  summary: string;
  /** Its cache rule on each face (the solidity face's where it differs). */
  policy: MethodPolicy;
  solidityPolicy?: MethodPolicy;
  cost: number | ((body: Record<string, unknown>) => number);
  write?: boolean;
  /** Why a body cannot be the node's (checked before any node call); undefined when it can. */
  check?(body: Record<string, unknown>): string | undefined;
}

const BOTH: readonly Face[] = ["wallet", "walletsolidity"];
const FULL: readonly Face[] = ["wallet"];

const RANGE_COST_NOTE = `${COST.block} rate-limit tokens for each block it may answer (${MAX_RANGE_BLOCKS} at most)`;
/** A range read costs a block's worth for each block it may answer. */
const rangeCost = (count: unknown) =>
  COST.block * Math.min(MAX_RANGE_BLOCKS, Math.max(1, typeof count === "number" ? count : MAX_RANGE_BLOCKS));

const read = (
  name: string,
  faces: readonly Face[],
  summary: string,
  policy: MethodPolicy,
  cost: PathRow["cost"] = COST.small,
): PathRow => ({ name, faces, summary, policy, cost });
const builder = (name: string, summary: string): PathRow => ({
  name,
  faces: FULL,
  summary: `${summary} (an unsigned transaction: the key stays with the caller).`,
  policy: NEVER,
  cost: COST.small,
});

/** A signed transaction as java-tron's broadcasttransaction takes it, bounded and checked before sending. */
function checkTransaction(body: Record<string, unknown>): string | undefined {
  const { txID, raw_data, raw_data_hex, signature } = body;
  if (typeof txID !== "string" || !BLOCK_ID.test(txID)) return "txID: expected 64 hex digits";
  if (typeof raw_data !== "object" || raw_data === null)
    return "raw_data: expected the transaction's raw_data object";
  if (raw_data_hex !== undefined && (typeof raw_data_hex !== "string" || !HEX.test(raw_data_hex))) {
    return "raw_data_hex: expected hex";
  }
  if (typeof raw_data_hex === "string" && raw_data_hex.length > 2 * MAX_TRANSACTION_BYTES) {
    return `raw_data_hex: a transaction is at most ${MAX_TRANSACTION_BYTES} bytes`;
  }
  if (!Array.isArray(signature) || signature.length === 0) return "signature: expected the signatures (hex)";
  if (!signature.every((s) => typeof s === "string" && HEX.test(s))) return "signature: expected hex strings";
  return undefined;
}

function checkHexTransaction(body: Record<string, unknown>): string | undefined {
  const { transaction } = body;
  if (typeof transaction !== "string" || !HEX.test(transaction))
    return "transaction: expected the signed transaction's hex";
  if (transaction.length > 2 * MAX_TRANSACTION_BYTES) {
    return `transaction: a transaction is at most ${MAX_TRANSACTION_BYTES} bytes`;
  }
  return undefined;
}

const ROWS: readonly PathRow[] = [
  // Blocks and transactions
  {
    ...read(
      "getnowblock",
      BOTH,
      "The latest block (the solidity face: the latest solidified block).",
      NEVER,
      COST.block,
    ),
    solidityPolicy: HEAD,
  },
  read("getblockbynum", BOTH, "A block by number.", BLOCK_BY_NUMBER, COST.block),
  read("getblockbyid", BOTH, "A block by id.", BLOCK, COST.block),
  read(
    "getblock",
    BOTH,
    "A block by number or id (`id_or_num`), with its transactions where `detail`.",
    GETBLOCK,
    COST.block,
  ),
  read(
    "getblockbylimitnext",
    BOTH,
    "The blocks from `startNum` up to before `endNum` (100 at most).",
    NEVER,
    (b) =>
      rangeCost(
        typeof b.endNum === "number" && typeof b.startNum === "number" ? b.endNum - b.startNum : undefined,
      ),
  ),
  read("getblockbylatestnum", BOTH, "The latest `num` blocks (100 at most).", NEVER, (b) => rangeCost(b.num)),
  {
    ...read("gettransactionbyid", BOTH, "A transaction by id.", NEVER),
    solidityPolicy: SOLIDIFIED,
  },
  {
    ...read(
      "gettransactioninfobyid",
      BOTH,
      "A transaction's fee, result, logs and internal transactions.",
      INFO,
    ),
    solidityPolicy: SOLIDIFIED,
  },
  read(
    "gettransactioninfobyblocknum",
    BOTH,
    "The infos of every transaction of a block.",
    INFOS_BY_NUMBER,
    COST.block,
  ),
  // Accounts, contracts, the chain's parameters
  read("getaccount", BOTH, "An account: its TRX balance (sun), TRC-10 balances, resources.", HEAD),
  read("getaccountresource", FULL, "An account's energy and bandwidth.", HEAD),
  read("getaccountnet", FULL, "An account's bandwidth.", HEAD),
  read("getcontract", FULL, "A contract's code and ABI.", HEAD),
  read("getcontractinfo", FULL, "A contract's code, ABI and runtime state.", HEAD),
  read("triggerconstantcontract", BOTH, "Runs a contract's constant method (a TRC-20 balanceOf, say).", HEAD),
  read("estimateenergy", FULL, "Estimates the energy a contract call needs.", HEAD),
  read("getassetissuebyid", BOTH, "A TRC-10 token by id.", HEAD),
  read("getassetissuelist", BOTH, "Every TRC-10 token.", HEAD, COST.block),
  read("getchainparameters", FULL, "The chain's parameters (energy and bandwidth prices, ...).", HEAD),
  read("getenergyprices", BOTH, "The history of the energy price.", HEAD),
  read("getbandwidthprices", BOTH, "The history of the bandwidth price.", HEAD),
  read("validateaddress", FULL, "Whether a text is a TRON address.", PURE),
  // Builders: unsigned transactions, signed by the caller
  builder("createtransaction", "Builds a TRX transfer"),
  builder("triggersmartcontract", "Builds a contract call"),
  builder("transferasset", "Builds a TRC-10 transfer"),
  builder("freezebalancev2", "Builds a stake of TRX for energy or bandwidth"),
  builder("unfreezebalancev2", "Builds an unstake"),
  builder("delegateresource", "Builds a delegation of energy or bandwidth"),
  builder("undelegateresource", "Builds the end of a delegation"),
  builder("withdrawexpireunfreeze", "Builds the withdrawal of unstaked TRX"),
  builder("cancelallunfreezev2", "Builds the cancellation of pending unstakes"),
  builder("votewitnessaccount", "Builds votes for super representatives"),
  builder("withdrawbalance", "Builds the withdrawal of rewards"),
  // Writes
  {
    name: "broadcasttransaction",
    faces: FULL,
    summary: "Broadcasts a signed transaction (never sent to two upstreams at once).",
    policy: WRITE,
    cost: COST.write,
    write: true,
    check: checkTransaction,
  },
  {
    name: "broadcasthex",
    faces: FULL,
    summary: "Broadcasts a signed transaction given as hex (never sent to two upstreams at once).",
    policy: WRITE,
    cost: COST.write,
    write: true,
    check: checkHexTransaction,
  },
];

/** The engine's name of a face's path. */
export const pathMethod = (face: Face, name: string) => `${face}/${name}`;

/** Every path's policy, by the engine's name of it. */
export const PATH_POLICIES: ReadonlyMap<string, MethodPolicy> = new Map(
  ROWS.flatMap((row) =>
    row.faces.map((face) => [
      pathMethod(face, row.name),
      face === "walletsolidity" ? (row.solidityPolicy ?? row.policy) : row.policy,
    ]),
  ),
);

/** The writes, by the engine's name: never hedged. */
export const PATH_WRITES: ReadonlySet<string> = new Set(
  ROWS.filter((row) => row.write).map((row) => pathMethod("wallet", row.name)),
);

/**
 * A body in one form: members sorted (the same question is one key, whatever the order it was written in),
 * and a GET's query values as java-tron reads them (numbers and booleans where it takes those).
 */
function canonicalBody(body: Record<string, unknown>, fromQuery: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(body).sort()) {
    let value = body[name];
    if (fromQuery && typeof value === "string") {
      if (NUMBER_MEMBERS.has(name) && DIGITS.test(value)) value = Number(value);
      else if (BOOLEAN_MEMBERS.has(name) && (value === "true" || value === "false")) value = value === "true";
    }
    out[name] = value;
  }
  return out;
}

/** The family's node paths (operations/nodePaths.ts), answered by the engine. */
export function tronNodePaths(engine: Engine): NodePaths {
  const paths: NodePath[] = [];
  for (const row of ROWS) {
    for (const face of row.faces) {
      const method = pathMethod(face, row.name);
      const { cost } = row;
      paths.push({
        path: `/${method}`,
        summary: row.summary,
        write: row.write,
        params(body, fromQuery) {
          const canonical = canonicalBody(body, fromQuery);
          const wrong = row.check?.(canonical);
          if (wrong) throw new BadRequestError(`/${method}: ${wrong}`);
          return [canonical];
        },
        cost: typeof cost === "number" ? () => cost : (params) => cost(bodyOf(params)),
        costNote: typeof cost === "number" ? undefined : RANGE_COST_NOTE,
        answer: (params) => engine.call(method, params),
      });
    }
  }
  return {
    prefixes: ["/wallet/", "/walletsolidity/"],
    paths,
    refusal(path) {
      const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
      if (KEY_PATHS.has(name)) {
        return new ForbiddenError(
          `${path} is never forwarded: it takes or makes a private key, which must never leave the caller`,
        );
      }
      return new NotFoundError(`${path} is not served: not on this service's allow-list of java-tron's API`);
    },
  };
}
