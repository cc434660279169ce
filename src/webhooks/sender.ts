/**
 * Sends the outbox's deliveries (docs/interface.md §18.5): one loop per instance claims endpoints that are
 * due (outbox.ts: `FOR UPDATE SKIP LOCKED`, a lease of the timeout and 5 s), as many at once as
 * WEBHOOK_SENDERS leaves room for in flight, and sends each endpoint's oldest pending delivery, signed at the
 * attempt (its timestamp fresh, both secrets during a rotation); the outcome and the lease's release are
 * one transaction. A failure is tried again after the schedule's delay (schedule.ts); an instance killed
 * mid-attempt leaves a lease that runs out, and the delivery is tried again (counted) by whoever claims it.
 */
import { hostname } from "node:os";
import { type Logger, warnEveryMinute } from "../log";
import type { DeliveryClient, SendOutcome } from "./deliveryClient";
import type { Claimed, Outbox, OutboxFigures } from "./outbox";
import { retryDelayMs } from "./schedule";
import { signDelivery } from "./signature";

/** How a lease outlasts an attempt's timeout: the time to write its outcome. */
export const LEASE_MARGIN_MS = 5_000;
/**
 * How often the loop looks for due endpoints when it found none: from IDLE_POLL_MS, doubled while it finds
 * none, up to IDLE_POLL_MAX_MS (a producer here wakes it at once; another instance's deliveries, and retries
 * come due, wait at most that long). An idle instance so asks the database rarely, and its pool's other
 * connections are let go (db/database.ts's idle timeout).
 */
const IDLE_POLL_MS = 500;
const IDLE_POLL_MAX_MS = 5_000;
/** The wait after the database failed a claim. */
const CLAIM_RETRY_MS = 1_000;
/** How often the operator's figures are read from the database. */
const FIGURES_MS = 5_000;

export interface SenderEvents {
  attempt(result: SendOutcome["result"]): void;
  delivered(): void;
  figures(figures: OutboxFigures): void;
}

export interface SenderOptions {
  outbox: Outbox;
  client: Pick<DeliveryClient, "send">;
  /** An endpoint's secret as shown (`whsec_...`), from its sealed bytes (secrets.ts SecretBox.open). */
  openSecret(sealed: Uint8Array): string;
  /** WEBHOOK_SENDERS: attempts in flight at once in this instance. */
  senders: number;
  /** WEBHOOK_TIMEOUT_MS: the client's bound on an attempt. */
  timeoutMs: number;
  log: Logger;
  events?: SenderEvents;
}

export interface Senders {
  /** Deliveries were made: look now rather than at the next poll. */
  wake(): void;
  /** Claims no more, and waits for the attempts in flight (each bounded by the timeout). */
  stop(): Promise<void>;
}

export function startSenders(options: SenderOptions): Senders {
  const { outbox, log } = options;
  const warn = {
    claim: warnEveryMinute(log, "webhook deliveries could not be claimed; retrying"),
    finish: warnEveryMinute(
      log,
      "a webhook attempt's outcome could not be written; its lease runs out and it is tried again",
    ),
    figures: warnEveryMinute(log, "the webhook figures could not be read"),
  };
  const instance = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  let claims = 0;
  let idleMs = IDLE_POLL_MS;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  /** A wake that came while the loop was not asleep: its next sleep is skipped. */
  let woken = false;
  const wake = () => {
    idleMs = IDLE_POLL_MS;
    if (wakeUp) wakeUp();
    else woken = true;
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false;
        return resolve();
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });

  async function attempt(claimed: Claimed): Promise<void> {
    let outcome: SendOutcome;
    try {
      const headers = signDelivery({
        id: claimed.deliveryId,
        timestamp: Date.now() / 1000,
        body: claimed.body,
        secrets: claimed.secrets.map(options.openSecret),
      });
      outcome = await options.client.send({
        url: claimed.url,
        headers,
        body: claimed.body,
      });
    } catch (error) {
      // A secret sealed under another key (instances sharing a database with different keys), a bug.
      outcome = { ok: false, result: "network", error: (error as Error).message, ms: 0 };
    }
    options.events?.attempt(outcome.result);
    try {
      const finished = await outbox.finish(claimed, {
        ok: outcome.ok,
        status: outcome.status,
        error: outcome.error,
        retryInMs: outcome.ok ? 0 : retryDelayMs(claimed.attempts),
      });
      if (finished && outcome.ok) options.events?.delivered();
    } catch (error) {
      warn.finish({ error: (error as Error).message });
    }
  }

  async function loop() {
    while (!stopped) {
      if (inFlight.size >= options.senders) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed: Claimed[];
      try {
        claimed = await outbox.claim(
          `${instance}:${++claims}`,
          options.timeoutMs + LEASE_MARGIN_MS,
          options.senders - inFlight.size,
        );
      } catch (error) {
        warn.claim({ error: (error as Error).message });
        await sleep(CLAIM_RETRY_MS);
        continue;
      }
      if (claimed.length === 0) {
        await sleep(idleMs);
        idleMs = Math.min(idleMs * 2, IDLE_POLL_MAX_MS);
        continue;
      }
      idleMs = IDLE_POLL_MS;
      for (const one of claimed) {
        const task = attempt(one).finally(() => {
          inFlight.delete(task);
          wake();
        });
        inFlight.add(task);
      }
    }
  }

  async function readFigures() {
    try {
      options.events?.figures(await outbox.figures());
    } catch (error) {
      warn.figures({ error: (error as Error).message });
    }
  }

  const running = options.senders > 0 ? loop() : Promise.resolve();
  const figures = setInterval(() => void readFigures(), FIGURES_MS);
  void readFigures();
  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(figures);
      wake();
      await running;
      await Promise.all(inFlight);
    },
  };
}
