// Bun comes from the npm package `bun`. Where npm did not run its install script, the binary is a
// placeholder: run the package's installer once. Runs under Node, before Bun exists.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve("bun/package.json"));
const bin = join(pkgDir, "bin", process.platform === "win32" ? "bun.exe" : "bun.exe");

function works() {
  try {
    execFileSync(bin, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

if (!existsSync(bin) || !works()) {
  process.stderr.write("bun: binary missing or a placeholder; running its installer\n");
  execFileSync(process.execPath, [join(pkgDir, "install.js")], { stdio: "inherit", cwd: pkgDir });
  if (!works()) {
    process.stderr.write("bun: the installer ran but the binary still does not start\n");
    process.exit(1);
  }
}
