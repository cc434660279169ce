/**
 * A worker's side of the pool (cluster/primary.ts): it says when it listens, keeps the primary's table of
 * the pool for /health, answers the primary's collections of metrics, and asks for every worker's metrics
 * when /metrics is scraped. A worker whose primary is gone stops: nothing would replace or drain it.
 */
import type { Registry } from "prom-client";
import type { Logger } from "../log";
import { reply, type ToPrimary, type ToWorker, type WorkerInfo } from "./messages";

/** How long /metrics waits for the pool's figures before it answers with this worker's own. */
const METRICS_WAIT_MS = 3_000;
/** How often a worker checks that its primary still runs (besides the IPC channel's close). */
const PRIMARY_CHECK_MS = 1_000;

export interface WorkerLink {
  readonly index: number;
  /** The pool as the primary last told it. */
  workers(): WorkerInfo[];
  /** Tells the primary this worker listens. */
  ready(): void;
  /** Every worker's metrics (each series labelled with its `worker`), and the primary's. */
  metricsText(): Promise<string>;
  stop(): void;
}

/**
 * Joins the pool as worker `index`: this worker's metrics get the label `worker` (so the pool's can be
 * merged without adding up what must not be), and `onPrimaryLost` runs once if the primary goes away.
 */
export function joinPool(options: {
  index: number;
  registry: Registry;
  log: Logger;
  onPrimaryLost: () => void;
}): WorkerLink {
  const { index, registry, log } = options;
  registry.setDefaultLabels({ worker: String(index) });
  const send = (message: ToPrimary) => process.send?.(message);
  const waiting = new Map<number, (text: string) => void>();
  let workers: WorkerInfo[] = [];
  let asked = 0;
  let lost = false;

  const primaryLost = () => {
    if (lost) return;
    lost = true;
    log.error("the primary is gone: this worker stops");
    options.onPrimaryLost();
  };
  const parent = process.ppid;
  // A primary killed with SIGKILL closes the channel; the parent check covers a channel left open.
  const watch = setInterval(() => {
    if (process.ppid !== parent) primaryLost();
  }, PRIMARY_CHECK_MS);
  watch.unref();

  const onMessage = (message: ToWorker) => {
    switch (message.type) {
      case "workers":
        workers = message.workers;
        break;
      case "collect":
        void registry.getMetricsAsJSON().then(
          (metrics) => send({ type: "collected", id: message.id, metrics }),
          (error) => log.warn("metrics collection failed", { error }),
        );
        break;
      case "metrics":
        waiting.get(message.id)?.(message.text);
        break;
    }
  };
  process.on("message", onMessage);
  process.on("disconnect", primaryLost);

  return {
    index,
    workers: () => workers,
    ready: () => send({ type: "ready" }),
    async metricsText() {
      const id = ++asked;
      const merged = reply(waiting, id, METRICS_WAIT_MS);
      send({ type: "metrics", id });
      const text = await merged;
      if (text !== undefined) return text;
      log.warn("the primary did not merge the pool's metrics in time: answering this worker's own");
      return registry.metrics();
    },
    stop() {
      clearInterval(watch);
      process.off("message", onMessage);
      process.off("disconnect", primaryLost);
    },
  };
}
