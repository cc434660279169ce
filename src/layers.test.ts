/** The tree reads in the order data flows: scripts/layers.ts says what may import what. */
import { expect, test } from "bun:test";
import { importCycles, importGraph, layerViolations, unitOf } from "../scripts/layers";

test("no file imports from a higher layer or a sibling of its floor, and no import cycle", () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(50);
  expect(graph.get("engine/engine.ts")).toContain("cache/cache.ts");
  expect(layerViolations(graph)).toEqual([]);
  expect(importCycles(graph)).toEqual([]);
});

test("the check finds an upward import, a sibling import and a cycle", () => {
  const graph = new Map([
    ["upstream/pool.ts", ["engine/engine.ts"]],
    ["engine/engine.ts", ["upstream/pool.ts", "json.ts"]],
    ["watch/watchFilters.ts", ["indexer/indexer.ts", "chain/decode.ts"]],
    ["service.ts", ["http/app.ts"]],
  ]);
  expect(layerViolations(graph)).toEqual([
    "upstream/pool.ts -> engine/engine.ts (upstream may not import engine)",
    "watch/watchFilters.ts -> indexer/indexer.ts (watch may not import indexer)",
  ]);
  expect(importCycles(graph)).toEqual([["upstream/pool.ts", "engine/engine.ts", "upstream/pool.ts"]]);
  expect([unitOf("chain/decode.ts"), unitOf("json.ts"), unitOf("service.ts")]).toEqual([
    "base",
    "base",
    "root",
  ]);
});
