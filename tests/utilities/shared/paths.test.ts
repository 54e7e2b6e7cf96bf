import { describe, expect, test } from "bun:test";
import {
  ANY,
  exists,
  formatPath,
  get,
  getAll,
  PathSet,
  PathSyntaxError,
  parsePath,
  parsePaths,
  remove,
  set,
} from "../../../src/utilities/shared/paths";
import { UtilityError } from "../../../src/utilities/types";
import { configErrorOf } from "./configure";

describe("parsePath", () => {
  test("dot segments, brackets, wildcards, $. prefix", () => {
    expect(parsePath("user.address.city")).toEqual(["user", "address", "city"]);
    expect(parsePath("items[0].sku")).toEqual(["items", "0", "sku"]);
    expect(parsePath("items.0.sku")).toEqual(parsePath("items[0].sku"));
    expect(parsePath("items[*].sku")).toEqual(["items", ANY, "sku"]);
    expect(parsePath("items.*.sku")).toEqual(["items", ANY, "sku"]);
    expect(parsePath("$.a.b")).toEqual(["a", "b"]);
    expect(parsePath("$[0].a")).toEqual(["0", "a"]);
    expect(parsePath("m[0][1]")).toEqual(["m", "0", "1"]);
    expect(parsePath("[2]")).toEqual(["2"]);
    expect(parsePath("")).toEqual([]);
    expect(parsePath("$")).toEqual([]);
  });

  test("escapes: \\. is a dot inside a key, \\* a literal star, \\\\ a backslash", () => {
    expect(parsePath("a\\.b.c")).toEqual(["a.b", "c"]);
    expect(parsePath("a.\\*")).toEqual(["a", "*"]);
    expect(parsePath("a.\\*")[1]).not.toBe(ANY);
    expect(parsePath("a\\\\b")).toEqual(["a\\b"]);
    expect(parsePath("x*y")).toEqual(["x*y"]);
  });

  test("is cached: the same path gives the same frozen array", () => {
    const first = parsePath("cache.me[3]");
    expect(parsePath("cache.me[3]")).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  test.each(["a..b", ".a", "a.", "a[x]", "a[-1]", "a[01]", "a[0", "a[0]b", "a\\", "a.[0]"])("refuses %p", (path) => {
    expect(() => parsePath(path)).toThrow(PathSyntaxError);
  });

  test("parsePaths names the config field of a bad path", () => {
    expect(configErrorOf(() => parsePaths(["ok", "bad..path"], "paths"))).toEqual({
      path: "paths/1",
      message: "empty segment in path 'bad..path'",
    });
  });

  test("formatPath escapes what parsePath unescapes", () => {
    const keys = ["a.b", "*", "c\\d", "e[f", 3];
    expect(formatPath(keys)).toBe("a\\.b.\\*.c\\\\d.e\\[f.3");
    expect(parsePath(formatPath(keys))).toEqual(["a.b", "*", "c\\d", "e[f", "3"]);
  });
});

describe("get / getAll / exists", () => {
  const doc = { a: { b: [{ c: 1 }, { c: 2 }, { d: 3 }] }, "x.y": { "*": 7 }, n: null };

  test("concrete paths", () => {
    expect(get(doc, "a.b.1.c")).toBe(2);
    expect(get(doc, "a.b[1].c")).toBe(2);
    expect(get(doc, "$.a.b.0")).toEqual({ c: 1 });
    expect(get(doc, "a.b.5")).toBeUndefined();
    expect(get(doc, "a.b.x")).toBeUndefined();
    expect(get(doc, "n")).toBeNull();
    expect(exists(doc, "n")).toBe(true);
    expect(exists(doc, "n.x")).toBe(false);
    expect(exists(doc, "missing")).toBe(false);
    expect(get(doc, "")).toBe(doc);
  });

  test("wildcards give every match with its concrete path, in document order", () => {
    expect(getAll(doc, "a.b.*.c")).toEqual([
      { path: ["a", "b", 0, "c"], value: 1 },
      { path: ["a", "b", 1, "c"], value: 2 },
    ]);
    expect(getAll({ o: { p: 1, q: 2 } }, "o.*").map((m) => m.path)).toEqual([
      ["o", "p"],
      ["o", "q"],
    ]);
    expect(getAll(doc, "*").length).toBe(3);
  });

  test("escaped dot and star reach literal keys", () => {
    expect(get(doc, "x\\.y.\\*")).toBe(7);
    expect(get(doc, "x.y")).toBeUndefined();
  });

  test("__proto__ and constructor are ordinary keys, never the prototype", () => {
    const data = JSON.parse('{"__proto__":{"polluted":1},"constructor":{"name":"c"}}');
    expect(get(data, "__proto__.polluted")).toBe(1);
    expect(get(data, "constructor.name")).toBe("c");
    expect(get({}, "constructor")).toBeUndefined();
    expect(get({}, "__proto__")).toBeUndefined();
    expect(get({}, "toString")).toBeUndefined();
    expect(exists([], "length")).toBe(false);
  });
});

describe("set", () => {
  test("creates missing parents as objects, also for numeric segments", () => {
    const data: any = { a: 1 };
    set(data, "b.c.d", 2);
    set(data, "e.0", "x");
    expect(data).toEqual({ a: 1, b: { c: { d: 2 } }, e: { "0": "x" } });
  });

  test("writes into existing arrays by index, padding with null", () => {
    const data: any = { list: [1] };
    set(data, "list[0]", 9);
    set(data, "list.1", 2);
    set(data, "list.3", 4);
    expect(data.list).toEqual([9, 2, null, 4]);
  });

  test("a missing or null parent becomes an object; a primitive in the way is an error", () => {
    const data: any = { a: null, l: [null] };
    set(data, "a.b", 1);
    set(data, "l.0.c", 2);
    expect(data).toEqual({ a: { b: 1 }, l: [{ c: 2 }] });
    expect(() => set({ a: 5 }, "a.b", 1)).toThrow(UtilityError);
    expect(() => set({ a: 5 }, "a.b", 1)).toThrow("'a' is a number");
    expect(() => set({ a: [] }, "a.x", 1)).toThrow("is an array and 'x' is not an index");
    expect(() => set({}, "a.*", 1)).toThrow("wildcard");
    expect(() => set({}, "", 1)).toThrow("root");
  });

  test("__proto__ and constructor become own data, the prototype is untouched", () => {
    const data: any = {};
    set(data, "__proto__.polluted", true);
    set(data, "constructor.prototype.x", 1);
    expect(Object.keys(data)).toEqual(["__proto__", "constructor"]);
    expect(JSON.stringify(data)).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}');
    expect(({} as any).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
  });
});

describe("remove", () => {
  test("removes concrete and wildcard matches and counts them", () => {
    const data: any = { a: { b: 1, c: 2 }, items: [{ x: 1, y: 1 }, { x: 2 }] };
    expect(remove(data, "a.b")).toBe(1);
    expect(remove(data, "items.*.x")).toBe(2);
    expect(remove(data, "nope.x")).toBe(0);
    expect(data).toEqual({ a: { c: 2 }, items: [{ y: 1 }, {}] });
  });

  test("array elements are spliced, indexes referring to the array before removal", () => {
    const data: any = { l: [0, 1, 2, 3] };
    expect(remove(data, "l.1")).toBe(1);
    expect(data.l).toEqual([0, 2, 3]);
    expect(remove(data, "l[*]")).toBe(3);
    expect(data.l).toEqual([]);
  });

  test("removeEmptyParents drops objects emptied by the removal, up the chain, but not ones empty before", () => {
    const data: any = { a: { b: { c: 1 } }, keep: {}, items: [{ x: 1 }, { x: 2, y: 3 }] };
    remove(data, "a.b.c", { removeEmptyParents: true });
    remove(data, "items.*.x", { removeEmptyParents: true });
    expect(data).toEqual({ keep: {}, items: [{ y: 3 }] });
  });

  test("escaped keys and own-property safety", () => {
    const data = JSON.parse('{"a.b":1,"*":2,"c":3,"__proto__":4}');
    remove(data, "a\\.b");
    remove(data, "\\*");
    remove(data, "__proto__");
    remove(data, "constructor");
    expect(data).toEqual({ c: 3 });
  });
});

describe("PathSet", () => {
  test("steps through literal and wildcard nodes together", () => {
    const set = new PathSet(parsePaths(["a.*.b", "a.x"], "paths"));
    const a = PathSet.step(set.start, "a");
    expect(PathSet.selected(a)).toBe(false);
    expect(PathSet.hasWildcard(a)).toBe(true);
    const x = PathSet.step(a, "x");
    expect(PathSet.selected(x)).toBe(true);
    expect(PathSet.selected(PathSet.step(x, "b"))).toBe(true);
    expect(PathSet.step(set.start, "z")).toEqual([]);
    expect(PathSet.selected(PathSet.step(PathSet.step(a, 0), "b"))).toBe(true);
  });
});
