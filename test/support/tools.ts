/** Paths of the external tools that `scripts/ensure-monitoring-tools.mjs` installs (npm test runs it). */
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

function required(path: string, what: string): string {
  if (!existsSync(path))
    throw new Error(`${what} is missing at ${path}; run: node scripts/ensure-monitoring-tools.mjs`);
  return path;
}

/** Debian's Chromium. */
export function chromiumPath(): string {
  return required("/usr/bin/chromium", "Chromium");
}

/** promtool from Debian's prometheus package, unpacked (not installed) under .tools/. */
export function promtoolPath(): string {
  return required(join(ROOT, ".tools", "prometheus", "usr", "bin", "promtool"), "promtool");
}
