/** Token balances and metadata (DESIGN.md §3). */
import { Type as T } from "@sinclair/typebox";
import { NotAvailableError } from "../errors";
import { defineOperation, type Operation } from "./operation";
import { Address, Bodies, TokenBalance, TokenBalanceByAddress, TokenMetadataOut } from "./schemas";

const lower = (v: string) => v.toLowerCase();

/** The JSON-RPC result names the list `token_balances` (SPEC.md §4.2). */
const RpcTokenBalances = T.Object({ address: T.String(), token_balances: T.Array(TokenBalance) });

export function createTokenOperations(): Operation[] {
  const notYet = (method: string) => async () => {
    throw new NotAvailableError(method);
  };
  return [
    defineOperation({
      method: "watch_getTokenBalances",
      group: "Methods",
      summary: "balanceOf of an address at each given token contract, or at the DEFAULT_TOKENS.",
      params: [
        { name: "address", schema: Address, normalize: lower },
        {
          name: "contracts",
          schema: T.Union([T.Array(Address), T.Literal("DEFAULT_TOKENS")], {
            description: 'a list of token contract addresses, or "DEFAULT_TOKENS"',
          }),
        },
      ],
      result: RpcTokenBalances,
      rest: {
        name: "get_token_balances",
        body: Bodies.tokenBalances,
        toParams: (b) => [b.address, b.list_contract_address],
        response: TokenBalanceByAddress,
      },
      run: notYet("watch_getTokenBalances"),
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
      run: notYet("watch_getTokenMetadata"),
    }),
  ];
}
