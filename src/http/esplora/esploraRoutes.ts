/**
 * An Esplora-compatible API under /esplora/ (Blockstream's Esplora, API.md, and its server, electrs'
 * src/rest.rs): its paths, its answers' shapes and content types (plain text for the tip, a block hash, a
 * header, a transaction's hex and a broadcast's txid; bytes for `/raw`; JSON for the rest), its status
 * codes and messages (400 "Invalid hex string", 404 "Transaction not found", plain text), and its pages
 * (25 confirmed transactions, 50 from the mempool, 25 of a block from `:start`). Wallets and explorers
 * that speak it (mempool.js, BDK's Esplora client) take a base URL only, so the key may ride in the path:
 * every route is also served under /esplora/key/<KEY>/ (http/auth.ts reads it).
 *
 * Every route goes through the guard (authenticate, admit, check the path, charge, run) and answers its
 * errors as Esplora does (answer.ts `ESPLORA`). A route costs what it reads: see COST, and a token more for
 * each transaction read from the node for its outputs (ChargeReads). What is read comes from the chain
 * family (operations/esploraSource.ts); an address is checked by the family's codec.
 */
import type { AddressCodec } from "../../addresses";
import { BadRequestError, NodeError, NotFoundError, PayloadTooLargeError } from "../../errors";
import type { ChargeReads, EsploraSource, ScriptRef } from "../../operations/esploraSource";
import { ESPLORA } from "../answer";
import { PATH_KEY_PREFIX } from "../auth";
import type { Guard, Handler } from "../guard";

/** Where the API is served, and where it is served with the key in the path. */
const ESPLORA_PREFIX = "/esplora";
const KEYED_PREFIX = `${PATH_KEY_PREFIX}:key`;

/** Esplora's pages (electrs: CHAIN_TXS_PER_PAGE, MAX_MEMPOOL_TXS, BLOCK_LIMIT). */
const CHAIN_TXS_PER_PAGE = 25;
const MAX_MEMPOOL_TXS = 50;
const BLOCK_LIMIT = 10;

/**
 * Rate-limit tokens per route, by the work it asks: 1 for what one cached node answer or one indexed row
 * gives (the tip, a block, a status, a hex); 2 for a transaction with its prevouts (node answer and index
 * rows) or a block's list of txids; 5 for what reads many rows or a large answer (an address's figures,
 * its unspent outputs up to UTXO_MAX, a raw block, the whole mempool, the fee estimates' 28 targets); 10
 * for a page of transactions (25 of a block or an address's history, 50 of the mempool, each with its
 * prevouts) or of blocks (BLOCK_LIMIT, one a block as for one); 15 for an address's first page (50 from
 * the mempool and 25 confirmed). A route reading transactions from the node for the outputs its own spend
 * pays a token more for each (ChargeReads).
 */
const COST = {
  tip: 1,
  block: 1,
  blocks: BLOCK_LIMIT,
  blockTxids: 2,
  blockRaw: 5,
  blockPage: 10,
  transaction: 2,
  transactionLight: 1,
  broadcast: 1,
  scriptStats: 5,
  scriptUtxos: 5,
  scriptPage: 10,
  scriptFirstPage: 15,
  mempool: 5,
  feeEstimates: 5,
} as const;

const HASH = /^[0-9a-fA-F]{64}$/;
/** An unsigned integer as Rust's `parse` reads one (electrs' paths): an optional `+`, then digits. */
const UNSIGNED = /^\+?0*([0-9]+)$/;
/** Digits of U64_MAX: more (leading zeros aside) overflow any integer electrs reads. */
const U64_DIGITS = 20;
const HEX = /^[0-9a-fA-F]*$/;
const U32_MAX = 0xffff_ffffn;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
/** A scripthash is a SHA-256. */
const SCRIPTHASH_BYTES = 32;
/**
 * The most bytes a transaction a node accepts may have: its weight is at most a block's (4,000,000 weight
 * units), and its bytes are at most its weight. A longer broadcast is refused unread.
 */
const MAX_TRANSACTION_BYTES = 4_000_000;
const TEXT = { "content-type": "text/plain" };
const JSON_TYPE = { "content-type": "application/json" };
const BYTES = { "content-type": "application/octet-stream" };

type Params = Record<string, string>;

