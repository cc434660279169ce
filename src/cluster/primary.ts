/**
 * WORKERS > 1: this process is the primary of a pool of HTTP workers. Each worker is the whole service
 * (service.ts) in a process of its own, listening on the same port with SO_REUSEPORT, so the kernel spreads
 * connections over them. They share the disk tier (LMDB lets several processes use one directory), the
 * PostgreSQL server and, through its advisory lock, one indexer. The primary serves nothing itself: it
 * starts the dev chain when there is one to start, starts the workers, replaces one that dies, merges their
 * metrics for /metrics, tells them the pool's state for /health, and stops them all on shutdown.
 */
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import type { Config } from "../config";
import type { DevNode } from "../families/family";
import { familyOf } from "../families/familyOf";
import type { Logger } from "../log";
import type { Service } from "../service";
import {
  type MetricsJson,
  reply,
  type ToPrimary,
  type ToWorker,
  WORKER_ENV,
  type WorkerInfo,
} from "./messages";

/** How long start-up waits for every worker to listen. */
const START_WAIT_MS = 120_000;
/** The wait before a dead worker is replaced; it doubles while replacements die young, up to the max. */
const RESTART_DELAY_MS = 200;
const MAX_RESTART_DELAY_MS = 10_000;
/** A worker that ran this long died of something else than its start: its replacement waits the least. */
const STABLE_AFTER_MS = 30_000;
/** How long a worker's metrics may take to reach the primary before /metrics goes without them. */
const COLLECT_WAIT_MS = 2_000;
/** How long shutdown waits for a worker to stop before it is killed. */
const STOP_WAIT_MS = 30_000;

interface Slot {
  index: number;
  child?: Bun.Subprocess;
  state: WorkerInfo["state"];
  restarts: number;
  since: number;
  startedAt: number;
  delayMs: number;
}

