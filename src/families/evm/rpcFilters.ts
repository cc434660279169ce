/**
 * The filters the service keeps (docs/interface.md, "Filters kept by the service"): eth_newFilter,
 * eth_newBlockFilter, eth_newPendingTransactionFilter, eth_getFilterChanges, eth_getFilterLogs,
 * eth_uninstallFilter, answered by the service, never by a node (a node's filters live on that one node, and
 * the upstreams are a pool that may answer each poll from another).
 *
 * A filter is a row of the database (db/rpcFilterStore.ts), so its id works on every worker and every
 * instance on that database: its owner (the caller's key; in open mode, the caller's IP address), what it
 * matches, and its cursor. A poll reads the row, works out what changed after the cursor (rpcFilterChanges.ts:
 * new canonical blocks from the followed head, their logs from the cached receipts, a reorg's removed logs;
 * rpcPendingFeed.ts: pending hashes), and moves the cursor only if no other poll moved it meanwhile (else it
 * looks again): two polls at once never deliver the same change twice. A filter not polled for
 * RPC_FILTER_TIMEOUT_MS is gone; an owner holds at most RPC_FILTERS_PER_KEY live filters.
 */

import { hashKey } from "../../db/apiKeys";
import type {
  RpcFilterCursor,
  RpcFilterKind,
  RpcFilterStore,
  StoredRpcFilter,
} from "../../db/rpcFilterStore";
import type { ChainFollower } from "../../engine/chainFollower";
import type { Engine } from "../../engine/engineApi";
import {
  FilterNotFoundError,
  InternalError,
  InvalidParamsError,
  QuotaExceededError,
  UpstreamUnavailableError,
} from "../../errors";
import type { Logger } from "../../log";
import type { RpcFilterEvents } from "../../operations/familyOperations";
import {
  defineOperation,
  type Operation,
  type OperationResult,
  type OperationSpec,
  type RunContext,
} from "../../operations/operation";
import type { SocketSubscription } from "../../upstream/socket";
import { FILTER_METHODS, type FilterMethod, logsCost } from "./methods";
import { createChangeReader, type FilterChanges } from "./rpcFilterChanges";
import { boundsOf, type LogCriteria, logMatch, newFilterCriteria } from "./rpcFilterCriteria";
import { createPendingFeed } from "./rpcPendingFeed";

/** How often expired filters (and the pending hashes and block logs no filter needs) are deleted, at most. */
const SWEEP_EVERY_MS = 10_000;
/** Polls of one call that may lose the cursor to another poll of the same filter before it answers `[]`. */
const POLL_ATTEMPTS = 3;
/** The most pending hashes one poll gives: the rest on the next. */
const PENDING_PER_POLL = 10_000;
/** The ids the service makes: 16 random bytes. */
const FILTER_ID = /^0x[0-9a-f]{32}$/;
const ID_BYTES = 16;

export interface RpcFilters {
  /** The six methods' operations, in the order of their rows (methods.ts FILTER_METHODS). */
  operations: Operation[];
  /** Stops the sweep and the pending feed. */
  stop(): void;
}

