/**
 * The Bitcoin family's allow-list (the design's §12, "Gateway"): one row per node method the service
 * passes to a Bitcoin Core-style node, with Bitcoin Core's param names and schemas (positional, or by name:
 * `byName`) and how the engine caches its answers (its `policy`, cache/policy.ts). JSON-RPC only: none has a
 * REST form. A method without a row (wallet, mining, control, network admin: `generatetoaddress`,
 * `sendtoaddress`, `stop`, `addnode`, `getnewaddress`, `walletpassphrase`, `setban`, ...) is refused with
 * -32601 and never reaches a node.
 *
 * Cache rules: by hash (`getblock`, `getblockheader`, a confirmed `getrawtransaction`) kept for ever with
 * their `confirmations` and `nextblockhash` answered for the followed head (live.ts); by height
 * (`getblockhash`, `getblockstats`) kept once CONFIRMATIONS deep, else in memory for a block time and
 * dropped on a reorg; the tip (`getblockcount`, `getbestblockhash`) answered from the followed head; the
 * mempool, fees and `gettxout` at most a second. The tools (`decoderawtransaction`, `decodescript`,
 * `validateaddress`) and the writes are passed through, never kept.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import type { MethodPolicy } from "../../cache/policy";
import type { HeadMethod } from "../../engine/headMethods";
import type { MethodTable } from "../../engine/methodTable";
import type { FamilyOperationDeps, FamilyOperations } from "../../operations/familyOperations";
import { type NodeMethodRow, nodeOperation, type ParamSpec } from "../../operations/operation";
import { hashOfAnswer, verifyBlock, verifyBlockHash, verifyTransaction } from "./answerChecks";
import { blockLive, transactionLive } from "./live";
import { createUtxoFetch } from "./utxoFetch";

/** A row of the allow-list, with how the engine caches the answers of its node method. */
interface UtxoMethodRow extends NodeMethodRow {
  policy?: MethodPolicy;
}

/** How long mempool, fee and unspent-output answers are kept at most. */
const BRIEF_TTL_MS = 1_000;
/** estimatesmartfee's range of targets, in blocks (Bitcoin Core's fee estimator horizon). */
const MAX_CONF_TARGET = 1_008;

const lower = (value: string) => value.toLowerCase();
/** Null is a param left to the node's default (as Bitcoin Core reads it, and as named params fill gaps). */
const orNull = (schema: TSchema) => T.Union([schema, T.Null()]);

const Hash = T.String({ pattern: "^[0-9a-fA-F]{64}$", description: "64 hex digits" });
const Hex = T.String({ pattern: "^([0-9a-fA-F]{2})*$", description: "hex-encoded bytes" });
// Block 1, not 0: the genesis block has no undo data, so getblockstats 0 is a node error.
const Height = T.Integer({ minimum: 0, description: "a block height", examples: [1] });
const FeeRate = T.Union([T.Number({ minimum: 0 }), T.String({ maxLength: 32 })], {
  description: "a fee rate in coins per kvB, as a number or a decimal string",
});

/** A param spec, Bitcoin Core's name first. */
const param = (name: string, schema: TSchema, extra: Partial<ParamSpec> = {}): ParamSpec => ({
  name,
  schema,
  ...extra,
});
const optional = (name: string, schema: TSchema, extra: Partial<ParamSpec> = {}): ParamSpec =>
  param(name, orNull(schema), { optional: true, ...extra });

const p = {
  blockhash: param("blockhash", Hash, { normalize: lower }),
  txid: param("txid", Hash, { normalize: lower }),
  height: param("height", Height),
  hexstring: param("hexstring", Hex),
};

const at = (index: number) => ({ kind: "position" as const, index });
/** Answers about the chain's tip: kept as long as answers about the head (HEAD_POLL_MS), in memory. */
const TIP: MethodPolicy = { cache: "head" };
/** A block by height: kept once CONFIRMATIONS deep, else for a block time while its block is canonical. */
const BY_HEIGHT: MethodPolicy = { block: at(0), cache: "block" };
/** A block or header by hash: kept for ever, its confirmations and next block following the head. */
const BLOCK_BY_HASH: MethodPolicy = { cache: "static", live: blockLive, verify: verifyBlock };
/** The mempool, fee estimates, unspent outputs: they change at any time, not only with blocks. */
const BRIEF: MethodPolicy = { cache: "brief", ttlMs: BRIEF_TTL_MS };

/** A row of the allow-list: JSON-RPC only, params by position or by name. */
const row = (
  method: string,
  summary: string,
  params: ParamSpec[],
  policy: MethodPolicy | undefined,
  result?: TSchema,
): UtxoMethodRow => ({ method, group: "NodeMethods", summary, params, policy, result, byName: true });

