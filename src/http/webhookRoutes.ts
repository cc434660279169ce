/** Webhook endpoints' routes (docs/interface.md §18.1): REST only, owned by the key as watch filters are. */
import { Type as T } from "@sinclair/typebox";
import {
  DELIVERIES_PAGE,
  type DeliveriesPage,
  MAX_DELIVERIES_PAGE,
  type WebhookBody,
  type WebhookEndpoints,
} from "../webhooks/endpoints";
import type { RouteSpec } from "./routes";

const TAG = "webhooks";
const ID_EXAMPLE = "0b6e7c1e-3f1d-4c57-9a1e-6d2f8f0b5a11";
const DELIVERY_EXAMPLE = "msg_01JDQ3W5M8K2N7P4R6T9V0X1YZ";
const TIME_EXAMPLE = "2026-11-28T10:00:00Z";
const NOT_FOUND = "No such webhook for this key (unknown, malformed or another key's id)";

const version = (options: { default?: string } = {}) =>
  T.Union([T.Literal("v1"), T.Literal("v2")], {
    description: "v1 (the results check gives) or v2 (check_v2's)",
    ...options,
  });
const Time = (description: string) => T.String({ description, examples: [TIME_EXAMPLE] });
const MaybeTime = (description: string) => T.Union([Time(description), T.Null()]);

const webhookMembers = {
  id: T.String({ description: "The endpoint's id (a UUID)", examples: [ID_EXAMPLE] }),
  url: T.String({ examples: ["https://deposits.example.com/hooks/chain"] }),
  description: T.String(),
  version: version(),
  pending: T.Boolean({ description: "Whether mempool results are sent too (the Bitcoin family)" }),
  created_at: Time("When it was made"),
  status: T.Union([T.Literal("active"), T.Literal("failing")], {
    description: "failing: its oldest undelivered delivery has failed for a day (still retried hourly)",
  }),
  failing_since: MaybeTime("Since when it is failing; null while active"),
};
const Webhook = T.Object(webhookMembers, { title: "Webhook" });
const WebhookWithSecret = T.Object(
  {
    ...webhookMembers,
    secret: T.String({
      description: "The signing secret (Standard Webhooks' whsec_ + base64): shown here only, never listed",
      examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    }),
  },
  { title: "WebhookWithSecret" },
);
const Delivery = T.Object(
  {
    id: T.String({
      description: "Its webhook-id header: the same on every attempt",
      examples: [DELIVERY_EXAMPLE],
    }),
    type: T.Union([
      T.Literal("block"),
      T.Literal("block.removed"),
      T.Literal("pending"),
      T.Literal("webhook.test"),
    ]),
    block_number: T.Union([T.Integer(), T.Null()]),
    state: T.Union([T.Literal("pending"), T.Literal("delivered"), T.Literal("dropped")]),
    attempts: T.Integer({ minimum: 0 }),
    last_status: T.Union([T.Integer(), T.Null()], {
      description: "The receiver's HTTP status at the last attempt",
    }),
    last_error: T.Union([T.String(), T.Null()], { description: "Why the last attempt failed" }),
    last_attempt_at: MaybeTime("When it was last tried"),
    next_attempt_at: MaybeTime("When it is tried next: set on the next delivery of its endpoint only"),
    created_at: Time("When it was made"),
    delivered_at: MaybeTime("When the receiver took it (a 2xx)"),
  },
  { title: "WebhookDelivery" },
);
const OneDelivery = T.Object({ delivery: Delivery });

