/**
 * The filters the service keeps for eth_newFilter, eth_newBlockFilter and eth_newPendingTransactionFilter
 * (sql/common/006_rpc_filters.sql), in the database so that every worker and every instance on it knows
 * them: who owns each (its `key_hash`: the SHA-256 of the caller's key, or in open mode of its address),
 * what it matches, where its deliveries stand; the transaction hashes instances saw entering a node's pool;
 * the logs of recent blocks delivered, for a reorg's removed logs. A filter lives while it is polled: one
 * not polled for `timeoutMs` is gone (a read finds none, and a sweep deletes it). What a filter matches and
 * how a poll moves on is the family's (EVM: families/evm/rpcFilters.ts); this file only keeps it.
 */
import type { Sql } from "./database";

export type RpcFilterKind = "logs" | "blocks" | "pending";

/** A block a filter delivered. */
export interface DeliveredBlock {
  number: bigint;
  hash: string;
}

/** Where a filter's deliveries stand. */
export interface RpcFilterCursor {
  /** Log and block filters: the last block covered; the next poll starts after it. */
  lastBlock: bigint | null;
  /** Log and block filters: the recent blocks delivered that a reorg could still drop, lowest first. */
  delivered: DeliveredBlock[];
  /** Pending filters: the last sequence number of the pending hashes delivered. */
  lastSeq: bigint | null;
}

export interface StoredRpcFilter {
  id: string;
  kind: RpcFilterKind;
  /** Log filters: what they match, in the node's form. */
  criteria: Record<string, unknown> | null;
  cursor: RpcFilterCursor;
  /** Moved by every cursor move: `advance` moves it only from the revision read. */
  revision: string;
}

export interface NewRpcFilter {
  /** 0x and 32 hex digits. */
  id: string;
  kind: RpcFilterKind;
  criteria: Record<string, unknown> | null;
  cursor: RpcFilterCursor;
}

export interface PendingHash {
  seq: bigint;
  hash: string;
}

/**
 * `owner` is who holds a filter, as hex (db/apiKeys.ts hashKey: the SHA-256 of a key, or in open mode of the
 * caller's address): one owner never sees another's filters.
 */
export interface RpcFilterStore {
  /** Adds a filter, unless the owner holds `max` live filters already: false then. Concurrent adds of one queue. */
  add(owner: string, filter: NewRpcFilter, limits: { max: number; timeoutMs: number }): Promise<boolean>;
  /**
   * The owner's live filter, its poll time set to now (a poll keeps it alive); undefined when the owner has no
   * such live filter (unknown, another owner's, uninstalled or expired: an expired one is deleted).
   */
  poll(owner: string, id: string, timeoutMs: number): Promise<StoredRpcFilter | undefined>;
  /** A live filter's criteria, whoever owns it, without polling it (what a call will cost); undefined: none. */
  criteria(id: string, timeoutMs: number): Promise<Record<string, unknown> | null | undefined>;
  /** Moves the cursor, if no other poll moved it since `revision` was read: false then (or when it is gone). */
  advance(id: string, revision: string, cursor: RpcFilterCursor): Promise<boolean>;
  /** Deletes the owner's filter; true when it was alive. */
  remove(owner: string, id: string, timeoutMs: number): Promise<boolean>;
  /**
   * Deletes expired filters and pending hashes older than a filter's timeout (no live filter can still need
   * them), and the logs of blocks below `blockLogsBelow` (final: no reorg drops them); the filters deleted.
   */
  sweep(timeoutMs: number, blockLogsBelow: bigint | undefined): Promise<number>;
  /** Whether any pending filter lives, on any instance. */
  pendingAlive(timeoutMs: number): Promise<boolean>;
  /** Appends hashes seen entering a pool (once each: one seen by another instance first is skipped). */
  appendPending(hashes: readonly string[]): Promise<void>;
  /** The last sequence number appended (0 when none): a new pending filter starts after it. */
  lastPendingSeq(): Promise<bigint>;
  /** Pending hashes after `seq`, in order, at most `limit`. */
  pendingSince(seq: bigint, limit: number): Promise<PendingHash[]>;
  /** Keeps an unfinalized block's logs (a JSON array), once. */
  keepBlockLogs(hash: string, number: bigint, logs: string): Promise<void>;
  /** The logs kept of a block, by hash; undefined when none are. */
  blockLogs(hash: string): Promise<string | undefined>;
}

/** Advisory lock classes (two-int keys, a key space apart from the one-bigint locks of migrations and the index). */
const KEY_LOCK_CLASS = 0x7266_6b31;
const PENDING_LOCK_CLASS = 0x7266_7031;

type Row = Record<string, unknown>;

function cursorOf(r: Row): RpcFilterCursor {
  const delivered = (r.delivered as [number, string][]).map(([n, hash]) => ({ number: BigInt(n), hash }));
  return {
    lastBlock: r.last_block === null ? null : BigInt(r.last_block as string),
    delivered,
    lastSeq: r.last_seq === null ? null : BigInt(r.last_seq as string),
  };
}

/** Block numbers are far below 2^53: JSON numbers hold them exactly. */
const deliveredOf = (cursor: RpcFilterCursor) => cursor.delivered.map((b) => [Number(b.number), b.hash]);

const text = (n: bigint | null) => (n === null ? null : n.toString());

