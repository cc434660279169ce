/**
 * The outbox's SQL (sql/common/014_webhooks.sql): deliveries made with the progress that records them, in
 * one transaction; a reorg's removals; endpoints claimed for sending (`FOR UPDATE SKIP LOCKED`, a lease per
 * endpoint: one delivery in flight per endpoint, whatever the worker or instance) and released with the
 * attempt's outcome; the backlog's bound; old finished deliveries let go; the operator's figures.
 */
import type { Sql } from "../db/database";
import { keyOfRow } from "../db/filterStore";
import { type DeliveryKind, newDeliveryId, removedBody } from "./bodies";
import { FAILING_AFTER_MS } from "./schedule";

/** Made blocks kept with their hashes: a reorg that drops one of them is seen (deeper than any finality). */
export const BLOCKS_KEPT = 256;
/** Deliveries one insert writes. */
const INSERT_ROWS = 1_000;
/** Finished deletions a sweep makes at most, so one statement stays short. */
const SWEEP_BATCH = 10_000;

/** An endpoint as the producer makes deliveries for it. */
export interface EndpointTarget {
  endpointId: string;
  /** The key's SHA-256 (hex), null in open mode. */
  keyHash: string | null;
  version: "v1" | "v2";
  pending: boolean;
}

export interface NewDelivery {
  endpointId: string;
  kind: DeliveryKind;
  blockNumber: bigint | null;
  /** Hex digits, as the index stores the block's hash. */
  blockHash: string | null;
  body: string;
}

/** An endpoint a sender holds, with its head delivery: the attempt to make. */
export interface Claimed {
  endpointId: string;
  owner: string;
  url: string;
  /** The sealed secrets that sign: the current one, and the one before a rotation while it still signs. */
  secrets: Uint8Array[];
  seq: string;
  deliveryId: string;
  body: string;
  /** Attempts of this delivery, this one included. */
  attempts: number;
}

/** How an attempt ended, as the outbox keeps it. */
export interface Finished {
  ok: boolean;
  status: number | undefined;
  error: string | undefined;
  /** On a failure: when the endpoint is tried again. */
  retryInMs: number;
}

export interface OutboxFigures {
  pending: number;
  /** Age of the oldest pending delivery, in seconds; 0 with none. */
  oldestSeconds: number;
  failing: number;
}

export interface Outbox {
  /** The last block made, undefined before the first start. */
  lastMade(): Promise<bigint | undefined>;
  /** Deliveries start after `block` (the first start only: another's start wins). */
  start(block: bigint): Promise<void>;
  /**
   * With no endpoint to make deliveries for: the progress moved to `block` at once (no block made one by one,
   * nothing a reorg could take back), the made blocks' hashes forgotten.
   */
  skipTo(block: bigint): Promise<void>;
  endpoints(): Promise<EndpointTarget[]>;
  /** The lowest made block the index no longer holds as it was made (a reorg), if any. */
  forkedAt(): Promise<bigint | undefined>;
  /**
   * Makes a block: its deliveries, its hash kept, the progress moved to it, in one transaction, if the
   * progress is still at the block before it (false: another producer moved it).
   */
  make(block: bigint, hash: string, deliveries: readonly NewDelivery[]): Promise<boolean>;
  /**
   * Undoes the made blocks from `fork` up, the progress being at `last`: a `block.removed` delivery for each
   * block delivery of theirs that was not dropped (lowest block first), their hashes forgotten, the progress
   * back at fork - 1, in one transaction. The removals made; undefined if the progress moved meanwhile.
   */
  unmake(fork: bigint, last: bigint): Promise<number | undefined>;
  /** Deliveries not tied to a block (pending results), made as they come. */
  add(deliveries: readonly NewDelivery[]): Promise<void>;
  /**
   * Up to `max` endpoints due, unleased, with a pending delivery: leased to `owner` for `leaseMs`, each one's
   * oldest pending delivery counted as attempted.
   */
  claim(owner: string, leaseMs: number, max: number): Promise<Claimed[]>;
  /** The attempt's outcome, and the lease let go, if `claimed.owner` still holds it (false: it did not). */
  finish(claimed: Claimed, outcome: Finished): Promise<boolean>;
  /** Drops the oldest pending deliveries of each endpoint over `max`; how many. */
  dropOverBacklog(max: number): Promise<number>;
  /** Deletes delivered and dropped deliveries older than `keptMs` (a batch); how many. */
  sweep(keptMs: number): Promise<number>;
  figures(): Promise<OutboxFigures>;
}