export function createRpcFilters(options: {
  store: RpcFilterStore;
  engine: Engine;
  head: ChainFollower;
  upstreamSubscribe(params: unknown[], onItem: (result: string) => void): SocketSubscription | undefined;
  log: Logger;
  /** RPC_FILTER_TIMEOUT_MS: a filter not polled this long is gone. */
  timeoutMs: number;
  /** RPC_FILTERS_PER_KEY. */
  maxPerKey: number;
  events?: RpcFilterEvents;
}): RpcFilters {
  const { store, engine, head, log, timeoutMs, maxPerKey } = options;
  const reader = createChangeReader({ head, engine, store, log, events: options.events });
  const feed = createPendingFeed({ upstreamSubscribe: options.upstreamSubscribe, store, log });
  /** Pending filters made or polled here: a sweep that saw none alive leaves the feed only if this stayed. */
  let pendingUses = 0;
  let stopped = false;

  /** This instance knows a pending filter alive: it feeds the shared list too. */
  function feedPending(): Promise<void> {
    pendingUses++;
    return feed.join();
  }

  /**
   * Who a call's filters belong to, as stored: its key's SHA-256, or in open mode (no key: every caller is
   * anonymous) the SHA-256 of its identity, `ip:<address>`, so that each address has its own filters and its
   * own RPC_FILTERS_PER_KEY, as it has its own rate limit. The NUL before it is in no key (an environment
   * variable cannot hold one), so no key's hash is an address's. Every JSON-RPC call carries its caller.
   */
  function ownerOf(context: RunContext | undefined): string {
    if (!context) throw new InternalError(new Error("a kept filter's method was run without its caller"));
    return context.caller.keyHash ?? hashKey(`\u0000${context.identity}`);
  }

  /** The id param, when it has the form of the ids the service makes (any other is no filter of ours). */
  const idOf = (params: unknown[]) => {
    const id = params[0] as string;
    return FILTER_ID.test(id) ? id : undefined;
  };

  async function install(
    context: RunContext | undefined,
    kind: RpcFilterKind,
    criteria: LogCriteria | null,
    cursor: RpcFilterCursor,
  ): Promise<OperationResult> {
    const id = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(ID_BYTES))).toString("hex")}`;
    const filter = { id, kind, criteria: criteria as Record<string, unknown> | null, cursor };
    if (!(await store.add(ownerOf(context), filter, { max: maxPerKey, timeoutMs }))) {
      const holder = context!.caller.keyHash === null ? "this IP address (open mode)" : "this key";
      throw new QuotaExceededError(
        `${holder} holds ${maxPerKey} filters, the most it may (RPC_FILTERS_PER_KEY): uninstall some with eth_uninstallFilter, or let them expire`,
      );
    }
    return { raw: JSON.stringify(id) };
  }

  /** A block or log filter starts at the followed head: it gives what comes after. */
  function headCursor(): RpcFilterCursor {
    const top = head.headBlock();
    if (!top) throw new UpstreamUnavailableError("no head is followed yet; retry");
    const final = head.finalized();
    const open = final === undefined || top.number > final;
    return {
      lastBlock: top.number,
      delivered: open ? [{ number: top.number, hash: top.hash }] : [],
      lastSeq: null,
    };
  }

  async function pendingChanges(cursor: RpcFilterCursor): Promise<FilterChanges> {
    const rows = await store.pendingSince(cursor.lastSeq ?? 0n, PENDING_PER_POLL);
    if (rows.length === 0) return { results: [], cursor, moved: false };
    const lastSeq = rows[rows.length - 1]!.seq;
    return { results: rows.map((r) => JSON.stringify(r.hash)), cursor: { ...cursor, lastSeq }, moved: true };
  }

  function changesOf(filter: StoredRpcFilter): Promise<FilterChanges> {
    if (filter.kind === "blocks") return reader.blocks(filter.cursor);
    if (filter.kind === "pending") {
      void feedPending().catch((error) => log.debug("no pending feed on this instance", { error }));
      return pendingChanges(filter.cursor);
    }
    const criteria = filter.criteria as LogCriteria;
    return reader.logs(filter.cursor, logMatch(criteria), boundsOf(criteria));
  }

  async function filterChanges(params: unknown[], context?: RunContext): Promise<OperationResult> {
    const id = idOf(params);
    const owner = ownerOf(context);
    if (id === undefined) throw new FilterNotFoundError();
    for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
      const filter = await store.poll(owner, id, timeoutMs);
      if (!filter) throw new FilterNotFoundError();
      const changes = await changesOf(filter);
      if (!changes.moved || (await store.advance(id, filter.revision, changes.cursor))) {
        return { raw: `[${changes.results.join(",")}]` };
      }
    }
    // Polled as often elsewhere at the same moment: those polls were given the changes.
    return { raw: "[]" };
  }

  async function filterLogs(params: unknown[], context?: RunContext): Promise<OperationResult> {
    const id = idOf(params);
    const owner = ownerOf(context);
    const filter = id === undefined ? undefined : await store.poll(owner, id, timeoutMs);
    if (filter?.kind !== "logs") throw new FilterNotFoundError();
    return engine.call("eth_getLogs", [filter.criteria]);
  }

  /** eth_getFilterLogs costs what eth_getLogs over the filter's range costs (its criteria read first). */
  async function filterLogsCost(params: unknown[]): Promise<number> {
    const id = idOf(params);
    if (id === undefined) return 1;
    try {
      const criteria = await store.criteria(id, timeoutMs);
      return criteria ? logsCost([criteria], head) : 1;
    } catch {
      // The call itself meets the database's trouble, and answers it.
      return 1;
    }
  }

  const runs: Record<FilterMethod, Pick<OperationSpec, "run" | "cost">> = {
    eth_newFilter: {
      run: async (params, context) =>
        install(context, "logs", newFilterCriteria(params[0] as Record<string, unknown>), headCursor()),
    },
    eth_newBlockFilter: { run: async (_, context) => install(context, "blocks", null, headCursor()) },
    eth_newPendingTransactionFilter: {
      async run(params, context) {
        if (params[0] === true) {
          throw new InvalidParamsError(
            "invalid params: a pending filter gives transaction hashes: full transactions (true) are not kept; pass false, or subscribe to newPendingTransactions over the WebSocket",
          );
        }
        await feedPending();
        const lastSeq = await store.lastPendingSeq();
        return install(context, "pending", null, { lastBlock: null, delivered: [], lastSeq });
      },
    },
    eth_getFilterChanges: { run: filterChanges },
    eth_getFilterLogs: { run: filterLogs, cost: filterLogsCost },
    eth_uninstallFilter: {
      async run(params, context) {
        const id = idOf(params);
        const owner = ownerOf(context);
        return { raw: String(id !== undefined && (await store.remove(owner, id, timeoutMs))) };
      },
    },
  };

  let sweeping = false;
  /** Deletes what expired, and holds the pending feed while a pending filter lives anywhere. */
  async function sweep(): Promise<void> {
    if (sweeping) return;
    sweeping = true;
    try {
      const deleted = await store.sweep(timeoutMs, head.finalized());
      if (deleted > 0) log.debug("expired filters deleted", { deleted });
      const uses = pendingUses;
      if (await store.pendingAlive(timeoutMs)) {
        await feed.join().catch((error) => log.debug("no pending feed on this instance", { error }));
      } else if (pendingUses === uses && !stopped) feed.leave();
    } catch (error) {
      if (!stopped) log.warn("the filters' sweep failed", { error });
    } finally {
      sweeping = false;
    }
  }
  const timer = setInterval(() => void sweep(), Math.min(SWEEP_EVERY_MS, timeoutMs));
  timer.unref?.();

  return {
    operations: (Object.keys(FILTER_METHODS) as FilterMethod[]).map((method) =>
      defineOperation({ method, ...FILTER_METHODS[method], ...runs[method] }),
    ),
    stop() {
      stopped = true;
      clearInterval(timer);
      feed.stop();
    },
  };
}
