/**
 * Several chains, one PostgreSQL: two instances of two dev chains (different chain ids) on one database each
 * index and answer only their own chain, in a schema of its own; a schema named for the wrong chain stops
 * the start with a message saying so.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { rpc, waitForReceipt } from "./support/chain";
import { post, startServiceProcess } from "./support/service";
import { newAnvil, postgresServer } from "./support/shared";
import { until } from "./support/until";

const KEY = "chains-key";
const ENV = { INDEXER: "on", HEAD_POLL_MS: "50", API_KEYS: KEY };
const AS = { headers: { "x-api-key": KEY } };

/** Two native transfers on a chain; their hashes, and the chain's head once they are mined. */
async function transfers(url: string, value: number) {
  const call = rpc(url);
  const [alice, bob] = await call<string[]>("eth_accounts");
  const hashes: string[] = [];
  for (const v of [value, value + 1]) {
    hashes.push(
      await call<string>("eth_sendTransaction", [{ from: alice, to: bob, value: `0x${v.toString(16)}` }]),
    );
  }
  await waitForReceipt(url, hashes.at(-1)!);
  return { hashes, head: Number(await call<string>("eth_blockNumber")) };
}

test("two chains on one database: each instance indexes and answers only its own, in its own schema", async () => {
  const one = await newAnvil();
  const two = await newAnvil(["--chain-id", "1337"]);
  const mined = [await transfers(one.url, 100), await transfers(two.url, 200)];
  const databaseUrl = await (await postgresServer()).createDatabase();
  const services = [
    await startServiceProcess({ upstreamUrls: [one.url], databaseUrl, env: ENV }),
    await startServiceProcess({ upstreamUrls: [two.url], databaseUrl, env: ENV }),
  ];
  const health = async (i: number) => (await fetch(`${services[i]!.url}/health`)).json() as Promise<any>;
  for (const i of [0, 1]) {
    await until(`chain ${i} indexed`, async () =>
      (await health(i)).indexer.lastBlockNumber === mined[i]!.head ? true : undefined,
    );
  }
  const genesis = (await rpc(two.url)<{ hash: string }>("eth_getBlockByNumber", ["0x0", false])).hash;
  expect([(await health(0)).database.schema, (await health(1)).database.schema]).toEqual([
    "public",
    `chain_1337_${genesis.slice(2, 10)}`,
  ]);
  // Each chain's own indexer leads (one lock per chain, not per database).
  expect([(await health(0)).indexer.leading, (await health(1)).indexer.leading]).toEqual([true, true]);
  for (const i of [0, 1]) {
    const listed = await post(`${services[i]!.url}/node/rest/watch_getTransfers`, { limit: 100 }, AS);
    expect(listed.status).toBe(200);
    expect(listed.json.map((t: any) => t.transactionHash).sort()).toEqual([...mined[i]!.hashes].sort());
  }
  // A filter registered on one chain is the other's business not at all.
  const added = await post(
    `${services[0]!.url}/watch_filters/add`,
    { address: "0x00000000000000000000000000000000000000aa" },
    AS,
  );
  expect(added.status).toBe(200);
  const all = async (i: number) =>
    (await post(`${services[i]!.url}/watch_filters/all`, undefined, AS)).json.filters as {
      blockchain: string;
    }[];
  expect((await all(0)).map((f) => f.blockchain)).toEqual(["ETH"]);
  expect(await all(1)).toEqual([]);

  // Restarted, each instance finds its own schema again.
  await services[1]!.stop();
  const again = await startServiceProcess({ upstreamUrls: [two.url], databaseUrl, env: ENV });
  expect(((await (await fetch(`${again.url}/health`)).json()) as any).database.schema).toBe(
    `chain_1337_${genesis.slice(2, 10)}`,
  );
  await again.stop();
  await services[0]!.stop();

  // DB_SCHEMA naming the schema of another chain: the start stops and says why.
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {
    env: {
      ...process.env,
      PORT: "0",
      UPSTREAM_URLS: two.url,
      DATABASE_URL: databaseUrl,
      DB_SCHEMA: "public",
      DATA_DIR: mkdtempSync(join(tmpdir(), "cg-chains-")),
      INDEXER: "off",
      LOG_LEVEL: "error",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await child.exited).toBe(1);
  const out = await new Response(child.stdout).text();
  expect(out).toContain(
    `the database schema public holds chain 31337 (genesis ${(await rpc(one.url)<{ hash: string }>("eth_getBlockByNumber", ["0x0", false])).hash}), not chain 1337 (genesis ${genesis}): set DB_SCHEMA to another schema`,
  );
}, 120_000);

test("DATABASE_READ_URL: callers' reads of the index come from the replica, writes go to the primary", async () => {
  const anvil = await newAnvil();
  const mined = await transfers(anvil.url, 300);
  const pg = await postgresServer();
  const primary = await pg.createDatabase();
  const indexer = await startServiceProcess({ upstreamUrls: [anvil.url], databaseUrl: primary, env: ENV });
  await until("the index caught up", async () =>
    ((await (await fetch(`${indexer.url}/health`)).json()) as any).indexer.lastBlockNumber === mined.head
      ? true
      : undefined,
  );
  await indexer.stop();
  // The "replica": a copy of the primary, then one transfer of its own, so an answer shows where it was read.
  const replicaName = `replica_${Date.now()}`;
  const admin = postgres(pg.adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${replicaName} template ${new URL(primary).pathname.slice(1)}`);
  } finally {
    await admin.end();
  }
  const replica = primary.replace(/\/[^/]+$/, `/${replicaName}`);
  const copy = postgres(replica, { max: 1, onnotice: () => {} });
  try {
    await copy`insert into transfers select block_number, transaction_index, 99, transaction_hash, transfer_type,
      contract_address, from_address, to_address, value, fee, transaction_error from transfers limit 1`;
  } finally {
    await copy.end();
  }
  const service = await startServiceProcess({
    upstreamUrls: [anvil.url],
    databaseUrl: primary,
    env: { ...ENV, INDEXER: "off", DATABASE_READ_URL: replica },
  });
  const listed = await post(`${service.url}/node/rest/watch_getTransfers`, { limit: 100 }, AS);
  expect(listed.status).toBe(200);
  // The replica's own row (a native transfer: its log index shows as null) is in the answer.
  const hashes = listed.json.map((t: any) => t.transactionHash);
  expect(hashes.filter((h: string) => h === hashes[0])).toHaveLength(2);
  expect(listed.json).toHaveLength(mined.hashes.length + 1);
  // A write (a watch filter) lands on the primary only.
  const added = await post(
    `${service.url}/watch_filters/add`,
    { address: "0x00000000000000000000000000000000000000bb" },
    AS,
  );
  expect(added.status).toBe(200);
  const count = async (url: string) => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      return (await sql`select count(*)::int as n from watch_filters`)[0]!.n as number;
    } finally {
      await sql.end();
    }
  };
  expect([await count(primary), await count(replica)]).toEqual([1, 0]);
  const health = (await (await fetch(`${service.url}/health`)).json()) as any;
  expect(health.database.status).toBe("ok");
  await service.stop();
}, 120_000);
