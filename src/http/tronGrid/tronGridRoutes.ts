/**
 * TronGrid's v1 API (its developers' "TronGrid v1 API" reference; TRON-US/trongrid's README), from the
 * service's index and node: `/v1/accounts/:address`, `/v1/accounts/:address/transactions`,
 * `/v1/accounts/:address/transactions/trc20`, `/v1/contracts/:address/events`,
 * `/v1/transactions/:id/events` and `/v1/blocks/:number/events`, with TronGrid's query parameters (snake_case
 * or camelCase), its envelope `{data, success, meta: {at, page_size, fingerprint, links: {next}}}`, its
 * `fingerprint` paging (an opaque cursor the source writes: keyset, never an offset) and its errors
 * (`{success: false, error, statusCode}`, answer.ts `TRONGRID`). tronweb's event module takes the service as
 * its event server. Clients that take a base URL only may put the key in the path: every route is also served
 * under /tron/key/<KEY>/ (http/auth.ts reads it); a key is never written back (`links.next` names the path
 * without it, and no `api_key`).
 *
 * Every route goes through the guard and costs what it reads (COST; a source's node reads are charged as it
 * makes them, operations/tronGridSource.ts); every page holds at most MAX_LIMIT rows.
 */
import type { AddressCodec } from "../../addresses";
import { BadRequestError, NotFoundError } from "../../errors";
import type { ChargeReads } from "../../operations/esploraSource";
import type {
  TronGridPage,
  TronGridRange,
  TronGridSide,
  TronGridSource,
} from "../../operations/tronGridSource";
import { TRONGRID } from "../answer";
import { TRON_PATH_KEY_PREFIX } from "../auth";
import type { Guard, Handler } from "../guard";

const V1 = "/v1";
const KEYED_PREFIX = `${TRON_PATH_KEY_PREFIX}:key${V1}`;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 200;
/** Rows of an index page a token pays for (a trc20 or event page of 200 costs 1 + 4). */
const ROWS_PER_TOKEN = 50;

/**
 * Rate-limit tokens per route, before what a source reads from the node as it goes (charged then): an
 * account is one getaccount (1); a page of transactions reads the index (1) and then each transaction and
 * its info from the node (2 a row); a TRC-20 page reads the index only (1 + a token per ROWS_PER_TOKEN rows
 * asked); a contract's events read the index as much (and a transaction info from the node for each
 * transaction on the page, 1 each); a transaction's events one transaction info (1 + 1); a block's events the
 * index's block row (1) and the block's infos (1 + a token per 100 of its transactions).
 */
const COST = {
  account: 1,
  transactions: 1,
  transactionEvents: 2,
  blockEvents: 2,
} as const;
const pageCost = (limit: number) => 1 + Math.ceil(limit / ROWS_PER_TOKEN);

const TXID = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d{1,19}$/;

type Params = Record<string, string>;
type Methods = Partial<Record<"GET", Handler>>;

/** A request as a route reads it: its path's params and its query. */
interface Asked {
  params: Params;
  query: URLSearchParams;
  url: URL;
}

interface TronGridRoute<I> {
  path: string;
  /** The request's params checked (a BadRequestError as TronGrid words it), and its cost. */
  input(asked: Asked): { input: I; cost: number };
  answer(input: I, charge: ChargeReads): Promise<TronGridPage>;
}

const route = <I>(spec: TronGridRoute<I>): TronGridRoute<unknown> => spec as TronGridRoute<unknown>;

/** A query parameter by its snake_case name or its camelCase one (TronGrid takes both). */
function param(query: URLSearchParams, name: string, ...aliases: string[]): string | undefined {
  for (const n of [name, ...aliases]) {
    const camel = n.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    const value = query.get(n) ?? query.get(camel);
    if (value !== null) return value;
  }
  return undefined;
}

function bool(query: URLSearchParams, name: string, fallback: boolean): boolean {
  const value = param(query, name)?.toLowerCase();
  if (value === undefined || value === "") return fallback;
  if (value === "true" || value === "false") return value === "true";
  throw new BadRequestError(`${name} must be true or false.`);
}

