import { describe, expect, test } from "bun:test";
import utility, { configSchema, type DiffConfig, diff } from "../../../src/utilities/analysis/diff";
import { findUtility } from "../../../src/utilities/registry";
import { UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

/** The config as the engine hands it over: defaults filled, schema checked. */
const configOf = (partial: Record<string, unknown> = {}) => configure<DiffConfig>(configSchema, partial);
const run = (next: unknown, previous: unknown, config: Record<string, unknown> = {}) =>
  utility.run({ primary: next, secondary: previous }, configOf(config) as never);

const OLD = { name: "Ada", age: 36, tags: ["math", "code"], address: { city: "London", zip: "N1" }, retired: false };
const NEW = { name: "Ada", age: 37, tags: ["math", "code", "poetry"], address: { city: "Paris" }, email: "ada@example.com" };

describe("config", () => {
  test("defaults: report mode, arrays compared by index", () => {
    expect(configOf()).toEqual({ mode: "report", arrays: "index" });
  });
  test("unknown fields and unknown modes are refused by the schema", () => {
    expect(configErrors(configSchema, { extra: 1 })).toEqual(["/extra"]);
    expect(configErrors(configSchema, { mode: "merge" })).toEqual(["/mode"]);
    expect(configErrors(configSchema, { arrays: "set" })).toEqual(["/arrays"]);
  });
  test("compare.json-diff is another id for the same utility", () => {
    expect(findUtility("compare.json-diff")).toBe(findUtility("analysis.diff"));
    expect(utility.aliases).toEqual(["compare.json-diff"]);
  });
});

describe("report", () => {
  test("changed, added and removed paths in document order, with a summary", () => {
    expect(run(NEW, OLD)).toEqual({
      changed: [
        { path: "age", before: 36, after: 37 },
        { path: "address.city", before: "London", after: "Paris" },
      ],
      added: [
        { path: "tags.2", value: "poetry" },
        { path: "email", value: "ada@example.com" },
      ],
      removed: [
        { path: "address.zip", value: "N1" },
        { path: "retired", value: false },
      ],
      summary: { changed: 2, added: 2, removed: 2 },
    });
  });

  test("changed entries follow the new document's order, removed members sit where they stood", () => {
    const report = run({ c: 3, b: 20, a: 10 }, { a: 1, x: 0, b: 2, c: 3 }) as any;
    expect(report.changed.map((entry: any) => entry.path)).toEqual(["b", "a"]);
    expect(report.removed).toEqual([{ path: "x", value: 0 }]);
  });

  test("a change of type is one changed entry holding both values whole", () => {
    expect((run({ a: [1] }, { a: { b: 1 } }) as any).changed).toEqual([{ path: "a", before: { b: 1 }, after: [1] }]);
    expect((run({ a: null }, { a: 0 }) as any).changed).toEqual([{ path: "a", before: 0, after: null }]);
  });

  test("a shorter array reports its removed elements", () => {
    expect((run({ a: [1] }, { a: [1, 2, 3] }) as any).removed).toEqual([
      { path: "a.1", value: 2 },
      { path: "a.2", value: 3 },
    ]);
  });

  test("keys holding dots or stars are escaped in paths", () => {
    expect((run({ "a.b": { "*": 2 } }, { "a.b": { "*": 1 } }) as any).changed).toEqual([{ path: "a\\.b.\\*", before: 1, after: 2 }]);
  });

  test("equal documents give an empty report; key order alone is no change", () => {
    expect(run({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toEqual({
      changed: [],
      added: [],
      removed: [],
      summary: { changed: 0, added: 0, removed: 0 },
    });
  });

  test("different scalar roots are one change at the root path ''", () => {
    expect((run(2, 1) as any).changed).toEqual([{ path: "", before: 1, after: 2 }]);
  });

  test("arrays: whole compares an array as a single value", () => {
    expect((run(NEW, OLD, { arrays: "whole" }) as any).changed).toEqual([
      { path: "age", before: 36, after: 37 },
      { path: "tags", before: ["math", "code"], after: ["math", "code", "poetry"] },
      { path: "address.city", before: "London", after: "Paris" },
    ]);
    expect((run({ a: [1, 2] }, { a: [1, 2] }, { arrays: "whole" }) as any).summary).toEqual({ changed: 0, added: 0, removed: 0 });
  });

  test("arrays: index descends into elements", () => {
    expect((run({ items: [{ sku: "A", qty: 2 }] }, { items: [{ sku: "A", qty: 1 }] }) as any).changed).toEqual([
      { path: "items.0.qty", before: 1, after: 2 },
    ]);
  });
});

describe("projections", () => {
  test("changed-only: changed and added members of the new document, nesting kept", () => {
    expect(run(NEW, OLD, { mode: "changed-only" })).toEqual({
      age: 37,
      tags: ["poetry"],
      address: { city: "Paris" },
      email: "ada@example.com",
    });
  });
  test("added-only: members only in the new document", () => {
    expect(run(NEW, OLD, { mode: "added-only" })).toEqual({ tags: ["poetry"], email: "ada@example.com" });
  });
  test("removed-only: members only in the old document", () => {
    expect(run(NEW, OLD, { mode: "removed-only" })).toEqual({ address: { zip: "N1" }, retired: false });
  });
  test("a projection with nothing in it is an empty container of the root's kind", () => {
    expect(run({ a: 1 }, { a: 1 }, { mode: "changed-only" })).toEqual({});
    expect(run([1], [1, 2], { mode: "added-only" })).toEqual([]);
    expect(run(1, 1, { mode: "removed-only" })).toBeNull();
    expect(run(2, 1, { mode: "changed-only" })).toBe(2);
  });
  test("arrays keep the selected elements in their order", () => {
    expect(run({ a: [1, 5, 3, 7] }, { a: [1, 2, 3, 4] }, { mode: "changed-only" })).toEqual({ a: [5, 7] });
  });
});

describe("full-annotated", () => {
  test("the union of both documents, every leaf annotated", () => {
    expect(run(NEW, OLD, { mode: "full-annotated" })).toEqual({
      name: { _diff: "unchanged", value: "Ada" },
      age: { _diff: "changed", before: 36, after: 37 },
      tags: [
        { _diff: "unchanged", value: "math" },
        { _diff: "unchanged", value: "code" },
        { _diff: "added", value: "poetry" },
      ],
      address: { city: { _diff: "changed", before: "London", after: "Paris" }, zip: { _diff: "removed", value: "N1" } },
      retired: { _diff: "removed", value: false },
      email: { _diff: "added", value: "ada@example.com" },
    });
  });
  test("key order: the new document's; a removed member sits before the next member it preceded in the old one, or at the end", () => {
    expect(Object.keys(run(NEW, OLD, { mode: "full-annotated" }) as object)).toEqual([
      "name",
      "age",
      "tags",
      "address",
      "email",
      "retired",
    ]);
    expect(Object.keys(run({ b: 1, c: 1 }, { a: 1, b: 1, x: 1, c: 1 }, { mode: "full-annotated" }) as object)).toEqual([
      "a",
      "b",
      "x",
      "c",
    ]);
  });
  test("empty containers are unchanged leaves; whole arrays are leaves", () => {
    expect(run({ a: {}, b: [1] }, { a: {}, b: [1] }, { mode: "full-annotated", arrays: "whole" })).toEqual({
      a: { _diff: "unchanged", value: {} },
      b: { _diff: "unchanged", value: [1] },
    });
  });
});

describe("patch", () => {
  test("RFC 6902 operations that turn the old document into the new one", () => {
    expect(run(NEW, OLD, { mode: "patch" })).toEqual([
      { op: "replace", path: "/age", value: 37 },
      { op: "add", path: "/tags/2", value: "poetry" },
      { op: "replace", path: "/address/city", value: "Paris" },
      { op: "remove", path: "/address/zip" },
      { op: "add", path: "/email", value: "ada@example.com" },
      { op: "remove", path: "/retired" },
    ]);
  });
  test("JSON Pointer escaping: ~ as ~0, / as ~1", () => {
    expect(run({ "a/b": { "c~d": 2 } }, { "a/b": { "c~d": 1 } }, { mode: "patch" })).toEqual([
      { op: "replace", path: "/a~1b/c~0d", value: 2 },
    ]);
  });
  test("removed array elements are removed from the end first", () => {
    expect(run([1], [1, 2, 3], { mode: "patch" })).toEqual([
      { op: "remove", path: "/2" },
      { op: "remove", path: "/1" },
    ]);
  });
  test("a different root is replaced at the empty pointer; equal documents give no operation", () => {
    expect(run({ a: 1 }, [1], { mode: "patch" })).toEqual([{ op: "replace", path: "", value: { a: 1 } }]);
    expect(run({ a: 1 }, { a: 1 }, { mode: "patch" })).toEqual([]);
  });
});

describe("prototype keys are plain data", () => {
  const OLD_PROTO = JSON.parse('{"__proto__":{"x":1},"constructor":"a","b":1}');
  const NEW_PROTO = JSON.parse('{"__proto__":{"x":2},"constructor":"b","toString":"c"}');
  test("report", () => {
    expect(run(NEW_PROTO, OLD_PROTO)).toEqual({
      changed: [
        { path: "__proto__.x", before: 1, after: 2 },
        { path: "constructor", before: "a", after: "b" },
      ],
      added: [{ path: "toString", value: "c" }],
      removed: [{ path: "b", value: 1 }],
      summary: { changed: 2, added: 1, removed: 1 },
    });
  });
  test("projections define the keys as own members and never touch a prototype", () => {
    const changed = run(NEW_PROTO, OLD_PROTO, { mode: "changed-only" }) as object;
    expect(JSON.stringify(changed)).toBe('{"__proto__":{"x":2},"constructor":"b","toString":"c"}');
    expect(Object.getPrototypeOf(changed)).toBe(Object.prototype);
    expect(({} as any).x).toBeUndefined();
    expect(JSON.stringify(run(NEW_PROTO, OLD_PROTO, { mode: "full-annotated" }))).toContain('"__proto__":{"x":{"_diff":"changed"');
  });
  test("a key named constructor on one side only is added, not compared with Object", () => {
    expect((run({ constructor: 1 }, {}) as any).added).toEqual([{ path: "constructor", value: 1 }]);
    expect((run({}, { constructor: 1 }) as any).removed).toEqual([{ path: "constructor", value: 1 }]);
  });
});

describe("inputs", () => {
  test("a missing secondary is a utility failure naming it", () => {
    expect(() => utility.run({ primary: { a: 1 } }, configOf() as never)).toThrow(UtilityError);
    expect(() => utility.run({ primary: { a: 1 } }, configOf() as never)).toThrow(/secondary/);
  });
  test("null is a value like any other", () => {
    expect((run(null, { a: 1 }) as any).changed).toEqual([{ path: "", before: { a: 1 }, after: null }]);
  });
  test("the inputs are not modified", () => {
    const next = structuredClone(NEW);
    const previous = structuredClone(OLD);
    for (const mode of ["report", "changed-only", "added-only", "removed-only", "full-annotated", "patch"] as const) {
      diff(next, previous, { mode, arrays: "index" });
    }
    expect(next).toEqual(NEW);
    expect(previous).toEqual(OLD);
  });
});
