/**
 * The disk tier: final answers only, in LMDB (chosen by bench/diskStores.ts; figures in the README), as
 * msgpack records. LMDB's copy-on-write transactions make a crash (kill -9) lose at most the writes not
 * yet committed, never tear one, and let several processes share one directory. Each record carries its
 * full key and a CRC32 of its body: a record that does not verify is a miss and is dropped.
 *
 * The tier is bounded in bytes: an order index (by write time) names the oldest records, which are
 * evicted when the pages in use pass a high-water mark. A record read long after it was written is moved
 * to the back of the order, so eviction approximates least-recently-used without a write per read.
 *
 * A record about a block carries its height, and a heights index names the records of each height: a reorg
 * drops the records from its fork up (`dropFrom`; on every reorg, as another process sharing the directory
 * may have kept final records above this one's finality: with none there, it is one seek of the heights
 * index in a write transaction that writes nothing), in every process sharing the directory: the one
 * dropping misses them from the call on (they are misses until the drop commits);
 * another sees the drop from its next event turn, when lmdb-js renews the read snapshot a turn's reads
 * share (its README, resetReadTxn).
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
  /** The height of the block it is about, where it is about one (its key in the heights index). */
  height?: number;
}

/** A key of the heights index: a block height and the digest of a record about that block. */
type HeightKey = [number, string];

/** An entry of the order index: the record's LMDB key and its packed size. */
interface OrderEntry {
  digest: string;
  size: number;
}

/** A record as read: its body, and the height of the block it is about, where it is about one. */
export interface DiskEntry {
  body: Uint8Array;
  height?: bigint;
}

export interface DiskTier {
  get(key: string): DiskEntry | undefined;
  /** Hands a record's body to `use` without a copy: the bytes are valid only during the call. */
  read(key: string, use: (body: Uint8Array) => void): boolean;
  /** `height`: the block the answer is about, where it is about one (dropFrom drops it). */
  set(key: string, body: Uint8Array, height?: bigint): void;
  /** Drops the records about blocks at or above `height` (after a reorg); how many. */
  dropFrom(height: bigint): Promise<number>;
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
  const heights: Database<true, HeightKey> = env.openDB({ name: "heights", encoding: "msgpack" });
  const packr = new Packr({ useRecords: false });
  let sequence = 0;
  let writesSinceCheck = 0;
  let pendingBytes = 0;
  let evicting = false;
  let evictAgain = false;
  /**
   * While drops are being committed, or after one failed: the lowest height they drop from (a record about
   * a block at or above it is a miss, never a stale answer).
   */
  let droppingFrom: number | undefined;
  let dropsPending = 0;
  let failedFrom: number | undefined;

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
            const record = decode(raw);
            const order = record?.order;
            if (!order || (order[0] === key[0] && order[1] === key[1] && order[2] === key[2])) {
              records.remove(value.digest);
              if (record?.height !== undefined) heights.remove([record.height, value.digest]);
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

  /** Reads a record into `use` (its body a view of LMDB's read buffer, valid only during the call). */
  function read(key: string, use: (body: Uint8Array, height: number | undefined) => void): boolean {
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
    if (droppingFrom !== undefined && record.height !== undefined && record.height >= droppingFrom)
      return false;
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
    use(record.body, record.height);
    return true;
  }

  return {
    get(key) {
      let entry: DiskEntry | undefined;
      // getBinaryFast's buffer is reused by the next read: keep a copy.
      read(key, (bytes, height) => {
        entry = { body: new Uint8Array(bytes), height: height === undefined ? undefined : BigInt(height) };
      });
      return entry;
    },
    read,
    set(key, body, height) {
      // One answer never takes more than its share of the budget (nor pushes out the rest).
      if (body.length > maxBytes / MAX_ENTRY_SHARE) return;
      const dk = digest(key);
      const at = orderKey();
      const record: DiskRecord = { version: RECORD_VERSION, key, body, crc: Bun.hash.crc32(body), order: at };
      if (height !== undefined) record.height = Number(height);
      const packed = packr.pack(record);
      pendingBytes += packed.length;
      env
        .transaction(() => {
          records.put(dk, packed);
          order.put(at, { digest: dk, size: packed.length });
          if (record.height !== undefined) heights.put([record.height, dk], true);
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
    async dropFrom(height) {
      const from = Number(height);
      droppingFrom = droppingFrom === undefined || from < droppingFrom ? from : droppingFrom;
      dropsPending++;
      let count = 0;
      try {
        await env.transaction(() => {
          for (const { key } of heights.getRange({ start: [from], snapshot: false })) {
            // Its order entry stays behind: eviction skips an entry whose record is gone.
            if (records.doesExist(key[1])) {
              records.remove(key[1]);
              count++;
            }
            heights.remove(key);
          }
        });
      } catch (error) {
        log.error("disk cache: the answers a reorg made stale could not be dropped; they are misses", {
          error,
        });
        failedFrom = failedFrom === undefined || from < failedFrom ? from : failedFrom;
      } finally {
        if (--dropsPending === 0) droppingFrom = failedFrom;
      }
      return count;
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
