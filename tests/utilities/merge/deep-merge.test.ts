import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import fc from "fast-check";
import deepMergeUtility, { configSchema, type DeepMergeConfig, deepMerge } from "../../../src/utilities/merge/deep-merge";
import { createTestApp, type TestApp } from "../../support/app";

const defaults = Value.Default(configSchema, {}) as DeepMergeConfig;
const withConfig = (config: Partial<DeepMergeConfig>): DeepMergeConfig => ({ ...defaults, ...config });

describe("merge.deep-merge", () => {
  test("defaults: deepMerge conflicts, replace arrays", () => {
    expect(defaults).toEqual({ conflictStrategy: "deepMerge", arrayStrategy: "replace" });
  });

  test("spec example", () => {
    const primary = { user: { name: "Alice", settings: { theme: "dark" } } };
    const secondary = { user: { settings: { language: "en" } } };
    expect(deepMerge(primary, secondary, defaults)).toEqual({ user: { name: "Alice", settings: { theme: "dark", language: "en" } } });
  });

  test("a missing secondary returns primary", () => {
    const primary = { a: [1, { b: 2 }] };
    expect(deepMerge(primary, undefined, defaults)).toBe(primary);
  });

  test("deepMerge: non-object conflicts take the secondary value; null in secondary overwrites", () => {
    expect(deepMerge({ a: 1, b: { c: 1 }, d: "x" }, { a: "one", b: 5, d: null }, defaults)).toEqual({ a: "one", b: 5, d: null });
    expect(deepMerge({ a: 1 }, null, defaults)).toBeNull();
    expect(deepMerge([1], { a: 1 }, defaults)).toEqual({ a: 1 });
  });

  test("key order: primary's keys, then secondary's new keys", () => {
    const merged = deepMerge({ b: 1, a: 1 }, { c: 2, a: 2 }, defaults) as object;
    expect(Object.keys(merged)).toEqual(["b", "a", "c"]);
  });

  test("arrayStrategy replace, concat and unique (deep-equal items, any key order)", () => {
    const primary = { list: [1, { x: 1, y: 2 }, 2] };
    const secondary = { list: [2, { y: 2, x: 1 }, 3, 3] };
    expect(deepMerge(primary, secondary, defaults)).toEqual({ list: [2, { y: 2, x: 1 }, 3, 3] });
    expect(deepMerge(primary, secondary, withConfig({ arrayStrategy: "concat" }))).toEqual({
      list: [1, { x: 1, y: 2 }, 2, 2, { y: 2, x: 1 }, 3, 3],
    });
    expect(deepMerge(primary, secondary, withConfig({ arrayStrategy: "unique" }))).toEqual({ list: [1, { x: 1, y: 2 }, 2, 3] });
    expect(deepMerge([[1], "1", 1], [[1], 1, "1", null, null], withConfig({ arrayStrategy: "unique" }))).toEqual([[1], "1", 1, null]);
  });

  test("preferPrimary and preferSecondary take a shared key's value whole, without recursion", () => {
    const primary = { a: { x: 1, y: [1] }, only: "p" };
    const secondary = { a: { z: 2, y: [2] }, extra: "s" };
    expect(deepMerge(primary, secondary, withConfig({ conflictStrategy: "preferPrimary" }))).toEqual({
      a: { x: 1, y: [1] },
      only: "p",
      extra: "s",
    });
    expect(deepMerge(primary, secondary, withConfig({ conflictStrategy: "preferSecondary" }))).toEqual({
      a: { z: 2, y: [2] },
      only: "p",
      extra: "s",
    });
    expect(deepMerge([1], [2], withConfig({ conflictStrategy: "preferPrimary" }))).toEqual([1]);
    expect(deepMerge([1], [2], withConfig({ conflictStrategy: "preferSecondary" }))).toEqual([2]);
  });

  test("__proto__ and constructor are merged as ordinary keys and never reach a prototype", () => {
    const primary = JSON.parse('{"__proto__":{"a":1},"constructor":{"name":"p"}}');
    const secondary = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}');
    for (const conflictStrategy of ["deepMerge", "preferPrimary", "preferSecondary"] as const) {
      const merged = deepMerge(primary, secondary, withConfig({ conflictStrategy })) as Record<string, unknown>;
      expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
      expect(Object.keys(merged)).toEqual(["__proto__", "constructor"]);
    }
    expect(JSON.stringify(deepMerge(primary, secondary, defaults))).toBe(
      '{"__proto__":{"a":1,"polluted":true},"constructor":{"name":"p","prototype":{"x":1}}}',
    );
    expect(JSON.stringify(deepMerge({}, secondary, defaults))).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("does not modify its inputs", () => {
    const primary = { a: { b: [1] } };
    const secondary = { a: { b: [2], c: 1 } };
    deepMerge(primary, secondary, withConfig({ arrayStrategy: "concat" }));
    expect(primary).toEqual({ a: { b: [1] } });
    expect(secondary).toEqual({ a: { b: [2], c: 1 } });
  });

  test("property: merging an empty object into any object is the identity, whatever the strategies", () => {
    const strategies = fc.record({
      conflictStrategy: fc.constantFrom("deepMerge", "preferPrimary", "preferSecondary"),
      arrayStrategy: fc.constantFrom("replace", "concat", "unique"),
    });
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), strategies, (primary, config) => {
        const merged = deepMerge(primary, {}, config as DeepMergeConfig);
        expect(JSON.stringify(merged)).toBe(JSON.stringify(primary));
      }),
    );
  });

  test("property: merging a value with itself under deepMerge/replace gives it back", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.stringify(deepMerge(value, value, defaults))).toBe(JSON.stringify(value));
      }),
    );
  });
});

describe("merge.deep-merge over HTTP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test("merges secondary into primary; an unknown strategy is a 400 naming it", async () => {
    const ok = await t.json("POST", `/api/v1/utilities/${deepMergeUtility.id}`, {
      body: { inputs: { primary: { a: [1] }, secondary: { a: [2] } }, config: { arrayStrategy: "concat" } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ a: [1, 2] });
    const bad = await t.json("POST", `/api/v1/utilities/${deepMergeUtility.id}`, {
      body: { inputs: { primary: {} }, config: { arrayStrategy: "zip" } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ path: "/config/arrayStrategy", message: 'must be one of "replace", "concat", "unique"' }]);
  });
});
