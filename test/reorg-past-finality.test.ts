/**
 * A reorg deeper than the finality depth (docs/interface.md §8), on a real regtest Litecoin Core: blocks mined,
 * read through the service (so every tier keeps its answers by height as final), then `invalidateblock` on a
 * block the service took as final and a longer branch mined. Afterwards nothing the service answers is of the
 * dropped branch (JSON-RPC by height, Esplora by height, a block by hash with its confirmations, the fleet's
 * Redis tier, the disk tier after a restart), the index equals the node's chain, a watch_filters subscriber
 * gets the new branch's blocks, the reorg is logged as an error naming its depth, and once the service has
 * followed, it makes no block reads of its own (the stall that read the next block twice a second, for ever).
 * Both cases of the issue: CONFIRMATIONS 0 with a 1-deep reorg, and regtest's default (1) with a 2-deep one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { MAC_HEX_LENGTH } from "../src/fleet/mac";
import { rpc } from "./support/chain";
import { type LitecoinNode, startLitecoind } from "./support/litecoind";
import { type NodeProxy, startProxy } from "./support/proxy";
import { type RedisServer, startRedis } from "./support/redis";
import { startTestService, type TestService } from "./support/service";
import { newAnvil, onTeardown } from "./support/shared";
import { until } from "./support/until";
import { connectSocket, type TestSocket, wsUrl } from "./support/ws";

const SECRET = "a-fleet-secret-of-at-least-32-characters";
/** How long the service may take to follow the node (it takes well under a second here). */
const FOLLOW_MS = 30_000;
/** The idle window in which a service that has followed must read no block of its own. */
const IDLE_MS = 2_000;

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
}, 30_000);