function freePort(host: string): number {
  const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export async function startPrimary(options: {
  config: Config;
  log: Logger;
  entry: string;
}): Promise<Service> {
  const { config, log, entry } = options;
  const registry = new Registry();
  const slots: Slot[] = [];
  new Gauge({
    name: "gateway_workers_up",
    help: "HTTP worker processes listening (WORKERS)",
    registers: [registry],
    collect() {
      this.set(slots.filter((s) => s.state === "up").length);
    },
  });
  const restarts = new Counter({
    name: "gateway_worker_restarts_total",
    help: "Worker processes replaced after they died",
    registers: [registry],
  });
  const timers = new Set<Timer>();
  const collections = new Map<string, (metrics: MetricsJson) => void>();
  let collected = 0;
  let stopping = false;
  let devChain: DevNode | undefined;
  let startFailed: ((error: Error) => void) | undefined;
  let allUp: (() => void) | undefined;

  const table = (): WorkerInfo[] =>
    slots.map((s) => ({
      index: s.index,
      pid: s.child?.pid ?? null,
      state: s.state,
      restarts: s.restarts,
      since: new Date(s.since).toISOString(),
    }));
  const tell = (slot: Slot, message: ToWorker) => {
    try {
      slot.child?.send(message);
    } catch {
      // Its channel closed: its exit is on the way and is handled there.
    }
  };
  const broadcast = () => {
    const message: ToWorker = { type: "workers", workers: table() };
    for (const slot of slots) tell(slot, message);
  };
  const enter = (slot: Slot, state: WorkerInfo["state"]) => {
    slot.state = state;
    slot.since = Date.now();
    broadcast();
  };

  /** Every listening worker's metrics and the primary's, one series per worker. */
  async function mergedMetrics(): Promise<string> {
    const id = ++collected;
    const replies = slots
      .filter((s) => s.state === "up")
      .map((slot) => {
        const answer = reply(collections, `${id}:${slot.index}`, COLLECT_WAIT_MS);
        tell(slot, { type: "collect", id });
        return answer;
      });
    const all = [await registry.getMetricsAsJSON(), ...(await Promise.all(replies))];
    return AggregatorRegistry.aggregate(all.filter((m): m is MetricsJson => m !== undefined)).metrics();
  }

  function onMessage(slot: Slot, message: ToPrimary) {
    switch (message.type) {
      case "ready":
        enter(slot, "up");
        log.info("worker listening", { worker: slot.index, pid: slot.child?.pid });
        if (slots.every((s) => s.state === "up")) allUp?.();
        break;
      case "collected":
        collections.get(`${message.id}:${slot.index}`)?.(message.metrics);
        break;
      case "metrics":
        void mergedMetrics().then(
          (text) => tell(slot, { type: "metrics", id: message.id, text }),
          (error) => log.warn("merging the workers' metrics failed", { error }),
        );
        break;
    }
  }

  function onExit(slot: Slot, child: Bun.Subprocess, code: number | null, signal: string | number | null) {
    if (slot.child !== child) return;
    slot.child = undefined;
    enter(slot, "down");
    if (stopping) return;
    const error = new Error(`worker ${slot.index} exited during start-up (code ${code}, signal ${signal})`);
    if (startFailed) return startFailed(error);
    const ranMs = Date.now() - slot.startedAt;
    slot.delayMs =
      ranMs >= STABLE_AFTER_MS
        ? RESTART_DELAY_MS
        : Math.min(Math.max(slot.delayMs * 2, RESTART_DELAY_MS), MAX_RESTART_DELAY_MS);
    log.error("worker died: replacing it", {
      worker: slot.index,
      pid: child.pid,
      code,
      signal,
      ranMs,
      inMs: slot.delayMs,
    });
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (stopping) return;
      slot.restarts++;
      restarts.inc();
      spawn(slot);
    }, slot.delayMs);
    timers.add(timer);
  }

  function spawn(slot: Slot) {
    const child: Bun.Subprocess = Bun.spawn({
      cmd: [process.execPath, ...process.execArgv, entry],
      env: { ...env, [WORKER_ENV]: String(slot.index) },
      stdio: ["ignore", "inherit", "inherit"],
      ipc: (message) => onMessage(slot, message as ToPrimary),
      onExit: (_process, code, signal) => onExit(slot, child, code, signal),
    });
    slot.child = child;
    slot.startedAt = Date.now();
    enter(slot, "starting");
  }

  async function stop() {
    stopping = true;
    for (const timer of timers) clearTimeout(timer);
    await Promise.all(
      slots.map(async (slot) => {
        const child = slot.child;
        if (!child) return;
        child.kill("SIGTERM");
        const stopped = await Promise.race([child.exited.then(() => true), Bun.sleep(STOP_WAIT_MS)]);
        if (!stopped) {
          log.warn("worker did not stop in time: killing it", { worker: slot.index, pid: child.pid });
          child.kill("SIGKILL");
          await child.exited;
        }
      }),
    );
    await devChain?.stop();
  }

  const port = config.port === 0 ? freePort(config.host) : config.port;
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port) };
  try {
    if (config.upstreamUrls.length === 0) {
      devChain = await familyOf(config.chain).startDevNode({
        dataDir: config.dataDir,
        log,
        chain: config.chain,
      });
      env.UPSTREAM_URLS = devChain.url;
      env.HEAD_POLL_MS ??= String(devChain.headPollMs);
    }
    const started = new Promise<void>((resolve, reject) => {
      allUp = resolve;
      startFailed = reject;
      setTimeout(
        () => reject(new Error(`the workers did not all listen within ${START_WAIT_MS / 1000} s`)),
        START_WAIT_MS,
      ).unref();
    });
    for (let index = 0; index < config.workers; index++) {
      const slot: Slot = { index, state: "starting", restarts: 0, since: 0, startedAt: 0, delayMs: 0 };
      slots.push(slot);
      spawn(slot);
    }
    await started;
    startFailed = undefined;
  } catch (error) {
    await stop();
    throw error;
  }
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  log.info("listening", { url, workers: config.workers, status: `${url}/status` });
  return { url, stop };
}
