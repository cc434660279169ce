/**
 * TRON's token reads through the engine: a TRC-20's `name`/`symbol`/`decimals`/`balanceOf` by
 * `/wallet/triggerconstantcontract` (the zero address as caller: a constant call needs none of its own),
 * a TRC-10 asset by `/wallet/getassetissuebyid`, and the metadata of the tokens a group of blocks names,
 * read and kept (token_metadata, trc10_assets) before the group is written, so a block's rows are whole once
 * it is in the index. Each contract or asset is looked up once; a failed read is tried again when it next
 * appears.
 */
import { LRUCache } from "lru-cache";
import type { Sql } from "../../db/database";
import { callText, type Engine } from "../../engine/engineApi";
import type { Logger } from "../../log";
import { decodeText } from "../evm/tokenMetadata";
import { readExact } from "./decode";
import { isNodeRefusal, pathMethod } from "./httpApi";

const ZERO_CALLER = `41${"0".repeat(40)}`;
/** Contracts and assets remembered as looked up, so each group does not ask the database again. */
const SEEN_TOKENS = 100_000;
/** Lookups running at once (each a few calls through the engine). */
const TOKEN_LOOKUPS = 16;
const MAX_DECIMALS = 255n;

export const SELECTOR = {
  name: "name()",
  symbol: "symbol()",
  decimals: "decimals()",
  balanceOf: "balanceOf(address)",
};

export interface Trc20Metadata {
  isToken: boolean;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}
export interface Trc10Asset {
  id: string;
  name: string | null;
  abbr: string | null;
  precision: number;
  owner: string | null;
}

interface ConstantAnswer {
  result?: { result?: boolean; code?: string; message?: string };
  constant_result?: string[];
}

/**
 * A constant call's return data (hex, no 0x); null where the contract refuses it (a revert, no such
 * contract). A node that does not answer throws: that is no "no".
 */
export async function triggerConstant(
  engine: Engine,
  contract41: string,
  selector: string,
  parameter = "",
): Promise<string | null> {
  const raw = await callText(engine, pathMethod("wallet", "triggerconstantcontract"), [
    { contract_address: contract41, function_selector: selector, owner_address: ZERO_CALLER, parameter },
  ]);
  if (isNodeRefusal(raw)) return null;
  const answer = JSON.parse(raw) as ConstantAnswer;
  const out = answer.constant_result?.[0];
  if (answer.result?.result !== true || answer.result.message !== undefined || !out) return null;
  return out;
}

export async function readTrc20Metadata(engine: Engine, contract41: string): Promise<Trc20Metadata> {
  const [name, symbol, decimals] = await Promise.all(
    [SELECTOR.name, SELECTOR.symbol, SELECTOR.decimals].map((s) => triggerConstant(engine, contract41, s)),
  );
  const decimalsValue = decimals?.length === 64 ? BigInt(`0x${decimals}`) : null;
  const valid = decimalsValue !== null && decimalsValue <= MAX_DECIMALS ? Number(decimalsValue) : null;
  const text = (hex: string | null | undefined) => (hex ? decodeText(`0x${hex}`) : null);
  return { isToken: valid !== null, name: text(name), symbol: text(symbol), decimals: valid };
}

/** The node's text of a bytes member (hex where `visible` is false), as UTF-8; null where empty. */
const bytesText = (value: unknown) =>
  typeof value === "string" && /^(?:[0-9a-fA-F]{2})+$/.test(value)
    ? Buffer.from(value, "hex").toString("utf8").replaceAll("\0", "")
    : null;

/** A TRC-10 asset as getassetissuebyid answers; undefined where the node has none. */
export async function readTrc10Asset(engine: Engine, id: string): Promise<Trc10Asset | undefined> {
  const raw = await callText(engine, pathMethod("wallet", "getassetissuebyid"), [{ value: id }]);
  if (isNodeRefusal(raw)) return undefined;
  const a = readExact<Record<string, unknown>>(raw);
  const owner = typeof a.owner_address === "string" ? a.owner_address.toLowerCase() : null;
  return {
    id,
    name: bytesText(a.name),
    abbr: bytesText(a.abbr),
    precision: typeof a.precision === "number" ? a.precision : 0,
    owner: owner && /^41[0-9a-f]{40}$/.test(owner) ? owner : null,
  };
}

