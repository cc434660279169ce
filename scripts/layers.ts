/**
 * The import graph of src/ and the layering it must keep: MAY_IMPORT below is the rule (what each folder is
 * for is docs/architecture.md §2, the one folder map). Each folder imports only the folders it lists (the
 * floors below it), never a sibling of its own floor; `db` and `fleet` import only the base (the files at
 * the top of src/), which imports nothing above it; a chain family (families/) may import every floor but
 * http, and no floor imports a family. The composition root (main.ts, service.ts, compose/), cluster/ and
 * cli/ may import anything. There is no import cycle between files.
 *
 * `bun scripts/layers.ts` prints the folder graph (edges with their counts) and any violation, and exits 1
 * when there is one; src/layers.test.ts runs the same check.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

/** What each unit may import, besides itself and the base. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  http: ["operations", "indexer", "webhooks", "watch", "realtime", "engine", "cache", "upstream", "db"],
  webhooks: ["watch", "realtime", "engine", "cache", "upstream", "db"],
  operations: ["engine", "cache", "upstream", "db"],
  realtime: ["engine", "cache", "upstream", "db"],
  indexer: ["engine", "cache", "upstream", "db"],
  watch: ["engine", "cache", "upstream", "db"],
  engine: ["cache", "upstream"],
  cache: ["upstream"],
  upstream: [],
  db: [],
  fleet: [],
  families: ["operations", "indexer", "watch", "realtime", "engine", "cache", "upstream", "db"],
  base: [],
};
/** Units that may import anything: they put the service together. */
const ROOTS = new Set(["root", "compose", "cli", "cluster"]);
const ROOT_FILES = new Set(["main.ts", "service.ts"]);

/** The unit a file of src/ belongs to: its folder, `base` for the top-level files, or `root` (main.ts, service.ts). */
export function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return ROOT_FILES.has(file) ? "root" : "base";
  return parts[0]!;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gm;

/** Every relative import between files of src/ (test files left out), as paths relative to src/. */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    const targets: string[] = [];
    for (const match of readFileSync(path, "utf8").matchAll(IMPORT)) {
      targets.push(relative(SRC, normalize(join(dirname(path), `${match[1]}.ts`))));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Imports that break the layering, as `from -> to` lines. */
export function layerViolations(graph = importGraph()): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    if (ROOTS.has(from)) continue;
    for (const target of targets) {
      const to = unitOf(target);
      if (to === from || to === "base") continue;
      if (!MAY_IMPORT[from]?.includes(to)) out.push(`${file} -> ${target} (${from} may not import ${to})`);
    }
  }
  return out;
}

/** Each import cycle between files, once, as the files along it. */
export function importCycles(graph = importGraph()): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

/** Imports between units, with how many file imports make each. */
export function unitEdges(graph = importGraph()): Map<string, number> {
  const edges = new Map<string, number>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = unitOf(file);
      const to = unitOf(target);
      if (from === to) continue;
      const edge = `${from} -> ${to}`;
      edges.set(edge, (edges.get(edge) ?? 0) + 1);
    }
  }
  return edges;
}

if (import.meta.main) {
  const graph = importGraph();
  for (const [edge, count] of [...unitEdges(graph)].sort()) console.log(`${edge}  (${count})`);
  const problems = [...layerViolations(graph), ...importCycles(graph).map((c) => `cycle: ${c.join(" -> ")}`)];
  for (const problem of problems) console.error(problem);
  console.log(problems.length === 0 ? "layering: ok, no cycles" : `${problems.length} problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