export function createRpcFilterStore(sql: Sql): RpcFilterStore {
  const ownerBytes = (owner: string) => sql`decode(${owner}, 'hex')`;
  const idBytes = (id: string) => sql`decode(${id.slice(2)}, 'hex')`;
  const json = (value: unknown) => sql.json(value as never);
  const since = (timeoutMs: number) => sql`now() - ${timeoutMs}::double precision * interval '1 millisecond'`;

  return {
    add(owner, filter, { max, timeoutMs }) {
      const { cursor } = filter;
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${KEY_LOCK_CLASS}::int, hashtext(${owner}))`;
        const added = await tx`insert into rpc_filters
            (filter_id, key_hash, kind, criteria, last_block, delivered, last_seq)
          select ${idBytes(filter.id)}, ${ownerBytes(owner)}, ${filter.kind},
            ${filter.criteria === null ? null : json(filter.criteria)}::jsonb,
            ${text(cursor.lastBlock)}::bigint, ${json(deliveredOf(cursor))}::jsonb, ${text(cursor.lastSeq)}::bigint
          where (select count(*) from rpc_filters
            where key_hash = ${ownerBytes(owner)} and polled_at > ${since(timeoutMs)}) < ${max}`;
        return added.count === 1;
      }) as Promise<boolean>;
    },

    async poll(owner, id, timeoutMs) {
      const [row] = await sql`
        with expired as (
          delete from rpc_filters where filter_id = ${idBytes(id)} and polled_at <= ${since(timeoutMs)}
        )
        update rpc_filters set polled_at = now()
        where filter_id = ${idBytes(id)} and key_hash = ${ownerBytes(owner)} and polled_at > ${since(timeoutMs)}
        returning kind, criteria, last_block::text, delivered, last_seq::text, revision::text`;
      if (!row) return undefined;
      return {
        id,
        kind: row.kind as RpcFilterKind,
        criteria: row.criteria as Record<string, unknown> | null,
        cursor: cursorOf(row),
        revision: row.revision as string,
      };
    },

    async criteria(id, timeoutMs) {
      const [row] = await sql`select criteria from rpc_filters
        where filter_id = ${idBytes(id)} and polled_at > ${since(timeoutMs)}`;
      return row ? (row.criteria as Record<string, unknown> | null) : undefined;
    },

    async advance(id, revision, cursor) {
      const moved = await sql`update rpc_filters
        set last_block = ${text(cursor.lastBlock)}::bigint, delivered = ${json(deliveredOf(cursor))}::jsonb,
          last_seq = ${text(cursor.lastSeq)}::bigint, revision = revision + 1
        where filter_id = ${idBytes(id)} and revision = ${revision}::bigint`;
      return moved.count === 1;
    },

    async remove(owner, id, timeoutMs) {
      const [row] = await sql`delete from rpc_filters
        where filter_id = ${idBytes(id)} and key_hash = ${ownerBytes(owner)}
        returning polled_at > ${since(timeoutMs)} as alive`;
      return row?.alive === true;
    },

    async sweep(timeoutMs, blockLogsBelow) {
      const [row] = await sql`
        with filters as (delete from rpc_filters where polled_at <= ${since(timeoutMs)} returning 1),
        pending as (delete from rpc_pending_transactions where seen_at <= ${since(timeoutMs)}),
        logs as (
          delete from rpc_filter_block_logs where block_number < ${text(blockLogsBelow ?? null)}::bigint
        )
        select count(*)::int as filters from filters`;
      return row!.filters as number;
    },

    async pendingAlive(timeoutMs) {
      const [row] = await sql`select exists (select 1 from rpc_filters
        where kind = 'pending' and polled_at > ${since(timeoutMs)}) as alive`;
      return row!.alive as boolean;
    },

    async appendPending(hashes) {
      if (hashes.length === 0) return;
      // One writer at a time: a sequence number is taken only once every earlier one is committed.
      await sql.begin(async (tx) => {
        // Per chain: chains of one database (each its schema) do not wait for each other.
        await tx`select pg_advisory_xact_lock(${PENDING_LOCK_CLASS}::int, hashtext(current_schema()))`;
        await tx`insert into rpc_pending_transactions (hash)
          select decode(substr(h, 3), 'hex') from unnest(${hashes as string[]}::text[]) with ordinality as t(h, i)
          order by i
          on conflict (hash) do nothing`;
      });
    },

    async lastPendingSeq() {
      const [row] = await sql`select coalesce(max(seq), 0)::text as seq from rpc_pending_transactions`;
      return BigInt(row!.seq as string);
    },

    async pendingSince(seq, limit) {
      const rows = await sql`select seq::text, '0x' || encode(hash, 'hex') as hash
        from rpc_pending_transactions where seq > ${seq.toString()}::bigint order by seq limit ${limit}`;
      return rows.map((r) => ({ seq: BigInt(r.seq as string), hash: r.hash as string }));
    },

    async keepBlockLogs(hash, number, logs) {
      await sql`insert into rpc_filter_block_logs (block_hash, block_number, logs)
        values (decode(${hash.slice(2)}, 'hex'), ${number.toString()}::bigint, ${logs})
        on conflict (block_hash) do nothing`;
    },

    async blockLogs(hash) {
      const [row] = await sql`select logs from rpc_filter_block_logs
        where block_hash = decode(${hash.slice(2)}, 'hex')`;
      return row ? (row.logs as string) : undefined;
    },
  };
}
