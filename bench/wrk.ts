/** wrk (Debian's) as the load generator: a Lua script cycles through the request bodies given. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WrkResult {
  requestsPerSecond: number;
  /** Response bytes per second, as wrk counts them (headers included). */
  bytesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  requests: number;
  errors: number;
}

export function ensureWrk(): string {
  const found = Bun.which("wrk");
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error("wrk is missing: sudo apt-get install -y wrk");
  console.error("installing Debian's wrk with apt-get");
  const apt = Bun.spawnSync(
    ["bash", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk"],
    {
      stdout: "inherit",
      stderr: "inherit",
    },
  );
  const installed = Bun.which("wrk");
  if (apt.exitCode !== 0 || !installed) throw new Error("could not install wrk with apt-get");
  return installed;
}

function luaLongString(text: string): string {
  let level = 1;
  while (text.includes(`]${"=".repeat(level)}]`)) level++;
  const eq = "=".repeat(level);
  return `[${eq}[${text}]${eq}]`;
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const n = Number(match[1]);
  return match[2] === "us" ? n / 1000 : match[2] === "s" ? n * 1000 : n;
}

/**
 * wrk against `url`: POSTs cycling through `bodies`, or with `paths`, GETs cycling through those paths (each
 * a path on `url`'s host, e.g. "/esplora/mempool").
 */
export async function wrk(options: {
  url: string;
  bodies?: string[];
  paths?: string[];
  connections: number;
  threads: number;
  durationS: number;
  headers?: Record<string, string>;
  /** A request unanswered this long is a timeout, its latency unrecorded (wrk's default: 2 s). */
  timeoutS?: number;
}): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), "cg-wrk-"));
  try {
    const get = options.paths !== undefined;
    const headers = get ? { ...options.headers } : { "Content-Type": "application/json", ...options.headers };
    const items = options.paths ?? options.bodies ?? [];
    if (items.length === 0) throw new Error("wrk needs bodies or paths");
    const lua = [
      `local items = { ${items.map(luaLongString).join(", ")} }`,
      `local headers = { ${Object.entries(headers)
        .map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
        .join(", ")} }`,
      "local i = 0",
      "request = function()",
      "  i = i % #items + 1",
      get
        ? '  return wrk.format("GET", items[i], headers)'
        : '  return wrk.format("POST", nil, headers, items[i])',
      "end",
      // wrk's --latency table stops at p99; the tail beyond it is printed from its histogram (microseconds).
      "done = function(summary, latency, requests)",
      '  io.write(string.format("P999 %d\\n", latency:percentile(99.9)))',
      "end",
    ].join("\n");
    const script = join(dir, "post.lua");
    writeFileSync(script, lua);
    const child = Bun.spawn(
      [
        ensureWrk(),
        "-t",
        String(options.threads),
        "-c",
        String(options.connections),
        "-d",
        `${options.durationS}s`,
        "--latency",
        ...(options.timeoutS === undefined ? [] : ["--timeout", `${options.timeoutS}s`]),
        "-s",
        script,
        options.url,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const [out, err] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
    ]);
    if ((await child.exited) !== 0) throw new Error(`wrk failed: ${err || out}`);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const transfer = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
    const unit = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[(transfer?.[2] ?? "B") as "B"];
    const bytesPerSecond = Number(transfer?.[1] ?? 0) * unit;
    const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? "");
    const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? "");
    const p999 = Number(/^P999 (\d+)/m.exec(out)?.[1]) / 1000;
    const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((n, x) => n + Number(x), 0) : 0);
    return { requestsPerSecond: rps, bytesPerSecond, p50Ms: p50, p99Ms: p99, p999Ms: p999, requests, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
