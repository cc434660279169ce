// Patches applied to installed dependencies, until their upstreams release the fixes. Idempotent; runs after
// npm install and before start and test. Runs under Node, before Bun exists.
//
// postgres 3.4.9: nextWrite() runs from setImmediate after a connection closed (a restarted or stopped
// server, a terminated backend) and writes to a null socket: an uncaught TypeError that ends the process,
// whatever the caller catches (porsager/postgres#1066, #1208; the fix of #1209). The guard settles the
// queries of the dead connection with CONNECTION_CLOSED instead, which callers catch and retry.
//
// postgres 3.4.9: a connection counts the rows of the result it reads and resets the count only when a
// statement completes; it keeps the server's last error until the next ReadyForQuery. When the connection
// closes in the middle of a result (a restarted server, a terminated backend), the next statement on it,
// once reconnected, is failed with the dead one's error, and the one after gets its rows after as many
// holes as the dead one had read (porsager/postgres#1119, #1181: a page of filters with undefined entries).
// The reset clears both when the connection closes.
//
// postgres 3.4.9: release() of a reserved connection puts it back among the open ones even when it closed
// while reserved (a restarted server): the dead connection is then handed out again, and every statement on
// it fails with CONNECTION_CLOSED until its idle timer ends it (the indexer's leader lock, on a reserved
// connection, failed every 2 s for ~20 s after a restart). A connection that closed is left closed, to be
// connected again by the next use.
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
const CONNECTION_PATCHES = [
  {
    marker: "/* chain-gateway: null-socket guard */",
    from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    to: (marker) => `  function nextWrite(fn) {
    ${marker}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    marker: "/* chain-gateway: result state reset on close */",
    from: `    socket.removeAllListeners()
    socket = null
`,
    to: (marker) => `    socket.removeAllListeners()
    socket = null
    ${marker}
    rows = 0
    errorResponse = null
`,
  },
];
const INDEX_PATCHES = [
  {
    marker: "/* chain-gateway: a released connection that closed stays closed */",
    from: `    sql.release = () => {
      c.reserved = null
      onopen(c)
    }`,
    // onclose() cleared c.reserved (and moved c to the closed ones) if it closed while reserved.
    to: (marker) => `    sql.release = () => {
      ${marker}
      if (c.reserved === null) return
      c.reserved = null
      onopen(c)
    }`,
  },
];

let patched = 0;
const targets = [
  ...["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"].map((f) => [
    f,
    CONNECTION_PATCHES,
  ]),
  ...["src/index.js", "cjs/src/index.js", "cf/src/index.js"].map((f) => [f, INDEX_PATCHES]),
];
for (const [file, patches] of targets.map(([f, p]) => [join(root, f), p])) {
  if (!existsSync(file)) continue;
  const original = readFileSync(file, "utf8");
  let text = original;
  for (const { marker, from, to } of patches) {
    if (text.includes(marker)) continue;
    if (!text.includes(from)) {
      process.stderr.write(`patch-dependencies: ${file} does not hold the code the postgres patch expects\n`);
      process.exit(1);
    }
    text = text.replace(from, to(marker));
    patched++;
  }
  if (text !== original) writeFileSync(file, text);
}
if (patched > 0) process.stderr.write(`patch-dependencies: postgres patched (${patched} patches applied)\n`);
