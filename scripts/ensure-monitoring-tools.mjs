// Page tests drive a real headless Chromium and rule tests run promtool; both come from Debian.
// Runs under Node, before Bun exists.
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDebianPackage } from "./apt.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const chromium = "/usr/bin/chromium";
const toolsDir = join(root, ".tools");
const prometheusDir = join(toolsDir, "prometheus");
const promtool = join(prometheusDir, "usr", "bin", "promtool");
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
const isRoot = process.getuid?.() === 0;

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

ensureDebianPackage({ pkg: "chromium", what: "Chromium", present: () => existsSync(chromium) });

function prometheusDebs() {
  return readdirSync(toolsDir).filter((name) => /^prometheus_.*\.deb$/.test(name));
}

function download() {
  // As root apt would hand the download to its _apt user, who cannot write into the checkout, and warn.
  const sandbox = isRoot ? ["-o", "APT::Sandbox::User=root"] : [];
  execFileSync("apt-get", ["download", "-qq", ...sandbox, "prometheus"], {
    cwd: toolsDir,
    stdio: "inherit",
    env,
  });
}

// The prometheus package's postinst would start a server, so only its files are unpacked under .tools/.
if (!existsSync(promtool)) {
  process.stderr.write("promtool is missing: unpacking Debian's prometheus package into .tools/\n");
  mkdirSync(toolsDir, { recursive: true });
  for (const stale of prometheusDebs()) rmSync(join(toolsDir, stale));
  try {
    download();
  } catch {
    // A fresh machine has no package lists yet; refreshing them needs root.
    if (!isRoot) fail("apt-get download prometheus failed; run: sudo apt-get update, then npm test again");
    try {
      execSync("apt-get update -qq", { stdio: "inherit", env });
      download();
    } catch (error) {
      fail(`apt-get download prometheus failed: ${error.message}`);
    }
  }
  const debs = prometheusDebs();
  if (debs.length !== 1) fail(`expected one prometheus .deb in ${toolsDir}, found ${debs.length}`);
  const deb = join(toolsDir, debs[0]);
  let unpackError;
  try {
    rmSync(prometheusDir, { recursive: true, force: true });
    execFileSync("dpkg-deb", ["-x", deb, prometheusDir], { stdio: "inherit" });
  } catch (error) {
    unpackError = error;
  }
  rmSync(deb, { force: true });
  if (unpackError) fail(`unpacking ${debs[0]} failed: ${unpackError.message}`);
  if (!existsSync(promtool)) fail(`unpacked the prometheus package but ${promtool} does not exist`);
  try {
    execFileSync(promtool, ["--version"], { stdio: "ignore" });
  } catch (error) {
    fail(`${promtool} --version failed: ${error.message}`);
  }
}
