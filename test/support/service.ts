/** Starts the service in-process against real parts (anvil, PostgreSQL) on a free loopback port. */
import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, loadConfig } from "../../src/config";
import { createLogger, type LogLevel } from "../../src/log";
import { startService } from "../../src/service";
import { onTeardown, postgresServer } from "./shared";

export interface TestService {
  url: string;
  /** Empty when the service runs its embedded PostgreSQL. */
  databaseUrl: string;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startTestService(options: {
  upstreamUrls: string[];
  env?: Record<string, string>;
  /** Reuse a data directory (kept after stop) and database, as a restart would. */
  dataDir?: string;
  /** null: no DATABASE_URL, so the service runs its embedded PostgreSQL (PGlite) under the data dir. */
  databaseUrl?: string | null;
  /** Receives every log line (default: stdout). */
  logWrite?: (line: string) => void;
}): Promise<TestService> {
  const databaseUrl =
    options.databaseUrl === null
      ? ""
      : (options.databaseUrl ?? (await (await postgresServer()).createDatabase()));
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "cg-data-"));
  const config: Config = loadConfig({
    PORT: "0",
    UPSTREAM_URLS: options.upstreamUrls.join(","),
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    // The indexer's reads would show in the upstream counts the engine tests assert: on where a test asks.
    INDEXER: "off",
    ...options.env,
  });
  const service = await startService(
    config,
    createLogger({ level: config.logLevel as LogLevel, write: options.logWrite }),
  );
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.stop();
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  onTeardown(stop);
  return { url: service.url, databaseUrl, dataDir, stop };
}

export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

export interface ServiceProcess {
  url: string;
  pid: number;
  dataDir: string;
  databaseUrl: string;
  /** Resident memory of the process, from its /metrics. */
  rss(): Promise<number>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** The service as its own process (for memory measurements and kill -9), against real parts. */
export async function startServiceProcess(options: {
  upstreamUrls: string[];
  env?: Record<string, string>;
  dataDir?: string;
  databaseUrl?: string;
}): Promise<ServiceProcess> {
  const databaseUrl = options.databaseUrl ?? (await (await postgresServer()).createDatabase());
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "cg-proc-"));
  const port = freePort();
  const child = Bun.spawn(
    [
      process.execPath,
      ...(process.env.SMOL ? ["--smol"] : []),
      join(import.meta.dir, "..", "..", "src", "main.ts"),
    ],
    {
      env: {
        ...process.env,
        PORT: String(port),
        UPSTREAM_URLS: options.upstreamUrls.join(","),
        DATABASE_URL: databaseUrl,
        DATA_DIR: dataDir,
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
        BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
        INDEXER: "off",
        ...options.env,
      },
      stdout: "inherit",
      stderr: "inherit",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {}
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error("the service did not come up");
    await Bun.sleep(100);
  }
  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await child.exited;
  };
  onTeardown(() => kill("SIGKILL"));
  return {
    url,
    pid: child.pid,
    dataDir,
    databaseUrl,
    async rss() {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^gateway_process_resident_memory_bytes (\d+)/m.exec(text)![1]);
    },
    kill,
    stop: () => kill("SIGTERM"),
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

/** Sends every request at once from a separate process (test/support/load.ts says why). */
export async function concurrently(
  requests: { url: string; body?: unknown; method?: string; headers?: Record<string, string> }[],
): Promise<Answer[]> {
  const dir = mkdtempSync(join(tmpdir(), "cg-load-"));
  try {
    const input = join(dir, "requests.json");
    const output = join(dir, "answers.json");
    await Bun.write(
      input,
      JSON.stringify(
        requests.map((r) => ({
          ...r,
          body: r.body === undefined || typeof r.body === "string" ? r.body : JSON.stringify(r.body),
        })),
      ),
    );
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "load.ts"), input, output], {
      env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "8192" },
      stdout: "ignore",
      stderr: "pipe",
    });
    if ((await child.exited) !== 0)
      throw new Error(`load client failed: ${await new Response(child.stderr).text()}`);
    const answers = (await Bun.file(output).json()) as Omit<Answer, "json">[];
    return answers.map((a) => {
      let json: any;
      try {
        json = JSON.parse(a.text);
      } catch {
        json = undefined;
      }
      return { ...a, json };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** POST a JSON body (or raw text) and read the answer as text and as JSON. */
export async function post(
  url: string,
  body: unknown,
  options: { headers?: Record<string, string>; raw?: boolean; method?: string } = {},
) {
  const response = await fetch(url, {
    method: options.method ?? "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: options.raw ? (body as string) : body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * POST a JSON body from a given loopback address (127.0.0.2, say: another client's IP), over a connection
 * of its own; fetch cannot choose its source address.
 */
export async function postFrom(
  from: string,
  url: string,
  body: unknown,
): Promise<{ status: number; json: any }> {
  const { hostname, port, pathname, search } = new URL(url);
  const text = JSON.stringify(body);
  const socket = connectTcp({ port: Number(port), host: hostname, localAddress: from });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve());
    socket.on("error", reject);
  });
  socket.write(
    [
      `POST ${pathname}${search} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(text)}`,
      "Connection: close",
      "",
      text,
    ].join("\r\n"),
  );
  await done;
  const answer = Buffer.concat(chunks).toString("utf8");
  const end = answer.indexOf("\r\n\r\n");
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(answer)![1]),
    json: JSON.parse(answer.slice(end + 4)),
  };
}
