/**
 * API keys in the database: `npm run keys -- add <label>` prints a new key once (only its hash is kept),
 * `list` shows labels and hash prefixes, `revoke <hash-prefix>` disables keys.
 */
import { randomBytes } from "node:crypto";
import { loadConfig } from "../config";
import { createApiKeyStore, hashKey } from "../db/apiKeys";
import { createDatabase } from "../db/database";
import { migrate } from "../db/migrate";
import { createLogger } from "../log";

const [command, arg] = process.argv.slice(2);
const log = createLogger({ level: "warn" });
const config = loadConfig();
const database = await createDatabase({ config, log });
try {
  await migrate(database.sql, log);
  const store = createApiKeyStore(database.sql);
  if (command === "add") {
    const key = randomBytes(24).toString("base64url");
    await store.add(hashKey(key), arg ?? "");
    process.stdout.write(`${key}\n`);
  } else if (command === "list") {
    for (const row of await store.list()) {
      process.stdout.write(`${row.keyHash.slice(0, 12)}  ${row.createdAt.toISOString()}  ${row.label}\n`);
    }
  } else if (command === "revoke" && arg && /^[0-9a-f]{6,64}$/.test(arg)) {
    process.stdout.write(`revoked ${await store.revoke(arg)} key(s)\n`);
  } else {
    process.stderr.write(
      "usage: npm run keys -- add <label> | list | revoke <hash-prefix of 6+ hex digits>\n",
    );
    process.exitCode = 2;
  }
} finally {
  await database.close();
}
