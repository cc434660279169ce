/**
 * GET /health and /health/ (docs/interface.md §10): always 200, `degraded` when no upstream is in rotation
 * or the database does not answer. Upstream state comes from the pool's own polls, so health never loads
 * nodes.
 */
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { ChainInfo } from "../blockchain";
import type { DiskTier } from "../cache/disk";
import type { MemoryTier } from "../cache/memory";
import type { ChainFollower } from "../engine/chainFollower";
import { toJson } from "../json";
import type { Logger } from "../log";
import { withTimeout } from "../timeout";
import type { UpstreamPool } from "../upstream/pool";

/** A health check must answer fast even when a dependency hangs. */
const CHECK_TIMEOUT_MS = 2_000;

const Nullable = <S extends ReturnType<typeof T.Integer>>(s: S) => T.Union([s, T.Null()]);

const WorkerSlot = T.Object({
  index: T.Integer(),
  pid: Nullable(T.Integer()),
  state: T.Union([T.Literal("starting"), T.Literal("up"), T.Literal("down")]),
  restarts: T.Integer({ description: "times its process was replaced after it died" }),
  since: T.String({ description: "when it entered its state (ISO 8601)" }),
});

const IndexerSection = T.Object({
  lastBlockNumber: Nullable(T.Integer()),
  headBlockNumber: Nullable(T.Integer()),
  lag: Nullable(T.Integer()),
  leading: T.Boolean({ description: "this instance writes the index (others on the database serve it)" }),
});

export const HealthReport = T.Object({
  status: T.Union([T.Literal("ok"), T.Literal("degraded")]),
  chain: T.String({ description: "Blockchain code" }),
  chainId: T.String(),
  upstream: T.Object({
    status: T.Union([T.Literal("ok"), T.Literal("down")]),
    headBlockNumber: Nullable(T.Integer()),
    upstreams: T.Array(
      T.Object({
        name: T.String(),
        url: T.String({ description: "scheme and host only" }),
        state: T.Union([T.Literal("closed"), T.Literal("open")], {
          description: "circuit: closed is in rotation",
        }),
        headBlockNumber: Nullable(T.Integer()),
        batchLimit: T.Integer(),
        pushing: T.Boolean({
          description:
            "its new heads are pushed now: a live WebSocket subscription, or a long-poll held open",
        }),
      }),
    ),
  }),
  database: T.Object({
    status: T.Union([T.Literal("ok"), T.Literal("down")]),
    embedded: T.Boolean(),
    schema: T.String({
      description: "the schema this chain's tables are in (several chains may share a database)",
    }),
    latencyMs: T.Union([T.Number(), T.Null()]),
    error: T.Optional(T.Union([T.Literal("timeout"), T.Literal("unreachable")])),
  }),
  head: T.Object({
    number: Nullable(T.Integer()),
    hash: T.Union([T.String(), T.Null()]),
    finalized: Nullable(T.Integer()),
    nodeFinal: T.Union(
      [
        T.Object({
          tag: T.String({ description: "EVM: finalized; TRON: solidified (/walletsolidity/getnowblock)" }),
          number: Nullable(T.Integer()),
        }),
        T.Null(),
      ],
      {
        description:
          "the block the nodes name final by their tag (null where they name none: finality is counted in blocks); `finalized` is never above it",
      },
    ),
  }),
  cache: T.Object({
    memory: T.Object({ bytes: T.Integer(), entries: T.Integer() }),
    disk: T.Union([
      T.Object({ usedBytes: T.Integer(), fileBytes: T.Integer(), entries: T.Integer() }),
      T.Null(),
    ]),
  }),
  indexer: IndexerSection,
  workers: T.Optional(
    T.Object(
      {
        self: T.Integer({ description: "the worker that answered (the rest of this report is its own)" }),
        pool: T.Array(WorkerSlot),
      },
      { description: "present when WORKERS > 1: the pool of HTTP workers sharing the port" },
    ),
  ),
});

/** The report of an instance whose chain family keeps no index: no indexer, so no lag to report. */
const HealthReportWithoutIndex = T.Object({
  ...HealthReport.properties,
  indexer: T.Null({ description: "null: this chain's family keeps no index (no indexer runs, no lag)" }),
});

/** A worker pool's state, as its primary last told the worker that answers. */
export interface PoolView {
  readonly index: number;
  workers(): Static<typeof WorkerSlot>[];
}

