/**
 * The index through what happens to a running indexer: a reorg, a kill -9 in the middle of a backfill,
 * and two instances on one database. In each case the index must end equal to a fresh index of the
 * canonical chain, which a second service builds from scratch.
 */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { rpc, waitForReceipt } from "./support/chain";
import { fillTokenBlocks } from "./support/movements";
import { startProxy } from "./support/proxy";
import { post, startServiceProcess, startTestService } from "./support/service";
import { newAnvil, postgresServer } from "./support/shared";
import { until } from "./support/until";

const INDEXER_ENV = { INDEXER: "on", HEAD_POLL_MS: "50" };

/** Every row derived from the chain, as text: two indexes of one chain must give the same. */
async function snapshot(databaseUrl: string): Promise<Record<string, string>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const tables: Record<string, string> = {
      blocks: "number",
      transfers: "block_number, transaction_index, log_index",
      transfer_addresses: "address, block_number, transaction_index, log_index",
      approvals: "block_number, log_index",
      block_addresses: "block_number, address",
      daily_stats: "day",
      day_addresses: "day, address",
    };
    const out: Record<string, string> = {};
    for (const [table, order] of Object.entries(tables)) {
      const rows = await sql.unsafe(`select * from ${table} order by ${order}`);
      out[table] = JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? v.toString() : v));
    }
    const [state] = await sql`select first_block::text, last_block::text from indexer_state`;
    out.indexer_state = JSON.stringify(state);
    return out;
  } finally {
    await sql.end();
  }
}

async function health(url: string): Promise<any> {
  return (await fetch(`${url}/health`)).json();
}

async function caughtUp(url: string, head: number, timeoutMs = 30_000) {
  await until(
    `the index at ${url} to reach block ${head}`,
    async () => ((await health(url)).indexer.lastBlockNumber === head ? true : undefined),
    timeoutMs,
  );
}

async function storedHash(databaseUrl: string, n: number): Promise<string | undefined> {
  const sql = postgres(databaseUrl, { max: 1 });
  try {
    const [row] = await sql`select '0x' || encode(hash, 'hex') as hash from blocks where number = ${n}`;
    return row?.hash as string | undefined;
  } finally {
    await sql.end();
  }
}

/** A fresh index of the same chain, for comparison. */
async function freshIndex(upstream: string, head: number): Promise<Record<string, string>> {
  const fresh = await startTestService({ upstreamUrls: [upstream], env: INDEXER_ENV });
  try {
    await caughtUp(fresh.url, head);
    return await snapshot(fresh.databaseUrl);
  } finally {
    await fresh.stop();
  }
}

describe("reorg", () => {
  test("after anvil_reorg the index equals a fresh index of the new chain", async () => {
    const anvil = await newAnvil();
    const call = rpc(anvil.url);
    const { token } = await fillTokenBlocks(anvil.url, { blocks: 12, transfersPerBlock: 3 });
    const head = Number(await call<string>("eth_blockNumber"));
    // Partitions of head - 1 blocks: the four blocks the reorg replaces straddle a partition boundary.
    const service = await startTestService({
      upstreamUrls: [anvil.url],
      env: { ...INDEXER_ENV, INDEX_PARTITION_BLOCKS: String(head - 1) },
    });
    await caughtUp(service.url, head);
    const before = await post(`${service.url}/node/rest/watch_getTransfers`, {
      fromBlock: head - 3,
      limit: 500,
    });
    expect(before.json.length).toBeGreaterThan(0);
    const partitionsOf = new Set(before.json.map((t: any) => Math.floor(t.blockNumber / (head - 1))));
    expect(partitionsOf.size).toBe(2);

    // Replace the last four blocks with a branch holding other movements.
    const [alice, bob, , , erin] = (await call<string[]>("eth_accounts")) as [
      string,
      string,
      string,
      string,
      string,
    ];
    await call("anvil_reorg", [
      4,
      [
        [{ from: alice, to: erin, value: "0x309" }, 0],
        [{ from: bob, to: alice, value: "0x7" }, 2],
      ],
    ]);
    expect(Number(await call<string>("eth_blockNumber"))).toBe(head);
    // And the chain goes on from the new branch.
    await fillTokenBlocks(anvil.url, { blocks: 2, transfersPerBlock: 2, token });
    const newHead = Number(await call<string>("eth_blockNumber"));
    const newHash = (await call("eth_getBlockByNumber", ["latest", false])).hash;
    await until("the index to follow the new branch", async () =>
      (await storedHash(service.databaseUrl, newHead)) === newHash ? true : undefined,
    );

    const reorged = await snapshot(service.databaseUrl);
    expect(reorged).toEqual(await freshIndex(anvil.url, newHead));
    // The orphaned blocks' transfers are gone; the branch's are there.
    const after = await post(`${service.url}/node/rest/watch_getTransfers`, {
      fromBlock: head - 3,
      limit: 500,
    });
    const hashes = new Set(after.json.map((t: any) => t.transactionHash));
    for (const t of before.json) expect(hashes.has(t.transactionHash)).toBe(false);
    expect(after.json.filter((t: any) => t.to === erin.toLowerCase() && t.value === 0x309)).toHaveLength(1);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(Number(/^gateway_indexer_reorgs_total (\d+)/m.exec(metrics)![1])).toBeGreaterThanOrEqual(1);
  }, 90_000);
});

