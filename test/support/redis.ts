/**
 * A real Redis server for a test (Debian's redis-server, installed by the pretest script), on loopback
 * with no persistence. `halt` stops it (connections refused) and `resume` starts it again on the same port,
 * empty, as a Redis restarted without persistence comes back.
 */
import { freePort } from "./service";
import { onTeardown } from "./shared";

export interface RedisServer {
  url: string;
  port: number;
  halt(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the process without closing anything (SIGSTOP): a server that hangs; `thaw` wakes it. */
  freeze(): void;
  thaw(): void;
  /** A command run with redis-cli, its output trimmed. */
  cli(...args: string[]): Promise<string>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = freePort();
  let child: ReturnType<typeof Bun.spawn> | undefined;
  const cli = async (...args: string[]) => {
    const run = Bun.spawn(["redis-cli", "-h", "127.0.0.1", "-p", String(port), ...args], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(run.stdout).text();
    await run.exited;
    return out.trim();
  };
  async function launch() {
    child = Bun.spawn(
      ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdout: "ignore", stderr: "inherit" },
    );
    const deadline = Date.now() + 10_000;
    while ((await cli("ping")) !== "PONG") {
      if (Date.now() > deadline) throw new Error("redis-server did not start");
      await Bun.sleep(20);
    }
  }
  async function halt() {
    if (!child || child.exitCode !== null) return;
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await child.exited;
  }
  await launch();
  onTeardown(halt);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    halt,
    resume: launch,
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    cli,
  };
}
