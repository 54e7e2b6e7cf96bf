import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { formatPath } from "../../../src/utilities/shared/paths";
import { configSchema, pickFields } from "../../../src/utilities/structure/pick-fields";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const pick = (primary: unknown, config: Record<string, unknown>) => pickFields(primary, configure(configSchema, config));

describe("structure.pick-fields", () => {
  test("spec example: keeps the listed paths with their nesting", () => {
    expect(pick({ a: 1, b: { c: 2, d: 3 } }, { paths: ["a", "b.c"] })).toEqual({ a: 1, b: { c: 2 } });
  });

  test("`fields` is an alias of `paths`; both together pick the union", () => {
    expect(pick({ a: 1, b: 2, c: 3 }, { fields: ["b"] })).toEqual({ b: 2 });
    expect(pick({ a: 1, b: 2, c: 3 }, { paths: ["a"], fields: ["c"] })).toEqual({ a: 1, c: 3 });
  });

  test("at least one path is required: no default", () => {
    expect(configure(configSchema, {})).toEqual({});
    for (const config of [{}, { paths: [] }, { fields: [] }]) {
      expect(() => pick({ a: 1 }, config)).toThrow(UtilityConfigError);
    }
    expect(configErrors(configSchema, { paths: "a" })).toEqual(["/paths"]);
    expect(configErrors(configSchema, { paths: [1] })).toEqual(["/paths/0"]);
    expect(configErrors(configSchema, { path: ["a"] })).toEqual(["/path"]);
  });

  test("output key order is the record's, not the order of the paths", () => {
    expect(Object.keys(pick({ a: 1, b: 2, c: 3 }, { paths: ["c", "a"] }) as object)).toEqual(["a", "c"]);
  });

  test("missing paths are skipped; a literal parent with nothing picked inside is dropped", () => {
    expect(pick({ a: 1, b: { d: 3 } }, { paths: ["x", "b.c", "a.z"] })).toEqual({});
  });

  test("wildcards keep the path inside every element, keeping positions", () => {
    const input = { items: [{ sku: "A", qty: 1 }, { qty: 2 }, { sku: "C", qty: 3 }], total: 6 };
    expect(pick(input, { paths: ["items.*.sku"] })).toEqual({ items: [{ sku: "A" }, {}, { sku: "C" }] });
    expect(pick(input, { paths: ["items[*].sku", "total"] })).toEqual({ items: [{ sku: "A" }, {}, { sku: "C" }], total: 6 });
    expect(pick({ users: { a: { name: "A", x: 1 }, b: { name: "B" } } }, { paths: ["users.*.name"] })).toEqual({
      users: { a: { name: "A" }, b: { name: "B" } },
    });
    expect(pick({ a: 1, b: 2 }, { paths: ["*"] })).toEqual({ a: 1, b: 2 });
  });

  test("array indexes, bracket or dot, keep array order compacted", () => {
    const input = {
      list: ["a", "b", "c"],
      m: [
        [1, 2],
        [3, 4],
      ],
    };
    expect(pick(input, { paths: ["list[2]", "list.0"] })).toEqual({ list: ["a", "c"] });
    expect(pick(input, { paths: ["m.*.1"] })).toEqual({ m: [[2], [4]] });
  });

  test("escaped dots and stars and a leading $. reach literal keys", () => {
    const input = { "a.b": 1, a: { b: 2 }, "*": 3, other: 4 };
    expect(pick(input, { paths: ["a\\.b"] })).toEqual({ "a.b": 1 });
    expect(pick(input, { paths: ["$.a.b"] })).toEqual({ a: { b: 2 } });
    expect(pick(input, { paths: ["\\*"] })).toEqual({ "*": 3 });
  });

  test("a bad path is a config error naming it", () => {
    expect(configErrorOf(() => pick({}, { paths: ["ok", "a..b"] }))).toMatchObject({ path: "paths/1" });
    expect(configErrorOf(() => pick({}, { paths: ["ok"], fields: ["[x"] }))).toMatchObject({ path: "fields/0" });
  });

  test("record-wise: each element of an array, paths relative to it", () => {
    expect(pick([{ a: 1, b: 2 }, { a: 3 }, { b: 4 }], { paths: ["a"] })).toEqual([{ a: 1 }, { a: 3 }, {}]);
    expect(pick([], { paths: ["a"] })).toEqual([]);
  });

  test("__proto__ is an ordinary key", () => {
    const output = pick(JSON.parse('{"__proto__":{"x":1},"y":2}'), { paths: ["__proto__.x"] }) as object;
    expect(JSON.stringify(output)).toBe('{"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(pick({ a: 1 }, { paths: ["constructor"] })).toEqual({});
  });

  test("empty inputs and wrong input types", () => {
    expect(pick({}, { paths: ["a"] })).toEqual({});
    expect(() => pick("text", { paths: ["a"] })).toThrow(UtilityError);
    expect(() => pick(null, { paths: ["a"] })).toThrow("primary is null");
    expect(() => pick([{ a: 1 }, 5], { paths: ["a"] })).toThrow("element 1 of primary is a number");
  });

  test("does not mutate its input", () => {
    const input = { a: { b: 1, c: 2 } };
    pick(input, { paths: ["a.b"] });
    expect(input).toEqual({ a: { b: 1, c: 2 } });
  });

  test("property: picking every top-level key is the identity", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const paths = Object.keys(record).map((key) => formatPath([key]));
        if (paths.length === 0) return;
        expect(pick(record, { paths })).toEqual(record);
      }),
    );
  });
});