const CreateBody = T.Object({
  url: T.String({
    minLength: 1,
    maxLength: 2048,
    description:
      "Where deliveries are POSTed: https:// to a public address (any, with WEBHOOK_ALLOW_PRIVATE=1)",
    examples: ["https://deposits.example.com/hooks/chain"],
  }),
  description: T.Optional(T.String({ maxLength: 256, default: "" })),
  version: T.Optional(version({ default: "v1" })),
  pending: T.Optional(
    T.Boolean({
      default: false,
      description: "Mempool results too, where the family matches the mempool (the Bitcoin family)",
    }),
  ),
});
const DeliveriesQuery = T.Object({
  limit: T.Optional(
    T.Integer({
      minimum: 1,
      maximum: MAX_DELIVERIES_PAGE,
      default: DELIVERIES_PAGE,
      description: "How many",
    }),
  ),
  before: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 64,
      description: "A delivery's id: those made before it (the next page)",
      examples: [DELIVERY_EXAMPLE],
    }),
  ),
});

export function webhookRouteSpecs(webhooks: WebhookEndpoints): RouteSpec[] {
  return [
    {
      method: "POST",
      path: "/webhooks",
      tag: TAG,
      operationId: "webhooks_create",
      summary: "Registers an endpoint; its signing secret is in this answer only.",
      body: CreateBody,
      status: 201,
      response: WebhookWithSecret,
      errors: { 429: "The key holds MAX_WEBHOOKS_PER_KEY endpoints" },
      handle: (body: WebhookBody, caller) => webhooks.create(caller, body),
    },
    {
      method: "GET",
      path: "/webhooks",
      tag: TAG,
      operationId: "webhooks_list",
      summary: "The caller's endpoints, oldest first.",
      body: null,
      response: T.Object({ webhooks: T.Array(Webhook) }),
      handle: (_body, caller) => webhooks.list(caller),
    },
    {
      method: "GET",
      path: "/webhooks/{id}",
      tag: TAG,
      operationId: "webhooks_get",
      summary: "One of the caller's endpoints.",
      body: null,
      response: Webhook,
      errors: { 404: NOT_FOUND },
      handle: (_body, caller, { params }) => webhooks.get(caller, params.id!),
    },
    {
      method: "DELETE",
      path: "/webhooks/{id}",
      tag: TAG,
      operationId: "webhooks_delete",
      summary: "Removes an endpoint and its deliveries.",
      body: null,
      response: T.Object({ detail: T.String(), id: T.String() }),
      errors: { 404: NOT_FOUND },
      handle: (_body, caller, { params }) => webhooks.remove(caller, params.id!),
    },
    {
      method: "POST",
      path: "/webhooks/{id}/rotate",
      tag: TAG,
      operationId: "webhooks_rotate",
      summary: "A new signing secret; the previous one signs beside it for 24 hours.",
      body: null,
      response: WebhookWithSecret,
      errors: { 404: NOT_FOUND },
      handle: (_body, caller, { params }) => webhooks.rotate(caller, params.id!),
    },
    {
      method: "POST",
      path: "/webhooks/{id}/test",
      tag: TAG,
      operationId: "webhooks_test",
      summary: "Queues a webhook.test delivery behind the endpoint's others.",
      body: null,
      status: 202,
      response: OneDelivery,
      errors: { 404: NOT_FOUND },
      handle: (_body, caller, { params }) => webhooks.test(caller, params.id!),
    },
    {
      method: "GET",
      path: "/webhooks/{id}/deliveries",
      tag: TAG,
      operationId: "webhooks_deliveries",
      summary: "The endpoint's deliveries, newest first: state, attempts, last answer, next try.",
      body: null,
      query: DeliveriesQuery,
      response: T.Object({ deliveries: T.Array(Delivery) }),
      errors: { 404: NOT_FOUND },
      handle: (_body, caller, { params, query }) =>
        webhooks.deliveries(caller, params.id!, query as DeliveriesPage),
    },
    {
      method: "POST",
      path: "/webhooks/{id}/deliveries/{delivery}/redeliver",
      tag: TAG,
      operationId: "webhooks_redeliver",
      summary: "Sends a delivery again (the same webhook-id), trying its endpoint now.",
      body: null,
      status: 202,
      response: OneDelivery,
      errors: { 404: "No such webhook, or no such delivery of it, for this key" },
      handle: (_body, caller, { params }) => webhooks.redeliver(caller, params.id!, params.delivery!),
    },
  ];
}
