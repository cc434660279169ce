/**
 * Picks the disk tier's store: bun:sqlite (WAL), lmdb, and one file per record (write to a temporary file,
 * rename), each holding the same msgpack records. Measures writes, then random reads of records that are
 * all on disk (page-cache warm, as a disk tier in use is), for small (~3 KB) and large (~128 KB) records.
 * Usage: bun bench/diskStores.ts  (BENCH_RECORDS, default 2000 per size)
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open as openLmdb } from "lmdb";
import { pack, unpack } from "msgpackr";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 2000);
const READS = 20_000;

interface Store {
  name: string;
  /** Writes as the disk tier does: without waiting for each commit. */
  put(key: string, value: Uint8Array): void;
  /** Waits until every write is durable. */
  flushed(): Promise<void>;
  get(key: string): Uint8Array | undefined;
  close(): void | Promise<void>;
}

function sqliteStore(dir: string): Store {
  const db = new Database(join(dir, "cache.sqlite"), { create: true });
  db.exec("pragma journal_mode = wal; pragma synchronous = normal; pragma busy_timeout = 5000;");
  db.exec("create table if not exists r (k text primary key, v blob not null) without rowid");
  const put = db.prepare("insert or replace into r (k, v) values (?, ?)");
  const get = db.prepare<{ v: Uint8Array }, [string]>("select v from r where k = ?");
  return {
    name: "bun:sqlite (WAL)",
    put: (k, v) => void put.run(k, v),
    flushed: async () => {},
    get: (k) => get.get(k)?.v,
    close: () => db.close(),
  };
}

function lmdbStore(dir: string): Store {
  const db = openLmdb({ path: join(dir, "lmdb"), encoding: "binary", mapSize: 8 * 1024 ** 3 });
  return {
    name: "lmdb",
    put: (k, v) => void db.put(k, v),
    flushed: async () => {
      await db.flushed;
    },
    get: (k) => db.getBinary(k) as Uint8Array | undefined,
    close: () => db.close(),
  };
}

function fileStore(dir: string): Store {
  const root = join(dir, "files");
  mkdirSync(root, { recursive: true });
  const path = (k: string) => join(root, k);
  return {
    name: "files (tmp + rename)",
    put: (k, v) => {
      writeFileSync(`${path(k)}.tmp`, v);
      renameSync(`${path(k)}.tmp`, path(k));
    },
    flushed: async () => {},
    get: (k) => {
      try {
        return readFileSync(path(k));
      } catch {
        return undefined;
      }
    },
    close: () => {},
  };
}

function record(size: number, i: number): Uint8Array {
  const raw = Buffer.alloc(size, 0x61 + (i % 26));
  return pack({ v: 1, key: `k${i}`, raw, at: Date.now() });
}

const fmt = (n: number, d = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const lines = [
  "| store | record | writes/s | write MB/s | reads/s | read MB/s | read p50 | read p99 |",
  "|---|---|---:|---:|---:|---:|---:|---:|",
];

for (const size of [3 * 1024, 128 * 1024]) {
  for (const make of [sqliteStore, lmdbStore, fileStore]) {
    const dir = mkdtempSync(join(tmpdir(), "cg-store-"));
    const store = make(dir);
    const values = Array.from({ length: RECORDS }, (_, i) => record(size, i));
    const bytes = values[0]!.length;
    let t = performance.now();
    for (let i = 0; i < RECORDS; i++) store.put(`k${i}`, values[i]!);
    await store.flushed();
    const writeS = (performance.now() - t) / 1000;
    const latencies = new Float64Array(READS);
    t = performance.now();
    for (let i = 0; i < READS; i++) {
      const k = `k${(i * 7919) % RECORDS}`;
      const s = performance.now();
      const v = store.get(k);
      if (!v || (unpack(v) as { key: string }).key !== k) throw new Error(`${store.name}: bad read of ${k}`);
      latencies[i] = performance.now() - s;
    }
    const readS = (performance.now() - t) / 1000;
    latencies.sort();
    lines.push(
      `| ${store.name} | ${fmt(bytes / 1024, 1)} KB | ${fmt(RECORDS / writeS)} | ${fmt((RECORDS * bytes) / writeS / 1e6)} | ${fmt(READS / readS)} | ${fmt((READS * bytes) / readS / 1e6)} | ${fmt(latencies[READS >> 1]! * 1000, 1)} µs | ${fmt(latencies[Math.floor(READS * 0.99)]! * 1000, 1)} µs |`,
    );
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(lines.join("\n"));
