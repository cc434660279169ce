/** The EVM's operations: its node methods (methods.ts) and its token operations (tokens.ts). */
import { ConfigError } from "../../config";
import { createRpcFilterStore } from "../../db/rpcFilterStore";
import type { FamilyOperationDeps, FamilyOperations } from "../../operations/familyOperations";
import { evmAddresses } from "./addresses";
import { createNodeOperations } from "./methods";
import { createRpcFilters } from "./rpcFilters";
import { createTokenStore } from "./tokenStore";
import { createTokenOperations } from "./tokens";

/** DEFAULT_TOKENS as token contracts, in their canonical form; a value that is none stops the start. */
export function defaultTokensOf(configured: string[] | undefined): string[] | undefined {
  return configured?.map((text) => {
    const contract = evmAddresses.canonical(text);
    if (contract === undefined) {
      throw new ConfigError(
        `DEFAULT_TOKENS: expected comma-separated token contract addresses (${evmAddresses.description}), got ${JSON.stringify(text)}`,
      );
    }
    return contract;
  });
}

export function evmOperations(deps: FamilyOperationDeps): FamilyOperations {
  const { engine, head, chain, sql, guarded, defaultTokens } = deps;
  // Reads and cursor-free writes are safe to repeat; add, advance and remove are not (db/rpcFilterStore.ts).
  const filters = createRpcFilters({
    store: guarded(createRpcFilterStore(sql), [
      "poll",
      "criteria",
      "sweep",
      "pendingAlive",
      "appendPending",
      "lastPendingSeq",
      "pendingSince",
      "keepBlockLogs",
      "blockLogs",
    ]),
    engine,
    head,
    upstreamSubscribe: deps.upstreamSubscribe,
    log: deps.log,
    ...deps.rpcFilters,
  });
  return {
    node: [...createNodeOperations({ engine, head }), ...filters.operations],
    stop: filters.stop,
    data: createTokenOperations({
      engine,
      tokens: guarded(createTokenStore(sql), "all"),
      chain,
      defaultTokens: defaultTokensOf(defaultTokens),
    }),
  };
}
