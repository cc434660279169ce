/**
 * The README's first command, run as a user would (with a temporary DATA_DIR and a free port), brings up
 * a service on its embedded defaults (dev chain + embedded PostgreSQL) that answers eth_blockNumber and
 * /health.
 */
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { post } from "./support/service";

const ROOT = join(import.meta.dir, "..");
const START_TIMEOUT_MS = 150_000;

function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/```sh\n([^`]+?)\n```/g)].map((m) => m[1]!.trim());
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

test("the README's first two commands start the service and run the tests", () => {
  const [start, tests] = readmeCommands();
  expect(start).toBe("npm install && npm start");
  expect(tests).toBe("npm install && npm test");
  const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  expect(ci).toContain(`\n${tests}\n`);
});

test(
  "the first README command serves eth_blockNumber and /health on embedded defaults",
  async () => {
    const [start] = readmeCommands();
    const dataDir = mkdtempSync(join(tmpdir(), "cg-readme-"));
    const port = freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATA_DIR: dataDir,
      PORT: String(port),
    };
    for (const name of ["UPSTREAM_URLS", "DATABASE_URL", "API_KEYS"]) delete env[name];
    const child = spawn("bash", ["-c", start!], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const base = `http://127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + START_TIMEOUT_MS;
      let health: any;
      while (Date.now() < deadline && child.exitCode === null) {
        try {
          health = await (await fetch(`${base}/health`)).json();
          break;
        } catch {
          await Bun.sleep(250);
        }
      }
      if (!health) throw new Error(`the service did not come up:\n${output.slice(-3000)}`);
      expect(health).toMatchObject({
        status: "ok",
        chain: "ETH",
        chainId: "31337",
        upstream: { status: "ok", headBlockNumber: 0 },
        database: { status: "ok", embedded: true },
      });
      const rpc = await post(`${base}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id: 1,
        method: "eth_blockNumber",
        params: [],
      });
      expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x0" });
      const rest = await post(`${base}/node/rest/eth_blockNumber`, undefined);
      expect(rest.json).toBe("0x0");
      expect(output).toContain("no API key is configured");
    } finally {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {}
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await Promise.race([exited, Bun.sleep(15_000)]);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
  START_TIMEOUT_MS + 30_000,
);
