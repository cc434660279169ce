/** Token balances and metadata (docs/interface.md §4). */
import { Type as T } from "@sinclair/typebox";
import type { ChainInfo } from "../../blockchain";
import { callText, type Engine } from "../../engine/engineApi";
import { NodeError } from "../../errors";
import { rawText, rfc3339 } from "../../json";
import { defineOperation, type Operation } from "../../operations/operation";
import {
  Address,
  Bodies,
  MAX_BALANCE_CONTRACTS,
  TokenBalance,
  TokenBalanceByAddress,
  TokenMetadataOut,
} from "../../schemas";
import { readTokenMetadata } from "./tokenMetadata";
import type { StoredTokenMetadata, TokenStore } from "./tokenStore";

/** Stored metadata older than this is read again from the contract. */
const METADATA_MAX_AGE_MS = 86_400_000;
/** How many tokens DEFAULT_TOKENS names, and how long the computed list is kept. */
const DEFAULT_TOKEN_COUNT = 100;
const DEFAULT_TOKENS_REFRESH_MS = 10 * 60_000;
const BALANCE_OF = "0x70a08231";
const WORD = /^0x[0-9a-fA-F]{64}$/;

const lower = (v: string) => v.toLowerCase();

/** The JSON-RPC result names the list `token_balances`; REST names it `tokenBalances` (docs/interface.md §2). */
const RpcTokenBalances = T.Object({ address: T.String(), token_balances: T.Array(TokenBalance) });

export function createTokenOperations(options: {
  engine: Engine;
  tokens: TokenStore;
  chain: ChainInfo;
  /** DEFAULT_TOKENS from the configuration; undefined: the most transferred tokens of the last day. */
  defaultTokens: string[] | undefined;
}): Operation[] {
  const { engine, tokens, chain } = options;
  const reading = new Map<string, Promise<StoredTokenMetadata>>();
  let defaults: { list: string[]; at: number } | undefined;
  let computing: Promise<string[]> | undefined;

  /** Stored metadata, read again from the contract once a day old; one read per token at a time. */
  async function metadata(address: string): Promise<StoredTokenMetadata> {
    const stored = await tokens.get(address);
    if (stored && Date.now() - stored.updatedAt.getTime() < METADATA_MAX_AGE_MS) return stored;
    let read = reading.get(address);
    if (!read) {
      read = readTokenMetadata(engine, address)
        .then(async (meta) => {
          await tokens.upsert(address, meta);
          return (await tokens.get(address))!;
        })
        .finally(() => reading.delete(address));
      reading.set(address, read);
    }
    return read;
  }

  /** DEFAULT_TOKENS: configured, or computed from the index and kept a while (recomputed in the background). */
  async function defaultTokens(): Promise<string[]> {
    if (options.defaultTokens) return options.defaultTokens;
    const fresh = defaults && Date.now() - defaults.at < DEFAULT_TOKENS_REFRESH_MS;
    if (!fresh && !computing) {
      computing = tokens
        .mostTransferred(DEFAULT_TOKEN_COUNT)
        .then((list) => {
          defaults = { list, at: Date.now() };
          return list;
        })
        .finally(() => {
          computing = undefined;
        });
    }
    return defaults ? defaults.list : computing!;
  }

  /** balanceOf at the head for each contract, all at once (the engine batches them). */
  async function balances(address: string, contracts: string[]): Promise<string> {
    const data = `${BALANCE_OF}${address.slice(2).padStart(64, "0")}`;
    const items = await Promise.all(
      contracts.map(async (contract) => {
        let balance: string | undefined;
        try {
          const result = JSON.parse(await callText(engine, "eth_call", [{ to: contract, data }, "latest"]));
          if (typeof result === "string" && WORD.test(result)) balance = result.toLowerCase();
        } catch (error) {
          // The contract reverted: its failure. No answer at all is the service's, and is reported as such.
          if (!(error instanceof NodeError)) throw error;
        }
        return balance === undefined
          ? `{"contractAddress":"${contract}","tokenBalance":null,"error":true}`
          : `{"contractAddress":"${contract}","tokenBalance":"${balance}","error":null}`;
      }),
    );
    return `{"address":"${address}","token_balances":[${items.join(",")}]}`;
  }

  return [
    defineOperation({
      method: "watch_getTokenBalances",
      group: "Methods",
      summary: "balanceOf of an address at each given token contract, or at the DEFAULT_TOKENS.",
      params: [
        { name: "address", schema: Address, normalize: lower },
        {
          name: "contracts",
          schema: T.Union(
            [T.Array(Address, { maxItems: MAX_BALANCE_CONTRACTS }), T.Literal("DEFAULT_TOKENS")],
            {
              description: `a list of at most ${MAX_BALANCE_CONTRACTS} token contract addresses, or "DEFAULT_TOKENS"`,
            },
          ),
          normalize: (v: string[] | "DEFAULT_TOKENS") => (Array.isArray(v) ? v.map(lower) : v),
        },
      ],
      result: RpcTokenBalances,
      rest: {
        name: "get_token_balances",
        body: Bodies.tokenBalances,
        toParams: (b) => [b.address, b.list_contract_address],
        response: TokenBalanceByAddress,
        // Our own text: the first member after the address is the list.
        toRest: (raw) => [rawText(raw).replace('"token_balances":', '"tokenBalances":')],
      },
      run: async ([address, contracts]) => {
        const list = contracts === "DEFAULT_TOKENS" ? await defaultTokens() : (contracts as string[]);
        return { raw: await balances(address as string, list) };
      },
      // One token per contract asked about: 1,000 balances are 1,000 eth_calls.
      cost: ([, contracts]) =>
        contracts === "DEFAULT_TOKENS"
          ? (options.defaultTokens?.length ?? DEFAULT_TOKEN_COUNT)
          : Math.max(1, (contracts as string[]).length),
    }),
    defineOperation({
      method: "watch_getTokenMetadata",
      group: "Methods",
      summary: "Name, symbol and decimals of a token contract; null when it is not a token.",
      params: [{ name: "token address", schema: Address, normalize: lower }],
      result: T.Union([TokenMetadataOut, T.Null()]),
      rest: {
        name: "get_token_metadata",
        body: Bodies.tokenMetadata,
        toParams: (b) => [b.token_address],
        response: T.Union([TokenMetadataOut, T.Null()]),
      },
      run: async ([address]) => {
        const meta = await metadata(address as string);
        if (!meta.isToken) return { raw: "null" };
        return {
          raw: JSON.stringify({
            contractAddress: meta.address,
            blockchain: chain.blockchain,
            tokenName: meta.name ?? "",
            tokenSymbol: meta.symbol ?? "",
            tokenDecimals: meta.decimals,
            lastUpdate: rfc3339(meta.updatedAt),
          }),
        };
      },
    }),
  ];
}