export interface HealthDeps {
  chain: ChainInfo;
  /** The tag the family's nodes name their final block by (FinalityTags.finalized); none: counted in blocks. */
  finalityTag?: string;
  pool: UpstreamPool;
  head: ChainFollower;
  memory: MemoryTier;
  disk?: DiskTier;
  database: { embedded: boolean; schema: string; ping(): Promise<void> };
  /** Undefined where the chain's family keeps no index. */
  indexer?: { readonly lastBlock: bigint | null; readonly leading: boolean };
  workers?: PoolView;
  log: Logger;
}

class CheckTimeout extends Error {}

const numberOrNull = (n: bigint | undefined) => (n === undefined ? null : Number(n));

/**
 * A dependency's check, timed. Anyone may read /health: the failure is named only as "timeout" or
 * "unreachable", its details (hosts, users, server messages) go to the log.
 */
async function timed(
  work: () => Promise<void>,
  log: Logger,
): Promise<{ ms: number; error?: "timeout" | "unreachable" }> {
  const start = performance.now();
  try {
    await withTimeout(work(), CHECK_TIMEOUT_MS, () => new CheckTimeout());
    return { ms: Math.round((performance.now() - start) * 10) / 10 };
  } catch (error) {
    const timeout = error instanceof CheckTimeout;
    if (!timeout) log.debug("health: database check failed", { error });
    return { ms: Math.round(performance.now() - start), error: timeout ? "timeout" : "unreachable" };
  }
}

/** GET /health's body: `indexer` is null where the chain's family keeps no index. */
export type HealthBody = Omit<Static<typeof HealthReport>, "indexer"> & {
  indexer: Static<typeof IndexerSection> | null;
};

export interface Health {
  report(): Promise<HealthBody>;
  /** The report's schema, for the API docs (with an indexer section or without). */
  readonly schema: TSchema;
}

/** The indexer's section of the report: where it is, and how far behind the upstreams' head. */
function indexerSection(
  indexer: NonNullable<HealthDeps["indexer"]>,
  headBlockNumber: number | null,
): Static<typeof IndexerSection> {
  const last = indexer.lastBlock;
  const lastBlockNumber = last === null ? null : Number(last);
  return {
    lastBlockNumber,
    headBlockNumber,
    lag: lastBlockNumber !== null && headBlockNumber !== null ? headBlockNumber - lastBlockNumber : null,
    leading: indexer.leading,
  };
}

export function createHealth(deps: HealthDeps): Health {
  return {
    schema: deps.indexer ? HealthReport : HealthReportWithoutIndex,
    async report() {
      const db = await timed(() => deps.database.ping(), deps.log);
      const head = deps.pool.head();
      const headBlockNumber = head ? Number(head.number) : null;
      const upstreamOk = deps.pool.upstreams.some((u) => u.state === "closed");
      const databaseOk = db.error === undefined;
      return {
        status: upstreamOk && databaseOk ? "ok" : "degraded",
        chain: deps.chain.blockchain,
        chainId: deps.chain.chainId.toString(),
        upstream: {
          status: upstreamOk ? "ok" : "down",
          headBlockNumber,
          upstreams: deps.pool.upstreams.map((u) => ({
            name: u.name,
            url: u.redactedUrl,
            state: u.state,
            headBlockNumber: u.head === null ? null : Number(u.head),
            batchLimit: u.batchLimit,
            pushing: u.pushing,
          })),
        },
        database: {
          status: databaseOk ? "ok" : "down",
          embedded: deps.database.embedded,
          schema: deps.database.schema,
          latencyMs: databaseOk ? db.ms : null,
          ...(db.error ? { error: db.error } : {}),
        },
        head: {
          number: deps.head.headBlock() ? Number(deps.head.headBlock()!.number) : null,
          hash: deps.head.headBlock()?.hash ?? null,
          finalized: deps.head.finalized() === undefined ? null : Number(deps.head.finalized()),
          nodeFinal: deps.finalityTag
            ? { tag: deps.finalityTag, number: numberOrNull(deps.head.nodeFinalized()) }
            : null,
        },
        cache: {
          memory: { bytes: deps.memory.bytes, entries: deps.memory.entries },
          disk: deps.disk ? deps.disk.usage() : null,
        },
        indexer: deps.indexer ? indexerSection(deps.indexer, headBlockNumber) : null,
        ...(deps.workers ? { workers: { self: deps.workers.index, pool: deps.workers.workers() } } : {}),
      };
    },
  };
}

export function healthRoutes(health: Health) {
  const handler = async () =>
    new Response(toJson(await health.report()), { headers: { "content-type": "application/json" } });
  return new Elysia({ name: "health" }).get("/health", handler).get("/health/", handler);
}
