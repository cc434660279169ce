/**
 * The planner's statistics of `transactions` kept as the index grows (sql/utxo/017: an outpoint is found
 * through its transaction's txid, by the writers as by the read side). The index by txid is not unique (BIP
 * 30), so without statistics PostgreSQL takes each txid for one of 200 distinct values: a join of a group's
 * outpoints looked like a fifth of the table, and it hashed every output instead of probing the index
 * (measured on the bench's bulk load: 47.8 s for the load against 15). The lookups by outpoint now probe
 * whatever the statistics (indexedOutputs.ts), but their costs (a plan past `jit_above_cost` is compiled
 * first) and every other query by txid still follow them. Autovacuum analyzes a table a minute at best,
 * after a tenth of it changed: a backfill from an empty index outgrows that. So the writers ANALYZE it
 * themselves each time the rows written since the last one reach what the table held then (at least
 * ANALYZE_MIN_ROWS): a few dozen times over a mainnet's history, a sample of 30,000 rows each (tens of
 * milliseconds).
 */
import type { Sql } from "../../db/database";

/** Transactions written before the first ANALYZE: until then the table is small enough for any plan. */
export const ANALYZE_MIN_ROWS = 10_000;

export interface PlannerStatistics {
  /** `rows` transactions were committed: ANALYZE now if they doubled what the last ANALYZE saw. */
  written(rows: number): Promise<void>;
}

export function createPlannerStatistics(sql: Sql): PlannerStatistics {
  /** The rows the last ANALYZE saw (read from pg_class once: -1 where never analyzed). */
  let analyzed: number | undefined;
  let since = 0;
  return {
    async written(rows) {
      if (analyzed === undefined) {
        const [row] =
          await sql`select reltuples::float8 as n from pg_class where oid = 'transactions'::regclass`;
        analyzed = Math.max(0, Number(row?.n ?? 0));
      }
      since += rows;
      if (since < Math.max(ANALYZE_MIN_ROWS, analyzed)) return;
      // A failed ANALYZE costs plans, never answers: the next write tries again.
      const done = await sql`analyze transactions`.then(
        () => true,
        () => false,
      );
      if (!done) return;
      analyzed += since;
      since = 0;
    },
  };
}
