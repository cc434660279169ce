// Installs a Debian package the tests need when it is missing (as root, with apt-get), else says which
// command to run. Runs under Node, before Bun exists.
import { execSync } from "node:child_process";

/** Ensures `present()` holds, installing Debian's `pkg` if not; exits 1 with a clear message when it cannot. */
export function ensureDebianPackage({ pkg, what, present }) {
  if (present()) return;
  const fail = (message) => {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  };
  if (process.getuid?.() !== 0)
    fail(`${what} is missing; run: sudo apt-get update && sudo apt-get install -y ${pkg}`);
  process.stderr.write(`${what} is missing: installing Debian's ${pkg}\n`);
  try {
    execSync(`apt-get update -qq && apt-get install -y -qq ${pkg} >/dev/null`, {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } catch (error) {
    fail(`installing Debian's ${pkg} failed: ${error.message}`);
  }
  if (!present()) fail(`apt-get installed ${pkg} but ${what} is still missing`);
}
