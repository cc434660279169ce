/**
 * What answers callers and writes the index, on top of the engine: the operation table (the family's node
 * and data operations, and the shared transfers and daily figures), watch filters, subscriptions and the
 * indexer. Everything requests read or write in the database goes through its guard (db/guardDatabase.ts):
 * failures become 503/504, never 500, and calls safe to repeat are tried again once.
 *
 * The indexer, the shared data operations (they read the index) and the watch filters (they match blocks
 * of it) are built only for a family that keeps an index; without one the instance serves its node
 * methods, and refuses the rest naming its chain (compose/unserved.ts).
 */
import type { ChainInfo } from "../blockchain";
import type { Cache } from "../cache/cache";
import { MIB } from "../config";
import { createBlockQueries } from "../db/blockQueries";
import type { Database } from "../db/database";
import { createFilterStore } from "../db/filterStore";
import { guardDatabase } from "../db/guardDatabase";
import type { ChainFollower } from "../engine/chainFollower";
import { createEngine } from "../engine/engine";
import type { Engine } from "../engine/engineApi";
import { type Indexer, startIndexer } from "../indexer/indexer";
import type { EsploraSource } from "../operations/esploraSource";
import type { FamilyOperations, Guarded } from "../operations/familyOperations";
import { createStatsOperations } from "../operations/stats";
import { createOperationTable, type OperationTable } from "../operations/table";
import { createTransferOperations } from "../operations/transfers";
import type { TronGridSource } from "../operations/tronGridSource";
import { createSubscriptions, type Subscriptions } from "../realtime/subscriptions";
import type { PendingWatch } from "../realtime/watchFiltersSubscription";
import type { UpstreamPool } from "../upstream/pool";
import { createWatchFilters, type WatchFilters } from "../watch/watchFilters";
import { chainAddresses } from "./chain";
import { databaseEvents, indexerEvents, rpcFilterEvents, subscriptionEvents } from "./metricEvents";
import type { StartContext } from "./startContext";
import { unservedSubscription } from "./unserved";

export interface DataPath {
  engine: Engine;
  table: OperationTable;
  /** Undefined where the family keeps no index (or no watch matcher). */
  watch?: WatchFilters;
  subscriptions: Subscriptions;
  /** Undefined where the family keeps no index. */
  indexer?: Indexer;
  /** What the Esplora API reads (http/esplora/); undefined where the family serves none. */
  esplora?: EsploraSource;
  /** What TronGrid's v1 API reads (http/tronGrid/); undefined where the family serves none. */
  tronGrid?: TronGridSource;
  /** The family's mempool matching (`"pending": true`), where it has one: the subscriptions' and webhooks'. */
  pending?: PendingWatch;
  /** Adds what else learns of an index write (the webhooks' producer). */
  onProcessed(listener: () => void): void;
  /**
   * Resolves once the family's mempool follower has read the node's mempool once (bounded: a pass), so that
   * a start in front of a small mempool answers it from the first request; at once where there is none.
   */
  ready: Promise<void>;
}

/** A family with no operations of its own. */
const NO_OPERATIONS: FamilyOperations = { node: [], data: [] };

export interface DataPathParts {
  pool: UpstreamPool;
  head: ChainFollower;
  chain: ChainInfo;
  cache: Cache | undefined;
  database: Database;
  headPollMs: number;
}

function operationTable(ctx: StartContext, parts: DataPathParts, engine: Engine, guarded: Guarded) {
  const { config, log, family, metrics, lifetime } = ctx;
  const { pool, head, chain, database } = parts;
  const blocks = guarded(createBlockQueries(database.sql), "all");
  // The callers' reads of the index go to DATABASE_READ_URL when set (a replica).
  const readBlocks =
    database.read === database.sql ? blocks : guarded(createBlockQueries(database.read), "all");
  const own =
    family.operations?.({
      engine,
      head,
      chain,
      sql: database.sql,
      guarded,
      defaultTokens: config.defaultTokens,
      upstreamSubscribe: (params, onItem) => pool.subscribe(params, onItem),
      rpcFilters: {
        timeoutMs: config.rpcFilterTimeoutMs,
        maxPerKey: config.rpcFiltersPerKey,
        events: rpcFilterEvents(metrics),
      },
      log,
    }) ?? NO_OPERATIONS;
  if (own.stop) lifetime.defer(own.stop);
  // The shared data operations read the index: a family without one has none of them.
  const transfers =
    family.index && family.createTransferQueries
      ? createTransferOperations({
          transfers: guarded(family.createTransferQueries(database.read), "all"),
          blocks: readBlocks,
          head,
          chain,
          addresses: chainAddresses(family, chain),
          shape: family.transferShape,
        })
      : [];
  const stats = family.index
    ? createStatsOperations({
        blocks: readBlocks,
        engine,
        head,
        blockRefs: family.blockRefs,
        headers: family.node,
        blockTimes: family.blockTimes,
        days: family.dayStats && {
          schema: family.dayStats.schema,
          reads: guarded(family.dayStats.create(database.read), "all"),
        },
      })
    : [];
  return createOperationTable([...own.node, ...transfers, ...stats, ...own.data]);
}

