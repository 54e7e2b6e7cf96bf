import { describe, expect, test } from "bun:test";
import { configSchema, removeFields } from "../../../src/utilities/structure/remove-fields";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const removeWith = (primary: unknown, config: Record<string, unknown>) => removeFields(primary, configure(configSchema, config));

describe("structure.remove-fields", () => {
  test("paths is required; removeEmptyParents defaults to false", () => {
    expect(configErrors(configSchema, {})).toEqual(["/paths"]);
    expect(configure(configSchema, { paths: ["a"] })).toEqual({ paths: ["a"], removeEmptyParents: false });
    expect(configErrors(configSchema, { paths: ["a"], removeEmptyParents: "yes" })).toEqual(["/removeEmptyParents"]);
  });

  test("removes the paths, keeps the rest in order; missing paths are ignored", () => {
    const output = removeWith({ a: 1, b: { c: 2, d: 3 }, e: 4 }, { paths: ["b.c", "e", "x.y", "a.z"] });
    expect(output).toEqual({ a: 1, b: { d: 3 } });
    expect(Object.keys(output as object)).toEqual(["a", "b"]);
  });

  test("wildcards over array elements and object members", () => {
    const input = {
      items: [
        { sku: "A", secret: 1 },
        { sku: "B", secret: 2 },
      ],
      users: { u1: { pw: "x", n: 1 }, u2: { pw: "y" } },
    };
    expect(removeWith(input, { paths: ["items.*.secret", "users[*].pw"] })).toEqual({
      items: [{ sku: "A" }, { sku: "B" }],
      users: { u1: { n: 1 }, u2: {} },
    });
    expect(removeWith({ list: [1, 2, 3], keep: true }, { paths: ["list[*]"] })).toEqual({ list: [], keep: true });
  });

  test("array indexes refer to the array before the removal", () => {
    expect(removeWith({ l: ["a", "b", "c", "d"] }, { paths: ["l.1", "l[3]"] })).toEqual({ l: ["a", "c"] });
  });

  test("escaped keys", () => {
    expect(removeWith({ "a.b": 1, a: { b: 2 }, "*": 3, x: 4 }, { paths: ["a\\.b", "\\*"] })).toEqual({ a: { b: 2 }, x: 4 });
  });

  test("removeEmptyParents drops objects the removal emptied, up the chain, not those empty before", () => {
    const input = { a: { b: { c: 1 } }, keep: {}, items: [{ x: 1 }, { x: 2, y: 3 }], z: 1 };
    expect(removeWith(input, { paths: ["a.b.c", "items.*.x"], removeEmptyParents: true })).toEqual({ keep: {}, items: [{ y: 3 }], z: 1 });
    expect(removeWith(input, { paths: ["a.b.c", "items.*.x"] })).toEqual({ a: { b: {} }, keep: {}, items: [{}, { y: 3 }], z: 1 });
    expect(removeWith({ a: 1 }, { paths: ["a"], removeEmptyParents: true })).toEqual({});
  });

  test("record-wise, empty inputs and wrong types", () => {
    expect(removeWith([{ a: 1, b: 2 }, { b: 3 }], { paths: ["b"] })).toEqual([{ a: 1 }, {}]);
    expect(removeWith([], { paths: ["b"] })).toEqual([]);
    expect(removeWith({}, { paths: [] })).toEqual({});
    expect(() => removeWith(42, { paths: ["a"] })).toThrow(UtilityError);
    expect(() => removeWith([{}, "s"], { paths: ["a"] })).toThrow("element 1 of primary is a string");
    expect(() => removeWith({}, { paths: ["$"] })).toThrow(UtilityConfigError);
    expect(() => removeWith({}, { paths: ["a["] })).toThrow(UtilityConfigError);
  });

  test("keys named like prototype members are data; the input is not mutated", () => {
    const input = JSON.parse('{"__proto__":{"a":1},"constructor":2,"k":3}');
    expect(JSON.stringify(removeWith(input, { paths: ["__proto__.a", "constructor", "toString"] }))).toBe('{"__proto__":{},"k":3}');
    expect(JSON.stringify(input)).toBe('{"__proto__":{"a":1},"constructor":2,"k":3}');
  });
});
