import { heapStats } from "bun:jsc";
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createLogger } from "../log";
import { startEmbeddedPostgres } from "./embedded";

test("the embedded PostgreSQL answers from a thread of its own: none of its WebAssembly is in this thread's heap, and a stop ends it", async () => {
  // Other test files of this run may have loaded WebAssembly here: only what this start adds counts.
  const wasm = () => {
    const counts = heapStats().objectTypeCounts;
    return (counts.WebAssemblyFunction ?? 0) + (counts["WebAssembly.Memory"] ?? 0);
  };
  const before = wasm();
  const dir = mkdtempSync(join(tmpdir(), "cg-embedded-"));
  const embedded = await startEmbeddedPostgres({
    dir,
    sharedBuffersMb: 16,
    maxConnections: 1,
    log: createLogger({ level: "error" }),
  });
  try {
    const sql = postgres(`postgres://postgres@${embedded.address}/postgres`, { max: 1, onnotice: () => {} });
    const [row] = await sql`select 6 * 7 as answer, current_setting('shared_buffers') as buffers`;
    expect(row).toEqual({ answer: 42, buffers: "16MB" });
    await sql.end();
    // PGlite on this thread would add ~8,000 WebAssembly functions and its memory.
    expect(wasm()).toBeLessThanOrEqual(before);
  } finally {
    await embedded.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const after = postgres(`postgres://postgres@${embedded.address}/postgres`, { max: 1, connect_timeout: 2 });
  await expect(after`select 1`).rejects.toThrow();
  await after.end({ timeout: 0 });
}, 60_000);