/** Keeps a TRC-20's metadata as just read (token_metadata; the token operations read it: tokens.ts). */
export async function keepTrc20Metadata(sql: Sql, contract41: string, m: Trc20Metadata): Promise<void> {
  await sql`insert into token_metadata (address, is_token, name, symbol, decimals)
    values (decode(${contract41}, 'hex'), ${m.isToken}, ${m.name}, ${m.symbol}, ${m.decimals})
    on conflict (address) do update set is_token = excluded.is_token, name = excluded.name,
      symbol = excluded.symbol, decimals = excluded.decimals, updated_at = now()`;
}

/** Keeps a TRC-10 asset as just read (trc10_assets). */
export async function keepTrc10Asset(sql: Sql, a: Trc10Asset): Promise<void> {
  await sql`insert into trc10_assets (id, name, abbr, precision, owner_address)
    values (${a.id}, ${a.name}, ${a.abbr}, ${a.precision}, decode(${a.owner}, 'hex'))
    on conflict (id) do update set name = excluded.name, abbr = excluded.abbr,
      precision = excluded.precision, owner_address = excluded.owner_address, updated_at = now()`;
}

export interface TronTokenLookups {
  /** Reads and keeps the metadata of the contracts and assets never looked up. */
  readNew(tokens: Iterable<string>, assets: Iterable<string>): Promise<void>;
}

/** Runs `each` over `items`, TOKEN_LOOKUPS at a time. */
async function inBatches(items: string[], each: (item: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += TOKEN_LOOKUPS) {
    await Promise.all(items.slice(i, i + TOKEN_LOOKUPS).map(each));
  }
}

export function createTronTokenLookups(options: { sql: Sql; engine: Engine; log: Logger }): TronTokenLookups {
  const { sql, engine, log } = options;
  const seen = new LRUCache<string, true>({ max: SEEN_TOKENS });
  const fresh = (list: Iterable<string>, kind: string) =>
    [...list]
      .filter((item) => !seen.has(`${kind}:${item}`))
      .map((item) => {
        seen.set(`${kind}:${item}`, true);
        return item;
      });
  const failed = (kind: string, item: string) => (error: unknown) => {
    seen.delete(`${kind}:${item}`);
    log.debug("token metadata lookup failed", { token: item, error: (error as Error).message });
  };

  async function contracts(list: string[]): Promise<void> {
    if (list.length === 0) return;
    const unknown = (
      await sql`select a from unnest(${list}::text[]) a
        where not exists (select 1 from token_metadata m where m.address = decode(a, 'hex'))`
    ).map((r) => r.a as string);
    await inBatches(unknown, (contract) =>
      readTrc20Metadata(engine, contract)
        .then((m) => keepTrc20Metadata(sql, contract, m))
        .catch(failed("trc20", contract)),
    );
  }

  async function assets(list: string[]): Promise<void> {
    if (list.length === 0) return;
    const unknown = (
      await sql`select a from unnest(${list}::text[]) a where not exists (select 1 from trc10_assets t where t.id = a)`
    ).map((r) => r.a as string);
    await inBatches(unknown, (id) =>
      readTrc10Asset(engine, id)
        .then(async (a) => {
          if (a === undefined) throw new Error(`the node has no TRC-10 asset ${id}`);
          await keepTrc10Asset(sql, a);
        })
        .catch(failed("trc10", id)),
    );
  }

  return {
    async readNew(tokens, assetIds) {
      await Promise.all([contracts(fresh(tokens, "trc20")), assets(fresh(assetIds, "trc10"))]);
    },
  };
}
