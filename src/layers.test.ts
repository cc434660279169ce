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

test("the check finds an upward import, a sibling import, a floor importing a family, and a cycle", () => {
  const graph = new Map([
    ["upstream/pool.ts", ["engine/engine.ts"]],
    ["engine/engine.ts", ["upstream/pool.ts", "json.ts"]],
    ["watch/watchFilters.ts", ["indexer/indexer.ts", "blockRef.ts"]],
    ["cache/policy.ts", ["families/evm/blockRef.ts"]],
    ["families/evm/evm.ts", ["engine/engine.ts", "http/app.ts"]],
    ["service.ts", ["http/app.ts", "families/familyOf.ts"]],
  ]);
  expect(layerViolations(graph)).toEqual([
    "upstream/pool.ts -> engine/engine.ts (upstream may not import engine)",
    "watch/watchFilters.ts -> indexer/indexer.ts (watch may not import indexer)",
    "cache/policy.ts -> families/evm/blockRef.ts (cache may not import families)",
    "families/evm/evm.ts -> http/app.ts (families may not import http)",
  ]);
  expect(importCycles(graph)).toEqual([["upstream/pool.ts", "engine/engine.ts", "upstream/pool.ts"]]);
  expect([unitOf("blockRef.ts"), unitOf("families/evm/evm.ts"), unitOf("service.ts")]).toEqual([
    "base",
    "families",
    "root",
  ]);
});