/** An answer: its body and content type (the request id is added). */
interface Answer {
  body: string | Uint8Array;
  headers: Record<string, string>;
}

const text = (body: string): Answer => ({ body, headers: { ...TEXT } });
const json = (body: string): Answer => ({ body, headers: { ...JSON_TYPE } });
const jsonList = (items: readonly string[]): Answer => json(`[${items.join(",")}]`);
const bytes = (hex: string): Answer => ({ body: Buffer.from(hex, "hex"), headers: { ...BYTES } });

/** A route of the API: its path under the prefix, its cost, its input from the path, its answer. */
interface EsploraRoute<I> {
  method: "GET" | "POST";
  path: string;
  cost: number;
  /** The path's params (and a POST's body text) checked; throws a BadRequestError as Esplora words it. */
  input(params: Params, body: string | undefined): I;
  /** The answer; `charge` pays for what it reads past `cost` (the guard's RequestContext.charge). */
  answer(input: I, charge: ChargeReads): Promise<Answer>;
}

const route = <I>(spec: EsploraRoute<I>): EsploraRoute<unknown> => spec as EsploraRoute<unknown>;

/** A block hash or txid: 64 hex digits (any case), else 400 "Invalid hex string" as electrs says. */
function hash(value: string | undefined): string {
  if (value === undefined || !HASH.test(value)) throw new BadRequestError("Invalid hex string");
  return value.toLowerCase();
}

/** An unsigned integer of at most `max` as electrs parses one; undefined where its parse fails. */
function parsed(value: string | undefined, max: bigint): bigint | undefined {
  const digits = value === undefined ? undefined : UNSIGNED.exec(value)?.[1];
  if (digits === undefined || digits.length > U64_DIGITS) return undefined;
  const number = BigInt(digits);
  return number <= max ? number : undefined;
}

/** An unsigned integer of at most `max`, else 400 "Invalid number". */
function unsigned(value: string | undefined, max: bigint): bigint {
  const number = parsed(value, max);
  if (number === undefined) throw new BadRequestError("Invalid number");
  return number;
}

const blockNotFound = () => new NotFoundError("Block not found");
const transactionNotFound = () => new NotFoundError("Transaction not found");

function found<T>(value: T | undefined, notFound: () => Error): T {
  if (value === undefined) throw notFound();
  return value;
}

/** The script a path names: an address (checked by the family's codec) or a scripthash. */
function scriptOf(kind: "address" | "scripthash", value: string, addresses: AddressCodec): ScriptRef {
  if (kind === "address") {
    const address = addresses.canonical(value);
    if (address === undefined) throw new BadRequestError("Invalid Bitcoin address");
    return { address };
  }
  if (value.length % 2 !== 0 || !HEX.test(value)) throw new BadRequestError("Invalid hex string");
  if (value.length !== SCRIPTHASH_BYTES * 2) throw new BadRequestError("Invalid scripthash");
  return { scripthash: value.toLowerCase() };
}

