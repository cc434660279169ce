/**
 * Webhook endpoints as their owners manage them (docs/interface.md §18.1): made, listed, rotated, tested and
 * removed by the key that made them, their deliveries listed and sent again. An endpoint's secret is shown
 * twice only, in the answers that make it (creation, rotation); the database holds it sealed
 * (webhooks/secrets.ts). What is sent, and when, is the outbox's (webhooks/outbox.ts, webhooks/sender.ts).
 */
import type { Caller } from "../caller";
import type { StoredDelivery, StoredEndpoint, WebhookStore, WebhookVersion } from "../db/webhookStore";
import { NotFoundError, QuotaExceededError, RequestValidationError } from "../errors";
import { rfc3339 } from "../json";
import { DELIVERY_TYPES, type DeliveryKind, newDeliveryId } from "./bodies";
import { newSecret } from "./secrets";

/** How long the secret a rotation replaces still signs beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/** Deliveries a list gives unless asked for fewer; the most it gives. */
export const DELIVERIES_PAGE = 20;
export const MAX_DELIVERIES_PAGE = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An endpoint as POST /webhooks takes it (the route's schema checked its form). */
export interface WebhookBody {
  url: string;
  description?: string;
  version?: WebhookVersion;
  pending?: boolean;
}

/** A page of an endpoint's deliveries, as GET /webhooks/{id}/deliveries takes it. */
export interface DeliveriesPage {
  limit?: number;
  /** A delivery's id: those made before it. */
  before?: string;
}

export interface WebhookOut {
  id: string;
  url: string;
  description: string;
  version: WebhookVersion;
  pending: boolean;
  created_at: string;
  status: "active" | "failing";
  failing_since: string | null;
}

export interface DeliveryOut {
  id: string;
  type: string;
  block_number: number | null;
  state: StoredDelivery["state"];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface WebhookEndpoints {
  create(caller: Caller, body: WebhookBody): Promise<WebhookOut & { secret: string }>;
  list(caller: Caller): Promise<{ webhooks: WebhookOut[] }>;
  get(caller: Caller, id: string): Promise<WebhookOut>;
  remove(caller: Caller, id: string): Promise<{ detail: string; id: string }>;
  /** A new secret; the one it replaces signs beside it for PREVIOUS_SECRET_MS. */
  rotate(caller: Caller, id: string): Promise<WebhookOut & { secret: string }>;
  /** A `webhook.test` delivery queued behind the endpoint's others. */
  test(caller: Caller, id: string): Promise<{ delivery: DeliveryOut }>;
  deliveries(caller: Caller, id: string, page: DeliveriesPage): Promise<{ deliveries: DeliveryOut[] }>;
  /** The delivery pending again (the same `webhook-id`), its endpoint tried now. */
  redeliver(caller: Caller, id: string, deliveryId: string): Promise<{ delivery: DeliveryOut }>;
}

const time = (at: Date | null) => (at === null ? null : rfc3339(at));

function webhookOut(e: StoredEndpoint): WebhookOut {
  return {
    id: e.endpointId,
    url: e.url,
    description: e.description,
    version: e.version,
    pending: e.pending,
    created_at: rfc3339(e.createdAt),
    status: e.failingSince === null ? "active" : "failing",
    failing_since: time(e.failingSince),
  };
}

function deliveryOut(d: StoredDelivery): DeliveryOut {
  return {
    id: d.deliveryId,
    type: DELIVERY_TYPES[d.kind as DeliveryKind] ?? d.kind,
    // Block numbers are far below 2^53.
    block_number: d.blockNumber === null ? null : Number(d.blockNumber),
    state: d.state,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    last_attempt_at: time(d.lastAt),
    next_attempt_at: time(d.nextAt),
    created_at: rfc3339(d.createdAt),
    delivered_at: time(d.deliveredAt),
  };
}

const invalid = (field: string, msg: string) =>
  new RequestValidationError([{ loc: ["body", field], msg, type: "value_error" }]);

export function createWebhookEndpoints(options: {
  store: WebhookStore;
  /** Seals a secret for the table (webhooks/secrets.ts's box). */
  seal(secret: string): Uint8Array;
  /** Why an endpoint's URL is refused (webhooks/deliveryClient.ts `urlProblem`); undefined: taken. */
  urlProblem(url: string): Promise<string | undefined>;
  /** The chain's name, in the test delivery and the refusals. */
  chain: string;
  /** Why `"pending": true` is refused (the family does not match the mempool); undefined: it is taken. */
  pendingRefused?: string;
  /** MAX_WEBHOOKS_PER_KEY. */
  maxPerKey: number;
}): WebhookEndpoints {
  const { store, chain, maxPerKey } = options;
  const testBody = JSON.stringify({ type: DELIVERY_TYPES.test, chain, block: null, results: [] });

  /** The same 404 for an id that is malformed, unknown or another key's. */
  const noWebhook = (id: string) => new NotFoundError(`no webhook ${id} for this API key`);

  /** The endpoint's id as stored, or the 404 a malformed one gets (no statement is run for it). */
  function endpointId(id: string): string {
    if (!UUID.test(id)) throw noWebhook(id);
    return id.toLowerCase();
  }

  return {
    async create(caller, body) {
      const version = body.version ?? "v1";
      const pending = body.pending ?? false;
      if (pending && options.pendingRefused !== undefined) throw invalid("pending", options.pendingRefused);
      const problem = await options.urlProblem(body.url);
      if (problem !== undefined) throw invalid("url", problem);
      const secret = newSecret();
      const made = await store.create(
        caller.keyHash,
        {
          url: body.url,
          description: body.description ?? "",
          version,
          pending,
          secret: options.seal(secret),
        },
        maxPerKey,
      );
      if (made === undefined) {
        throw new QuotaExceededError(
          `this key holds ${maxPerKey} webhooks, the most it may (MAX_WEBHOOKS_PER_KEY); remove some first`,
        );
      }
      return { ...webhookOut(made), secret };
    },

    async list(caller) {
      return { webhooks: (await store.list(caller.keyHash)).map(webhookOut) };
    },

    async get(caller, id) {
      const e = await store.get(caller.keyHash, endpointId(id));
      if (e === undefined) throw noWebhook(id);
      return webhookOut(e);
    },

    async remove(caller, id) {
      if (!(await store.remove(caller.keyHash, endpointId(id)))) throw noWebhook(id);
      return { detail: "webhook removed", id };
    },

    async rotate(caller, id) {
      const stored = endpointId(id);
      const secret = newSecret();
      const rotated = await store.rotate(caller.keyHash, stored, options.seal(secret), PREVIOUS_SECRET_MS);
      if (rotated === undefined) throw noWebhook(id);
      return { ...webhookOut(rotated), secret };
    },

    async test(caller, id) {
      const delivery = { deliveryId: newDeliveryId(), kind: "test", body: testBody };
      const queued = await store.queue(caller.keyHash, endpointId(id), delivery);
      if (queued === undefined) throw noWebhook(id);
      return { delivery: deliveryOut(queued) };
    },

    async deliveries(caller, id, page) {
      const limit = Math.min(page.limit ?? DELIVERIES_PAGE, MAX_DELIVERIES_PAGE);
      const found = await store.deliveries(caller.keyHash, endpointId(id), { limit, before: page.before });
      if (found === "no endpoint") throw noWebhook(id);
      if (found === "no before") {
        throw new RequestValidationError([
          {
            loc: ["query", "before"],
            msg: `no delivery ${page.before} of webhook ${id}`,
            type: "value_error",
          },
        ]);
      }
      return { deliveries: found.map(deliveryOut) };
    },

    async redeliver(caller, id, deliveryId) {
      const again = await store.redeliver(caller.keyHash, endpointId(id), deliveryId);
      if (again === undefined) {
        throw new NotFoundError(`no delivery ${deliveryId} of webhook ${id} for this API key`);
      }
      return { delivery: deliveryOut(again) };
    },
  };
}
