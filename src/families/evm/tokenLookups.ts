/**
 * The metadata of the token contracts a group of blocks names, read before the group is written: a block's
 * results (its transfers' asset and decimals, its watch-filter results) are whole once it is in the index,
 * and do not change afterwards. Each contract is looked up once; a read that fails is tried again when the
 * token next appears.
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "../../log";
import { type NodeReader, readTokenMetadata } from "./tokenMetadata";
import type { TokenStore } from "./tokenStore";

/** Contracts remembered as looked up, so each group does not ask the database again. */
const SEEN_TOKENS = 100_000;
/** Token metadata reads running at once (each is four eth_calls, batched upstream). */
const TOKEN_LOOKUPS = 16;

export interface TokenLookups {
  /** Reads and stores the metadata of those contracts never looked up. */
  readNew(tokens: Iterable<string>): Promise<void>;
}

export function createTokenLookups(options: {
  engine: NodeReader;
  tokens: Pick<TokenStore, "unknown" | "upsert">;
  log: Logger;
}): TokenLookups {
  const { engine, tokens, log } = options;
  const seen = new LRUCache<string, true>({ max: SEEN_TOKENS });
  return {
    async readNew(list) {
      const fresh = [...list].filter((token) => !seen.has(token));
      if (fresh.length === 0) return;
      for (const token of fresh) seen.set(token, true);
      const unknown = await tokens.unknown(fresh);
      for (let i = 0; i < unknown.length; i += TOKEN_LOOKUPS) {
        await Promise.all(
          unknown.slice(i, i + TOKEN_LOOKUPS).map((token) =>
            readTokenMetadata(engine, token)
              .then((meta) => tokens.upsert(token, meta))
              .catch((error) => {
                seen.delete(token);
                log.debug("token metadata lookup failed", { token, error: (error as Error).message });
              }),
          ),
        );
      }
    },
  };
}
