// Patches applied to installed dependencies, until their upstreams release the fixes. Idempotent; runs after
// npm install and before start and test. Runs under Node, before Bun exists.
//
// postgres 3.4.9: nextWrite() runs from setImmediate after a connection closed (a restarted or stopped
// server, a terminated backend) and writes to a null socket: an uncaught TypeError that ends the process,
// whatever the caller catches (porsager/postgres#1066, #1208; the fix of #1209). The guard settles the
// queries of the dead connection with CONNECTION_CLOSED instead, which callers catch and retry.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** A package's directory: up from its entry point to the package.json that names it (exports hide it). */
function packageDir(name) {
  let dir = dirname(require.resolve(name));
  while (
    !existsSync(join(dir, "package.json")) ||
    JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name !== name
  ) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${name}`);
    dir = up;
  }
  return dir;
}

const root = packageDir("postgres");
const MARKER = "/* chain-gateway: null-socket guard */";
const UNGUARDED = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const GUARDED = `  function nextWrite(fn) {
    ${MARKER}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`;

let patched = 0;
for (const file of ["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"].map((f) =>
  join(root, f),
)) {
  if (!existsSync(file)) continue;
  const text = readFileSync(file, "utf8");
  if (text.includes(MARKER)) continue;
  if (!text.includes(UNGUARDED)) {
    process.stderr.write(`patch-dependencies: ${file} does not hold the code the postgres patch expects\n`);
    process.exit(1);
  }
  writeFileSync(file, text.replace(UNGUARDED, GUARDED));
  patched++;
}
if (patched > 0)
  process.stderr.write(`patch-dependencies: postgres connection.js guarded (${patched} files)\n`);
