/**
 * A real PostgreSQL server (Debian's) for the tests: a fresh cluster in a temp dir on a free loopback
 * port. As root it runs as the `postgres` user, since PostgreSQL refuses to run as root.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

const START_TIMEOUT_MS = 30_000;

export interface PgServer {
  port: number;
  adminUrl: string;
  /** A new empty database; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** The postmaster's process id (its backends are its children). */
  pid(): number;
  /** Stops the server (a fast shutdown), keeping its data: resume() starts it again on the same port. */
  halt(): Promise<void>;
  /**
   * Crashes the server (an immediate shutdown: every process quits at once, nothing more written: with
   * synchronous_commit off, the last commits are lost), keeping its data: resume() recovers it.
   */
  crash(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error("no PostgreSQL server under /usr/lib/postgresql (npm test installs it)");
  return join(root, versions[0]!, "bin");
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

let counter = 0;

/**
 * `durable`: PostgreSQL's own defaults (fsync, synchronous commit), as a bench measures a real server.
 * `preload`: shared_preload_libraries (a bench's `pg_stat_statements`). `settings`: more, by name.
 */
export async function startPostgres(
  options: { durable?: boolean; preload?: string[]; settings?: Record<string, string> } = {},
): Promise<PgServer> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const runAs = (cmd: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd);
  const dir = mkdtempSync(join(tmpdir(), "cg-pg-"));
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [initdb, ...initdbArgs] = runAs([
    join(bin, "initdb"),
    "-D",
    dir,
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
  ]);
  execFileSync(initdb!, initdbArgs, { stdio: "pipe" });
  const port = freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ReturnType<typeof Bun.spawn>;

  /** Starts the server on the data directory and waits until it answers. */
  async function launch(): Promise<void> {
    child = Bun.spawn(
      runAs([
        join(bin, "postgres"),
        "-D",
        dir,
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-k",
        dir,
        // Test data is disposable: trade durability for speed.
        ...(options.durable
          ? []
          : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
        // A run's services are stopped at its end (shared.ts's onTeardown), each holding up to its pool's 10
        // connections (db/database.ts), with its background loops (the indexer, webhooks' senders) keeping them open.
        "-c",
        "max_connections=1000",
        ...(options.preload ? ["-c", `shared_preload_libraries=${options.preload.join(",")}`] : []),
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
      ]),
      { stdout: "ignore", stderr: "pipe" },
    );
    const probe = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 2 });
    const deadline = Date.now() + START_TIMEOUT_MS;
    try {
      for (;;) {
        try {
          await probe`select 1`;
          return;
        } catch (error) {
          if (child.exitCode !== null || Date.now() > deadline) {
            const stderr = await new Response(child.stderr as ReadableStream).text();
            throw new Error(`PostgreSQL did not start: ${stderr.slice(-500) || (error as Error).message}`);
          }
          await Bun.sleep(100);
        }
      }
    } finally {
      await probe.end({ timeout: 1 });
    }
  }

  /** The postmaster's pid (as root, `child` is runuser). */
  function pid(): number {
    const pidFile = join(dir, "postmaster.pid");
    return existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : child.pid;
  }

  /** A shutdown by `signal` to the postmaster (not runuser), the data directory kept. */
  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    const postmaster = pid();
    try {
      process.kill(postmaster, signal);
    } catch {}
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await child.exited;
    clearTimeout(timer);
  }
  /** PostgreSQL's fast shutdown (SIGINT). */
  const halt = () => shutdown("SIGINT");

  await launch();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 2 });

  return {
    port,
    adminUrl,
    async createDatabase(prefix = "t") {
      const name = `${prefix}_${process.pid}_${++counter}`;
      await admin.unsafe(`create database "${name}"`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    pid,
    halt,
    // SIGQUIT: PostgreSQL's immediate shutdown.
    crash: () => shutdown("SIGQUIT"),
    resume: launch,
    async stop() {
      await admin.end({ timeout: 1 });
      if (child.exitCode === null) await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
