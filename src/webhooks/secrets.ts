/**
 * Webhook signing secrets: made in the Standard Webhooks form (`whsec_` + base64 of random bytes) and kept in
 * the database only sealed (AES-256-GCM), so a dump of webhook_endpoints does not hand out what signs
 * deliveries. The sealing key is WEBHOOK_SECRETS_KEY, else a key file under DATA_DIR made on first need;
 * every instance sharing a database must hold the same key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

const SECRET_PREFIX = "whsec_";
/** Random bytes in a secret: 256 bits, the HMAC-SHA256 key's own size. */
const SECRET_BYTES = 32;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_FILE = "webhook-secrets.key";

/** A new signing secret, as shown to the endpoint's owner once: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

export interface SecretBox {
  /** The secret sealed: 12-byte nonce ‖ ciphertext ‖ 16-byte tag. */
  seal(secret: string): Uint8Array;
  /** The secret back; throws when the bytes were not sealed under this key or were altered. */
  open(sealed: Uint8Array): string;
}

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`the webhook secrets key must be ${KEY_BYTES} bytes`);
  const aesKey = Buffer.from(key);
  return {
    seal(secret) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", aesKey, nonce);
      const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return new Uint8Array(Buffer.concat([nonce, body, cipher.getAuthTag()]));
    },
    open(sealed) {
      if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error("a sealed webhook secret is too short");
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.length);
      const decipher = createDecipheriv("aes-256-gcm", aesKey, bytes.subarray(0, NONCE_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const body = bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES);
      try {
        return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
      } catch {
        // The tag does not match: another key sealed it (instances with different keys), or it was altered.
        throw new Error(
          "a webhook secret could not be opened: sealed under another WEBHOOK_SECRETS_KEY, or altered",
        );
      }
    },
  };
}

/** WEBHOOK_SECRETS_KEY's 32 bytes (64 hex digits or base64, as config.ts accepts them). */
function parseConfiguredKey(configured: string): Uint8Array {
  const key = /^[0-9a-fA-F]{64}$/.test(configured)
    ? Buffer.from(configured, "hex")
    : Buffer.from(configured, "base64");
  if (key.length !== KEY_BYTES) throw new Error(`WEBHOOK_SECRETS_KEY must be ${KEY_BYTES} bytes`);
  return new Uint8Array(key);
}

function readKeyFile(path: string): Uint8Array {
  const key = readFileSync(path);
  if (key.length !== KEY_BYTES) {
    throw new Error(
      `${path} must hold ${KEY_BYTES} bytes (it holds ${key.length}); restore it or set WEBHOOK_SECRETS_KEY`,
    );
  }
  return new Uint8Array(key);
}

/** The directory's entries on disk: the key file's name must outlive a crash as its bytes do. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The key sealing secrets: WEBHOOK_SECRETS_KEY when set, else `<dataDir>/webhook-secrets.key`, made on first
 * need with mode 0600. The new key is written whole to a file of this process's own and then linked to the
 * name, which fails when the name exists (as O_EXCL does), so processes starting at once all end up reading
 * the one key that won, and none ever reads a half-written file.
 */
export function loadSecretsKey(options: { configured: string | undefined; dataDir: string }): Uint8Array {
  if (options.configured !== undefined) return parseConfiguredKey(options.configured);
  const path = join(options.dataDir, SECRETS_KEY_FILE);
  try {
    return readKeyFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const draft = `${path}.${process.pid}.${randomBytes(6).toString("hex")}`;
  try {
    const fd = openSync(draft, "wx", 0o600);
    try {
      writeSync(fd, randomBytes(KEY_BYTES));
      // On disk before it has the name: a key lost in a crash would leave every sealed secret unopenable.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(draft, path);
      syncDirectory(options.dataDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } finally {
    rmSync(draft, { force: true });
  }
  return readKeyFile(path);
}
