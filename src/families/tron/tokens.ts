/**
 * TRON's token balances and metadata: the EVM family's `watch_getTokenBalances` / `get_token_balances` and
 * `watch_getTokenMetadata` / `get_token_metadata` (families/evm/tokens.ts) with this family's tokens. A token
 * is named as the transfers name it (transferShape.ts): a TRC-20 contract (any address form in, base58 out),
 * a TRC-10 asset id (decimal text), and for balances `"TRX"`. TRC-20 reads are `/wallet/triggerconstantcontract`
 * (tokenReads.ts); TRX (sun) and TRC-10 balances are the account's `balance` and `assetV2` from one
 * `/wallet/getaccount`, at the node's head as the EVM's `latest`. Balances are exact decimal text with the
 * token's decimals beside them (TRX 6; a TRC-10 asset's precision; a TRC-20's `decimals()`). Metadata is kept
 * in the index's token_metadata and trc10_assets (tokenStore.ts) and read again once a day old.
 */
import { type Static, Type as T } from "@sinclair/typebox";
import type { ChainInfo } from "../../blockchain";
import { ConfigError } from "../../config";
import { callText, type Engine } from "../../engine/engineApi";
import { rawText, rfc3339 } from "../../json";
import { defineOperation, type Operation } from "../../operations/operation";
import { Address, MAX_BALANCE_CONTRACTS, TokenAddress, TokenMetadataOut } from "../../schemas";
import { tronAddresses } from "./addresses";
import { readExact } from "./decode";
import { pathMethod } from "./httpApi";
import { readTrc10Asset, readTrc20Metadata, SELECTOR, triggerConstant } from "./tokenReads";
import type { IndexedToken, TronTokenStore } from "./tokenStore";

const TRX = "TRX";
const TRX_DECIMALS = 6;
/** Stored metadata older than this is read again from the node. */
const METADATA_MAX_AGE_MS = 86_400_000;
/** How many tokens DEFAULT_TOKENS names after TRX, and how long the computed list is kept. */
const DEFAULT_TOKEN_COUNT = 100;
const DEFAULT_TOKENS_REFRESH_MS = 10 * 60_000;
/** A TRC-10 asset id: java-tron's int64 token id, as decimal text. */
const ASSET_ID_PATTERN = "^[1-9][0-9]{0,18}$";
const ASSET_ID = new RegExp(ASSET_ID_PATTERN);
const WORD = /^[0-9a-fA-F]{64}$/;
const GET_ACCOUNT = pathMethod("wallet", "getaccount");

const AssetId = T.String({ pattern: ASSET_ID_PATTERN, description: "a TRC-10 asset id (decimal text)" });
const MetadataToken = T.Union([TokenAddress, AssetId], {
  description: "a TRC-20 contract (a TRON address) or a TRC-10 asset id (decimal text)",
});
const BalanceToken = T.Union([T.Literal(TRX), TokenAddress, AssetId], {
  description: '"TRX", a TRC-20 contract (a TRON address) or a TRC-10 asset id (decimal text)',
});
const BalanceTokens = T.Array(BalanceToken, {
  maxItems: MAX_BALANCE_CONTRACTS,
  description: `a list of at most ${MAX_BALANCE_CONTRACTS} tokens: "TRX", TRC-20 contracts or TRC-10 asset ids`,
});

const TronTokenBalance = T.Object(
  {
    contractAddress: T.String({ description: '"TRX", the TRC-20 contract (base58) or the TRC-10 asset id' }),
    tokenBalance: T.Union([
      T.String({ description: "exact decimal integer: sun, or the token's units" }),
      T.Null(),
    ]),
    decimals: T.Union([T.Integer(), T.Null()], {
      description: "TRX 6, a TRC-10 asset's precision, a TRC-20's decimals(); null where it has none",
    }),
    error: T.Union([T.Boolean(), T.Null()]),
  },
  { title: "TokenBalance" },
);
const TronTokenBalanceByAddress = T.Object(
  { address: T.String({ description: "base58check T..." }), tokenBalances: T.Array(TronTokenBalance) },
  { title: "TokenBalanceByAddress" },
);
/** The JSON-RPC result names the list `token_balances`; REST names it `tokenBalances` (as the EVM family's). */
const RpcTokenBalances = T.Object({ address: T.String(), token_balances: T.Array(TronTokenBalance) });

const Bodies = {
  tokenBalances: T.Object({ address: Address, list_contract_address: BalanceTokens }),
  tokenMetadata: T.Object({ token_address: MetadataToken }),
};

/** A token as asked about, in its canonical text (base58 for a contract) and the node's form. */
type Token =
  | { kind: "trx"; text: string }
  | { kind: "trc10"; text: string }
  | { kind: "trc20"; text: string; contract41: string };

/** The 41-hex a canonical (base58) address is to the node. */
const hex41 = (base58: string) => Buffer.from(tronAddresses.toBytes(base58)).toString("hex");

