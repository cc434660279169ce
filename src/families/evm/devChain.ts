/**
 * A local dev chain: anvil from the @foundry-rs/anvil npm package, on a free loopback port. The service
 * starts one when UPSTREAM_URLS is unset (its state kept under DATA_DIR); the tests start their own.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../../log";

const START_TIMEOUT_MS = 20_000;
const POLL_MS = 50;
const STOP_TIMEOUT_MS = 5_000;
const PORT_ATTEMPTS = 3;
/** How often anvil writes its state file, so a killed process loses at most this much chain. */
const STATE_INTERVAL_S = 5;

export interface DevChain {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** The real anvil binary (not the Node wrapper, which adds a process and a startup cost). */
export function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "anvil");
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(1_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startAnvil(
  options: { stateFile?: string; args?: string[]; log?: Logger } = {},
): Promise<DevChain> {
  const { stateFile, log } = options;
  const pidFile = stateFile ? `${stateFile}.pid` : undefined;
  if (stateFile) {
    mkdirSync(dirname(stateFile), { recursive: true });
    // An anvil left behind by a killed service would keep overwriting the same state file.
    if (pidFile && existsSync(pidFile)) {
      const stale = Number(readFileSync(pidFile, "utf8"));
      if (stale && alive(stale)) process.kill(stale, "SIGKILL");
      rmSync(pidFile, { force: true });
    }
  }
  const binary = anvilBinary();
  let lastError = "";
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = freePort();
    const args = ["--host", "127.0.0.1", "--port", String(port), "--quiet"];
    if (stateFile) args.push("--state", stateFile, "--state-interval", String(STATE_INTERVAL_S));
    args.push(...(options.args ?? []));
    const child = Bun.spawn([binary, ...args], { stdout: "ignore", stderr: "pipe", stdin: "ignore" });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && child.exitCode === null && !(await answers(url))) {
      await Bun.sleep(POLL_MS);
    }
    if (child.exitCode === null && (await answers(url))) {
      if (pidFile) writeFileSync(pidFile, String(child.pid));
      log?.info("dev chain started", { url, pid: child.pid, stateFile });
      return {
        url,
        port,
        pid: child.pid,
        async stop() {
          if (child.exitCode !== null) return;
          // SIGINT lets anvil write its state file before it exits.
          child.kill("SIGINT");
          const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
          await child.exited;
          clearTimeout(timer);
          if (pidFile) rmSync(pidFile, { force: true });
        },
      };
    }
    child.kill("SIGKILL");
    await child.exited;
    lastError = (await new Response(child.stderr).text()).trim().split("\n").slice(-3).join(" ");
  }
  throw new Error(`anvil did not start: ${lastError || "no answer on its port"}`);
}
