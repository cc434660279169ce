/**
 * The webhooks phase: 10,000 watch filters across 100 endpoints (100 keys, each one endpoint and 100
 * filters; every address of the blocks watched by five keys) on blocks of 2,000 native transfers: the time
 * from a block's publication (`/watch_filters/lastBlockNumber` reaching it) to each of its deliveries being
 * accepted by a local receiver (p50, p99, the last); then deliveries/s draining a backlog, and the small hit's
 * req/s measured while the senders drain it beside the same service with its senders idle, in rounds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { hashKey } from "../src/db/apiKeys";
import { startAnvil } from "../src/families/evm/devChain";
import { rpc, rpcBatch } from "../test/support/chain";
import { startPostgres } from "../test/support/postgres";
import { CONNECTIONS, fmt, median, ROUNDS, SECONDS, startService, THREADS } from "./support";
import { wrk } from "./wrk";

const ENDPOINTS = 100;
const FILTERS_PER_ENDPOINT = 100;
const TRANSFERS = 2_000;
/** Blocks whose deliveries are timed. */
const BLOCKS = 5;
/** Deliveries put in the outbox (copies of the blocks' own) for the senders to drain in a round. */
const BACKLOG = 20_000;
/** How often the bench looks for a block's publication and the backlog's draining. */
const POLL_MS = 5;
/** The longest a block's publication, its deliveries or a backlog's draining is waited for. */
const WAIT_MS = 300_000;
/** Room for 2,000 transfers of 21,000 gas in one block (anvil's default limit is 30 million). */
const GAS_LIMIT = 100_000_000;

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const recipient = (n: number) => `0x${(0xe0000000 + n).toString(16).padStart(40, "0")}`;
const keyOf = (k: number) => `bench-webhook-${k}`;

interface Accepted {
  endpoint: number;
  block: number | null;
  at: number;
}

