import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import cleanJsonUtility, { type CleanJsonConfig, cleanJson, configSchema } from "../../../src/utilities/schema/clean-json";
import { createTestApp, type TestApp } from "../../support/app";

const defaults = Value.Default(configSchema, {}) as CleanJsonConfig;
const withConfig = (config: Partial<CleanJsonConfig>): CleanJsonConfig => ({ ...defaults, ...config });

describe("schema.clean-json", () => {
  test("defaults: drop nulls, empty strings and empty arrays; keep empty objects; no trimming", () => {
    expect(defaults).toEqual({
      removeNulls: true,
      removeEmptyStrings: true,
      removeEmptyArrays: true,
      removeEmptyObjects: false,
      trimStrings: false,
    });
  });

  test("spec example: nulls, empty strings and empty arrays go", () => {
    expect(cleanJson({ name: "Alice", email: null, tags: [], bio: "" }, defaults)).toEqual({ name: "Alice" });
  });

  test("spec example: trimStrings trims before the empty-string rule", () => {
    expect(cleanJson({ user: { name: " Ada ", email: null } }, withConfig({ trimStrings: true }))).toEqual({ user: { name: "Ada" } });
    expect(cleanJson({ a: "   ", b: "x" }, withConfig({ trimStrings: true }))).toEqual({ b: "x" });
    expect(cleanJson({ a: "   " }, defaults)).toEqual({ a: "   " });
  });

  test("removeNulls drops null members and array elements; off keeps them", () => {
    expect(cleanJson({ a: null, list: [1, null, 2] }, defaults)).toEqual({ list: [1, 2] });
    expect(cleanJson({ a: null, list: [1, null] }, withConfig({ removeNulls: false }))).toEqual({ a: null, list: [1, null] });
  });

  test("removeEmptyStrings off keeps them", () => {
    expect(cleanJson({ a: "", list: ["", "x"] }, withConfig({ removeEmptyStrings: false }))).toEqual({ a: "", list: ["", "x"] });
    expect(cleanJson({ a: "", list: ["", "x"] }, defaults)).toEqual({ list: ["x"] });
  });

  test("removeEmptyArrays, including arrays emptied by the other rules", () => {
    expect(cleanJson({ a: [], b: [null, ""], c: [[]] }, defaults)).toEqual({});
    expect(cleanJson({ a: [], b: [null] }, withConfig({ removeEmptyArrays: false }))).toEqual({ a: [], b: [] });
  });

  test("removeEmptyObjects, including objects emptied by the other rules", () => {
    const input = { a: {}, b: { c: null }, d: { e: { f: "" } }, g: 1 };
    expect(cleanJson(input, defaults)).toEqual({ a: {}, b: {}, d: { e: {} }, g: 1 });
    expect(cleanJson(input, withConfig({ removeEmptyObjects: true }))).toEqual({ g: 1 });
  });

  test("applies at every depth and keeps key order, numbers, booleans and zero", () => {
    const input = { z: 0, y: false, x: { w: [{ v: null, u: "ok" }], t: "" }, s: 1.5 };
    const output = cleanJson(input, defaults) as Record<string, unknown>;
    expect(output).toEqual({ z: 0, y: false, x: { w: [{ u: "ok" }] }, s: 1.5 });
    expect(Object.keys(output)).toEqual(["z", "y", "x", "s"]);
  });

  test("the top-level value is never dropped", () => {
    expect(cleanJson(null, defaults)).toBeNull();
    expect(cleanJson("", defaults)).toBe("");
    expect(cleanJson(" a ", withConfig({ trimStrings: true }))).toBe("a");
    expect(cleanJson([null, ""], defaults)).toEqual([]);
    expect(cleanJson({ a: null }, withConfig({ removeEmptyObjects: true }))).toEqual({});
    expect(cleanJson(42, defaults)).toBe(42);
  });

  test("__proto__ and constructor are ordinary keys and never reach a prototype", () => {
    const input = JSON.parse('{"__proto__":{"polluted":true,"gone":null},"constructor":{"prototype":{"x":""}}}');
    const output = cleanJson(input, defaults) as Record<string, unknown>;
    expect(JSON.stringify(output)).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("does not modify its input", () => {
    const input = { a: null, b: [" x "] };
    cleanJson(input, withConfig({ trimStrings: true }));
    expect(input).toEqual({ a: null, b: [" x "] });
  });
});

describe("schema.clean-json over HTTP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test("runs with defaults filled and refuses a wrong config type naming the field", async () => {
    const ok = await t.json("POST", `/api/v1/utilities/${cleanJsonUtility.id}`, {
      body: { inputs: { primary: { name: "Alice", email: null, tags: [], bio: "" } } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ name: "Alice" });
    const bad = await t.json("POST", `/api/v1/utilities/${cleanJsonUtility.id}`, {
      body: { inputs: { primary: {} }, config: { trimStrings: "yes" } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((error: { path: string }) => error.path)).toEqual(["/config/trimStrings"]);
  });
});