function milliseconds(query: URLSearchParams, name: string): bigint | undefined {
  const value = param(query, `${name.replace("_timestamp", "_block_timestamp")}`, name);
  if (value === undefined) return undefined;
  if (!DIGITS.test(value)) throw new BadRequestError(`${name} must be a timestamp in milliseconds.`);
  return BigInt(value);
}

/** What every paged route takes: confirmation, time, order, limit, fingerprint. */
function rangeOf(query: URLSearchParams): TronGridRange {
  const confirmed = bool(query, "only_confirmed", false);
  const unconfirmed = bool(query, "only_unconfirmed", false);
  if (confirmed && unconfirmed) {
    throw new BadRequestError("only_confirmed and only_unconfirmed cannot be both true.");
  }
  const limitText = param(query, "limit");
  const limit = limitText === undefined || limitText === "" ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT || !/^\d+$/.test(limitText ?? "20")) {
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LIMIT}.`);
  }
  const orderBy = (param(query, "order_by") ?? "block_timestamp,desc").replace(/\s/g, "");
  const order = /^(?:block_)?timestamp,(asc|desc)$/.exec(orderBy)?.[1] as "asc" | "desc" | undefined;
  if (order === undefined)
    throw new BadRequestError("order_by must be block_timestamp,desc or block_timestamp,asc.");
  const fingerprint = param(query, "fingerprint");
  return {
    confirmation: confirmed ? "confirmed" : unconfirmed ? "unconfirmed" : "any",
    minTimestamp: milliseconds(query, "min_timestamp"),
    maxTimestamp: milliseconds(query, "max_timestamp"),
    order,
    limit,
    fingerprint: fingerprint === "" ? undefined : fingerprint,
  };
}

/** only_from / only_to: TronGrid's filters are not exclusive (both is neither). */
function sideOf(query: URLSearchParams): TronGridSide {
  const to = bool(query, "only_to", false);
  const from = bool(query, "only_from", false);
  return to === from ? undefined : to ? "to" : "from";
}

function addressOf(value: string | undefined, addresses: AddressCodec, what: string): string {
  const address = value === undefined ? undefined : addresses.canonical(value);
  if (address === undefined) throw new BadRequestError(`A valid ${what} address is required.`);
  return address;
}

/** The routes, by their path under /v1. */
function tronGridRouteTable(source: TronGridSource, addresses: AddressCodec): TronGridRoute<unknown>[] {
  const account = (p: Params) => addressOf(p.address, addresses, "account");
  return [
    route({
      path: "/accounts/:address",
      input: ({ params, query }) => ({
        input: { address: account(params), confirmed: bool(query, "only_confirmed", false) },
        cost: COST.account,
      }),
      answer: async ({ address, confirmed }: { address: string; confirmed: boolean }) => {
        const found = await source.account(address, confirmed);
        return { rows: found === undefined ? [] : [found] };
      },
    }),
    route({
      path: "/accounts/:address/transactions",
      input: ({ params, query }) => ({
        input: {
          ...rangeOf(query),
          address: account(params),
          side: sideOf(query),
          searchInternal: bool(query, "search_internal", true),
        },
        cost: COST.transactions,
      }),
      answer: (q, charge) => source.accountTransactions(q as never, charge),
    }),
    route({
      path: "/accounts/:address/transactions/trc20",
      input: ({ params, query }) => {
        const range = rangeOf(query);
        const contract = param(query, "contract_address");
        return {
          input: {
            ...range,
            address: account(params),
            side: sideOf(query),
            contract: contract === undefined ? undefined : addressOf(contract, addresses, "contract"),
          },
          cost: pageCost(range.limit),
        };
      },
      answer: (q) => source.trc20Transfers(q as never),
    }),
    route({
      path: "/contracts/:address/events",
      input: ({ params, query }) => {
        const range = rangeOf(query);
        const block = param(query, "block_number");
        if (block !== undefined && !DIGITS.test(block))
          throw new BadRequestError("block_number must be a number.");
        return {
          input: {
            ...range,
            contract: addressOf(params.address, addresses, "contract"),
            eventName: param(query, "event_name") || undefined,
            blockNumber: block === undefined ? undefined : BigInt(block),
          },
          cost: pageCost(range.limit),
        };
      },
      answer: (q, charge) => source.contractEvents(q as never, charge),
    }),
    route({
      path: "/transactions/:id/events",
      input: ({ params, query }) => {
        if (!TXID.test(params.id ?? "")) throw new BadRequestError("A valid transaction id is required.");
        return {
          input: { txid: params.id!.toLowerCase(), confirmation: rangeOf(query).confirmation },
          cost: COST.transactionEvents,
        };
      },
      answer: (
        { txid, confirmation }: { txid: string; confirmation: TronGridRange["confirmation"] },
        charge,
      ) => source.transactionEvents(txid, confirmation, charge),
    }),
    route({
      path: "/blocks/:number/events",
      input: ({ params, query }) => {
        const which = params.number ?? "";
        if (which !== "latest" && !DIGITS.test(which))
          throw new BadRequestError("A valid block number is required.");
        const { confirmation, limit, fingerprint } = rangeOf(query);
        return {
          input: {
            block: which === "latest" ? ("latest" as const) : BigInt(which),
            page: { confirmation, limit, fingerprint },
          },
          cost: COST.blockEvents,
        };
      },
      answer: async (
        { block, page }: { block: bigint | "latest"; page: Parameters<TronGridSource["blockEvents"]>[1] },
        charge,
      ) => {
        const found = await source.blockEvents(block, page, charge);
        if (found === undefined) throw new NotFoundError("Block not found.");
        return found;
      },
    }),
  ];
}

/** The URL of the next page: this one's with the fingerprint, the key neither in its path nor its query. */
function nextLink(url: URL, fingerprint: string): string {
  const next = new URL(url);
  if (next.pathname.startsWith(TRON_PATH_KEY_PREFIX)) {
    next.pathname = next.pathname.slice(next.pathname.indexOf(V1, TRON_PATH_KEY_PREFIX.length));
  }
  next.searchParams.delete("api_key");
  next.searchParams.delete("fingerprint");
  next.searchParams.set("fingerprint", fingerprint);
  return next.toString();
}

/** TronGrid's envelope around a page's rows (JSON texts). */
function envelope(page: TronGridPage, url: URL): string {
  const meta: Record<string, unknown> = { at: Date.now(), page_size: page.rows.length };
  if (page.fingerprint !== undefined) {
    meta.fingerprint = page.fingerprint;
    meta.links = { next: nextLink(url, page.fingerprint) };
  }
  return `{"data":[${page.rows.join(",")}],"success":true,"meta":${JSON.stringify(meta)}}`;
}

/** What a path under /v1 without a route answers: TronGrid's 404. */
function unknownEndpoint(guard: Guard): Handler {
  return guard.route<undefined>({
    name: `${V1}/*`,
    transport: TRONGRID,
    body: false,
    accept: () => ({ input: undefined, cost: 1 }),
    run() {
      throw new NotFoundError("Not Found");
    },
  });
}

/** Bun's routes of the API: each path under /v1 and under /tron/key/:key/v1, and the unknown ones. */
export function tronGridRoutes(options: {
  source: TronGridSource;
  addresses: AddressCodec;
  guard: Guard;
}): Record<string, Methods> {
  const { guard } = options;
  const out: Record<string, Methods> = {};
  for (const spec of tronGridRouteTable(options.source, options.addresses)) {
    const handler = guard.route<{ input: unknown; url: URL }>({
      name: `${V1}${spec.path}`,
      transport: TRONGRID,
      body: false,
      accept(_body, _text, request) {
        const params = (request as (Request & { params?: Params }) | undefined)?.params ?? {};
        const url = new URL(request!.url);
        const { input, cost } = spec.input({ params, query: url.searchParams, url });
        return { input: { input, url }, cost };
      },
      async run({ input, url }, context) {
        const page = await spec.answer(input, (tokens) => context.charge(tokens));
        return new Response(envelope(page, url), {
          headers: { "content-type": "application/json", "x-request-id": context.requestId },
        });
      },
    });
    out[`${V1}${spec.path}`] = { GET: handler };
    out[`${KEYED_PREFIX}${spec.path}`] = { GET: handler };
  }
  const unknown = unknownEndpoint(guard);
  out[`${V1}/*`] = { GET: unknown };
  out[`${KEYED_PREFIX}/*`] = { GET: unknown };
  return out;
}