/** A JSON-RPC call through the service: its result. */
async function call(url: string, method: string, params: unknown[]): Promise<any> {
  const response = await fetch(`${url}/node/jsonrpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await response.json()) as { result?: unknown; error?: unknown };
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** The node's main chain, hash by height, from block 0 to its tip. */
async function nodeChain(node: LitecoinNode): Promise<string[]> {
  const tip = await node.rpc<number>("getblockcount");
  return Promise.all(Array.from({ length: tip + 1 }, (_, h) => node.rpc<string>("getblockhash", [h])));
}

/** The index's blocks, hash by height (the service's schema: the only one in its database). */
async function indexChain(db: postgres.Sql): Promise<string[]> {
  const rows = await db`select number::int as n, encode(hash, 'hex') as hash from blocks order by number`;
  return rows.map((r) => r.hash as string);
}

/** The answers of the fleet's tier that name a block by height (getblockhash), as [height, hash]. */
async function sharedBlockHashes(): Promise<[number, string][]> {
  const keys = (await redis.cli("--scan", "--pattern", "gw:*:c:*")).split("\n").filter(Boolean);
  const found: [number, string][] = [];
  for (const key of keys) {
    const value = await redis.cli("get", key);
    const keyLength = Number.parseInt(value.slice(MAC_HEX_LENGTH, MAC_HEX_LENGTH + 8), 16);
    const cacheKey = value.slice(MAC_HEX_LENGTH + 8, MAC_HEX_LENGTH + 8 + keyLength);
    const body = value.slice(MAC_HEX_LENGTH + 8 + keyLength);
    const params = /^getblockhash.\[(\d+)\]$/.exec(cacheKey);
    if (params) found.push([Number(params[1]), JSON.parse(body) as string]);
  }
  return found;
}

interface Case {
  name: string;
  /** CONFIRMATIONS given to the service; undefined: regtest's default. */
  confirmations: string | undefined;
  /** Blocks the reorg drops, all of them taken as final. */
  depth: number;
}

const CASES: Case[] = [
  { name: "CONFIRMATIONS 0: a 1-deep reorg", confirmations: "0", depth: 1 },
  { name: "regtest's default CONFIRMATIONS (1): a 2-deep reorg", confirmations: undefined, depth: 2 },
];

describe.each(CASES)("$name", ({ confirmations, depth }) => {
  let node: LitecoinNode;
  let proxy: NodeProxy;
  let service: TestService;
  let db: postgres.Sql;
  let socket: TestSocket;
  let subscription: string;
  const logs: { level: string; msg: string; depth?: number }[] = [];
  let before: string[];
  let after: string[];
  let env: Record<string, string>;

  beforeAll(async () => {
    // Each case's regtest chain has the same genesis (the fleet's prefix) but blocks of its own.
    await redis.cli("flushall");
    node = await startLitecoind();
    await node.mine(4);
    proxy = startProxy(node.url);
    env = {
      CHAIN: "LTC",
      HEAD_POLL_MS: "50",
      ...(confirmations === undefined ? {} : { CONFIRMATIONS: confirmations }),
    };
    // Kept past the service's stop, for the restart on its disk tier.
    const dataDir = mkdtempSync(join(tmpdir(), "cg-reorg-"));
    onTeardown(async () => rmSync(dataDir, { recursive: true, force: true }));
    service = await startTestService({
      upstreamUrls: [proxy.url],
      dataDir,
      env: { ...env, INDEXER: "on", REDIS_URL: redis.url, REDIS_SECRET: SECRET, LOG_LEVEL: "warn" },
      logWrite: (line) => logs.push(JSON.parse(line)),
    });
    db = postgres(service.databaseUrl, { max: 2, onnotice: () => {} });
    // Filters on the addresses the blocks pay (the old branch's, the new one's): each block has one result.
    const elsewhere = await node.rpc<string>("getnewaddress");
    for (const address of [node.address, elsewhere]) {
      const added = await fetch(`${service.url}/watch_filters/add`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ address }),
      });
      expect(added.status).toBe(200);
    }
    socket = await connectSocket(wsUrl(service.url));
    subscription = (await socket.request("eth_subscribe", ["watch_filters", { version: "v1" }])).result;
    await node.mine(depth + 1);
    before = await nodeChain(node);
    await until("the index to reach the node's tip", async () =>
      (await indexChain(db)).join() === before.join() ? true : undefined,
    );
    // Every height read through the service, so each tier keeps its answer as final.
    for (let h = 0; h < before.length; h++) {
      expect(await call(service.url, "getblockhash", [h])).toBe(before[h]!);
      await call(service.url, "getblock", [before[h], 1]);
    }
    const tip = before.length - 1;
    const final = tip - Number(confirmations ?? "1");
    await until(
      "the fleet's tier to hold every final height",
      async () => ((await sharedBlockHashes()).length >= final + 1 ? true : undefined),
      FOLLOW_MS,
    );

    // Drop the last `depth` blocks (final for the service) and mine a longer branch, paid elsewhere.
    await node.rpc("invalidateblock", [before[tip - depth + 1]]);
    await node.rpc("generatetoaddress", [depth + 1, elsewhere]);
    after = await nodeChain(node);
    expect(after.length).toBe(before.length + 1);
    expect(after[tip - depth]).toBe(before[tip - depth]!);
    expect(after[tip - depth + 1]).not.toBe(before[tip - depth + 1]!);
    await until(
      "the index to follow the new branch",
      async () => ((await indexChain(db)).join() === after.join() ? true : undefined),
      FOLLOW_MS,
    );
  }, 120_000);

  afterAll(async () => {
    socket?.close();
    await db?.end();
  });

  test("every answer by height is the new branch's: JSON-RPC, Esplora, the fleet's tier", async () => {
    for (let h = 0; h < after.length; h++) {
      expect(await call(service.url, "getblockhash", [h])).toBe(after[h]!);
      const esplora = await fetch(`${service.url}/esplora/block-height/${h}`);
      expect(await esplora.text()).toBe(after[h]!);
    }
    // No instance of the fleet can read a dropped block's hash by its height any more.
    for (const [height, hash] of await sharedBlockHashes()) expect(hash).toBe(after[height]!);
  });

  test("a dropped block by hash says it left the chain, as the node does", async () => {
    const tip = before.length - 1;
    for (let h = tip - depth + 1; h <= tip; h++) {
      const node_ = await node.rpc("getblockheader", [before[h]]);
      const served = await call(service.url, "getblockheader", [before[h]]);
      expect(served.confirmations).toBe(-1);
      expect(served).toEqual(node_);
      expect((await call(service.url, "getblock", [before[h], 1])).confirmations).toBe(-1);
    }
  });

  test("the reorg is logged as an error naming its depth", () => {
    const errors = logs.filter((l) => l.level === "error" && /past the finality depth/.test(l.msg));
    expect(errors.map((l) => l.depth)).toEqual([depth]);
    expect(errors[0]!.msg).toBe(
      `chain reorganization ${depth} blocks deep, past the finality depth: blocks from ${before.length - depth} up were taken as final; answers about them are dropped from every cache tier and the index is rewound`,
    );
  });

  test("the watch_filters subscriber gets the new branch's processed blocks, none of the dropped one after it", async () => {
    const processedTip = after.length - 1 - Number(confirmations ?? "1");
    const fork = before.length - depth;
    const sent = await until(
      "the new branch's processed blocks to be sent",
      async () => {
        const all = socket.notifications(subscription) as { block: { number: number; hash: string } }[];
        const last = all[all.length - 1];
        return last?.block.number === processedTip && last.block.hash === after[processedTip]
          ? all
          : undefined;
      },
      FOLLOW_MS,
    );
    // After the last result of the dropped branch, every block from the fork up once, the chain's.
    const lastDropped = sent.findLastIndex((r) => r.block.hash !== after[r.block.number]);
    const since = sent.slice(lastDropped + 1).filter((r) => r.block.number >= fork);
    expect(since.map((r) => [r.block.number, r.block.hash])).toEqual(
      after.slice(fork, processedTip + 1).map((hash, i) => [fork + i, hash]),
    );
  }, 60_000);

  test("once followed, the service reads no block of its own", async () => {
    const from = proxy.calls.length;
    await Bun.sleep(IDLE_MS);
    const reads = proxy.calls
      .slice(from)
      .filter((c) => c.method === "getblock" || c.method === "getblockhash");
    expect(reads).toEqual([]);
  }, 10_000);

  test("after a restart on the same disk tier, nothing of the dropped branch is answered", async () => {
    await service.stop();
    const again = await startTestService({
      upstreamUrls: [node.url],
      dataDir: service.dataDir,
      databaseUrl: service.databaseUrl,
      env,
    });
    try {
      for (let h = 0; h < after.length; h++) {
        expect(await call(again.url, "getblockhash", [h])).toBe(after[h]!);
      }
    } finally {
      await again.stop();
    }
  }, 60_000);
});

/**
 * The EVM family on anvil, whose `finalized` tag names the block 64 below its head: `anvil_reorg` 70 blocks
 * deep drops blocks the node itself called final. Afterwards the service's blocks and receipts by height and
 * hash are the node's, the index is the node's chain, a block filter polled before gives the new branch
 * from the fork (its position rewound), the error names the depth, and nothing is read once followed.
 */
describe("anvil_reorg deeper than the finality depth", () => {
  const BLOCKS = 100;
  const DEPTH = 70;

  test("no stale answer afterwards, the index and a block filter follow, no stall", async () => {
    const anvil = await newAnvil();
    const node = rpc(anvil.url);
    const [alice, bob, erin] = await node<string[]>("eth_accounts");
    const proxy = startProxy(anvil.url);
    const logs: { level: string; msg: string; depth?: number }[] = [];
    const service = await startTestService({
      upstreamUrls: [proxy.url],
      env: {
        INDEXER: "on",
        HEAD_POLL_MS: "50",
        REDIS_URL: redis.url,
        REDIS_SECRET: SECRET,
        LOG_LEVEL: "warn",
      },
      logWrite: (line) => logs.push(JSON.parse(line)),
    });
    const db = postgres(service.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // Mined while the service follows, as a chain grows under it.
      const sent: string[] = [];
      for (let i = 0; i < BLOCKS; i++) {
        const value = `0x${(i + 1).toString(16)}`;
        sent.push(await node<string>("eth_sendTransaction", [{ from: alice, to: bob, value }]));
      }
      const served = (method: string, params: unknown[]) => call(service.url, method, params);
      const chainOf = async () =>
        Promise.all(
          Array.from({ length: Number(await node<string>("eth_blockNumber")) + 1 }, (_, h) =>
            node<{ hash: string }>("eth_getBlockByNumber", [`0x${h.toString(16)}`, false]).then(
              (b) => b.hash,
            ),
          ),
        );
      const indexed = async () =>
        (await db`select '0x' || encode(hash, 'hex') as hash from blocks order by number`).map((r) => r.hash);
      // anvil answers eth_sendTransaction once the transaction is in its pool and mines it a moment later
      // (on a loaded machine, after the next one came: two in a block); the chain is read once the last is
      // mined, else the index goes past the chain read and never equals it.
      await until("the last transaction to be mined", async () =>
        (await node<object | null>("eth_getTransactionReceipt", [sent[sent.length - 1]])) ? true : undefined,
      );
      const before = await chainOf();
      await until("the index to reach the head", async () =>
        (await indexed()).join() === before.join() ? true : undefined,
      );
      // The reorg drops blocks the service took as final: its finality has reached the node's (anvil: 64
      // below the head, above the fork), so the reads below keep the final blocks' answers in every tier.
      const nodeFinal = Number(
        (await node<{ number: string }>("eth_getBlockByNumber", ["finalized", false])).number,
      );
      expect(nodeFinal).toBeGreaterThanOrEqual(before.length - DEPTH);
      await until("the service to take the node's finalized block as final", async () => {
        const health = (await (await fetch(`${service.url}/health`)).json()) as {
          head: { finalized: number };
        };
        return health.head.finalized >= nodeFinal ? true : undefined;
      });
      const filter = await served("eth_newBlockFilter", []);
      // Every block and receipt read through the service: the final ones kept in every tier.
      for (let h = 0; h < before.length; h++)
        await served("eth_getBlockByNumber", [`0x${h.toString(16)}`, false]);
      for (const hash of sent) await served("eth_getTransactionReceipt", [hash]);

      await node("anvil_reorg", [DEPTH, [[{ from: alice, to: erin, value: "0x309" }, 0]]]);
      await node("evm_mine", []);
      const after = await chainOf();
      const fork = before.length - DEPTH;
      expect(after[fork - 1]).toBe(before[fork - 1]!);
      expect(after[fork]).not.toBe(before[fork]!);
      await until(
        "the index to follow the new branch",
        async () => ((await indexed()).join() === after.join() ? true : undefined),
        FOLLOW_MS,
      );

      for (let h = 0; h < after.length; h++) {
        const tag = `0x${h.toString(16)}`;
        expect(await served("eth_getBlockByNumber", [tag, false])).toEqual(
          await node("eth_getBlockByNumber", [tag, false]),
        );
      }
      for (const hash of sent) {
        expect(await served("eth_getTransactionReceipt", [hash])).toEqual(
          await node("eth_getTransactionReceipt", [hash]),
        );
      }
      // The filter polled after the reorg gives the new branch from the fork up: its position went back.
      expect(await served("eth_getFilterChanges", [filter])).toEqual(after.slice(fork));
      const errors = logs.filter((l) => l.level === "error" && /past the finality depth/.test(l.msg));
      expect(errors.map((l) => l.depth)).toEqual([DEPTH]);

      const from = proxy.calls.length;
      await Bun.sleep(IDLE_MS);
      const reads = proxy.calls
        .slice(from)
        .filter((c) => c.method === "eth_getBlockReceipts" || /^0x/.test(String(c.params[0])));
      expect(reads).toEqual([]);
    } finally {
      await db.end();
      await service.stop();
    }
  }, 120_000);
});

/**
 * A reorg past finality while no instance follows the node (the fleet stopped, or one that restarts): the
 * instance that starts afterwards has the disk tier and the fleet's Redis of the one before, holding the
 * dropped blocks' answers as final, and an index of the dropped branch. Its follower never saw the reorg: the
 * index finds it against the node's own hashes, rewinds, and drops those answers from every tier.
 */
describe("a reorg past finality while no instance follows", () => {
  test("the next instance finds it by its index, rewinds, and answers nothing of the dropped branch", async () => {
    await redis.cli("flushall");
    const node = await startLitecoind();
    await node.mine(4);
    const dataDir = mkdtempSync(join(tmpdir(), "cg-reorg-"));
    onTeardown(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      CHAIN: "LTC",
      HEAD_POLL_MS: "50",
      INDEXER: "on",
      REDIS_URL: redis.url,
      REDIS_SECRET: SECRET,
    };
    const first = await startTestService({ upstreamUrls: [node.url], dataDir, env });
    const databaseUrl = first.databaseUrl;
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await node.mine(2);
      const before = await nodeChain(node);
      await until("the index to reach the node's tip", async () =>
        (await indexChain(db)).join() === before.join() ? true : undefined,
      );
      for (let h = 0; h < before.length; h++) await call(first.url, "getblockhash", [h]);
      const tip = before.length - 1;
      await until("the fleet's tier to hold every final height", async () =>
        (await sharedBlockHashes()).length >= tip ? true : undefined,
      );
      await first.stop();

      // Two blocks deep, both final for the instance that stopped (CONFIRMATIONS 1), replaced by three.
      await node.rpc("invalidateblock", [before[tip - 1]]);
      await node.rpc("generatetoaddress", [3, await node.rpc<string>("getnewaddress")]);
      const after = await nodeChain(node);

      const logs: { level: string; msg: string }[] = [];
      const next = await startTestService({
        upstreamUrls: [node.url],
        dataDir,
        databaseUrl,
        env: { ...env, LOG_LEVEL: "warn" },
        logWrite: (line) => logs.push(JSON.parse(line)),
      });
      try {
        await until(
          "the index to follow the new branch",
          async () => ((await indexChain(db)).join() === after.join() ? true : undefined),
          FOLLOW_MS,
        );
        for (let h = 0; h < after.length; h++) {
          expect(await call(next.url, "getblockhash", [h])).toBe(after[h]!);
        }
        for (const [height, hash] of await sharedBlockHashes()) expect(hash).toBe(after[height]!);
        expect(logs.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
          `the index held blocks from ${tip - 1} up that the node's chain no longer has, below the finality depth (a reorg while the service was not following): answers about them are dropped from every cache tier`,
        ]);
      } finally {
        await next.stop();
      }
    } finally {
      await db.end();
    }
  }, 120_000);
});
