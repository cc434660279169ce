/**
 * API keys in the database (`npm run keys -- <command>`):
 *
 *   add <label> [--rate <per-second>/<burst>]   prints a new key once (only its SHA-256 is kept)
 *   list                                         labels, hash prefixes, rates and creation times
 *   revoke <hash-prefix>                         disables the keys whose hash starts with it (6+ hex digits)
 *
 * Results go to stdout (the new key alone on its line, for scripts), explanations and errors to stderr.
 * Exit codes: 0 done, 1 failed (the database, a revoke that matched nothing), 2 wrong usage. No stack
 * trace for an error the operator can fix.
 */
import { randomBytes } from "node:crypto";
import { loadConfig, type Rate } from "../config";
import { createApiKeyStore, hashKey } from "../db/apiKeys";
import { createDatabase } from "../db/database";
import { databaseFailure } from "../db/guardDatabase";
import { migrate, migrationSettings, readMigrations } from "../db/migrate";
import { createLogger } from "../log";

const USAGE = `usage: npm run keys -- add <label> [--rate <per-second>/<burst>]
       npm run keys -- list
       npm run keys -- revoke <hash-prefix of 6 to 64 hex digits>`;
/** Bytes of randomness in a key: 192 bits, 32 characters of base64url. */
const KEY_BYTES = 24;
/** Shown of a hash in `list`: enough to revoke by, too little to matter. */
const HASH_PREFIX_CHARS = 12;

class UsageError extends Error {}

type Command =
  | { name: "add"; label: string; rate?: Rate }
  | { name: "list" }
  | { name: "revoke"; prefix: string };

function parseRate(text: string | undefined): Rate {
  const match = /^(\d+(?:\.\d+)?)\/(\d+)$/.exec(text ?? "");
  const perSecond = Number(match?.[1]);
  const burst = Number(match?.[2]);
  if (!match || perSecond <= 0 || burst < 1) {
    throw new UsageError(
      `--rate takes <per-second>/<burst>, both positive (e.g. 100/200), not ${text ?? "nothing"}`,
    );
  }
  return { perSecond, burst };
}

export function parseCommand(args: string[]): Command {
  const [name, ...rest] = args;
  if (name === "add") {
    const rateAt = rest.indexOf("--rate");
    const rate = rateAt === -1 ? undefined : parseRate(rest[rateAt + 1]);
    const words = rateAt === -1 ? rest : rest.filter((_, i) => i !== rateAt && i !== rateAt + 1);
    if (words.length !== 1 || words[0]!.trim() === "")
      throw new UsageError("add takes one label (quote it if it has spaces)");
    return { name, label: words[0]!, rate };
  }
  if (name === "list" && rest.length === 0) return { name };
  if (name === "revoke" && rest.length === 1) {
    const prefix = rest[0]!.toLowerCase();
    if (!/^[0-9a-f]{6,64}$/.test(prefix))
      throw new UsageError(`revoke takes 6 to 64 hex digits of a key's hash (from list), not ${rest[0]}`);
    return { name, prefix };
  }
  throw new UsageError(name === undefined ? "no command" : `unknown command or arguments: ${args.join(" ")}`);
}

async function run(command: Command): Promise<number> {
  const config = loadConfig();
  const log = createLogger({ level: "error" });
  const database = await createDatabase({ config, log });
  try {
    // sql/common/ only: the keys CLI has no chain, so no family; the chain's own tables are made by its
    // service when it starts (db/migrate.ts), in the schema it claims.
    await migrate(database.sql, log, migrationSettings(config), readMigrations());
    const store = createApiKeyStore(database.sql);
    if (command.name === "add") {
      const key = randomBytes(KEY_BYTES).toString("base64url");
      const hash = hashKey(key);
      await store.add(hash, command.label, command.rate);
      process.stdout.write(`${key}\n`);
      const rate = command.rate ? `, rate ${command.rate.perSecond}/s, burst ${command.rate.burst}` : "";
      process.stderr.write(
        `added key "${command.label}" (hash ${hash.slice(0, HASH_PREFIX_CHARS)}${rate}). It is shown only this once; running services accept it within 30 s, or at once on its first use.\n`,
      );
    } else if (command.name === "list") {
      const rows = await store.list();
      if (rows.length === 0) {
        process.stderr.write("no API keys in the database (keys from API_KEYS are not stored there)\n");
      } else {
        process.stdout.write("hash          created                   rate        label\n");
        for (const row of rows) {
          const rate = row.rate ? `${row.rate.perSecond}/${row.rate.burst}` : "default";
          process.stdout.write(
            `${row.keyHash.slice(0, HASH_PREFIX_CHARS)}  ${row.createdAt.toISOString()}  ${rate.padEnd(10)}  ${row.label}\n`,
          );
        }
      }
    } else {
      const revoked = await store.revoke(command.prefix);
      if (revoked === 0) {
        process.stderr.write(
          `no active key's hash starts with ${command.prefix} (see: npm run keys -- list)\n`,
        );
        return 1;
      }
      process.stdout.write(`revoked ${revoked} key${revoked === 1 ? "" : "s"}\n`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

if (import.meta.main) {
  let code: number;
  try {
    code = await run(parseCommand(process.argv.slice(2)));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`keys: ${error.message}\n${USAGE}\n`);
      code = 2;
    } else {
      const reason = databaseFailure(error, 0) ? "cannot reach the database (check DATABASE_URL)" : "failed";
      process.stderr.write(`keys: ${reason}: ${(error as Error).message ?? error}\n`);
      code = 1;
    }
  }
  process.exit(code);
}
