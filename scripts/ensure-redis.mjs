// The tests run against a real Redis server (Debian's redis-server). Install it with apt-get when it is
// missing. Runs under Node, before Bun exists.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";

const SERVER = "/usr/bin/redis-server";

if (!existsSync(SERVER)) {
  if (process.getuid?.() !== 0) {
    process.stderr.write("redis-server is missing; run: sudo apt-get install -y redis-server\n");
    process.exit(1);
  }
  process.stderr.write("redis-server is missing: installing Debian's redis-server\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execSync("apt-get update -qq && apt-get install -y -qq redis-server >/dev/null", { stdio: "inherit", env });
  if (!existsSync(SERVER)) {
    process.stderr.write(`apt-get ran but ${SERVER} does not exist\n`);
    process.exit(1);
  }
}
