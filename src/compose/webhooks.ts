/**
 * Webhooks (docs/interface.md §18), where watch filters are served: the endpoints' API (§18.1), and the
 * sending side (§18.4-18.6): the producer, on the instance that writes the
 * index (it makes the deliveries of processed blocks, and of pending results where the family matches its
 * mempool), and the senders, on every instance (WEBHOOK_SENDERS attempts in flight; 0: none here). Both stop
 * at shutdown: the producer's pass and the attempts in flight are waited for (each bounded by
 * WEBHOOK_TIMEOUT_MS); a delivery whose outcome was not written is tried again once its lease runs out.
 */
import type { ChainInfo } from "../blockchain";
import { createBlockQueries } from "../db/blockQueries";
import type { Database } from "../db/database";
import { guardDatabase } from "../db/guardDatabase";
import { createWebhookStore } from "../db/webhookStore";
import type { ChainFollower } from "../engine/chainFollower";
import { createDeliveryClient } from "../webhooks/deliveryClient";
import { createWebhookEndpoints, type WebhookEndpoints } from "../webhooks/endpoints";
import { createOutbox } from "../webhooks/outbox";
import { startProducer } from "../webhooks/producer";
import { createSecretBox, loadSecretsKey, type SecretBox } from "../webhooks/secrets";
import { startSenders } from "../webhooks/sender";
import type { DataPath } from "./dataPath";
import { databaseEvents } from "./metricEvents";
import type { StartContext } from "./startContext";

export function startWebhooks(
  ctx: StartContext,
  parts: { database: Database; data: DataPath; head: ChainFollower; chain: ChainInfo },
): WebhookEndpoints | undefined {
  const { config, log, metrics, lifetime } = ctx;
  const { database, data, head, chain } = parts;
  const { watch, indexer } = data;
  // Deliveries are watch-filter results: where none are served (the routes refuse naming the chain), nothing.
  if (!watch) return undefined;
  // The key is read (or its file made) when a secret is first sealed or opened.
  let box: SecretBox | undefined;
  const secrets = () =>
    (box ??= createSecretBox(
      loadSecretsKey({ configured: config.webhookSecretsKey, dataDir: config.dataDir }),
    ));
  const client = createDeliveryClient({
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
  });
  lifetime.defer(() => client.close());
  // Statements carry the service's deadline; reads are tried again once after a lost connection, and so is a
  // redelivery (setting a delivery pending twice is setting it once).
  const store = guardDatabase(createWebhookStore(database.sql), {
    timeoutMs: config.dbStatementTimeoutMs,
    retry: ["list", "get", "deliveries", "redeliver"],
    events: databaseEvents(metrics),
  });
  const endpoints = createWebhookEndpoints({
    store,
    seal: (secret) => secrets().seal(secret),
    urlProblem: (url) => client.urlProblem(url),
    chain: chain.blockchain,
    pendingRefused: data.pending
      ? undefined
      : `pending results are not served on ${chain.blockchain}: its watch filters match blocks only, not the nodes' mempool`,
    maxPerKey: config.maxWebhooksPerKey,
  });
  const outbox = createOutbox(database.sql);
  const senders = startSenders({
    outbox,
    client,
    openSecret: (sealed) => secrets().open(sealed),
    senders: config.webhookSenders,
    timeoutMs: config.webhookTimeoutMs,
    log,
    events: {
      attempt: (result) => metrics.webhookAttempts.inc({ result }),
      delivered: () => metrics.webhookDeliveries.inc({ outcome: "delivered" }),
      figures(figures) {
        metrics.webhookPending.set(figures.pending);
        metrics.webhookOldestPending.set(figures.oldestSeconds);
        metrics.webhookEndpointsFailing.set(figures.failing);
      },
    },
  });
  lifetime.defer(() => senders.stop());
  // Deliveries are made of processed blocks, by the instance that writes the index.
  if (indexer) {
    const blocks = createBlockQueries(database.sql);
    const producer = startProducer({
      outbox,
      watch,
      indexedHash: async (n) => (await blocks.block(n))?.hash,
      head,
      chain: chain.blockchain,
      leading: () => indexer.leading,
      pending: data.pending,
      maxBacklog: config.webhookMaxBacklog,
      wake: senders.wake,
      log,
      events: { dropped: (count) => metrics.webhookDeliveries.inc({ outcome: "dropped" }, count) },
    });
    data.onProcessed(producer.processed);
    lifetime.defer(() => producer.stop());
  }
  return endpoints;
}
