/**
 * sql/005_index_partitions.sql on a database indexed before it: every row moves into the partition of its
 * block, nothing is lost or changed, a delete of blocks still cascades through the partitions, and the
 * indexer's function makes the partitions it is asked for (and only those missing). Real PostgreSQL.
 */
import { expect, test } from "bun:test";
import postgres from "postgres";
import { createLogger } from "../src/log";
import { migrate, readMigrations } from "./support/migrations";
import { postgresServer } from "./support/shared";

const log = createLogger({ level: "silent" });
const GROWN = ["transfers", "transfer_addresses", "approvals", "block_addresses"];
const ORDER: Record<string, string> = {
  transfers: "block_number, transaction_index, log_index",
  transfer_addresses: "address, block_number, transaction_index, log_index",
  approvals: "block_number, log_index",
  block_addresses: "block_number, address",
};

test("an index made before partitioning moves into partitions whole; deletes cascade through them; partitions are made on demand", async () => {
  const url = await (await postgresServer()).createDatabase();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(
      sql as never,
      log,
      {},
      readMigrations().filter((m) => m.version < 5),
    );
    const bytes = (n: number, width: number) => Buffer.from(n.toString(16).padStart(width * 2, "0"), "hex");
    for (let n = 0; n <= 25; n++) {
      await sql`insert into blocks (number, hash, parent_hash, timestamp, day, miner, gas_used, gas_limit,
          transaction_count, transfer_count, uncle_count, total_fees, burnt_fees, gas_price_sum)
        values (${n}, ${bytes(n + 1, 32)}, ${bytes(n, 32)}, ${1_700_000_000 + n * 12}, '2023-11-14', ${bytes(1, 20)},
          21000, 30000000, 1, 1, 0, '21000000000000', '0', '1000000000')`;
    }
    for (const n of [3, 15, 25]) {
      await sql`insert into transfers values (${n}, 0, -1, ${bytes(n, 32)}, 0, null, ${bytes(0xa, 20)},
        ${bytes(0xb, 20)}, ${"115792089237316195423570985008687907853269984665640564039457584007913129639935"}, 21000, false)`;
      await sql`insert into transfer_addresses values (${bytes(0xa, 20)}, ${n}, 0, -1, 1, 0, null),
        (${bytes(0xb, 20)}, ${n}, 0, -1, 2, 0, null)`;
      await sql`insert into approvals values (${n}, 0, 1, ${bytes(n, 32)}, ${bytes(0xc, 20)}, ${bytes(0xa, 20)},
        ${bytes(0xb, 20)}, 7, 21000, false)`;
      await sql`insert into block_addresses values (${n}, ${bytes(0xa, 20)}), (${n}, ${bytes(0xb, 20)})`;
    }
    const rows = async () => {
      const out: Record<string, string> = {};
      for (const table of GROWN) {
        out[table] = JSON.stringify(await sql.unsafe(`select * from ${table} order by ${ORDER[table]}`));
      }
      return out;
    };
    const before = await rows();

    // The partitioning migration alone: later ones are no part of this conversion.
    const upTo5 = readMigrations().filter((m) => m.version <= 5);
    expect(await migrate(sql as never, log, { index_partition_blocks: 10 }, upTo5)).toEqual([5]);
    expect(await rows()).toEqual(before);
    expect(before.transfers).toContain(
      "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    );
    for (const table of GROWN) {
      const placed = await sql.unsafe(`select c.relname as partition, t.block_number::int as block
        from ${table} t join pg_class c on c.oid = t.tableoid order by 2, 1`);
      expect(new Set(placed.map((r) => `${r.partition}:${r.block}`))).toEqual(
        new Set([3, 15, 25].map((n) => `${table}_p${Math.floor(n / 10)}:${n}`)),
      );
    }
    expect((await sql`select blocks::int from index_partitioning`)[0]!.blocks).toBe(10);

    // A reorg's delete from blocks reaches every partition.
    await sql`delete from blocks where number >= 14`;
    for (const table of GROWN) {
      const left = await sql.unsafe(`select distinct block_number::int as n from ${table}`);
      expect(left.map((r) => r.n)).toEqual([3]);
    }

    // Made ahead: blocks 20 to 41 need partitions 2 to 4; 2 exists, so 3 and 4 of each table are made.
    expect((await sql`select ensure_index_partitions(20, 41) as made`)[0]!.made).toBe(2 * GROWN.length);
    expect((await sql`select ensure_index_partitions(20, 41) as made`)[0]!.made).toBe(0);
    const partitions =
      await sql`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'transfers'::regclass order by 1`;
    expect(partitions.map((p) => p.name)).toEqual([
      "transfers_p0",
      "transfers_p1",
      "transfers_p2",
      "transfers_p3",
      "transfers_p4",
    ]);
  } finally {
    await sql.end();
  }
});
