/** The EVM's operations: its node methods (methods.ts) and its token operations (tokens.ts). */
import type { FamilyOperationDeps, FamilyOperations } from "../../operations/familyOperations";
import { createNodeOperations } from "./methods";
import { createTokenStore } from "./tokenStore";
import { createTokenOperations } from "./tokens";

export function evmOperations(deps: FamilyOperationDeps): FamilyOperations {
  const { node, head, chain, sql, guarded, defaultTokens } = deps;
  return {
    node: createNodeOperations({ node, head }),
    data: createTokenOperations({
      node,
      tokens: guarded(createTokenStore(sql), "all"),
      chain,
      defaultTokens,
    }),
  };
}
