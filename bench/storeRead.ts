/**
 * The raw read speed of the disk tier's store: every record of an LMDB cache directory read and decoded,
 * as the tier reads them (no HTTP, no service). Usage: bun bench/storeRead.ts <cache-dir>
 * Prints one JSON line: {records, bytes, seconds, mbPerSecond}.
 */
import { open } from "lmdb";
import { Packr } from "msgpackr";

const env = open({ path: process.argv[2]!, maxDbs: 4, readOnly: true });
const records = env.openDB({ name: "records", encoding: "binary" });
const packr = new Packr({ useRecords: false });
const keys = [...records.getKeys()];
const started = performance.now();
let bytes = 0;
for (const key of keys) {
  const record = packr.unpack(records.getBinaryFast(key)!) as { body: Uint8Array; crc: number };
  if (Bun.hash.crc32(record.body) !== record.crc) throw new Error("bad record");
  bytes += new Uint8Array(record.body).length;
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ records: keys.length, bytes, seconds, mbPerSecond: bytes / 1e6 / seconds }));
await env.close();
