// The tests run against a real PostgreSQL server (Debian's). Install it with apt-get when it is missing.
// Runs under Node, before Bun exists.
import { existsSync, readdirSync } from "node:fs";
import { ensureDebianPackage } from "./apt.mjs";

function serverBinDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(`${root}/${v}/bin/initdb`) && existsSync(`${root}/${v}/bin/postgres`))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? `${root}/${versions[0]}/bin` : undefined;
}

ensureDebianPackage({
  pkg: "postgresql",
  what: "PostgreSQL server binaries (under /usr/lib/postgresql)",
  present: () => serverBinDir() !== undefined,
});