describe("crash", () => {
  test("kill -9 in the middle of a backfill, restart: no gap, no duplicate", async () => {
    const anvil = await newAnvil();
    const { head, transfers } = await fillTokenBlocks(anvil.url, { blocks: 300, transfersPerBlock: 5 });
    // A slow upstream keeps the backfill going long enough to be cut short.
    const proxy = startProxy(anvil.url);
    proxy.delayMs = 150;
    const databaseUrl = await (await postgresServer()).createDatabase();
    const first = await startServiceProcess({ upstreamUrls: [proxy.url], databaseUrl, env: INDEXER_ENV });
    await until(
      "the backfill to be under way",
      async () => ((await health(first.url)).indexer.lastBlockNumber >= 40 ? true : undefined),
      60_000,
    );
    await first.kill("SIGKILL");
    const cut = await snapshot(databaseUrl);
    const cutAt = Number(JSON.parse(cut.indexer_state!).last_block);
    expect(cutAt).toBeGreaterThanOrEqual(40);
    expect(cutAt).toBeLessThan(head);

    proxy.delayMs = 0;
    const second = await startServiceProcess({ upstreamUrls: [proxy.url], databaseUrl, env: INDEXER_ENV });
    await caughtUp(second.url, head, 60_000);
    const sql = postgres(databaseUrl, { max: 1 });
    try {
      const [blocks] =
        await sql`select count(*)::int as n, min(number)::int as lo, max(number)::int as hi from blocks`;
      expect(blocks).toEqual({ n: head + 1, lo: 0, hi: head });
      const [rows] = await sql`select count(*)::int as n from transfers`;
      expect(rows!.n).toBe(transfers);
    } finally {
      await sql.end();
    }
    expect(await snapshot(databaseUrl)).toEqual(await freshIndex(anvil.url, head));
    await second.stop();
  }, 120_000);
});

describe("two instances on one database", () => {
  test("exactly one indexes, both answer, and the other takes over when the first dies", async () => {
    const anvil = await newAnvil();
    const call = rpc(anvil.url);
    await fillTokenBlocks(anvil.url, { blocks: 5, transfersPerBlock: 2 });
    const databaseUrl = await (await postgresServer()).createDatabase();
    const env = { ...INDEXER_ENV };
    const one = await startServiceProcess({ upstreamUrls: [anvil.url], databaseUrl, env });
    const two = await startServiceProcess({ upstreamUrls: [anvil.url], databaseUrl, env });
    const head = Number(await call<string>("eth_blockNumber"));
    for (const s of [one, two]) await caughtUp(s.url, head);
    const roles = [(await health(one.url)).indexer.leading, (await health(two.url)).indexer.leading];
    expect(roles.filter(Boolean)).toHaveLength(1);
    const [leader, standby] = roles[0] ? [one, two] : [two, one];
    const list = async (url: string) =>
      (await post(`${url}/node/rest/watch_getTransfers`, { limit: 500 })).text;
    expect(await list(standby.url)).toBe(await list(leader.url));

    await leader.kill("SIGKILL");
    const [alice, bob] = await call<string[]>("eth_accounts");
    const hash = await call<string>("eth_sendTransaction", [{ from: alice, to: bob, value: "0x2a" }]);
    const receipt = await waitForReceipt(anvil.url, hash);
    await until(
      "the standby to take over",
      async () => {
        const h = await health(standby.url);
        return h.indexer.leading && h.indexer.lastBlockNumber === Number(receipt.blockNumber)
          ? true
          : undefined;
      },
      20_000,
    );
    const latest = await post(`${standby.url}/node/rest/watch_getTransfers`, { fromBlock: "latest" });
    expect(latest.json.map((t: any) => [t.transactionHash, t.value])).toEqual([[hash, 42]]);
    expect(await snapshot(databaseUrl)).toEqual(await freshIndex(anvil.url, Number(receipt.blockNumber)));
    await standby.stop();
  }, 90_000);
});