/** The routes about blocks and the tip. */
function blockRoutes(source: EsploraSource): EsploraRoute<unknown>[] {
  const tip = async () => found(await source.tip(), blockNotFound);
  const blockTxids = async (h: string) => found(await source.blockTxids(h), blockNotFound);
  const page = async ({ h, start }: { h: string; start: number }, charge: ChargeReads) => {
    const txids = await blockTxids(h);
    if (start >= txids.length) throw new NotFoundError("start index out of range");
    if (start % CHAIN_TXS_PER_PAGE !== 0) {
      throw new BadRequestError(`start index must be a multipication of ${CHAIN_TXS_PER_PAGE}`);
    }
    const txs = await source.blockTransactions(h, txids.slice(start, start + CHAIN_TXS_PER_PAGE), charge);
    return jsonList(txs);
  };
  // electrs reads a start it cannot parse (as a u32) as 0.
  const startOf = (value: string | undefined) => Number(parsed(value, U32_MAX) ?? 0n);
  // electrs reads a start height it cannot parse (as a usize) as none given: from the tip.
  const blocks = async (start: bigint | undefined) =>
    jsonList(found(await source.blocks(start, BLOCK_LIMIT), blockNotFound));
  const byHash = (p: Params) => hash(p.hash);
  return [
    route({
      method: "GET",
      path: "/blocks",
      cost: COST.blocks,
      input: () => undefined,
      answer: blocks,
    }),
    route({
      method: "GET",
      path: "/blocks/:start_height",
      cost: COST.blocks,
      input: (p) => parsed(p.start_height, U64_MAX),
      answer: blocks,
    }),
    route({
      method: "GET",
      path: "/blocks/tip/height",
      cost: COST.tip,
      input: () => undefined,
      answer: async () => text((await tip()).height.toString()),
    }),
    route({
      method: "GET",
      path: "/blocks/tip/hash",
      cost: COST.tip,
      input: () => undefined,
      answer: async () => text((await tip()).hash),
    }),
    route({
      method: "GET",
      path: "/block-height/:height",
      cost: COST.block,
      input: (p) => unsigned(p.height, U64_MAX),
      answer: async (height: bigint) => text(found(await source.blockHash(height), blockNotFound)),
    }),
    route({
      method: "GET",
      path: "/block/:hash",
      cost: COST.block,
      input: byHash,
      answer: async (h: string) => json(found(await source.block(h), blockNotFound)),
    }),
    route({
      method: "GET",
      path: "/block/:hash/header",
      cost: COST.block,
      input: byHash,
      answer: async (h: string) => text(found(await source.blockHeader(h), blockNotFound)),
    }),
    route({
      method: "GET",
      path: "/block/:hash/status",
      cost: COST.block,
      input: byHash,
      answer: async (h: string) => json(await source.blockStatus(h)),
    }),
    route({
      method: "GET",
      path: "/block/:hash/txids",
      cost: COST.blockTxids,
      input: byHash,
      answer: async (h: string) => json(JSON.stringify(await blockTxids(h))),
    }),
    route({
      method: "GET",
      path: "/block/:hash/txid/:index",
      cost: COST.blockTxids,
      input: (p) => ({ h: hash(p.hash), index: unsigned(p.index, U64_MAX) }),
      answer: async ({ h, index }: { h: string; index: bigint }) => {
        const txids = await blockTxids(h);
        if (index >= BigInt(txids.length)) throw new NotFoundError("tx index out of range");
        return text(txids[Number(index)]!);
      },
    }),
    route({
      method: "GET",
      path: "/block/:hash/txs",
      cost: COST.blockPage,
      input: (p) => ({ h: hash(p.hash), start: 0 }),
      answer: page,
    }),
    route({
      method: "GET",
      path: "/block/:hash/txs/:start",
      cost: COST.blockPage,
      input: (p) => ({ h: hash(p.hash), start: startOf(p.start) }),
      answer: page,
    }),
    route({
      method: "GET",
      path: "/block/:hash/raw",
      cost: COST.blockRaw,
      input: byHash,
      answer: async (h: string) => bytes(found(await source.blockHex(h), blockNotFound)),
    }),
  ];
}

/** The node's refusal of a broadcast (its error object's JSON), as electrs words it. */
const nodeRefusal = (error: string) => new BadRequestError(`sendrawtransaction RPC error: ${error}`);

