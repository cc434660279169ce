/**
 * The disk tier: final answers only, in LMDB (chosen by bench/diskStores.ts; figures in the README), as
 * msgpack records. LMDB's copy-on-write transactions make a crash (kill -9) lose at most the writes not
 * yet committed, never tear one, and let several processes share one directory. Each record carries its
 * full key and a CRC32 of its body: a record that does not verify is a miss and is dropped.
 *
 * The tier is bounded in bytes: an order index (by write time) names the oldest records, which are
 * evicted when the pages in use pass a high-water mark. A record read long after it was written is moved
 * to the back of the order, so eviction approximates least-recently-used without a write per read.
 */
import { mkdirSync } from "node:fs";
import { type Database, open, type RootDatabase } from "lmdb";
import { Packr } from "msgpackr";
import { type Logger, warnEveryMinute } from "../log";

/**
 * Eviction starts above the high-water mark and stops below the low one (fractions of the budget). LMDB
 * reuses a freed page only once no snapshot can see it, so under a stream of writes the data file runs
 * ahead of the pages in use: measured at 1.2-1.6 times them while writing twice a 32 MB budget. With 0.75
 * and 0.6 the file reached 29.6-34.6 MB of 32 (one run in five over); these marks leave it that margin.
 */
const HIGH_WATER = 0.6;
const LOW_WATER = 0.45;
/** Pages in use are read from LMDB every this many writes (a write adds at most its record). */
const CHECK_EVERY_WRITES = 16;
/** A record read this long after its write moves to the back of the eviction order. */
const TOUCH_AFTER_MS = 60 * 60 * 1000;
/** 2: members named in full (1 had one-letter names); a record of another version is a miss. */
const RECORD_VERSION = 2;
/** The largest record is this share of the budget. */
const MAX_ENTRY_SHARE = 16;

type OrderKey = [number, number, number];

interface DiskRecord {
  version: number;
  /** The full cache key (the LMDB key is its digest). */
  key: string;
  body: Uint8Array;
  /** CRC32 of the body. */
  crc: number;
  /** Its key in the order index: write time, process, sequence. */
  order: OrderKey;
}

/** An entry of the order index: the record's LMDB key and its packed size. */
interface OrderEntry {
  digest: string;
  size: number;
}