export function createOutbox(sql: Sql): Outbox {
  /** The deliveries as rows of webhook_deliveries, in the order given (seq follows it). */
  const rows = (deliveries: readonly NewDelivery[]) =>
    deliveries.map((d) => ({
      delivery_id: newDeliveryId(),
      endpoint_id: d.endpointId,
      kind: d.kind,
      block_number: d.blockNumber === null ? null : d.blockNumber.toString(),
      block_hash: d.blockHash === null ? null : Buffer.from(d.blockHash, "hex"),
      body: d.body,
    }));
  /** Inserted INSERT_ROWS at a time: a statement takes at most 65,535 parameters (six a row). */
  const insert = async (q: Sql, deliveries: readonly NewDelivery[]) => {
    for (let i = 0; i < deliveries.length; i += INSERT_ROWS) {
      const chunk = rows(deliveries.slice(i, i + INSERT_ROWS));
      await q`insert into webhook_deliveries ${q(chunk as never, "delivery_id", "endpoint_id", "kind", "block_number", "block_hash", "body")}`;
    }
  };
  /** The progress, locked for the transaction: one producer moves it at a time. */
  const lockedProgress = async (q: Sql) => {
    const [row] = await q`select last_block::text as last from webhook_progress for update`;
    return row ? BigInt(row.last as string) : undefined;
  };

  return {
    async lastMade() {
      const [row] = await sql`select last_block::text as last from webhook_progress`;
      return row ? BigInt(row.last as string) : undefined;
    },

    async start(block) {
      await sql`insert into webhook_progress (last_block) values (${block.toString()}::bigint)
        on conflict (only_row) do nothing`;
    },

    async skipTo(block) {
      await sql.begin(async (q) => {
        await q`insert into webhook_progress (last_block) values (${block.toString()}::bigint)
          on conflict (only_row) do update set last_block = excluded.last_block`;
        await q`delete from webhook_blocks`;
      });
    },

    async endpoints() {
      const found = await sql`select endpoint_id::text as id, encode(key_hash, 'hex') as key_hash, version,
          pending
        from webhook_endpoints order by created_at, endpoint_id`;
      return found.map((r) => ({
        endpointId: r.id as string,
        keyHash: keyOfRow(r),
        version: r.version as "v1" | "v2",
        pending: r.pending as boolean,
      }));
    },

    async forkedAt() {
      const [row] = await sql`select w.block_number::text as n from webhook_blocks w
        left join blocks b on b.number = w.block_number
        where b.hash is distinct from w.block_hash order by w.block_number limit 1`;
      return row ? BigInt(row.n as string) : undefined;
    },

    async make(block, hash, deliveries) {
      return (await sql.begin(async (q) => {
        if ((await lockedProgress(q as never)) !== block - 1n) return false;
        if (deliveries.length > 0) await insert(q as never, deliveries);
        await q`insert into webhook_blocks (block_number, block_hash)
          values (${block.toString()}::bigint, decode(${hash}, 'hex'))
          on conflict (block_number) do update set block_hash = excluded.block_hash`;
        await q`delete from webhook_blocks where block_number <= ${(block - BigInt(BLOCKS_KEPT)).toString()}::bigint`;
        await q`update webhook_progress set last_block = ${block.toString()}::bigint`;
        return true;
      })) as boolean;
    },

    async unmake(fork, last) {
      return (await sql.begin(async (q) => {
        if ((await lockedProgress(q as never)) !== last) return undefined;
        const sent = await q`select endpoint_id::text as endpoint, block_number::text as n,
            encode(block_hash, 'hex') as hash, body
          from webhook_deliveries where kind = 'block' and block_number >= ${fork.toString()}::bigint
            and state <> 'dropped'
          order by block_number, seq`;
        const removals: NewDelivery[] = sent.map((r) => ({
          endpointId: r.endpoint as string,
          kind: "removed",
          blockNumber: BigInt(r.n as string),
          blockHash: r.hash as string,
          body: removedBody(r.body as string),
        }));
        if (removals.length > 0) await insert(q as never, removals);
        await q`delete from webhook_blocks where block_number >= ${fork.toString()}::bigint`;
        await q`update webhook_progress set last_block = ${(fork - 1n).toString()}::bigint`;
        return removals.length;
      })) as number | undefined;
    },

    async add(deliveries) {
      if (deliveries.length > 0) await insert(sql, deliveries);
    },

    async claim(owner, leaseMs, max) {
      // One statement: the endpoints picked and leased, and each one's oldest pending delivery counted.
      const rows = await sql`
        with picked as (
          select endpoint_id from webhook_endpoints e
          where next_at <= now() and (lease_until is null or lease_until < now())
            and exists (select 1 from webhook_deliveries d where d.endpoint_id = e.endpoint_id and d.state = 'pending')
          order by next_at limit ${max}
          for update skip locked
        ), leased as (
          update webhook_endpoints e set lease_until = now() + ${leaseMs} * interval '1 millisecond',
            lease_owner = ${owner}
          from picked where e.endpoint_id = picked.endpoint_id
          returning e.endpoint_id, e.url, e.secret,
            case when e.previous_until > now() then e.previous_secret end as previous
        ), heads as (
          update webhook_deliveries d set attempts = attempts + 1, last_at = now()
          where d.seq in (select (select w.seq from webhook_deliveries w
              where w.endpoint_id = l.endpoint_id and w.state = 'pending' order by w.seq limit 1) from leased l)
          returning d.endpoint_id, d.seq, d.delivery_id, d.body, d.attempts
        )
        select l.endpoint_id::text as id, l.url, l.secret, l.previous, h.seq::text as seq, h.delivery_id,
          h.body, h.attempts
        from leased l join heads h on h.endpoint_id = l.endpoint_id`;
      return rows.map((r) => ({
        endpointId: r.id as string,
        owner,
        url: r.url as string,
        secrets: r.previous ? [r.secret as Uint8Array, r.previous as Uint8Array] : [r.secret as Uint8Array],
        seq: r.seq as string,
        deliveryId: r.delivery_id as string,
        body: r.body as string,
        attempts: r.attempts as number,
      }));
    },

    async finish(claimed, outcome) {
      // One statement: the lease let go, and the delivery's outcome written only if it was still held.
      const ok = outcome.ok;
      const [row] = await sql`
        with released as (
          update webhook_endpoints set lease_until = null, lease_owner = null,
            next_at = now() + ${ok ? 0 : outcome.retryInMs} * interval '1 millisecond',
            failing_from = ${ok ? null : sql`coalesce(failing_from, now())`},
            failing_since = ${
              ok
                ? null
                : sql`case when coalesce(failing_from, now()) <= now() - ${FAILING_AFTER_MS} * interval '1 millisecond'
                    then coalesce(failing_since, now()) else failing_since end`
            }
          where endpoint_id = ${claimed.endpointId}::uuid and lease_owner = ${claimed.owner}
          returning 1
        ), written as (
          update webhook_deliveries set last_status = ${outcome.status ?? null},
            last_error = ${outcome.error ?? null},
            state = ${ok ? "delivered" : "pending"},
            delivered_at = ${ok ? sql`now()` : null}
          where seq = ${claimed.seq}::bigint and state = 'pending' and exists (select 1 from released)
          returning 1
        )
        select (select count(*) from released)::int as released`;
      // Another sender took the endpoint after this lease ran out: the delivery is its own now.
      return row!.released === 1;
    },

    async dropOverBacklog(max) {
      const dropped = await sql`with over as (
          select endpoint_id, count(*) - ${max} as n from webhook_deliveries where state = 'pending'
          group by endpoint_id having count(*) > ${max}
        )
        update webhook_deliveries set state = 'dropped',
          last_error = 'dropped: more pending deliveries than WEBHOOK_MAX_BACKLOG'
        where state = 'pending' and seq in (
          select d.seq from over cross join lateral (
            select seq from webhook_deliveries w where w.endpoint_id = over.endpoint_id and w.state = 'pending'
            order by seq limit over.n) d)`;
      return dropped.count;
    },

    async sweep(keptMs) {
      const swept = await sql`delete from webhook_deliveries where seq in (
          select seq from webhook_deliveries
          where state <> 'pending' and created_at < now() - ${keptMs} * interval '1 millisecond'
          order by created_at limit ${SWEEP_BATCH})`;
      return swept.count;
    },

    async figures() {
      const [row] = await sql`select
          (select count(*) from webhook_deliveries where state = 'pending')::bigint::text as pending,
          (select coalesce(extract(epoch from now() - min(h.created_at)), 0)
            from webhook_endpoints e cross join lateral (
              select created_at from webhook_deliveries d where d.endpoint_id = e.endpoint_id
                and d.state = 'pending' order by seq limit 1) h)::float8 as oldest,
          (select count(*) from webhook_endpoints where failing_since is not null)::bigint::text as failing`;
      return {
        pending: Number(row!.pending),
        oldestSeconds: Math.max(0, row!.oldest as number),
        failing: Number(row!.failing),
      };
    },
  };
}
