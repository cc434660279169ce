/**
 * The indexer: backfills from INDEX_FROM_BLOCK, then follows the head, writing each block's transfers,
 * approvals and aggregates to PostgreSQL.
 *
 * - Blocks and receipts come through the node engine (batched, cached), fetched a window ahead.
 * - Each group of blocks is written in one transaction with the progress row: after a crash the index ends
 *   at a group boundary, and a restart resumes there, with no gap and nothing written twice.
 * - Reorgs: a block whose parent is not the stored block below it, or a stored tip the chain follower no
 *   longer holds canonical, makes the indexer walk back to the common ancestor, delete everything from the
 *   fork up (one delete: the derived rows cascade), and index the new branch.
 * - One indexer a database: the leader holds a session advisory lock on a reserved connection; the others
 *   wait and serve queries, and one takes over when the leader's connection dies.
 */
import { LRUCache } from "lru-cache";
import type { ChainInfo } from "../blockchain";
import { createChainStore, FencedError } from "../db/chainStore";
import type { Sql } from "../db/database";
import { createTokenStore } from "../db/tokenStore";
import { callText, type NodeClient } from "../engine/client";
import type { ChainHead } from "../engine/head";
import { quantity } from "../families/evm/blockRef";
import { type DecodedBlock, decodeBlock, type RawBlock } from "../families/evm/decode";
import { readTokenMetadata } from "../families/evm/tokenMetadata";
import type { Logger } from "../log";
import { withTimeout } from "../timeout";

/** Blocks fetched ahead of the one being written. */
const WINDOW_BLOCKS = 32;
/** A write group closes at this many transfers (or at the end of the window). */
const GROUP_TRANSFERS = 5_000;
/** How often a standby instance tries for the lock, and the leader checks it still holds it. */
const LOCK_RETRY_MS = 2_000;
const LEADER_CHECK_MS = 5_000;
/** How long stepping down waits for the unlock of a session that may be dead. */
const UNLOCK_WAIT_MS = 1_000;
/** Backfill progress is logged this often, while the index is at least BACKFILL_BLOCKS behind. */
const PROGRESS_INTERVAL_MS = 10_000;
export const BACKFILL_BLOCKS = 32n;
/** The tables are vacuumed and analyzed after this many transfers written, and when a backfill ends. */
const MAINTENANCE_TRANSFERS = 250_000;
/** Deepest reorg followed back; deeper means something is badly wrong, and the indexer stops to say so. */
const MAX_REORG_DEPTH = 1_024n;
/** Contracts remembered as looked up, so each group does not ask the database again. */
const SEEN_TOKENS = 100_000;
/** Token metadata reads running at once (each is four eth_calls, batched upstream). */
const TOKEN_LOOKUPS = 16;
/** The advisory lock's key: any constant of this project's own. */
const LOCK_KEY = 0x696e_6478;

export interface IndexerEvents {
  /** A group written: its blocks and transfers, the last block, and the seconds its transaction took. */
  written?(blocks: number, transfers: number, last: bigint, seconds: number): void;
  reorg?(from: bigint): void;
  maintained?(seconds: number): void;
}

export interface Indexer {
  /** The last block in the index (from the database when this instance is not the leader). */
  readonly lastBlock: bigint | null;
  readonly leading: boolean;
  stop(): Promise<void>;
}

class ReorgError extends Error {
  constructor(readonly at: bigint) {
    super(`block ${at} does not extend the index`);
  }
}

/** A block and receipts read from two sides of a reorg: read them again. */
class TornReadError extends Error {}