export interface DiskTier {
  get(key: string): Uint8Array | undefined;
  /** Hands a record's body to `use` without a copy: the bytes are valid only during the call. */
  read(key: string, use: (body: Uint8Array) => void): boolean;
  set(key: string, body: Uint8Array): void;
  /** Bytes of pages in use, and the data file's size. */
  usage(): { usedBytes: number; fileBytes: number; entries: number };
  /** Waits for pending writes to commit. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createDiskTier(options: {
  dir: string;
  maxBytes: number;
  log: Logger;
  onEvict?: (count: number) => void;
  onBadRecord?: () => void;
}): DiskTier {
  const { dir, maxBytes, log } = options;
  mkdirSync(dir, { recursive: true });
  const env: RootDatabase = open({ path: dir, maxDbs: 4, mapSize: Math.max(64 * 1024 * 1024, maxBytes * 2) });
  const records: Database<Buffer, string> = env.openDB({ name: "records", encoding: "binary" });
  const order: Database<OrderEntry, OrderKey> = env.openDB({
    name: "order",
    encoding: "msgpack",
  });
  const packr = new Packr({ useRecords: false });
  let sequence = 0;
  let writesSinceCheck = 0;
  let pendingBytes = 0;
  let evicting = false;
  let evictAgain = false;

  // A write that fails (a full disk, say) loses a cache entry, nothing more: the answer was already given.
  // A read that fails is a miss: the node still answers. Each is logged at most once a minute.
  const writeFailed = warnEveryMinute(log, "disk cache write failed");
  const readFailed = warnEveryMinute(log, "disk cache read failed");

  const digest = (key: string) => Bun.SHA1.hash(key, "hex") as string;
  const orderKey = (): OrderKey => [Date.now(), process.pid, sequence++];

  function pagesInUse(): number {
    let pages = 0;
    for (const db of [records, order]) {
      const s = db.getStats() as {
        treeBranchPageCount: number;
        treeLeafPageCount: number;
        overflowPages: number;
      };
      pages += s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
    }
    return pages;
  }

  function usage() {
    const stats = env.getStats() as { pageSize: number; lastPageNumber: number };
    return {
      usedBytes: pagesInUse() * stats.pageSize,
      fileBytes: (stats.lastPageNumber + 1) * stats.pageSize,
      entries: (records.getStats() as { entryCount: number }).entryCount,
    };
  }

  async function evict(): Promise<void> {
    if (evicting) {
      // Writes went on while a pass ran: one more pass when it ends, so no check is lost.
      evictAgain = true;
      return;
    }
    evicting = true;
    evictAgain = false;
    try {
      const { usedBytes } = usage();
      let excess = usedBytes + pendingBytes - LOW_WATER * maxBytes;
      if (usedBytes + pendingBytes < HIGH_WATER * maxBytes) return;
      let count = 0;
      await env.transaction(() => {
        for (const { key, value } of order.getRange({ snapshot: false })) {
          if (excess <= 0) break;
          order.remove(key);
          const raw = records.getBinaryFast(value.digest);
          // A record touched since has a newer order key: only its stale order entry goes. A record that
          // does not decode goes too (and eviction goes on past it).
          if (raw) {
            const order = decode(raw)?.order;
            if (!order || (order[0] === key[0] && order[1] === key[1] && order[2] === key[2])) {
              records.remove(value.digest);
              count++;
            }
          }
          excess -= value.size;
        }
      });
      if (count > 0) options.onEvict?.(count);
    } catch (error) {
      log.warn("disk cache eviction failed", { error });
    } finally {
      evicting = false;
      if (evictAgain) void evict();
    }
  }

  /** A stored record, or undefined when its bytes are not one (torn, or written by something else). */
  function decode(raw: Uint8Array): DiskRecord | undefined {
    try {
      const record = packr.unpack(raw) as DiskRecord;
      return record &&
        typeof record === "object" &&
        record.body instanceof Uint8Array &&
        Array.isArray(record.order)
        ? record
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** Reads a record's body into `use` (a view of LMDB's read buffer, valid only during the call). */
  function read(key: string, use: (body: Uint8Array) => void): boolean {
    const dk = digest(key);
    let raw: Uint8Array | undefined;
    try {
      raw = records.getBinaryFast(dk);
    } catch (error) {
      readFailed({ error });
      return false;
    }
    if (!raw) return false;
    const record = decode(raw);
    if (
      !record ||
      record.version !== RECORD_VERSION ||
      record.key !== key ||
      Bun.hash.crc32(record.body) !== record.crc
    ) {
      options.onBadRecord?.();
      void records.remove(dk);
      return false;
    }
    if (Date.now() - record.order[0] > TOUCH_AFTER_MS) {
      const touched = orderKey();
      const body = new Uint8Array(record.body);
      env
        .transaction(() => {
          order.put(touched, { digest: dk, size: body.length + key.length });
          records.put(dk, packr.pack({ ...record, body, order: touched }));
        })
        .catch((error) => writeFailed({ error }));
    }
    use(record.body);
    return true;
  }

  return {
    get(key) {
      let body: Uint8Array | undefined;
      // getBinaryFast's buffer is reused by the next read: keep a copy.
      read(key, (bytes) => {
        body = new Uint8Array(bytes);
      });
      return body;
    },
    read,
    set(key, body) {
      // One answer never takes more than its share of the budget (nor pushes out the rest).
      if (body.length > maxBytes / MAX_ENTRY_SHARE) return;
      const dk = digest(key);
      const at = orderKey();
      const packed = packr.pack({
        version: RECORD_VERSION,
        key,
        body,
        crc: Bun.hash.crc32(body),
        order: at,
      } satisfies DiskRecord);
      pendingBytes += packed.length;
      env
        .transaction(() => {
          records.put(dk, packed);
          order.put(at, { digest: dk, size: packed.length });
        })
        .catch((error) => writeFailed({ error }))
        .finally(() => {
          pendingBytes -= packed.length;
        });
      if (++writesSinceCheck >= CHECK_EVERY_WRITES || pendingBytes > maxBytes * (1 - HIGH_WATER)) {
        writesSinceCheck = 0;
        void evict();
      }
    },
    usage,
    async flush() {
      await records.flushed;
      await evict();
      await records.flushed;
    },
    async close() {
      await records.flushed;
      await env.close();
    },
  };
}