/** The routes about transactions, and the broadcast. */
function transactionRoutes(source: EsploraSource): EsploraRoute<unknown>[] {
  const byTxid = (p: Params) => hash(p.txid);
  const hex = async (txid: string) => found(await source.transactionHex(txid), transactionNotFound);
  return [
    route({
      method: "GET",
      path: "/tx/:txid",
      cost: COST.transaction,
      input: byTxid,
      answer: async (txid: string, charge) =>
        json(found(await source.transaction(txid, charge), transactionNotFound)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/status",
      cost: COST.transactionLight,
      input: byTxid,
      answer: async (txid: string) => json(await source.transactionStatus(txid)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/hex",
      cost: COST.transactionLight,
      input: byTxid,
      answer: async (txid: string) => text(await hex(txid)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/raw",
      cost: COST.transactionLight,
      input: byTxid,
      answer: async (txid: string) => bytes(await hex(txid)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/outspends",
      cost: COST.transaction,
      input: byTxid,
      answer: async (txid: string) => jsonList(found(await source.outspends(txid), transactionNotFound)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/outspend/:vout",
      cost: COST.transactionLight,
      input: (p) => ({ txid: hash(p.txid), vout: Number(unsigned(p.vout, U32_MAX)) }),
      answer: async ({ txid, vout }: { txid: string; vout: number }) =>
        json(await source.outspend(txid, vout)),
    }),
    route({
      method: "GET",
      path: "/tx/:txid/merkle-proof",
      cost: COST.transaction,
      input: byTxid,
      answer: async (txid: string) => {
        const proof = await source.merkleProof(txid);
        return json(found(proof, () => new NotFoundError("Transaction not found or is unconfirmed")));
      },
    }),
    route({
      method: "POST",
      path: "/tx",
      cost: COST.broadcast,
      // The body is the transaction's hex as text (clients may end it with a newline), read as the node
      // would read it before anything is sent: what it could not read as a transaction is refused unsent,
      // with the node's words for it.
      input: (_p, body) => {
        const hex = (body ?? "").trim();
        if (hex.length > 2 * MAX_TRANSACTION_BYTES) {
          throw new PayloadTooLargeError(`a transaction is at most ${MAX_TRANSACTION_BYTES} bytes`);
        }
        const refusal = source.undecodable(hex);
        if (refusal !== undefined) throw nodeRefusal(refusal);
        return hex;
      },
      answer: async (hex: string) => {
        try {
          return text(await source.broadcast(hex));
        } catch (error) {
          // The node's own trouble stays a 502.
          if (error instanceof NodeError && error.status === 400) throw nodeRefusal(error.rawError);
          throw error;
        }
      },
    }),
  ];
}

/** The routes about an address or a scripthash (each path twice: `address/:address`, `scripthash/:hash`). */
function scriptRoutes(source: EsploraSource, addresses: AddressCodec, utxoMax: number) {
  const routes: EsploraRoute<unknown>[] = [];
  for (const kind of ["address", "scripthash"] as const) {
    const base = `/${kind}/:script`;
    const input = (p: Params) => scriptOf(kind, p.script ?? "", addresses);
    const mempoolPage = (script: ScriptRef) => source.scriptMempoolTransactions(script, MAX_MEMPOOL_TXS);
    const chainPage = (script: ScriptRef, charge: ChargeReads, lastSeen?: string) =>
      source.scriptChainTransactions(script, lastSeen, CHAIN_TXS_PER_PAGE, charge);
    routes.push(
      route({
        method: "GET",
        path: base,
        cost: COST.scriptStats,
        input: (p) => ({ script: input(p), name: p.script! }),
        answer: async ({ script, name }: { script: ScriptRef; name: string }) => {
          const stats = await source.scriptStats(script);
          // Esplora's members in its order (a JSON map: sorted by name).
          const named = kind === "address" ? { address: name } : { scripthash: name };
          return json(
            `{${JSON.stringify(named).slice(1, -1)},"chain_stats":${stats.chain},"mempool_stats":${stats.mempool}}`,
          );
        },
      }),
      route({
        method: "GET",
        path: `${base}/txs`,
        cost: COST.scriptFirstPage,
        input,
        answer: async (script: ScriptRef, charge) => {
          const [mempool, chain] = await Promise.all([mempoolPage(script), chainPage(script, charge)]);
          return jsonList([...mempool, ...chain]);
        },
      }),
      route({
        method: "GET",
        path: `${base}/txs/chain`,
        cost: COST.scriptPage,
        input,
        answer: async (script: ScriptRef, charge) => jsonList(await chainPage(script, charge)),
      }),
      route({
        method: "GET",
        path: `${base}/txs/chain/:last_seen_txid`,
        cost: COST.scriptPage,
        // electrs reads a last seen txid it cannot parse as none given.
        input: (p) => ({
          script: input(p),
          lastSeen: HASH.test(p.last_seen_txid ?? "") ? p.last_seen_txid!.toLowerCase() : undefined,
        }),
        answer: async ({ script, lastSeen }: { script: ScriptRef; lastSeen?: string }, charge) =>
          jsonList(await chainPage(script, charge, lastSeen)),
      }),
      route({
        method: "GET",
        path: `${base}/txs/mempool`,
        cost: COST.scriptPage,
        input,
        answer: async (script: ScriptRef) => jsonList(await mempoolPage(script)),
      }),
      route({
        method: "GET",
        path: `${base}/utxo`,
        cost: COST.scriptUtxos,
        input,
        answer: async (script: ScriptRef) => {
          const page = await source.scriptUtxos(script, utxoMax);
          if ("tooMany" in page) {
            throw new BadRequestError(
              `Too many unspent transaction outputs (>${utxoMax}). Contact support to raise limits.`,
            );
          }
          return jsonList(page.utxos);
        },
      }),
    );
  }
  return routes;
}

/** The routes about the mempool and fees. */
function mempoolRoutes(source: EsploraSource): EsploraRoute<unknown>[] {
  return [
    route({
      method: "GET",
      path: "/mempool",
      cost: COST.mempool,
      input: () => undefined,
      answer: async () => json(await source.mempool()),
    }),
    route({
      method: "GET",
      path: "/mempool/txids",
      cost: COST.mempool,
      input: () => undefined,
      answer: async () => json(await source.mempoolTxids()),
    }),
    route({
      method: "GET",
      path: "/fee-estimates",
      cost: COST.feeEstimates,
      input: () => undefined,
      answer: async () => json(await source.feeEstimates()),
    }),
  ];
}

/** What each route answers, for the API docs: one line, and the content type of a 200. */
const DOCS: Record<string, [summary: string, type: "text" | "json" | "bytes"]> = {
  "GET /blocks": ["The 10 newest blocks from the tip, newest first, each as /block/{hash} gives it.", "json"],
  "GET /blocks/:start_height": [
    "10 blocks from :start_height down, newest first (a height past the tip: 404).",
    "json",
  ],
  "GET /blocks/tip/height": ["The height of the last block (the index's tip).", "text"],
  "GET /blocks/tip/hash": ["The hash of the last block (the index's tip).", "text"],
  "GET /block-height/:height": ["The hash of the main chain's block at a height.", "text"],
  "GET /block/:hash": [
    "A block: id, height, version, timestamp, tx_count, size, weight, merkle_root, ...",
    "json",
  ],
  "GET /block/:hash/header": ["A block's 80-byte header, in hex.", "text"],
  "GET /block/:hash/status": ["Whether a block is in the best chain, its height and the next block.", "json"],
  "GET /block/:hash/txids": ["Every txid of a block, in order.", "json"],
  "GET /block/:hash/txid/:index": ["The txid at an index of a block.", "text"],
  "GET /block/:hash/txs": ["A block's first 25 transactions, with prevouts, fees and status.", "json"],
  "GET /block/:hash/txs/:start": ["25 transactions of a block from :start (a multiple of 25).", "json"],
  "GET /block/:hash/raw": ["A block, as bytes.", "bytes"],
  "GET /tx/:txid": ["A transaction: vin with prevouts, vout, size, weight, fee (satoshis), status.", "json"],
  "GET /tx/:txid/status": [
    "A transaction's status: confirmed, block_height, block_hash, block_time.",
    "json",
  ],
  "GET /tx/:txid/hex": ["A transaction, in hex.", "text"],
  "GET /tx/:txid/raw": ["A transaction, as bytes.", "bytes"],
  "GET /tx/:txid/outspends": ["What spends each output of a transaction.", "json"],
  "GET /tx/:txid/outspend/:vout": ["What spends one output.", "json"],
  "GET /tx/:txid/merkle-proof": ["A confirmed transaction's merkle branch (Electrum's get_merkle).", "json"],
  "POST /tx": ["Broadcasts a raw transaction (hex in the body); its txid.", "text"],
  "GET /mempool": ["The mempool's backlog: count, vsize, total_fee, fee_histogram.", "json"],
  "GET /mempool/txids": ["Every txid in the mempool.", "json"],
  "GET /fee-estimates": [
    "Fee rates (sat/vB) by confirmation target, where the node has an estimate.",
    "json",
  ],
};
const SCRIPT_DOCS: Record<string, [summary: string, type: "json"]> = {
  "": ["Figures of an address or scripthash: chain_stats and mempool_stats.", "json"],
  "/txs": ["Up to 50 mempool transactions, then the first 25 confirmed, newest first.", "json"],
  "/txs/chain": ["25 confirmed transactions, newest first.", "json"],
  "/txs/chain/:last_seen_txid": ["The 25 confirmed transactions after :last_seen_txid.", "json"],
  "/txs/mempool": ["Up to 50 mempool transactions, newest first.", "json"],
  "/utxo": ["Unspent outputs (UTXO_MAX at most, else 400), the mempool's included.", "json"],
};

/** A route as the API docs show it. */
export interface EsploraRouteDoc {
  method: "GET" | "POST";
  /** Under /esplora, in OpenAPI's form (`/tx/{txid}`). */
  path: string;
  summary: string;
  type: "text" | "json" | "bytes";
  cost: number;
}

/** Every route, for the API docs (http/docs.ts). */
export function esploraRouteDocs(): EsploraRouteDoc[] {
  const none = {} as EsploraSource;
  const codec = {} as AddressCodec;
  return esploraRouteTable({ source: none, addresses: codec, utxoMax: 0 }).map((r) => {
    const script = /^\/(address|scripthash)\/:script(.*)$/.exec(r.path);
    const [summary, type] = script ? SCRIPT_DOCS[script[2]!]! : DOCS[`${r.method} ${r.path}`]!;
    const path = script
      ? `/${script[1]}/:${script[1] === "address" ? "address" : "hash"}${script[2]}`
      : r.path;
    return {
      method: r.method,
      path: `${ESPLORA_PREFIX}${path.replace(/:(\w+)/g, "{$1}")}`,
      summary,
      type,
      cost: r.cost,
    };
  });
}

/** Every route of the API, as its paths and costs are documented (docs.ts reads them). */
function esploraRouteTable(options: {
  source: EsploraSource;
  addresses: AddressCodec;
  utxoMax: number;
}): readonly EsploraRoute<unknown>[] {
  const { source, addresses, utxoMax } = options;
  return [
    ...blockRoutes(source),
    ...transactionRoutes(source),
    ...scriptRoutes(source, addresses, utxoMax),
    ...mempoolRoutes(source),
  ];
}

/**
 * A path as an answer may show it: a key riding in it (`/esplora/key/<KEY>/...`) is never written back, the
 * path shown as the one under the API's base URL without it.
 */
function shownPath(pathname: string): string {
  if (!pathname.startsWith(PATH_KEY_PREFIX)) return pathname;
  const rest = pathname.indexOf("/", PATH_KEY_PREFIX.length);
  return rest < 0 ? ESPLORA_PREFIX : `${ESPLORA_PREFIX}${pathname.slice(rest)}`;
}

/** What a path Esplora has no endpoint for answers (electrs: 404 `endpoint does not exist "<path>"`). */
function unknownEndpoint(guard: Guard): Handler {
  return guard.route<string>({
    name: `${ESPLORA_PREFIX}/*`,
    transport: ESPLORA,
    body: false,
    accept: (_body, _text, request) => ({ input: shownPath(new URL(request!.url).pathname), cost: COST.tip }),
    run(pathname) {
      throw new NotFoundError(`endpoint does not exist ${JSON.stringify(pathname)}`);
    },
  });
}

/** Bun's routes of the API: each path under /esplora and under /esplora/key/:key, and the unknown ones. */
export function esploraRoutes(options: {
  source: EsploraSource;
  addresses: AddressCodec;
  utxoMax: number;
  guard: Guard;
}): Record<string, Partial<Record<"GET" | "POST", Handler>>> {
  const { guard } = options;
  const out: Record<string, Partial<Record<"GET" | "POST", Handler>>> = {};
  for (const spec of esploraRouteTable(options)) {
    const name = `${ESPLORA_PREFIX}${spec.path}`;
    const handler = guard.route<unknown>({
      name,
      transport: ESPLORA,
      body: spec.method === "POST",
      // A POST's body is text, not JSON (a raw transaction's hex), and its path has no params: the input is
      // read from the text itself, every time (the guard parses no JSON where this answers).
      acceptText:
        spec.method === "POST" ? (body) => ({ input: spec.input({}, body), cost: spec.cost }) : undefined,
      accept(_body, _text, request) {
        const params = (request as (Request & { params?: Params }) | undefined)?.params ?? {};
        return { input: spec.input(params, undefined), cost: spec.cost };
      },
      async run(input, context) {
        const { body, headers } = await spec.answer(input, (tokens) => context.charge(tokens));
        headers["x-request-id"] = context.requestId;
        return new Response(body, { headers });
      },
    });
    for (const prefix of [ESPLORA_PREFIX, KEYED_PREFIX]) {
      const path = `${prefix}${spec.path}`;
      out[path] = { ...out[path], [spec.method]: handler };
    }
  }
  const unknown = unknownEndpoint(guard);
  out[`${ESPLORA_PREFIX}/*`] = { GET: unknown, POST: unknown };
  return out;
}
