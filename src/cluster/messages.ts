/**
 * What the primary and its HTTP workers tell each other over Bun's IPC channel (cluster/primary.ts,
 * cluster/worker.ts). Metrics are carried as prom-client's JSON form, which the primary merges.
 */
import type { Registry } from "prom-client";
import { withTimeout } from "../timeout";

/** Set in a worker's environment: its slot. A process without it is the primary or serves alone. */
export const WORKER_ENV = "GATEWAY_WORKER";

export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** One slot of the pool, as /health shows it. */
export interface WorkerInfo {
  index: number;
  /** The process in the slot; null while none runs. */
  pid: number | null;
  state: "starting" | "up" | "down";
  /** Times its process was replaced after it died. */
  restarts: number;
  /** When it entered its state (ISO 8601). */
  since: string;
}

export type ToPrimary =
  | { type: "ready" }
  /** A worker asked for /metrics: the primary answers with every worker's, merged. */
  | { type: "metrics"; id: number }
  | { type: "collected"; id: number; metrics: MetricsJson };

/**
 * The answer a later message brings for `key` (handed to the function `waiting` holds for it), or undefined
 * when none comes within `ms`.
 */
export function reply<K, T>(waiting: Map<K, (value: T) => void>, key: K, ms: number): Promise<T | undefined> {
  const answered = new Promise<T>((resolve) => waiting.set(key, resolve));
  return withTimeout(answered, ms, () => new Error("no reply"))
    .catch(() => undefined)
    .finally(() => waiting.delete(key));
}

export type ToWorker =
  | { type: "workers"; workers: WorkerInfo[] }
  | { type: "collect"; id: number }
  | { type: "metrics"; id: number; text: string };
