/**
 * What a family's dev node needs of the machine: a free loopback port, whether a process still runs, and
 * the node's process itself (started on a free port, a stale one killed first, stopped with its signal).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

/** A port the kernel gives a listener on 127.0.0.1 now (free until someone else takes it). */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Whether a process with this pid runs (a stale one left by a crash, say). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A node a family runs on this machine (its dev node): how to start it and tell it answers. */
export interface LocalProcessSpec {
  /** Its name in errors. */
  name: string;
  binary: string;
  /** Its arguments, listening for requests on `port`. */
  args(port: number): string[];
  /** Whether it answers on `port` (false, not a throw, while it cannot). */
  ready(port: number): Promise<boolean>;
  /** Where its pid is kept while it runs: one a killed service left running is killed first. */
  pidFile?: string;
  startTimeoutMs: number;
  pollMs: number;
  /** The signal that lets it save its state before it exits; SIGKILL after stopTimeoutMs. */
  stopSignal: "SIGINT" | "SIGTERM";
  stopTimeoutMs: number;
}

export interface LocalProcess {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Free ports tried before a start is given up (another process may take the one given first). */
const PORT_ATTEMPTS = 3;

/** Kills a process a killed service left running (its pid file says which). */
function killStale(pidFile: string): void {
  if (!existsSync(pidFile)) return;
  const stale = Number(readFileSync(pidFile, "utf8"));
  if (stale && alive(stale)) process.kill(stale, "SIGKILL");
  rmSync(pidFile, { force: true });
}

/** Starts the process on a free loopback port and waits until it answers; its stop ends it. */
export async function startLocalProcess(spec: LocalProcessSpec): Promise<LocalProcess> {
  const { pidFile } = spec;
  if (pidFile) killStale(pidFile);
  let lastError = "";
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = freePort();
    const child = Bun.spawn([spec.binary, ...spec.args(port)], {
      stdout: "ignore",
      stderr: "pipe",
      stdin: "ignore",
    });
    const deadline = Date.now() + spec.startTimeoutMs;
    while (Date.now() < deadline && child.exitCode === null && !(await spec.ready(port))) {
      await Bun.sleep(spec.pollMs);
    }
    if (child.exitCode === null && (await spec.ready(port))) {
      if (pidFile) writeFileSync(pidFile, String(child.pid));
      return {
        port,
        pid: child.pid,
        async stop() {
          if (child.exitCode === null) {
            child.kill(spec.stopSignal);
            const timer = setTimeout(() => child.kill("SIGKILL"), spec.stopTimeoutMs);
            await child.exited;
            clearTimeout(timer);
          }
          if (pidFile) rmSync(pidFile, { force: true });
        },
      };
    }
    child.kill("SIGKILL");
    await child.exited;
    lastError = (await new Response(child.stderr).text()).trim().split("\n").slice(-3).join(" ");
  }
  throw new Error(`${spec.name} did not start: ${lastError || "no answer on its port"}`);
}
