import { describe, expect, test } from "bun:test";
import { type Graph, importCycles, importGraph, upwardImports, workerBreaches } from "./layers";

describe("the layering of src/", () => {
  const graph = importGraph();

  test("every import goes down a layer or stays in its own", () => {
    expect(upwardImports(graph).map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  test("no file is part of an import cycle", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  test("the utility worker loads no HTTP code", () => {
    expect(workerBreaches(graph)).toEqual([]);
  });

  test("the graph is read from the source: it names the worker's imports", () => {
    expect(graph.edges.some(({ from, to }) => from === "engine/pool.ts" && to === "engine/worker.ts")).toBe(true);
    expect(graph.edges.some(({ from, to }) => from === "engine/worker.ts" && to === "engine/execution.ts")).toBe(true);
  });
});

describe("the checks find what they look for", () => {
  const planted: Graph = {
    files: ["core/errors.ts", "http/errors.ts", "engine/worker.ts", "utilities/registry.ts", "modules/a/index.ts", "modules/b/index.ts"],
    edges: [
      { from: "core/errors.ts", to: "http/errors.ts", typeOnly: false },
      { from: "engine/worker.ts", to: "core/errors.ts", typeOnly: false },
      { from: "modules/a/index.ts", to: "modules/b/index.ts", typeOnly: true },
      { from: "modules/b/index.ts", to: "modules/a/index.ts", typeOnly: false },
    ],
    packages: new Map([["utilities/registry.ts", new Set(["elysia"])]]),
  };

  test("an upward import", () => {
    expect(upwardImports(planted)).toEqual([{ from: "core/errors.ts", to: "http/errors.ts", typeOnly: false }]);
  });

  test("a cycle, type-only imports included", () => {
    expect(importCycles(planted)).toEqual([["modules/a/index.ts", "modules/b/index.ts"]]);
  });

  test("HTTP code reached from the worker, through any number of files", () => {
    expect(workerBreaches(planted)).toEqual(["http/errors.ts (layer http)", "utilities/registry.ts imports elysia"]);
  });
});
