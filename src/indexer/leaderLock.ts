/**
 * One indexer a database: the leader holds a session advisory lock on a reserved connection; the others
 * follow its progress, and one takes over when the leader's connection dies.
 */
import type { Sql } from "../db/database";
import { withTimeout } from "../timeout";

/** How often the leader checks it still holds the lock. */
const LEADER_CHECK_MS = 5_000;
/** How long stepping down waits for the unlock of a session that may be dead. */
const UNLOCK_WAIT_MS = 1_000;
/** The advisory lock's key: any constant of this project's own. */
const LOCK_KEY = 0x696e_6478;

export interface LeaderOptions {
  sql: Sql;
  /** The embedded database serves one process (its directory is locked): no other instance can lead. */
  exclusive: boolean;
  /** False (INDEXER=off): never lead, only follow the progress of the instance that does. */
  enabled: boolean;
  /** Indexes while `stillLeading()`. */
  lead(stillLeading: () => boolean): Promise<void>;
  /** Reads the progress of the instance that leads. */
  follow(): Promise<void>;
  /** Told when this instance starts and stops leading. */
  leading(now: boolean): void;
  /** Cuts the leader's pause short: the lock was lost. */
  wake(): void;
}

/** Leads until `lead` returns or throws, the lock is lost, or never when another instance holds it. */
export async function leadWhileLocked(options: LeaderOptions): Promise<void> {
  if (!options.enabled) return options.follow();
  if (options.exclusive) {
    options.leading(true);
    return options.lead(() => true);
  }
  const conn = await options.sql.reserve();
  try {
    // One leader per chain: the lock's second key is the chain's schema (db/chainSchema.ts).
    const [row] = await conn`select pg_try_advisory_lock(${LOCK_KEY}, hashtext(current_schema())) as locked`;
    if (!row?.locked) {
      // Another instance indexes: follow its progress for /health.
      await options.follow();
      return;
    }
    options.leading(true);
    let lockAlive = true;
    // The lock lives as long as this session: if the connection drops (or stops answering), the lead is
    // gone. A dead session's lock is gone with it, so the unlock is not waited for long either.
    const check = setInterval(() => {
      withTimeout(conn`select 1`, LEADER_CHECK_MS, () => new Error("lock session silent")).catch(() => {
        lockAlive = false;
        options.wake();
      });
    }, LEADER_CHECK_MS);
    try {
      await options.lead(() => lockAlive);
    } finally {
      clearInterval(check);
      await withTimeout(
        conn`select pg_advisory_unlock(${LOCK_KEY}, hashtext(current_schema()))`,
        UNLOCK_WAIT_MS,
        () => new Error("unlock not answered"),
      ).catch(() => {});
    }
  } finally {
    options.leading(false);
    conn.release();
  }
}
