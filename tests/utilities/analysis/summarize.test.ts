import { describe, expect, test } from "bun:test";
import utility, { configSchema } from "../../../src/utilities/analysis/summarize";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configure(configSchema, config)) as any;

const EMPTY_STATS = { min: null, max: null, mean: null, minLength: null, maxLength: null };

describe("analysis.summarize: config", () => {
  test("defaults: topValues 5, maxFields 500", () => {
    expect(configure(configSchema)).toEqual({ topValues: 5, maxFields: 500 });
  });
  test("ranges: topValues 0–50 integer, maxFields ≥ 1; unknown fields refused", () => {
    for (const topValues of [-1, 51, 2.5]) expect(configErrors(configSchema, { topValues })).toContain("/topValues");
    for (const topValues of [0, 50]) expect(configErrors(configSchema, { topValues })).toEqual([]);
    expect(configErrors(configSchema, { maxFields: 0 })).toContain("/maxFields");
    expect(configErrors(configSchema, { other: 1 })).toContain("/other");
  });
});

describe("analysis.summarize: an array of objects", () => {
  const people = [
    { name: "Ada", age: 36, address: { city: "London" }, tags: ["x", "y"] },
    { name: "Bo", age: 20, address: { city: "Paris" }, tags: ["x"] },
    { name: "Ada", age: null, address: { city: "London" } },
  ];

  test("the exact shape: type, count and per-path statistics with dotted paths", () => {
    const summary = run(people);
    expect(Object.keys(summary)).toEqual(["type", "count", "fields"]);
    expect(summary.type).toBe("array");
    expect(summary.count).toBe(3);
    expect(Object.keys(summary.fields)).toEqual(["name", "age", "address", "address.city", "tags", "tags.*"]);
    expect(summary.fields.name).toEqual({
      types: { string: 3 },
      present: 3,
      nulls: 0,
      distinct: 2,
      min: null,
      max: null,
      mean: null,
      minLength: 2,
      maxLength: 3,
      top: [
        { value: "Ada", count: 2 },
        { value: "Bo", count: 1 },
      ],
    });
    expect(summary.fields.age).toEqual({
      types: { number: 2, null: 1 },
      present: 3,
      nulls: 1,
      distinct: 2,
      min: 20,
      max: 36,
      mean: 28,
      minLength: null,
      maxLength: null,
      top: [
        { value: 36, count: 1 },
        { value: 20, count: 1 },
      ],
    });
    expect(summary.fields.address).toEqual({ types: { object: 3 }, present: 3, nulls: 0, distinct: 0, ...EMPTY_STATS, top: [] });
    expect(summary.fields.tags).toMatchObject({ types: { array: 2 }, present: 2 });
    expect(summary.fields["tags.*"]).toMatchObject({
      types: { string: 3 },
      present: 3,
      distinct: 2,
      top: [
        { value: "x", count: 2 },
        { value: "y", count: 1 },
      ],
    });
  });

  test('topValues limits the list (0: none); equal counts keep first-seen order; 1 and "1" are distinct', () => {
    const rows = [{ v: 1 }, { v: "1" }, { v: true }, { v: "1" }];
    expect(run(rows, { topValues: 2 }).fields.v.top).toEqual([
      { value: "1", count: 2 },
      { value: 1, count: 1 },
    ]);
    expect(run(rows, { topValues: 0 }).fields.v.top).toEqual([]);
    expect(run(rows).fields.v.distinct).toBe(3);
  });

  test("maxFields: further paths are left out and counted in fieldsOmitted", () => {
    const summary = run([{ a: 1, b: 2, c: { d: 3 } }, { e: 4 }], { maxFields: 2 });
    expect(Object.keys(summary.fields)).toEqual(["a", "b"]);
    expect(summary.fieldsOmitted).toBe(3);
  });

  test("keys holding a dot or star are escaped in paths", () => {
    expect(Object.keys(run([{ "a.b": 1, "*": 2 }]).fields)).toEqual(["a\\.b", "\\*"]);
  });

  test("an empty array is an empty array of objects", () => {
    expect(run([])).toEqual({ type: "array", count: 0, fields: {} });
  });
});

describe("analysis.summarize: any other value", () => {
  test("an object: type, depth, total keys and per-path statistics", () => {
    const summary = run({ a: { b: [1, 2, 3] }, c: "x" });
    expect(Object.keys(summary)).toEqual(["type", "depth", "keys", "fields"]);
    expect(summary).toMatchObject({ type: "object", depth: 3, keys: 6 });
    expect(Object.keys(summary.fields)).toEqual(["a", "a.b", "a.b.*", "c"]);
    expect(summary.fields["a.b.*"]).toMatchObject({ types: { number: 3 }, min: 1, max: 3, mean: 2 });
  });

  test("an array that is not all objects, and primitives, are described too (no input is of a wrong type)", () => {
    expect(run([1, "a", null])).toMatchObject({
      type: "array",
      depth: 1,
      keys: 3,
      fields: { "*": { types: { number: 1, string: 1, null: 1 }, nulls: 1 } },
    });
    expect(run("text")).toEqual({ type: "string", depth: 0, keys: 0, fields: {} });
    expect(run(null)).toEqual({ type: "null", depth: 0, keys: 0, fields: {} });
    expect(run({})).toEqual({ type: "object", depth: 1, keys: 0, fields: {} });
  });

  test("prototype-named keys are plain paths", () => {
    const summary = run(JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 2}'));
    expect(Object.keys(summary.fields)).toEqual(["__proto__", "__proto__.polluted", "constructor"]);
    expect(({} as any).polluted).toBeUndefined();
  });
});
