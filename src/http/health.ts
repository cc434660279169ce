/** GET /health and /health/ (DESIGN.md §3): always 200, `degraded` when a dependency is down. */
import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { parseQuantity } from "../chain/blockRef";
import type { ChainInfo } from "../chain/chains";
import { toJson } from "../json";
import { redactUrl } from "../upstream/http";
import type { UpstreamPool } from "../upstream/pool";

/** A health check must answer fast even when a dependency hangs. */
const CHECK_TIMEOUT_MS = 2_000;

export const HealthReport = T.Object({
  status: T.Union([T.Literal("ok"), T.Literal("degraded")]),
  chain: T.String({ description: "Blockchain code" }),
  chainId: T.String(),
  upstream: T.Object({
    status: T.Union([T.Literal("ok"), T.Literal("down")]),
    urls: T.Array(T.String()),
    headBlockNumber: T.Union([T.Integer(), T.Null()]),
    latencyMs: T.Union([T.Number(), T.Null()]),
    error: T.Optional(T.String()),
  }),
  database: T.Object({
    status: T.Union([T.Literal("ok"), T.Literal("down")]),
    embedded: T.Boolean(),
    latencyMs: T.Union([T.Number(), T.Null()]),
    error: T.Optional(T.String()),
  }),
  indexer: T.Object({
    lastBlockNumber: T.Union([T.Integer(), T.Null()]),
    headBlockNumber: T.Union([T.Integer(), T.Null()]),
    lag: T.Union([T.Integer(), T.Null()]),
  }),
});

export interface HealthDeps {
  chain: ChainInfo;
  upstream: UpstreamPool;
  database: { embedded: boolean; ping(): Promise<void> };
  /** The indexer's last processed block, once there is an indexer. */
  lastIndexedBlock?: () => number | null;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value?: T; ms: number; error?: string }> {
  const start = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const value = await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return { value, ms: Math.round((performance.now() - start) * 10) / 10 };
  } catch (error) {
    return { ms: Math.round(performance.now() - start), error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export function createHealth(deps: HealthDeps) {
  return {
    async report() {
      const [head, db] = await Promise.all([
        timed(async () =>
          Number(parseQuantity(JSON.parse(await deps.upstream.call("eth_blockNumber", [])) as string)),
        ),
        timed(() => deps.database.ping()),
      ]);
      const headBlockNumber = head.value ?? null;
      const lastBlockNumber = deps.lastIndexedBlock?.() ?? null;
      const upstreamOk = head.error === undefined;
      const databaseOk = db.error === undefined;
      return {
        status: upstreamOk && databaseOk ? "ok" : "degraded",
        chain: deps.chain.blockchain,
        chainId: deps.chain.chainId.toString(),
        upstream: {
          status: upstreamOk ? "ok" : "down",
          urls: deps.upstream.urls.map(redactUrl),
          headBlockNumber,
          latencyMs: upstreamOk ? head.ms : null,
          ...(head.error ? { error: head.error } : {}),
        },
        database: {
          status: databaseOk ? "ok" : "down",
          embedded: deps.database.embedded,
          latencyMs: databaseOk ? db.ms : null,
          ...(db.error ? { error: db.error } : {}),
        },
        indexer: {
          lastBlockNumber,
          headBlockNumber,
          lag:
            lastBlockNumber !== null && headBlockNumber !== null ? headBlockNumber - lastBlockNumber : null,
        },
      };
    },
  };
}

export type Health = ReturnType<typeof createHealth>;

export function healthRoutes(health: Health) {
  const handler = async () =>
    new Response(toJson(await health.report()), { headers: { "content-type": "application/json" } });
  return new Elysia({ name: "health" }).get("/health", handler).get("/health/", handler);
}
