import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecretBox, loadSecretsKey, newSecret, SECRETS_KEY_FILE } from "./secrets";

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-secrets-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("a secret is whsec_ + base64 of 32 random bytes, never the same twice", () => {
  const secrets = Array.from({ length: 100 }, newSecret);
  for (const secret of secrets) {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64").length).toBe(32);
  }
  expect(new Set(secrets).size).toBe(100);
});

test("sealed: nonce ‖ ciphertext ‖ tag, a new nonce each time, the secret nowhere in it, opened back", () => {
  const box = createSecretBox(randomBytes(32));
  const secret = newSecret();
  const [a, b] = [box.seal(secret), box.seal(secret)];
  expect(a.length).toBe(12 + Buffer.byteLength(secret) + 16);
  expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  const text = Buffer.from(a).toString("latin1");
  expect(text.includes(secret)).toBe(false);
  expect(text.includes(secret.slice(6))).toBe(false);
  expect(box.open(a)).toBe(secret);
  expect(box.open(b)).toBe(secret);
  // As postgres.js hands a bytea back: a Buffer that is a view into a larger one.
  const pool = Buffer.concat([Buffer.from("xxxx"), Buffer.from(a), Buffer.from("yy")]);
  expect(box.open(pool.subarray(4, 4 + a.length))).toBe(secret);
});

test("another key, an altered byte or a cut-off value cannot be opened", () => {
  const box = createSecretBox(randomBytes(32));
  const sealed = box.seal(newSecret());
  expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow(
    "another WEBHOOK_SECRETS_KEY, or altered",
  );
  for (const at of [0, 12, sealed.length - 1]) {
    const altered = Uint8Array.from(sealed);
    altered[at]! ^= 1;
    expect(() => box.open(altered)).toThrow("another WEBHOOK_SECRETS_KEY, or altered");
  }
  expect(() => box.open(sealed.subarray(0, 27))).toThrow("too short");
  expect(() => createSecretBox(randomBytes(16))).toThrow("32 bytes");
});

test("WEBHOOK_SECRETS_KEY as 64 hex digits or base64 is the key, and no key file is made", () => {
  const key = randomBytes(32);
  const dataDir = freshDir();
  expect(Buffer.from(loadSecretsKey({ configured: key.toString("hex"), dataDir })).equals(key)).toBe(true);
  expect(Buffer.from(loadSecretsKey({ configured: key.toString("base64"), dataDir })).equals(key)).toBe(true);
  expect(() => statSync(join(dataDir, SECRETS_KEY_FILE))).toThrow();
});

test("without it: a key file of 32 bytes, mode 0600, made once and read back after", () => {
  const dataDir = join(freshDir(), "not-yet");
  const key = loadSecretsKey({ configured: undefined, dataDir });
  const path = join(dataDir, SECRETS_KEY_FILE);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(readFileSync(path).equals(Buffer.from(key))).toBe(true);
  expect(Buffer.from(loadSecretsKey({ configured: undefined, dataDir })).equals(Buffer.from(key))).toBe(true);
  const box = createSecretBox(key);
  const sealed = box.seal("whsec_x");
  expect(createSecretBox(loadSecretsKey({ configured: undefined, dataDir })).open(sealed)).toBe("whsec_x");
});

test("a key file of the wrong size is refused, naming the file, not replaced", () => {
  const dataDir = freshDir();
  const path = join(dataDir, SECRETS_KEY_FILE);
  writeFileSync(path, randomBytes(31));
  expect(() => loadSecretsKey({ configured: undefined, dataDir })).toThrow(`${path} must hold 32 bytes`);
  expect(readFileSync(path).length).toBe(31);
});

test("processes starting at once on one data directory all take the same key", async () => {
  const dataDir = freshDir();
  const script = `import { loadSecretsKey } from ${JSON.stringify(join(import.meta.dir, "secrets.ts"))};
    process.stdout.write(Buffer.from(loadSecretsKey({ configured: undefined, dataDir: process.env.KEY_DIR! })).toString("hex"));`;
  const children = Array.from({ length: 6 }, () =>
    Bun.spawn([process.execPath, "-e", script], {
      env: { ...process.env, KEY_DIR: dataDir },
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  try {
    const keys = await Promise.all(children.map((child) => new Response(child.stdout).text()));
    expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys)).toEqual(new Set([readFileSync(join(dataDir, SECRETS_KEY_FILE)).toString("hex")]));
  } finally {
    for (const child of children) child.kill();
  }
});
