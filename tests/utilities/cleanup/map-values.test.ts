import { describe, expect, test } from "bun:test";
import utility, { configSchema, type MapValuesConfig, mapValues } from "../../../src/utilities/cleanup/map-values";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const configOf = (partial: Record<string, unknown> = {}) => configure<MapValuesConfig>(configSchema, partial);
const run = (primary: unknown, config: Record<string, unknown>) => utility.run({ primary }, configOf(config) as never);
const YN = { Y: true, N: false };

describe("config", () => {
  test("defaults: every primitive, case-sensitive, unmatched values kept, default null", () => {
    expect(configOf({ mappings: YN })).toEqual({ mappings: YN, caseSensitive: true, unmatched: "keep", default: null });
  });
  test("mappings is required and must be an object; unknown fields and unmatched modes are refused", () => {
    expect(configErrors(configSchema, {})).toEqual(["/mappings"]);
    expect(configErrors(configSchema, { mappings: ["Y"] })).toEqual(["/mappings"]);
    expect(configErrors(configSchema, { mappings: {}, unmatched: "drop" })).toEqual(["/unmatched"]);
    expect(configErrors(configSchema, { mappings: {}, caseSensitive: "no" })).toEqual(["/caseSensitive"]);
    expect(configErrors(configSchema, { mappings: {}, extra: 1 })).toEqual(["/extra"]);
  });
});

describe("mappings", () => {
  test("spec example: a string matches its text", () => {
    expect(run({ active: "Y", admin: "N", note: "Yes" }, { mappings: YN })).toEqual({ active: true, admin: false, note: "Yes" });
  });
  test("numbers, booleans and null match their JSON text", () => {
    expect(run([1, "1", 2.5, true, null, false], { mappings: { "1": "one", "2.5": "two and a half", true: "yes", null: "none" } })).toEqual(
      ["one", "one", "two and a half", "yes", "none", false],
    );
  });
  test("replacements may be any JSON value, and apply at every depth by default", () => {
    expect(run({ a: { b: ["x", { c: "x" }] } }, { mappings: { x: { id: 1 } } })).toEqual({ a: { b: [{ id: 1 }, { c: { id: 1 } }] } });
  });
  test("objects and arrays are never looked up themselves, and keys never change", () => {
    expect(run({ Y: [], N: {} }, { mappings: { "[]": 1, "{}": 2, Y: 3 } })).toEqual({ Y: [], N: {} });
  });
});

describe("caseSensitive", () => {
  test("true (default): only the exact text matches", () => {
    expect(run(["y", "Y"], { mappings: YN })).toEqual(["y", true]);
  });
  test("false: any case matches; of two keys equal but for case, the first wins", () => {
    expect(run(["y", "Y", "n", "TRUE", true], { mappings: { Y: 1, y: 2, N: 0, True: "t" }, caseSensitive: false })).toEqual([
      1,
      1,
      0,
      "t",
      "t",
    ]);
  });
});

describe("unmatched", () => {
  test("keep (default), null, or default", () => {
    const primary = { a: "Y", b: "maybe", c: 7 };
    expect(run(primary, { mappings: YN })).toEqual({ a: true, b: "maybe", c: 7 });
    expect(run(primary, { mappings: YN, unmatched: "null" })).toEqual({ a: true, b: null, c: null });
    expect(run(primary, { mappings: YN, unmatched: "default", default: "unknown" })).toEqual({ a: true, b: "unknown", c: "unknown" });
    expect(run(primary, { mappings: YN, unmatched: "default" })).toEqual({ a: true, b: null, c: null });
  });
  test("default is only used with unmatched: default", () => {
    expect(run({ b: "maybe" }, { mappings: YN, default: "unknown" })).toEqual({ b: "maybe" });
  });
});

describe("paths", () => {
  test("only the values at the paths are mapped; others are kept whatever unmatched says", () => {
    expect(run({ status: "Y", other: "Y", n: "q" }, { mappings: YN, paths: ["status", "n"], unmatched: "null" })).toEqual({
      status: true,
      other: "Y",
      n: null,
    });
  });
  test("wildcards, indexes, and containers: every primitive inside a selected object or array", () => {
    const primary = {
      rows: [
        { f: "Y", g: "Y" },
        { f: "N", g: "N" },
      ],
      tags: ["Y", ["N"]],
      first: ["Y", "Y"],
    };
    expect(run(primary, { mappings: YN, paths: ["rows.*.f", "tags", "first[0]"] })).toEqual({
      rows: [
        { f: true, g: "Y" },
        { f: false, g: "N" },
      ],
      tags: [true, [false]],
      first: [true, "Y"],
    });
  });
  test("an invalid path is a config error naming it", () => {
    expect(configErrorOf(() => run({}, { mappings: YN, paths: ["ok", "a..b"] }))).toMatchObject({ path: "paths/1" });
  });
});

describe("record-wise", () => {
  test("an array primary: paths are relative to each element", () => {
    expect(run([{ s: "Y" }, { s: "N" }, "Y"], { mappings: YN, paths: ["s"] })).toEqual([{ s: true }, { s: false }, "Y"]);
  });
  test("a single object: paths from its root; a scalar primary is one value", () => {
    expect(run({ s: "Y" }, { mappings: YN, paths: ["s"] })).toEqual({ s: true });
    expect(run("N", { mappings: YN })).toBe(false);
  });
});

describe("prototype keys are plain data", () => {
  test("mappings named __proto__ and constructor are ordinary entries; missing ones never come from Object", () => {
    // called directly: the test helper's Value.Clone would drop an own __proto__ key (the HTTP test covers the engine)
    const mappings = JSON.parse('{"__proto__":"proto-mapped","constructor":"ctor-mapped"}');
    const config = { ...configOf({ mappings: {}, unmatched: "null" }), mappings };
    expect(mapValues(["__proto__", "constructor", "toString", "hasOwnProperty"], config)).toEqual([
      "proto-mapped",
      "ctor-mapped",
      null,
      null,
    ]);
  });
  test("records with prototype keys keep them as own members", () => {
    const output = run(JSON.parse('{"__proto__":{"a":"Y"},"constructor":"N"}'), { mappings: YN }) as object;
    expect(JSON.stringify(output)).toBe('{"__proto__":{"a":true},"constructor":false}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
  });
});
