import { describe, expect, test } from "bun:test";
import { configSchema, findReplace } from "../../../src/utilities/structure/find-replace";
import { UtilityConfigError } from "../../../src/utilities/types";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown>) => findReplace(primary, configure(configSchema, config));

describe("structure.find-replace", () => {
  test("search is required and non-empty; defaults of the other fields", () => {
    expect(configErrors(configSchema, {})).toEqual(["/search"]);
    expect(configErrors(configSchema, { search: "" })).toEqual(["/search"]);
    expect(configure(configSchema, { search: "a" })).toEqual({
      search: "a",
      replacement: "",
      mode: "value",
      caseSensitive: true,
      wholeValue: false,
      regex: false,
    });
    expect(configErrors(configSchema, { search: "a", mode: "keys" })).toEqual(["/mode"]);
    expect(configErrors(configSchema, { search: "a", regex: "true" })).toEqual(["/regex"]);
    expect(configErrors(configSchema, { search: "a", paths: "x" })).toEqual(["/paths"]);
  });

  test("value mode (default) replaces every occurrence inside string values, keys untouched", () => {
    const input = { foo: "foo bar foo", list: ["foofoo", 1], nested: { foo: "x" } };
    expect(run(input, { search: "foo", replacement: "baz" })).toEqual({ foo: "baz bar baz", list: ["bazbaz", 1], nested: { foo: "x" } });
  });

  test("replacement defaults to the empty string", () => {
    expect(run({ a: "a-b-c" }, { search: "-" })).toEqual({ a: "abc" });
  });

  test("numbers, booleans and null are untouched", () => {
    expect(run({ n: 11, b: true, z: null, s: "1" }, { search: "1", replacement: "2" })).toEqual({ n: 11, b: true, z: null, s: "2" });
    expect(run({ t: true }, { search: "true", replacement: "x", mode: "both" })).toEqual({ t: true });
  });

  test("key mode renames keys only; both does both; key order is kept", () => {
    const input = { old_name: "old_value", other: { old_x: 1 } };
    const keys = run(input, { search: "old_", replacement: "new_", mode: "key" });
    expect(keys).toEqual({ new_name: "old_value", other: { new_x: 1 } });
    expect(run(input, { search: "old_", replacement: "new_", mode: "both" })).toEqual({ new_name: "new_value", other: { new_x: 1 } });
    expect(Object.keys(run({ a1: 1, b: 2, a2: 3 }, { search: "a", replacement: "c", mode: "key" }) as object)).toEqual(["c1", "b", "c2"]);
  });

  test("a key renamed onto an existing key replaces it", () => {
    expect(run({ a: 1, b: 2 }, { search: "a", replacement: "b", mode: "key" })).toEqual({ b: 1 });
    expect(run({ b: 2, a: 1 }, { search: "a", replacement: "b", mode: "key" })).toEqual({ b: 1 });
    expect(run({ a: 1, b: 2 }, { search: "a", replacement: "b", mode: "key" })).not.toHaveProperty("a");
  });

  test("caseSensitive false", () => {
    expect(run({ a: "Foo FOO foo" }, { search: "foo", replacement: "x" })).toEqual({ a: "Foo FOO x" });
    expect(run({ a: "Foo FOO foo" }, { search: "foo", replacement: "x", caseSensitive: false })).toEqual({ a: "x x x" });
  });

  test("wholeValue only replaces strings (or keys) equal to search", () => {
    const input = { a: "yes", b: "yes please", c: "YES", yes: 1 };
    expect(run(input, { search: "yes", replacement: "Y", wholeValue: true })).toEqual({ a: "Y", b: "yes please", c: "YES", yes: 1 });
    expect(run(input, { search: "yes", replacement: "Y", wholeValue: true, caseSensitive: false, mode: "both" })).toEqual({
      a: "Y",
      b: "yes please",
      c: "Y",
      Y: 1,
    });
  });

  test("literal search treats regex characters and $1 as text", () => {
    expect(run({ a: "1+1=2 (a.b)" }, { search: "(a.b)", replacement: "$1" })).toEqual({ a: "1+1=2 $1" });
    expect(run({ a: "a.b axb" }, { search: "A.B", replacement: "$&", caseSensitive: false })).toEqual({ a: "$& axb" });
  });

  test("regex with groups, case-insensitive, whole value", () => {
    expect(run({ d: "2024-01-31 and 2023-12-01" }, { search: "(\\d{4})-(\\d{2})-(\\d{2})", replacement: "$3/$2/$1", regex: true })).toEqual(
      {
        d: "31/01/2024 and 01/12/2023",
      },
    );
    expect(run({ a: "Cat cat" }, { search: "c(a)t", replacement: "d$1g", regex: true, caseSensitive: false })).toEqual({ a: "dag dag" });
    expect(run({ a: "abc", b: "xabc" }, { search: "a|abc", replacement: "!", regex: true, wholeValue: true })).toEqual({
      a: "!",
      b: "xabc",
    });
    expect(run({ user_id: 1, user_name: 2 }, { search: "^user_(.*)$", replacement: "$1", regex: true, mode: "key" })).toEqual({
      id: 1,
      name: 2,
    });
  });

  test("an invalid regex is a config error on `search`", () => {
    expect(configErrorOf(() => run({}, { search: "(a", regex: true }))).toMatchObject({ path: "search" });
  });

  test("catastrophic backtracking patterns run on the linear-time engine", () => {
    const long = "a".repeat(100_000) + "!";
    const output = run({ s: long }, { search: "(a+)+$", replacement: "X", regex: true }) as { s: string };
    expect(output.s).toBe(long);
    expect(run({ s: "aaaa" }, { search: "(a+)+$", replacement: "X", regex: true })).toEqual({ s: "X" });
  });

  test("replacement templates: `old` is the matched text, record fields are in scope", () => {
    expect(run({ a: "hello world" }, { search: "o", replacement: "{{ old.toUpperCase() }}" })).toEqual({ a: "hellO wOrld" });
    expect(run({ a: "ab AB" }, { search: "ab", replacement: "<{{ old }}>", caseSensitive: false })).toEqual({ a: "<ab> <AB>" });
    expect(run({ id: 7, a: "x-x" }, { search: "x", replacement: "{{ id }}" })).toEqual({ id: 7, a: "7-7" });
    expect(run({ a: "k=v" }, { search: "(\\w)=(\\w)", replacement: "{{ groups[1] + ':' + old }}", regex: true })).toEqual({ a: "v:k=v" });
    expect(() => run({}, { search: "a", replacement: "{{ old.( }}" })).toThrow(UtilityConfigError);
  });

  test("paths limit the replacement to values at or below them; wildcards and escapes", () => {
    const input = { a: "x", b: { c: "x", d: ["x", "x"] }, "e.f": "x", list: [{ v: "x", w: "x" }, { v: "x" }] };
    expect(run(input, { search: "x", replacement: "y", paths: ["b.d[1]", "e\\.f", "list.*.v"] })).toEqual({
      a: "x",
      b: { c: "x", d: ["x", "y"] },
      "e.f": "y",
      list: [{ v: "y", w: "x" }, { v: "y" }],
    });
    expect(run(input, { search: "x", replacement: "y", paths: ["b"] })).toEqual({ ...input, b: { c: "y", d: ["y", "y"] } });
    expect(
      run(
        { user: { name: 1, inner: { name: 2 } }, name: 3 },
        { search: "name", replacement: "n", mode: "key", paths: ["user.name", "user.inner"] },
      ),
    ).toEqual({
      user: { n: 1, inner: { n: 2 } },
      name: 3,
    });
    expect(() => run({}, { search: "x", paths: ["a..b"] })).toThrow(UtilityConfigError);
  });

  test("record-wise: paths relative to each element; scalars and strings as primary", () => {
    expect(run([{ a: "x", b: "x" }, { a: "xx" }], { search: "x", replacement: "y", paths: ["a"] })).toEqual([
      { a: "y", b: "x" },
      { a: "yy" },
    ]);
    expect(run("a banana", { search: "a", replacement: "A" })).toBe("A bAnAnA");
    expect(run(["a", 1, null], { search: "a", replacement: "b" })).toEqual(["b", 1, null]);
    expect(run(42, { search: "4", replacement: "5" })).toBe(42);
    expect(run({}, { search: "a" })).toEqual({});
    expect(run([], { search: "a" })).toEqual([]);
  });

  test("prototype-named keys are data; the input is not mutated", () => {
    const input = JSON.parse('{"__proto__x":{"a":"v"},"constructor":"c"}');
    const output = run(input, { search: "x", replacement: "", mode: "key" });
    expect(JSON.stringify(output)).toBe('{"__proto__":{"a":"v"},"constructor":"c"}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(JSON.stringify(input)).toBe('{"__proto__x":{"a":"v"},"constructor":"c"}');
  });
});