/**
 * Watch filters read what the indexer just wrote: they stay on the primary, never on a replica. None where
 * the family keeps no index.
 */
function watchFilters(ctx: StartContext, parts: DataPathParts, engine: Engine, guarded: Guarded) {
  const { config, log, family } = ctx;
  const { head, chain, database } = parts;
  if (!family.index || !family.createWatchMatcher) return undefined;
  return createWatchFilters({
    // add is idempotent (one filter per key, address, contract, approvals); remove is not.
    filters: guarded(createFilterStore(database.sql), ["add", "list", "page"]),
    matcher: family.createWatchMatcher({
      sql: database.sql,
      guard: (queries) => guarded(queries, "all"),
      engine,
      chain,
    }),
    addresses: chainAddresses(family, chain),
    maxFilters: config.maxFiltersPerKey,
    blocks: guarded(createBlockQueries(database.sql), "all"),
    head,
    chain,
    log,
  });
}

/**
 * The family's follower of the node's mempool, where it keeps an index: one per instance, read by its
 * Esplora API and its pending watch-filter matches, stopped at shutdown.
 */
function followMempool(ctx: StartContext, parts: DataPathParts, engine: Engine, guarded: Guarded) {
  const { config, log, family, lifetime } = ctx;
  if (!family.index || !family.followMempool) return undefined;
  const mempool = family.followMempool({
    engine,
    sql: parts.database.sql,
    guard: (queries) => guarded(queries, "all"),
    log,
    maxBytes: config.mempoolMaxMb * MIB,
  });
  lifetime.defer(() => mempool.stop());
  return mempool;
}

export function buildDataPath(ctx: StartContext, parts: DataPathParts): DataPath {
  const { config, log, family, metrics, lifetime } = ctx;
  const { pool, head, chain, database } = parts;
  const engine = createEngine({
    pool,
    head,
    cache: parts.cache,
    refs: family.blockRefs,
    headMethods: family.headMethods,
    methods: family.methods,
    events: { coalesced: (method) => metrics.coalesced.labels(method).inc() },
  });
  const guarded: Guarded = (api, retry) =>
    guardDatabase(api, { timeoutMs: config.dbStatementTimeoutMs, retry, events: databaseEvents(metrics) });
  const table = operationTable(ctx, parts, engine, guarded);
  const watch = watchFilters(ctx, parts, engine, guarded);
  const mempool = followMempool(ctx, parts, engine, guarded);
  // Mempool matches (`"pending": true`) where the family has them: on the primary, as the filters are.
  const pending = mempool?.createPendingWatch?.({
    sql: database.sql,
    guard: (queries) => guarded(queries, "all"),
    engine,
    chain,
    headPollMs: parts.headPollMs,
    log,
  });
  const processedListeners: (() => void)[] = [];
  const onProcessed = (listener: () => void) => void processedListeners.push(listener);
  const subscriptions = createSubscriptions({
    head,
    engine,
    upstreamSubscribe: (params, onItem) => pool.subscribe(params, onItem),
    watch: watch && {
      lastBlockNumber: () => watch.processedUpTo(),
      results: watch.results,
      pending,
      chain: chain.blockchain,
    },
    kinds: family.subscriptions ?? [],
    refused: unservedSubscription({ family, chain: chain.blockchain, watchFilters: watch !== undefined }),
    log,
    events: subscriptionEvents(metrics),
  });
  lifetime.defer(() => subscriptions.stop());
  // The Esplora API's reads: callers' reads of the index, so on the replica where there is one.
  const esplora = mempool?.createEsplora?.({
    engine,
    chain,
    sql: database.read,
    guard: (queries) => guarded(queries, "all"),
    log,
  });
  const ready = mempool?.ready() ?? Promise.resolve();
  if (!family.index) return { engine, table, watch, subscriptions, esplora, pending, onProcessed, ready };
  // TronGrid's v1 API's reads: callers' reads of the index, so on the replica where there is one.
  const tronGrid = family.createTronGrid?.({
    engine,
    sql: database.read,
    guard: (queries) => guarded(queries, "all"),
    finalized: () => head.finalized(),
    log,
  });
  const indexer = startIndexer({
    sql: database.sql,
    exclusive: database.embedded,
    enabled: config.indexer,
    family: family.index,
    refs: family.blockRefs,
    engine,
    head,
    chain,
    fromBlock: config.indexFromBlock,
    bulkDistance: config.indexBulkDistance,
    pollMs: parts.headPollMs,
    log,
    events: indexerEvents(metrics, () => {
      subscriptions.processed();
      for (const listener of processedListeners) listener();
    }),
  });
  lifetime.defer(() => indexer.stop());
  return { engine, table, watch, subscriptions, indexer, esplora, tronGrid, pending, onProcessed, ready };
}