/** A valid token text's canonical form: base58 for a contract; undefined for no token text. */
function canonicalToken(text: string): string | undefined {
  if (text === TRX || ASSET_ID.test(text)) return text;
  return tronAddresses.canonical(text);
}

function tokenOf(canonical: string): Token {
  if (canonical === TRX) return { kind: "trx", text: canonical };
  if (ASSET_ID.test(canonical)) return { kind: "trc10", text: canonical };
  return { kind: "trc20", text: canonical, contract41: hex41(canonical) };
}

/** DEFAULT_TOKENS as tokens, canonical; a value that is none stops the start. */
export function tronDefaultTokensOf(configured: string[] | undefined): string[] | undefined {
  return configured?.map((text) => {
    const token = canonicalToken(text);
    if (token === undefined) {
      throw new ConfigError(
        `DEFAULT_TOKENS: expected comma-separated tokens ("TRX", TRC-20 contracts as TRON addresses, TRC-10 asset ids), got ${JSON.stringify(text)}`,
      );
    }
    return token;
  });
}

/** An account's TRX and TRC-10 holdings as getaccount answers (`{}`: no such account, nothing held). */
interface Holdings {
  trx: bigint;
  assets: Map<string, bigint>;
}

async function readHoldings(engine: Engine, address41: string): Promise<Holdings | undefined> {
  const answer = readExact<{
    Error?: unknown;
    balance?: number | string;
    assetV2?: { key?: unknown; value?: number | string }[];
  }>(await callText(engine, GET_ACCOUNT, [{ address: address41 }]));
  // java-tron's error form (HTTP 200 {"Error": ...}): no figure to give for this account.
  if (answer.Error !== undefined) return undefined;
  const assets = new Map<string, bigint>();
  for (const { key, value } of Array.isArray(answer.assetV2) ? answer.assetV2 : []) {
    if (typeof key === "string") assets.set(key, BigInt(value ?? 0));
  }
  return { trx: BigInt(answer.balance ?? 0), assets };
}

const balanceJson = (contract: string, balance: bigint | undefined, decimals: number | null) =>
  balance === undefined
    ? `{"contractAddress":"${contract}","tokenBalance":null,"decimals":${decimals},"error":true}`
    : `{"contractAddress":"${contract}","tokenBalance":"${balance}","decimals":${decimals},"error":null}`;