const ROWS: UtxoMethodRow[] = [
  // Chain reads
  row("getblockchaininfo", "The node's view of the chain: its name, head, difficulty, softforks.", [], TIP),
  row("getbestblockhash", "The hash of the head block (the followed head's).", [], TIP, Hash),
  row("getblockcount", "The height of the head block (the followed head's).", [], TIP, Height),
  row(
    "getblockhash",
    "The hash of the main chain's block at a height.",
    [p.height],
    { ...BY_HEIGHT, verify: verifyBlockHash, answerHash: hashOfAnswer },
    Hash,
  ),
  row(
    "getblock",
    "A block by hash: hex (verbosity 0), with transaction ids (1) or with transactions (2).",
    [
      p.blockhash,
      optional("verbosity", T.Union([T.Integer({ minimum: 0, maximum: 3 }), T.Boolean()]), {
        aliases: ["verbose"],
      }),
    ],
    BLOCK_BY_HASH,
  ),
  row(
    "getblockheader",
    "A block's header by hash: as JSON (verbose, the default) or hex.",
    [p.blockhash, optional("verbose", T.Boolean())],
    BLOCK_BY_HASH,
  ),
  row(
    "getblockstats",
    "Statistics of a block, by hash or height (some or all of them).",
    [
      param("hash_or_height", T.Union([Hash, Height]), {
        normalize: (v: string | number) => (typeof v === "string" ? lower(v) : v),
      }),
      optional("stats", T.Array(T.String({ maxLength: 64 }), { maxItems: 64 })),
    ],
    // By height only: one by hash is passed through.
    BY_HEIGHT,
  ),
  row("getchaintips", "Every known tip of the block tree: the main chain's and the branches'.", [], TIP),
  row("getdifficulty", "The proof-of-work difficulty of the head.", [], TIP),
  row(
    "getrawtransaction",
    "A transaction by id: hex, or as JSON (verbose); in a given block where the node has no index.",
    [
      p.txid,
      optional("verbose", T.Union([T.Boolean(), T.Integer({ minimum: 0, maximum: 2 })]), {
        aliases: ["verbosity"],
      }),
      optional("blockhash", Hash, { normalize: (v: string | null) => (v === null ? v : lower(v)) }),
    ],
    { cache: "static", live: transactionLive, verify: verifyTransaction },
  ),
  row(
    "gettxout",
    "An unspent output (in the chain, or with the mempool's).",
    [p.txid, param("n", T.Integer({ minimum: 0 })), optional("include_mempool", T.Boolean())],
    BRIEF,
  ),
  row(
    "getblockfilter",
    "A block's compact filter (BIP 157), where the node keeps them (-blockfilterindex).",
    [p.blockhash, optional("filtertype", T.String({ maxLength: 32 }))],
    // About a block by hash, whatever the chain does: never changes.
    { cache: "static" },
  ),
  // Mempool and fees
  row(
    "getrawmempool",
    "The transaction ids in the node's mempool (or each entry, verbose).",
    [optional("verbose", T.Boolean()), optional("mempool_sequence", T.Boolean())],
    BRIEF,
  ),
  row("getmempoolinfo", "The node's mempool: size, bytes, fee floor.", [], BRIEF),
  row("getmempoolentry", "A transaction of the node's mempool.", [p.txid], BRIEF),
  row(
    "estimatesmartfee",
    "A fee rate estimate for confirmation within a number of blocks.",
    [
      param("conf_target", T.Integer({ minimum: 1, maximum: MAX_CONF_TARGET })),
      optional("estimate_mode", T.String({ maxLength: 32 })),
    ],
    BRIEF,
  ),
  // Tools: answered by the node from the params alone, passed through.
  row(
    "decoderawtransaction",
    "A raw transaction decoded.",
    [p.hexstring, optional("iswitness", T.Boolean())],
    undefined,
  ),
  row("decodescript", "A script decoded.", [p.hexstring], undefined),
  row(
    "validateaddress",
    "Whether an address is valid for the node's chain, and what it is.",
    [param("address", T.String({ maxLength: 256 }))],
    undefined,
  ),
  // Writes
  row(
    "sendrawtransaction",
    "Sends a signed transaction to the node's mempool and peers; its txid.",
    [p.hexstring, optional("maxfeerate", FeeRate)],
    { cache: "never", write: true },
    Hash,
  ),
  row(
    "testmempoolaccept",
    "Whether the node's mempool would accept raw transactions, without sending them.",
    [param("rawtxs", T.Array(Hex, { minItems: 1, maxItems: 25 })), optional("maxfeerate", FeeRate)],
    { cache: "never" },
  ),
];

/** Every node method's policy, by name (a null prototype: no name finds what it inherits). */
function policyTable(): Readonly<Record<string, MethodPolicy>> {
  const table: Record<string, MethodPolicy> = Object.create(null);
  for (const r of ROWS) if (r.policy) table[r.method] = r.policy;
  return Object.freeze(table);
}

const UTXO_POLICIES = policyTable();

/** What the engine needs of the family's methods (engine/methodTable.ts). */
export const utxoMethods: MethodTable = {
  policy: (method) => UTXO_POLICIES[method],
  createFetch: createUtxoFetch,
};

/** The methods whose answer is the head, answered from the followed head as the nodes write them. */
export const UTXO_HEAD_METHODS: readonly HeadMethod[] = [
  { method: "getblockcount", answer: ({ number }) => number.toString() },
  { method: "getbestblockhash", answer: ({ hash }) => `"${hash}"` },
];

/** The family's operations: its allow-list, in the order of the rows (the shared data operations are compose/'s). */
export function utxoOperations(deps: FamilyOperationDeps): FamilyOperations {
  const { engine, head } = deps;
  return { node: ROWS.map((r) => nodeOperation(r, { engine, head })), data: [] };
}

/** The allow-list's method names, in order (the docs and the tests read them). */
export const UTXO_METHODS: readonly string[] = ROWS.map((r) => r.method);
