// The tests run against a real Redis server (Debian's redis-server). Install it with apt-get when it is
// missing. Runs under Node, before Bun exists.
import { existsSync } from "node:fs";
import { ensureDebianPackage } from "./apt.mjs";

ensureDebianPackage({
  pkg: "redis-server",
  what: "redis-server",
  present: () => existsSync("/usr/bin/redis-server"),
});
