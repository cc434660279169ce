// The Bitcoin-family tests run against a real Litecoin Core in regtest (Debian's litecoind). Install it
// with apt-get when it is missing. Runs under Node, before Bun exists.
import { existsSync } from "node:fs";
import { ensureDebianPackage } from "./apt.mjs";

ensureDebianPackage({
  pkg: "litecoind",
  what: "litecoind",
  present: () => existsSync("/usr/bin/litecoind"),
});
