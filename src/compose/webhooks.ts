/**
 * Webhooks' sending side (docs/interface.md §18.4-18.6): the producer, on the instance that writes the
 * index (it makes the deliveries of processed blocks, and of pending results where the family matches its
 * mempool), and the senders, on every instance (WEBHOOK_SENDERS attempts in flight; 0: none here). Both stop
 * at shutdown: the producer's pass and the attempts in flight are waited for (each bounded by
 * WEBHOOK_TIMEOUT_MS); a delivery whose outcome was not written is tried again once its lease runs out.
 */
import type { ChainInfo } from "../blockchain";
import { createBlockQueries } from "../db/blockQueries";
import type { Database } from "../db/database";
import type { ChainFollower } from "../engine/chainFollower";
import { createDeliveryClient } from "../webhooks/deliveryClient";
import { createOutbox } from "../webhooks/outbox";
import { startProducer } from "../webhooks/producer";
import { createSecretBox, loadSecretsKey, type SecretBox } from "../webhooks/secrets";
import { startSenders } from "../webhooks/sender";
import type { DataPath } from "./dataPath";
import type { StartContext } from "./startContext";

export function startWebhooks(
  ctx: StartContext,
  parts: { database: Database; data: DataPath; head: ChainFollower; chain: ChainInfo },
): void {
  const { config, log, metrics, lifetime } = ctx;
  const { database, data, head, chain } = parts;
  // The key is read (or its file made) when a secret is first opened, as the endpoints' API does to seal one.
  let box: SecretBox | undefined;
  const openSecret = (sealed: Uint8Array) => {
    box ??= createSecretBox(
      loadSecretsKey({ configured: config.webhookSecretsKey, dataDir: config.dataDir }),
    );
    return box.open(sealed);
  };
  const client = createDeliveryClient({
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
  });
  lifetime.defer(() => client.close());
  const outbox = createOutbox(database.sql);
  const senders = startSenders({
    outbox,
    client,
    openSecret,
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
  const { watch, indexer } = data;
  // Deliveries are made of processed blocks: where the family keeps no index there are none to make.
  if (watch && indexer) {
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
}
