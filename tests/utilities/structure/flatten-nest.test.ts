import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { configSchema, flattenNest } from "../../../src/utilities/structure/flatten-nest";
import { UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => flattenNest(primary, configure(configSchema, config));

describe("structure.flatten-nest", () => {
  test("defaults: flatten, '.', arrays flattened, no depth limit", () => {
    expect(configure(configSchema)).toEqual({ mode: "flatten", delimiter: ".", flattenArrays: true });
  });

  test("config ranges: delimiter 1–5 characters, maxDepth an integer ≥ 1, mode an enum", () => {
    expect(configErrors(configSchema, { delimiter: "" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "123456" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "12345" })).toEqual([]);
    expect(configErrors(configSchema, { maxDepth: 0 })).toEqual(["/maxDepth"]);
    expect(configErrors(configSchema, { maxDepth: 1.5 })).toEqual(["/maxDepth"]);
    expect(configErrors(configSchema, { mode: "squash" })).toEqual(["/mode"]);
    expect(configErrors(configSchema, { flattenArrays: 1 })).toEqual(["/flattenArrays"]);
  });

  test("spec example", () => {
    expect(run({ user: { address: { city: "NYC" } } })).toEqual({ "user.address.city": "NYC" });
    expect(run({ "user.address.city": "NYC" }, { mode: "nest" })).toEqual({ user: { address: { city: "NYC" } } });
  });

  test("flatten keeps key order, gives arrays index segments, keeps empty objects and arrays as values", () => {
    const output = run({ b: 1, a: { y: [10, { z: 2 }], x: {} }, c: [], d: null });
    expect(output).toEqual({ b: 1, "a.y.0": 10, "a.y.1.z": 2, "a.x": {}, c: [], d: null });
    expect(Object.keys(output as object)).toEqual(["b", "a.y.0", "a.y.1.z", "a.x", "c", "d"]);
  });

  test("flattenArrays false keeps arrays as values", () => {
    expect(run({ a: { tags: ["x", { y: 1 }] } }, { flattenArrays: false })).toEqual({ "a.tags": ["x", { y: 1 }] });
  });

  test("delimiter joins and splits", () => {
    expect(run({ a: { b: [1] } }, { delimiter: "__" })).toEqual({ a__b__0: 1 });
    expect(run({ a__b__0: 1, "a.c": 2 }, { mode: "nest", delimiter: "__" })).toEqual({ a: { b: [1] }, "a.c": 2 });
  });

  test("maxDepth: keys have at most that many segments, the rest stays nested", () => {
    const input = { k1: { a: "v" }, k3: { a: { b: { c: 2 } } }, top: 1 };
    expect(run(input, { maxDepth: 2 })).toEqual({ "k1.a": "v", "k3.a": { b: { c: 2 } }, top: 1 });
    expect(run(input, { maxDepth: 1 })).toEqual(input);
    expect(run(run(input, { maxDepth: 2 }), { mode: "nest" })).toEqual(input);
  });

  test("nest builds arrays where the keys at a level are exactly 0..n-1, objects otherwise", () => {
    expect(run({ "l.0": "a", "l.1": "b", "m.0": "x", "m.2": "y", "n.1": 1, "n.0": 0, "o.01": 1 }, { mode: "nest" })).toEqual({
      l: ["a", "b"],
      m: { "0": "x", "2": "y" },
      n: [0, 1],
      o: { "01": 1 },
    });
    expect(run({ "m.0.0": 1, "m.0.1": 2, "m.1.k": 3 }, { mode: "nest" })).toEqual({ m: [[1, 2], { k: 3 }] });
  });

  test("nest keeps the record an object even when its own keys are 0..n-1; object values are never rebuilt", () => {
    expect(run({ "0": "a", "1": "b" }, { mode: "nest" })).toEqual({ "0": "a", "1": "b" });
    expect(run({ "a.b": { "0": 1 }, e: {} }, { mode: "nest" })).toEqual({ a: { b: { "0": 1 } }, e: {} });
  });

  test("conflicting keys are a 400 naming both", () => {
    expect(() => run({ a: 1, "a.b": 2 }, { mode: "nest" })).toThrow(
      new UtilityError("keys 'a' and 'a.b' conflict: 'a' cannot hold a value and nested keys at once"),
    );
    expect(() => run({ "a.b": 2, a: 1 }, { mode: "nest" })).toThrow("keys 'a' and 'a.b' conflict");
    expect(() => run({ "a.b.c": 2, "a.b": {} }, { mode: "nest" })).toThrow("keys 'a.b' and 'a.b.c' conflict");
    expect(() => run({ "a.b": 1, a: { b: 2 } })).toThrow("two members flatten onto the same key 'a.b'");
  });

  test("escaped-looking and prototype-named keys are plain data", () => {
    const flat = run(JSON.parse('{"__proto__":{"constructor":{"x":1}},"a\\\\.b":1}'));
    expect(JSON.stringify(flat)).toBe('{"__proto__.constructor.x":1,"a\\\\.b":1}');
    const nested = run(flat, { mode: "nest" }) as object;
    expect(JSON.stringify(nested)).toBe('{"__proto__":{"constructor":{"x":1}},"a\\\\":{"b":1}}');
    expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
  });

  test("record-wise, empty inputs and wrong types", () => {
    expect(run([{ a: { b: 1 } }, { c: [2] }])).toEqual([{ "a.b": 1 }, { "c.0": 2 }]);
    expect(run([{ "a.b": 1 }], { mode: "nest" })).toEqual([{ a: { b: 1 } }]);
    expect(run({})).toEqual({});
    expect(run([])).toEqual([]);
    expect(() => run("a.b")).toThrow(UtilityError);
    expect(() => run([{}, [1]])).toThrow("element 1 of primary is an array");
  });

  test("does not mutate its input", () => {
    const input = { a: { b: [1] } };
    run(input);
    run({ "x.y": input }, { mode: "nest" });
    expect(input).toEqual({ a: { b: [1] } });
  });

  // Domain: JSON records whose keys, at every depth, contain no "." and are not canonical array
  // indexes ("0", "17"; a non-empty object with only such keys nests back as an array). Empty
  // objects and arrays, nested arrays and any primitives are in the domain.
  const key = fc.string().filter((text) => !text.includes(".") && !/^(0|[1-9]\d*)$/.test(text));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string(),
      fc.array(tie("value"), { maxLength: 4 }),
      fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    ),
  }));
  const record = fc.dictionary(key, value, { maxKeys: 5 });

  test("property: nest(flatten(x)) equals x, with and without flattenArrays", () => {
    fc.assert(
      fc.property(record, fc.boolean(), (x, flattenArrays) => {
        const flat = run(x, { flattenArrays });
        expect(run(flat, { mode: "nest" })).toEqual(x);
      }),
      { numRuns: 200 },
    );
  });
});