/** A receiver accepting every delivery (the first of each endpoint verified with its secret). */
function startReceiver(secrets: Map<number, string>) {
  const accepted: Accepted[] = [];
  const verified = new Set<number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const endpoint = Number(new URL(request.url).pathname.slice(1));
      const body = await request.text();
      if (!verified.has(endpoint)) {
        const headers = Object.fromEntries(request.headers);
        new Webhook(secrets.get(endpoint)!).verify(body, headers);
        verified.add(endpoint);
      }
      const parsed = JSON.parse(body) as { block: { number: number } | null };
      accepted.push({ endpoint, block: parsed.block?.number ?? null, at: performance.now() });
      return new Response(null, { status: 204 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, accepted, verified, stop: () => server.stop(true) };
}

/** One block of TRANSFERS native transfers from anvil's ten accounts; its number. */
async function transferBlock(url: string, accounts: string[], round: number): Promise<number> {
  const call = rpc(url);
  const nonces = await Promise.all(
    accounts.map(async (a) => Number(await call<string>("eth_getTransactionCount", [a, "pending"]))),
  );
  const calls = [];
  for (let i = 0; i < TRANSFERS; i++) {
    const from = i % accounts.length;
    calls.push({
      method: "eth_sendTransaction",
      params: [
        {
          from: accounts[from],
          to: recipient(i),
          value: hex(round * TRANSFERS + i + 1),
          gas: hex(21_000),
          nonce: hex(nonces[from]!++),
        },
      ],
    });
  }
  await rpcBatch(url, calls);
  await call("evm_mine", []);
  const number = Number(await call<string>("eth_blockNumber"));
  const count = Number(await call<string>("eth_getBlockTransactionCountByNumber", [hex(number)]));
  if (count !== TRANSFERS) throw new Error(`block ${number} holds ${count} transactions, not ${TRANSFERS}`);
  return number;
}

/** Waits until `done`, looking every `everyMs` (support.ts's waitUntil looks every 100 ms: too coarse here). */
async function poll(what: string, done: () => boolean | Promise<boolean>, everyMs = POLL_MS) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

export async function webhookPhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil({ args: ["--gas-limit", String(GAS_LIMIT)] });
  const pg = await startPostgres({ durable: true });
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-webhooks-"));
  const secrets = new Map<number, string>();
  const receiver = startReceiver(secrets);
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  let sql: postgres.Sql | undefined;
  try {
    const call = rpc(anvil.url);
    const accounts = await call<string[]>("eth_accounts");
    const databaseUrl = await pg.createDatabase("webhooks");
    service = await startService(anvil.url, dataDir, {
      DATABASE_URL: databaseUrl,
      INDEXER: "on",
      HEAD_POLL_MS: "100",
      API_KEYS: Array.from({ length: ENDPOINTS }, (_, k) => keyOf(k)).join(","),
      WEBHOOK_ALLOW_PRIVATE: "1",
      MAX_WEBHOOKS_PER_KEY: "1",
    });
    const base = service.url;
    sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    // Each key: one endpoint, and 100 filters on recipients 20k .. 20k+99 (mod 2,000): five keys each.
    for (let k = 0; k < ENDPOINTS; k++) {
      const response = await fetch(`${base}/webhooks?api_key=${keyOf(k)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: `${receiver.url}/${k}` }),
      });
      if (response.status !== 201)
        throw new Error(`POST /webhooks: ${response.status} ${await response.text()}`);
      secrets.set(k, ((await response.json()) as { secret: string }).secret);
      const watched = Array.from({ length: FILTERS_PER_ENDPOINT }, (_, j) =>
        recipient((k * 20 + j) % TRANSFERS).slice(2),
      );
      await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
        select decode(${hashKey(keyOf(k))}, 'hex'), decode(a, 'hex'), null, false
        from unnest(${watched}::text[]) a`;
    }
    await sql`analyze watch_filters`;
    await call("evm_setAutomine", [false]);
    const published = async () =>
      (
        (await (await fetch(`${base}/watch_filters/lastBlockNumber?api_key=${keyOf(0)}`)).json()) as {
          block_number: number;
        }
      ).block_number;

    // Each block: mined, then timed from its publication to each of its deliveries' acceptance.
    const latencies: number[] = [];
    const lastOfBlock: number[] = [];
    let started = 0;
    let ended = 0;
    for (let round = 0; round < BLOCKS; round++) {
      const block = await transferBlock(anvil.url, accounts, round);
      await poll(`block ${block} to be published`, async () => (await published()) >= block);
      const publishedAt = performance.now();
      if (round === 0) started = publishedAt;
      await poll(
        `the ${ENDPOINTS} deliveries of block ${block}`,
        () => receiver.accepted.filter((a) => a.block === block).length >= ENDPOINTS,
      );
      const times = receiver.accepted.filter((a) => a.block === block).map((a) => a.at - publishedAt);
      latencies.push(...times);
      lastOfBlock.push(Math.max(...times));
      ended = Math.max(ended, ...receiver.accepted.filter((a) => a.block === block).map((a) => a.at));
    }
    await call("evm_setAutomine", [true]);
    const results = await sql`select count(*)::int as n, sum(length(body))::bigint as bytes
      from webhook_deliveries where kind = 'block'`;
    const perBlock = Number(results[0]!.n) / BLOCKS;

    // Rounds: a backlog of BACKLOG copies drained while wrk measures the small hit, then the same hit idle.
    const small = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBlockByNumber",
      params: ["0x1", false],
    });
    const hit = () =>
      wrk({
        url: `${base}/node/jsonrpc?api_key=${keyOf(0)}`,
        bodies: [small],
        connections: CONNECTIONS,
        threads: THREADS,
        durationS: SECONDS,
      });
    await hit();
    const busy: number[] = [];
    const idle: number[] = [];
    const drainRates: number[] = [];
    const drainSeconds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = receiver.accepted.length;
      await sql`insert into webhook_deliveries (delivery_id, endpoint_id, kind, block_number, block_hash, body)
        select 'msg_bench_' || ${round} || '_' || g || '_' || d.seq, d.endpoint_id, d.kind, d.block_number,
          d.block_hash, d.body
        from webhook_deliveries d, generate_series(1, ${Math.ceil(BACKLOG / (perBlock * BLOCKS))}) g
        where d.kind = 'block' and d.delivery_id not like 'msg_bench_%'
        order by g, d.seq`;
      const drainStart = performance.now();
      const during = await hit();
      await poll("the backlog to drain", () => receiver.accepted.length - before >= BACKLOG, 50);
      const seconds = (receiver.accepted[before + BACKLOG - 1]!.at - drainStart) / 1000;
      drainSeconds.push(seconds);
      drainRates.push(BACKLOG / seconds);
      busy.push(during.requestsPerSecond);
      idle.push((await hit()).requestsPerSecond);
    }
    const ratios = busy.map((b, i) => b / idle[i]!);
    lines.push(
      "",
      `Webhooks: ${fmt(ENDPOINTS * FILTERS_PER_ENDPOINT)} watch filters across ${ENDPOINTS} endpoints (100 keys), blocks of ${fmt(TRANSFERS)} native transfers, every address watched by five keys: ${fmt(perBlock)} deliveries a block of ${FILTERS_PER_ENDPOINT} results each (${fmt(Number(results[0]!.bytes) / Number(results[0]!.n) / 1024, 1)} KB), to a receiver on loopback verifying each endpoint's first delivery with standardwebhooks; ${new Date().toISOString()}`,
      "",
      "| | p50 | p99 | last of a block (median of blocks) | deliveries/s |",
      "|---|---:|---:|---:|---:|",
      `| from a block's publication to its deliveries' acceptance, ${BLOCKS} blocks | ${fmt(percentile(latencies, 50), 1)} ms | ${fmt(percentile(latencies, 99), 1)} ms | ${fmt(median(lastOfBlock), 1)} ms | ${fmt((latencies.length / (ended - started)) * 1000)} |`,
      `| a backlog of ${fmt(BACKLOG)} drained (rounds: ${drainSeconds.map((s) => fmt(s, 1)).join(", ")} s) | | | | ${fmt(median(drainRates))} |`,
      "",
      `The small hit (eth_getBlockByNumber, hashes) on the same service, ${CONNECTIONS} connections, ${SECONDS} s a measurement: ${fmt(median(busy))} req/s while the senders drain the backlog, ${fmt(median(idle))} with them idle: **${fmt(median(ratios), 2)}** of it (rounds: ${ratios.map((r) => fmt(r, 2)).join(", ")}).`,
    );
    rows.push({
      phase: "webhooks",
      deliveriesPerBlock: perBlock,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      lastOfBlockMs: lastOfBlock,
      drainRates,
      busy,
      idle,
    });
  } finally {
    await sql?.end();
    await service?.stop();
    receiver.stop();
    await pg.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
