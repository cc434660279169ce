// The tests run against a real PostgreSQL server (Debian's). Install it with apt-get when it is missing.
// Runs under Node, before Bun exists.
import { execSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";

function serverBinDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(`${root}/${v}/bin/initdb`) && existsSync(`${root}/${v}/bin/postgres`))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? `${root}/${versions[0]}/bin` : undefined;
}

if (!serverBinDir()) {
  if (process.getuid?.() !== 0) {
    process.stderr.write("PostgreSQL server binaries are missing; run: sudo apt-get install -y postgresql\n");
    process.exit(1);
  }
  process.stderr.write("PostgreSQL server binaries are missing: installing Debian's postgresql\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execSync("apt-get update -qq && apt-get install -y -qq postgresql >/dev/null", { stdio: "inherit", env });
  if (!serverBinDir()) {
    process.stderr.write(
      "apt-get ran but no PostgreSQL server binaries were found under /usr/lib/postgresql\n",
    );
    process.exit(1);
  }
}
