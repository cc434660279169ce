/**
 * A PostgreSQL crash under the Bitcoin family's indexer (CHAIN=LTC, INDEXER=on, a real regtest Litecoin Core
 * and a real PostgreSQL of its own). The writer commits its groups with synchronous_commit off
 * (src/families/utxo/indexWriter.ts), so a crash loses the last ones, and the index writes them again from
 * the node. The writer remembers the scripts it wrote (to skip their inserts): a group whose commit was lost
 * must get its rows again all the same. Here the server runs with a WAL writer that waits 10 s between
 * rounds (wal_writer_delay's most), so the last group's commit is still in memory when the server is
 * stopped at once (an immediate shutdown: no process writes anything more), and recovery ends the index a
 * group short. Once the index is back at the node's head, every script the chain's outputs pay is in
 * address_scripts (the SHA-256 of the script as the node writes it, and its address), and each address's
 * totals are the sums of its rows.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import postgres from "postgres";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { type PgServer, startPostgres } from "./support/postgres";
import { startTestService, type TestService } from "./support/service";
import { onTeardown } from "./support/shared";
import { until } from "./support/until";
import { parseExact, readTruth } from "./support/utxoChain";

const ENV = { CHAIN: "LTC", INDEXER: "on", HEAD_POLL_MS: "50", CONFIRMATIONS: "6" };
/** Coinbases mature 100 blocks deep: the wallet has coins to send after this many. */
const MATURE_BLOCKS = 101;
/** Fresh addresses the last group pays (of each kind): its WAL is many pages, its commit record on the last. */
const PAYEES_PER_KIND = 20;
const CATCH_UP_MS = 60_000;

let pg: PgServer;
let node: LitecoinNode;
let service: TestService;
let db: postgres.Sql;

beforeAll(async () => {
  // Nothing writes WAL out but the WAL writer's rounds: no checkpoint or autovacuum comes within the test.
  pg = await startPostgres({
    settings: { wal_writer_delay: "10s", checkpoint_timeout: "1h", autovacuum: "off" },
  });
  onTeardown(() => pg.stop());
  node = await startLitecoind();
  await node.mine(MATURE_BLOCKS);
  const databaseUrl = await pg.createDatabase();
  service = await startTestService({ upstreamUrls: [node.url], databaseUrl, env: ENV });
  db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  onTeardown(() => db.end({ timeout: 1 }));
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

/** The index's last block, once it is `height` (a read refused while the server restarts is tried again). */
function indexAt(height: number): Promise<true> {
  return until(
    `the index to reach block ${height}`,
    async () => {
      const [row] = await db`select last_block::int as last from indexer_state`.catch(() => [undefined]);
      return row?.last === height ? true : undefined;
    },
    CATCH_UP_MS,
  );
}

/** The index's scripts: (SHA-256 of the script, address), by digest. */
async function storedScripts(): Promise<string[][]> {
  const rows = await db`select encode(script_hash, 'hex') as digest, address from address_scripts
    order by script_hash`;
  return rows.map((r) => [r.digest, r.address]);
}

test("the groups a crash lost are written again whole: every script of the chain, every address's totals", async () => {
  await indexAt(MATURE_BLOCKS);
  // The backfill's maintenance, if it runs (a vacuum just after the window that catches up), writes WAL of
  // its own: it is over first.
  await Bun.sleep(500);
  await until("the index's maintenance to end", async () => {
    const [row] = await db`select count(*)::int as n from pg_stat_activity
      where state = 'active' and query ilike 'vacuum%'`;
    return row!.n === 0 ? true : undefined;
  });
  const payees: Record<string, number> = {};
  for (const kind of ["legacy", "p2sh-segwit", "bech32"]) {
    for (let i = 0; i < PAYEES_PER_KIND; i++)
      payees[await node.rpc<string>("getnewaddress", ["", kind])] = 0.1;
  }
  await node.rpc("sendmany", ["", payees]);
  await node.mine(1);
  const last = MATURE_BLOCKS + 1;
  await indexAt(last);
  await pg.crash();
  await pg.resume();
  // The crash lost the last group's commit (its writer learns of the lost connection within seconds, and only
  // then writes again): the index ends a group short, without the scripts only that group paid.
  const recovered = await until("the database to answer again", () =>
    db`select last_block::int as last from indexer_state`
      .then(([row]) => row!.last as number)
      .catch(() => undefined),
  );
  const lost = await storedScripts();
  await indexAt(last);

  // What the node's chain implies: the scripts of the outputs paying an address, to a block.
  const exact = async <T = any>(method: string, params: unknown[]) =>
    parseExact<{ result: T }>(
      (await node.post(JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }))).text,
    ).result;
  const truth = await readTruth(exact, 0);
  const scriptsTo = (height: number) => {
    const scripts = new Map<string, string>();
    for (const block of truth.blocks.filter((b) => b.height <= height)) {
      for (const output of block.transactions.flatMap((tx) => tx.outputs)) {
        if (output.address === null) continue;
        const digest = createHash("sha256").update(Buffer.from(output.script, "hex")).digest("hex");
        scripts.set(digest, output.address);
      }
    }
    return [...scripts].sort(([a], [b]) => (a < b ? -1 : 1));
  };
  expect(recovered).toBe(last - 1);
  expect(lost).toEqual(scriptsTo(last - 1));
  const all = scriptsTo(last);
  expect(all.map(([, address]) => address)).toEqual(expect.arrayContaining(Object.keys(payees)));
  expect(await storedScripts()).toEqual(all);

  // Each address's totals, written again with its rows: exactly their sums.
  const totals = await db`select address, funded_count::text, funded_sum::text, spent_count::text,
      spent_sum::text, tx_count::text
    from address_totals order by address collate "C"`;
  const sums = await db`select address, sum(outputs)::text as funded_count, sum(received)::text as funded_sum,
      sum(inputs)::text as spent_count, sum(sent)::text as spent_sum, count(*)::text as tx_count
    from address_transactions group by address order by address collate "C"`;
  expect(totals.map((r) => ({ ...r }))).toEqual(sums.map((r) => ({ ...r })));
  expect(totals.length).toBe(all.length);
}, 120_000);