export function createTronTokenOperations(options: {
  engine: Engine;
  tokens: TronTokenStore;
  chain: ChainInfo;
  /** DEFAULT_TOKENS from the configuration; undefined: TRX and the most transferred tokens of the last day. */
  defaultTokens: string[] | undefined;
}): Operation[] {
  const { engine, tokens, chain } = options;
  const configured = tronDefaultTokensOf(options.defaultTokens);
  const reading = new Map<string, Promise<unknown>>();
  let defaults: { list: string[]; at: number } | undefined;
  let computing: Promise<string[]> | undefined;

  /** Stored, or read from the node (once at a time per token) when missing or a day old. */
  function fresh<S extends { updatedAt: Date }>(
    key: string,
    stored: () => Promise<S | undefined>,
    read: () => Promise<boolean>,
  ): Promise<S | undefined> {
    return stored().then((found) => {
      if (found && Date.now() - found.updatedAt.getTime() < METADATA_MAX_AGE_MS) return found;
      let pending = reading.get(key) as Promise<S | undefined> | undefined;
      if (!pending) {
        pending = read()
          .then((kept) => (kept ? stored() : undefined))
          .finally(() => reading.delete(key));
        reading.set(key, pending);
      }
      return pending;
    });
  }

  const trc20 = (contract41: string) =>
    fresh(
      `trc20:${contract41}`,
      () => tokens.trc20(contract41),
      async () => {
        await tokens.keepTrc20(contract41, await readTrc20Metadata(engine, contract41));
        return true;
      },
    );
  // An asset the node has not: nothing kept, null.
  const trc10 = (id: string) =>
    fresh(
      `trc10:${id}`,
      () => tokens.trc10(id),
      async () => {
        const asset = await readTrc10Asset(engine, id);
        if (asset) await tokens.keepTrc10(asset);
        return asset !== undefined;
      },
    );

  /** DEFAULT_TOKENS: configured, or TRX and those computed from the index, kept a while. */
  async function defaultTokens(): Promise<string[]> {
    if (configured) return configured;
    if (!(defaults && Date.now() - defaults.at < DEFAULT_TOKENS_REFRESH_MS) && !computing) {
      const text = (t: IndexedToken) =>
        t.kind === "trc10" ? t.id : tronAddresses.fromBytes(Buffer.from(t.contract41, "hex"));
      computing = tokens
        .mostTransferred(DEFAULT_TOKEN_COUNT)
        .then((list) => {
          defaults = { list: [TRX, ...list.map(text)], at: Date.now() };
          return defaults.list;
        })
        .finally(() => {
          computing = undefined;
        });
    }
    return defaults ? defaults.list : computing!;
  }

  async function balanceOf(token: Token, address41: string, holdings: Holdings | undefined): Promise<string> {
    switch (token.kind) {
      case "trx":
        return balanceJson(token.text, holdings?.trx, TRX_DECIMALS);
      case "trc10": {
        const asset = await trc10(token.text);
        const held = asset && holdings ? (holdings.assets.get(token.text) ?? 0n) : undefined;
        return balanceJson(token.text, held, asset?.precision ?? null);
      }
      case "trc20": {
        const [word, meta] = await Promise.all([
          triggerConstant(engine, token.contract41, SELECTOR.balanceOf, address41.slice(2).padStart(64, "0")),
          trc20(token.contract41),
        ]);
        const balance = word && WORD.test(word) ? BigInt(`0x${word}`) : undefined;
        return balanceJson(token.text, balance, meta?.decimals ?? null);
      }
    }
  }

  /** Each token's balance at the head, all asked at once; one getaccount for TRX and every TRC-10. */
  async function balances(address: string, list: Token[]): Promise<string> {
    const address41 = hex41(address);
    const holdings = list.some((t) => t.kind !== "trc20") ? await readHoldings(engine, address41) : undefined;
    const items = await Promise.all(list.map((token) => balanceOf(token, address41, holdings)));
    return `{"address":"${address}","token_balances":[${items.join(",")}]}`;
  }

  const canonical = (text: string) => canonicalToken(text)!;

  return [
    defineOperation({
      method: "watch_getTokenBalances",
      group: "Methods",
      summary:
        'Balances of an address, exact, with their decimals: "TRX" (sun), TRC-20 contracts (balanceOf) and TRC-10 asset ids, or the DEFAULT_TOKENS.',
      params: [
        { name: "address", schema: Address, normalize: (v: string) => tronAddresses.canonical(v) },
        {
          name: "contracts",
          schema: T.Union([BalanceTokens, T.Literal("DEFAULT_TOKENS")], {
            description: `${BalanceTokens.description}, or "DEFAULT_TOKENS"`,
          }),
          normalize: (v: string[] | "DEFAULT_TOKENS") => (Array.isArray(v) ? v.map(canonical) : v),
        },
      ],
      result: RpcTokenBalances,
      rest: {
        name: "get_token_balances",
        body: Bodies.tokenBalances,
        toParams: (b: Static<typeof Bodies.tokenBalances>) => [b.address, b.list_contract_address],
        response: TronTokenBalanceByAddress,
        // Our own text: the first member after the address is the list.
        toRest: (raw) => [rawText(raw).replace('"token_balances":', '"tokenBalances":')],
      },
      run: async ([address, contracts]) => {
        const list = contracts === "DEFAULT_TOKENS" ? await defaultTokens() : (contracts as string[]);
        return { raw: await balances(address as string, list.map(tokenOf)) };
      },
      // A node call per TRC-20 asked about (TRX and TRC-10 share one getaccount).
      cost: ([, contracts]) =>
        contracts === "DEFAULT_TOKENS"
          ? (configured?.length ?? DEFAULT_TOKEN_COUNT + 1)
          : Math.max(1, (contracts as string[]).length),
    }),
    defineOperation({
      method: "watch_getTokenMetadata",
      group: "Methods",
      summary:
        "Name, symbol and decimals of a TRC-20 contract or a TRC-10 asset (its abbreviation and precision); null when it is none.",
      params: [{ name: "token address", schema: MetadataToken, normalize: canonical }],
      result: T.Union([TokenMetadataOut, T.Null()]),
      rest: {
        name: "get_token_metadata",
        body: Bodies.tokenMetadata,
        toParams: (b: Static<typeof Bodies.tokenMetadata>) => [b.token_address],
        response: T.Union([TokenMetadataOut, T.Null()]),
      },
      run: async ([text]) => {
        const token = tokenOf(text as string);
        let out: [string | null, string | null, number, Date] | undefined;
        if (token.kind === "trc20") {
          const meta = await trc20(token.contract41);
          if (meta?.isToken) out = [meta.name, meta.symbol, meta.decimals!, meta.updatedAt];
        } else {
          const asset = await trc10(token.text);
          if (asset) out = [asset.name, asset.abbr, asset.precision, asset.updatedAt];
        }
        if (!out) return { raw: "null" };
        const [name, symbol, decimals, updatedAt] = out;
        return {
          raw: JSON.stringify({
            contractAddress: token.text,
            blockchain: chain.blockchain,
            tokenName: name ?? "",
            tokenSymbol: symbol ?? "",
            tokenDecimals: decimals,
            lastUpdate: rfc3339(updatedAt),
          }),
        };
      },
    }),
  ];
}