export function startIndexer(options: {
  sql: Sql;
  /** The embedded database serves one process (its directory is locked): no other instance can lead. */
  exclusive: boolean;
  /** False (INDEXER=off): never lead, only follow the progress of the instance that does. */
  enabled: boolean;
  node: NodeClient;
  head: ChainHead;
  chain: ChainInfo;
  /** INDEX_FROM_BLOCK; undefined: 0 on a dev chain, else the head minus a day. */
  fromBlock: number | undefined;
  pollMs: number;
  log: Logger;
  events?: IndexerEvents;
}): Indexer {
  const { sql, node, head, chain, log, events } = options;
  const log_ = log.child({ component: "indexer" });
  const store = createChainStore(sql);
  const tokens = createTokenStore(sql);
  let stopped = false;
  let leading = false;
  let lastBlock: bigint | null = null;
  let lastHash: string | undefined;
  let firstBlock = 0n;
  let reorgFrom: bigint | undefined;
  let wake: (() => void) | undefined;
  let maintenance: Promise<void> | undefined;
  let sinceMaintenance = 0;
  const seenTokens = new LRUCache<string, true>({ max: SEEN_TOKENS });

  head.onReorg((from) => {
    reorgFrom = reorgFrom === undefined || from < reorgFrom ? from : reorgFrom;
    wake?.();
  });
  // A new head is work at once, not at the next poll.
  head.onChange(() => wake?.());

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
    });

  async function fetchBlock(n: bigint): Promise<{ block: RawBlock; receipts: unknown[] } | undefined> {
    const ref = quantity(n);
    const [blockText, receipts] = await Promise.all([
      callText(node, "eth_getBlockByNumber", [ref, true]),
      callText(node, "eth_getBlockReceipts", [ref]),
    ]);
    if (blockText === "null" || receipts === "null") return undefined;
    const parsed = JSON.parse(blockText) as RawBlock;
    const list = JSON.parse(receipts) as { blockHash: string }[];
    for (const receipt of list) {
      if (receipt.blockHash !== parsed.hash) throw new TornReadError(`block ${n} changed while it was read`);
    }
    return { block: parsed, receipts: list };
  }

  async function canonicalHash(n: bigint): Promise<string | undefined> {
    const known = head.canonicalHash(n);
    if (known) return known.toLowerCase();
    const raw = await callText(node, "eth_getBlockByNumber", [quantity(n), false]);
    return raw === "null" ? undefined : (JSON.parse(raw) as { hash: string }).hash.toLowerCase();
  }

  /** Walks back from `from - 1` to the newest block stored with its canonical hash; removes what is above. */
  async function rewind(from: bigint): Promise<void> {
    let k = from - 1n;
    while (k >= firstBlock) {
      if (from - k > MAX_REORG_DEPTH) {
        throw new Error(
          `reorg deeper than ${MAX_REORG_DEPTH} blocks below ${from}; refusing to rewind further`,
        );
      }
      const stored = await store.hashOf(k);
      if (stored !== undefined && stored === (await canonicalHash(k))) break;
      k--;
    }
    // The follower's alarm was about blocks the index no longer holds, or holds as they are now.
    if (k === lastBlock) return;
    await store.rewind(k + 1n, lastBlock!);
    log_.warn("reorganized blocks removed from the index", {
      from: (k + 1n).toString(),
      was: lastBlock?.toString(),
    });
    events?.reorg?.(k + 1n);
    lastBlock = k;
    lastHash = k >= firstBlock ? await store.hashOf(k) : undefined;
  }

  /** Runs in the background, one at a time: indexing goes on meanwhile. */
  function maintain() {
    if (maintenance) return;
    sinceMaintenance = 0;
    const started = performance.now();
    maintenance = store
      .maintain()
      .then(() => {
        const seconds = (performance.now() - started) / 1000;
        log_.debug("index tables vacuumed and analyzed", { seconds });
        events?.maintained?.(seconds);
      })
      .catch((error) => log_.warn("index maintenance failed", { error: (error as Error).message }))
      .finally(() => {
        maintenance = undefined;
      });
  }

  /**
   * Reads the metadata of the contracts never seen before their blocks are written: a block's results
   * (its transfers' asset and decimals, its watch-filter results) are whole once it is processed, and do
   * not change afterwards. A read that fails is tried again when the token next appears.
   */
  async function readNewTokens(list: Iterable<string>): Promise<void> {
    const fresh = [...list].filter((token) => !seenTokens.has(token));
    if (fresh.length === 0) return;
    for (const token of fresh) seenTokens.set(token, true);
    const unknown = await tokens.unknown(fresh);
    for (let i = 0; i < unknown.length; i += TOKEN_LOOKUPS) {
      await Promise.all(
        unknown.slice(i, i + TOKEN_LOOKUPS).map((token) =>
          readTokenMetadata(node, token)
            .then((meta) => tokens.upsert(token, meta))
            .catch((error) => {
              seenTokens.delete(token);
              log_.debug("token metadata lookup failed", { token, error: (error as Error).message });
            }),
        ),
      );
    }
  }

  async function firstBlockToIndex(): Promise<bigint> {
    if (options.fromBlock !== undefined) return BigInt(options.fromBlock);
    if (chain.devChain) return 0n;
    let top = head.latest();
    while (top === undefined && !stopped) {
      await sleep(options.pollMs);
      top = head.latest();
    }
    const day = BigInt(Math.ceil(86_400_000 / chain.blockTimeMs));
    return top !== undefined && top > day ? top - day : 0n;
  }

  /** Indexes while this instance holds the lock. */
  async function lead(stillLeading: () => boolean): Promise<void> {
    const state = (await store.state()) ?? (await store.start(await firstBlockToIndex()));
    firstBlock = state.firstBlock;
    lastBlock = state.lastBlock;
    lastHash = lastBlock >= firstBlock ? await store.hashOf(lastBlock) : undefined;
    log_.info("indexing", { from: (lastBlock + 1n).toString(), first: firstBlock.toString() });

    let reportAt = Date.now() + PROGRESS_INTERVAL_MS;
    let reportBlocks = 0;
    let reportTransfers = 0;
    let backfilling = false;

    while (!stopped && stillLeading()) {
      // A reorg the follower saw, or a stored tip it no longer holds canonical.
      const tipCanonical = lastBlock >= firstBlock ? head.canonicalHash(lastBlock)?.toLowerCase() : undefined;
      if (
        (reorgFrom !== undefined && reorgFrom <= lastBlock) ||
        (tipCanonical !== undefined && lastHash !== undefined && tipCanonical !== lastHash)
      ) {
        reorgFrom = undefined;
        await rewind(lastBlock + 1n);
        continue;
      }
      reorgFrom = undefined;
      // The followed head never goes down: a lagging upstream is never a reason to undo what is indexed.
      const top = head.latest();
      if (top === undefined || lastBlock >= top) {
        await sleep(options.pollMs);
        continue;
      }

      const end = lastBlock + BigInt(WINDOW_BLOCKS) < top ? lastBlock + BigInt(WINDOW_BLOCKS) : top;
      const numbers: bigint[] = [];
      for (let n = lastBlock + 1n; n <= end; n++) numbers.push(n);
      let group: DecodedBlock[] = [];
      let groupTransfers = 0;
      const flush = async () => {
        if (group.length === 0) return;
        await readNewTokens(new Set(group.flatMap((block) => block.tokens)));
        const started = performance.now();
        await store.write(group, lastBlock!);
        const seconds = (performance.now() - started) / 1000;
        const tail = group[group.length - 1]!;
        lastBlock = tail.number;
        lastHash = tail.hash;
        reportBlocks += group.length;
        reportTransfers += groupTransfers;
        sinceMaintenance += groupTransfers;
        if (sinceMaintenance >= MAINTENANCE_TRANSFERS) maintain();
        events?.written?.(group.length, groupTransfers, lastBlock, seconds);
        group = [];
        groupTransfers = 0;
      };
      try {
        const fetched = await Promise.all(numbers.map(fetchBlock));
        let parent = lastHash;
        for (const item of fetched) {
          // The node has not got that far (a lagging upstream): index what there is, come back later.
          if (!item) break;
          const block = decodeBlock(item.block, item.receipts as never);
          if (parent !== undefined && block.parentHash !== parent) throw new ReorgError(block.number);
          group.push(block);
          groupTransfers += block.transfers.length;
          parent = block.hash;
          if (groupTransfers >= GROUP_TRANSFERS) await flush();
        }
        await flush();
      } catch (error) {
        await flush().catch(() => {});
        if (error instanceof ReorgError) {
          await rewind(error.at);
          continue;
        }
        if (error instanceof TornReadError) {
          await sleep(options.pollMs);
          continue;
        }
        throw error;
      }

      const behind = top - lastBlock;
      if (behind >= BACKFILL_BLOCKS) {
        backfilling = true;
      } else if (backfilling && behind === 0n) {
        backfilling = false;
        log_.info("backfill done: following the head", { last: lastBlock.toString() });
        maintain();
      }
      if (Date.now() >= reportAt) {
        const seconds = (Date.now() - reportAt + PROGRESS_INTERVAL_MS) / 1000;
        const blocksPerSecond = reportBlocks / seconds;
        if (backfilling) {
          log_.info("indexer progress", {
            last: lastBlock.toString(),
            head: top.toString(),
            behind: behind.toString(),
            blocksPerSecond: Math.round(blocksPerSecond * 10) / 10,
            transfersPerSecond: Math.round(reportTransfers / seconds),
            etaSeconds: blocksPerSecond > 0 ? Math.round(Number(behind) / blocksPerSecond) : null,
          });
        }
        reportAt = Date.now() + PROGRESS_INTERVAL_MS;
        reportBlocks = 0;
        reportTransfers = 0;
      }
    }
  }

  /** Reads the progress of the instance that writes the index. */
  async function follow() {
    const state = await store.state();
    if (state) {
      firstBlock = state.firstBlock;
      lastBlock = state.lastBlock;
    }
  }

  /** Leads until stopped, the lock is lost, or an error: then tries again after a pause. */
  async function leadWhileLocked(): Promise<void> {
    if (!options.enabled) {
      await follow();
      return;
    }
    if (options.exclusive) {
      leading = true;
      return lead(() => true);
    }
    const conn = await sql.reserve();
    try {
      // One leader per chain: the lock's second key is the chain's schema (db/chainSchema.ts).
      const [row] =
        await conn`select pg_try_advisory_lock(${LOCK_KEY}, hashtext(current_schema())) as locked`;
      if (!row?.locked) {
        // Another instance indexes: follow its progress for /health.
        await follow();
        return;
      }
      leading = true;
      let lockAlive = true;
      // The lock lives as long as this session: if the connection drops (or stops answering), the lead is
      // gone. A dead session's lock is gone with it, so the unlock is not waited for long either.
      const check = setInterval(() => {
        withTimeout(conn`select 1`, LEADER_CHECK_MS, () => new Error("lock session silent")).catch(() => {
          lockAlive = false;
          wake?.();
        });
      }, LEADER_CHECK_MS);
      try {
        await lead(() => lockAlive);
      } finally {
        clearInterval(check);
        await withTimeout(
          conn`select pg_advisory_unlock(${LOCK_KEY}, hashtext(current_schema()))`,
          UNLOCK_WAIT_MS,
          () => new Error("unlock not answered"),
        ).catch(() => {});
      }
    } finally {
      leading = false;
      conn.release();
    }
  }

  const running = (async () => {
    while (!stopped) {
      try {
        await leadWhileLocked();
      } catch (error) {
        if (stopped) break;
        if (error instanceof FencedError)
          log_.warn("another instance took over the index", { error: error.message });
        else log_.error("indexing failed; retrying", { error });
      }
      leading = false;
      if (!stopped) await sleep(LOCK_RETRY_MS);
    }
  })();

  return {
    get lastBlock() {
      return lastBlock !== null && lastBlock >= firstBlock ? lastBlock : null;
    },
    get leading() {
      return leading;
    },
    async stop() {
      stopped = true;
      wake?.();
      await running;
      await maintenance;
    },
  };
}
