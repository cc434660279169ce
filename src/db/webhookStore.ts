/**
 * Webhook endpoints in the database (sql/common/014_webhooks.sql), as their owners manage them: an endpoint
 * belongs to the SHA-256 of the key that made it (empty in open mode), as watch filters do (db/filterStore.ts),
 * and every statement here names the key, so another key's endpoint is as absent as an unknown one. What is
 * sent, and when, is the outbox's (webhooks/outbox.ts); this reads its deliveries and queues the owner's
 * test and redelivery.
 */
import type { TransactionSql } from "postgres";
import type { Sql } from "./database";
import { keyBytes } from "./filterStore";

export type WebhookVersion = "v1" | "v2";

export interface StoredEndpoint {
  endpointId: string;
  url: string;
  description: string;
  version: WebhookVersion;
  pending: boolean;
  createdAt: Date;
  /** When its oldest undelivered delivery had failed for a day; null while it is not failing. */
  failingSince: Date | null;
}

export type DeliveryState = "pending" | "delivered" | "dropped";

export interface StoredDelivery {
  deliveryId: string;
  /** As the outbox writes it: block, removed, pending, test. */
  kind: string;
  blockNumber: bigint | null;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAt: Date | null;
  /** The endpoint's next try, for the delivery at the head of its queue; null for any other. */
  nextAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

export interface NewEndpoint {
  url: string;
  description: string;
  version: WebhookVersion;
  pending: boolean;
  /** The secret sealed (webhooks/secrets.ts): the table never holds it as shown. */
  secret: Uint8Array;
}

export interface WebhookStore {
  /** The new endpoint; undefined when the key already holds `max` (counted under the key's lock). */
  create(keyHash: string | null, endpoint: NewEndpoint, max: number): Promise<StoredEndpoint | undefined>;
  /** The key's endpoints, oldest first. */
  list(keyHash: string | null): Promise<StoredEndpoint[]>;
  /** Undefined when the key has no such endpoint. Ids must be UUIDs. */
  get(keyHash: string | null, endpointId: string): Promise<StoredEndpoint | undefined>;
  /** False when the key has no such endpoint; its deliveries go with it. */
  remove(keyHash: string | null, endpointId: string): Promise<boolean>;
  /**
   * A new sealed secret; the one it replaces signs beside it for `previousForMs`. Undefined when the key has
   * no such endpoint.
   */
  rotate(
    keyHash: string | null,
    endpointId: string,
    secret: Uint8Array,
    previousForMs: number,
  ): Promise<StoredEndpoint | undefined>;
  /** A delivery queued after the endpoint's others; undefined when the key has no such endpoint. */
  queue(
    keyHash: string | null,
    endpointId: string,
    delivery: { deliveryId: string; kind: string; body: string },
  ): Promise<StoredDelivery | undefined>;
  /**
   * Up to `limit` of the endpoint's deliveries, newest first, those made before the delivery `before` when
   * given; or why none: the key has no such endpoint, or `before` is none of its deliveries.
   */
  deliveries(
    keyHash: string | null,
    endpointId: string,
    page: { limit: number; before?: string },
  ): Promise<StoredDelivery[] | "no endpoint" | "no before">;
  /**
   * The delivery pending again, and its endpoint due now; undefined when the key has no such endpoint or the
   * endpoint no such delivery.
   */
  redeliver(
    keyHash: string | null,
    endpointId: string,
    deliveryId: string,
  ): Promise<StoredDelivery | undefined>;
}

/** The class of the advisory locks that order one key's creations (its count, then its insert). */
const KEY_LOCK_CLASS = 0x7768_6b31;

type Row = Record<string, unknown>;

function endpointOf(r: Row): StoredEndpoint {
  return {
    endpointId: r.endpoint_id as string,
    url: r.url as string,
    description: r.description as string,
    version: r.version as WebhookVersion,
    pending: r.pending as boolean,
    createdAt: r.created_at as Date,
    failingSince: r.failing_since as Date | null,
  };
}

function deliveryOf(r: Row): StoredDelivery {
  return {
    deliveryId: r.delivery_id as string,
    kind: r.kind as string,
    blockNumber: r.block_number === null ? null : BigInt(r.block_number as string),
    state: r.state as DeliveryState,
    attempts: r.attempts as number,
    lastStatus: r.last_status as number | null,
    lastError: r.last_error as string | null,
    lastAt: r.last_at as Date | null,
    nextAt: r.next_at as Date | null,
    createdAt: r.created_at as Date,
    deliveredAt: r.delivered_at as Date | null,
  };
}

export function createWebhookStore(sql: Sql): WebhookStore {
  const key = (keyHash: string | null) => keyBytes(sql, keyHash);
  const endpointColumns = sql`endpoint_id::text, url, description, version, pending, created_at, failing_since`;
  /** The endpoint, if the key holds it. */
  const owned = (keyHash: string | null, endpointId: string) =>
    sql`endpoint_id = ${endpointId}::uuid and key_hash = ${key(keyHash)}`;
  /**
   * A delivery's columns (`d`) with its endpoint's (`e`) next try where it is the head of the queue: the
   * delivery a sender takes next (the queue's index finds it).
   */
  const deliveryColumns = sql`d.delivery_id, d.kind, d.block_number::text, d.state, d.attempts, d.last_status,
    d.last_error, d.last_at, d.created_at, d.delivered_at,
    case when d.state = 'pending' and d.seq = (select min(q.seq) from webhook_deliveries q
      where q.endpoint_id = d.endpoint_id and q.state = 'pending') then e.next_at end as next_at`;

  /** One delivery as the owner sees it, read in the transaction that changed it. */
  async function readDelivery(
    tx: TransactionSql<Record<string, never>>,
    deliveryId: string,
  ): Promise<StoredDelivery> {
    const [row] = await tx`select ${deliveryColumns} from webhook_deliveries d
      join webhook_endpoints e using (endpoint_id) where d.delivery_id = ${deliveryId}`;
    return deliveryOf(row!);
  }

  return {
    create(keyHash, endpoint, max) {
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${KEY_LOCK_CLASS}::int, hashtext(${keyHash ?? ""}))`;
        const [row] =
          await tx`insert into webhook_endpoints (key_hash, url, description, version, pending, secret)
          select ${key(keyHash)}, ${endpoint.url}, ${endpoint.description}, ${endpoint.version},
            ${endpoint.pending}, ${endpoint.secret}::bytea
          where (select count(*) from webhook_endpoints where key_hash = ${key(keyHash)}) < ${max}
          returning ${endpointColumns}`;
        return row && endpointOf(row);
      }) as Promise<StoredEndpoint | undefined>;
    },

    async list(keyHash) {
      const rows = await sql`select ${endpointColumns} from webhook_endpoints
        where key_hash = ${key(keyHash)} order by created_at, endpoint_id`;
      return rows.map(endpointOf);
    },

    async get(keyHash, endpointId) {
      const [row] =
        await sql`select ${endpointColumns} from webhook_endpoints where ${owned(keyHash, endpointId)}`;
      return row && endpointOf(row);
    },

    async remove(keyHash, endpointId) {
      const removed = await sql`delete from webhook_endpoints where ${owned(keyHash, endpointId)}`;
      return removed.count === 1;
    },

    async rotate(keyHash, endpointId, secret, previousForMs) {
      const [row] =
        await sql`update webhook_endpoints set previous_secret = secret, secret = ${secret}::bytea,
          previous_until = now() + ${previousForMs}::double precision * interval '1 millisecond'
        where ${owned(keyHash, endpointId)}
        returning ${endpointColumns}`;
      return row && endpointOf(row);
    },

    queue(keyHash, endpointId, delivery) {
      return sql.begin(async (tx) => {
        const queued = await tx`insert into webhook_deliveries (delivery_id, endpoint_id, kind, body)
          select ${delivery.deliveryId}, endpoint_id, ${delivery.kind}, ${delivery.body} from webhook_endpoints
          where ${owned(keyHash, endpointId)}`;
        return queued.count === 1 ? readDelivery(tx, delivery.deliveryId) : undefined;
      }) as Promise<StoredDelivery | undefined>;
    },

    async deliveries(keyHash, endpointId, page) {
      const [endpoint] = await sql`select 1 from webhook_endpoints where ${owned(keyHash, endpointId)}`;
      if (!endpoint) return "no endpoint";
      let before = sql``;
      if (page.before !== undefined) {
        const [row] = await sql`select seq from webhook_deliveries
          where delivery_id = ${page.before} and endpoint_id = ${endpointId}::uuid`;
        if (!row) return "no before";
        before = sql`and d.seq < ${row.seq as string}::bigint`;
      }
      const rows = await sql`select ${deliveryColumns} from webhook_deliveries d
        join webhook_endpoints e using (endpoint_id)
        where d.endpoint_id = ${endpointId}::uuid ${before}
        order by d.seq desc limit ${page.limit}`;
      return rows.map(deliveryOf);
    },

    redeliver(keyHash, endpointId, deliveryId) {
      return sql.begin(async (tx) => {
        const again = await tx`update webhook_deliveries d set state = 'pending', delivered_at = null
          from webhook_endpoints e
          where d.delivery_id = ${deliveryId} and d.endpoint_id = e.endpoint_id
            and e.endpoint_id = ${endpointId}::uuid and e.key_hash = ${key(keyHash)}`;
        if (again.count !== 1) return undefined;
        // Tried now: a sender holding off the endpoint (a backoff after failures) takes it at once.
        await tx`update webhook_endpoints set next_at = now() where endpoint_id = ${endpointId}::uuid`;
        return readDelivery(tx, deliveryId);
      }) as Promise<StoredDelivery | undefined>;
    },
  };
}
