import { describe, expect, test } from "bun:test";
import { codePointOffset, configSchema, truncate, truncateString } from "../../../src/utilities/schema/truncate";
import { UtilityConfigError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => truncate(primary, configure(configSchema, config));

describe("schema.truncate", () => {
  test("defaults: 100 characters, '…', no array limit, everywhere", () => {
    expect(configure(configSchema)).toEqual({ maxStringLength: 100, ellipsis: "…" });
    const output = run({ long: "x".repeat(150), short: "x".repeat(100) }) as { long: string; short: string };
    expect(output.long).toBe("x".repeat(99) + "…");
    expect([...output.long].length).toBe(100);
    expect(output.short).toBe("x".repeat(100));
  });

  test("config ranges", () => {
    expect(configErrors(configSchema, { maxStringLength: 0 })).toEqual(["/maxStringLength"]);
    expect(configErrors(configSchema, { maxStringLength: 2.5 })).toEqual(["/maxStringLength"]);
    expect(configErrors(configSchema, { maxArrayLength: -1 })).toEqual(["/maxArrayLength"]);
    expect(configErrors(configSchema, { maxArrayLength: 0 })).toEqual([]);
    expect(configErrors(configSchema, { ellipsis: 1 })).toEqual(["/ellipsis"]);
    expect(configErrors(configSchema, { paths: ["a", 2] })).toEqual(["/paths/1"]);
  });

  test("maxStringLength counts the ellipsis", () => {
    expect(run({ a: "abcdefgh" }, { maxStringLength: 5 })).toEqual({ a: "abcd…" });
    expect(run({ a: "abcdefgh" }, { maxStringLength: 5, ellipsis: "..." })).toEqual({ a: "ab..." });
    expect(run({ a: "abcdefgh" }, { maxStringLength: 5, ellipsis: "" })).toEqual({ a: "abcde" });
    expect(run({ a: "abcde" }, { maxStringLength: 5, ellipsis: "..." })).toEqual({ a: "abcde" });
    expect(run({ a: "abcdefgh" }, { maxStringLength: 2, ellipsis: "..." })).toEqual({ a: ".." });
  });

  test("code points: surrogate pairs count once and are never split", () => {
    expect(run({ a: "😀😀😀😀" }, { maxStringLength: 4 })).toEqual({ a: "😀😀😀😀" });
    expect(run({ a: "😀😀😀😀😀" }, { maxStringLength: 4 })).toEqual({ a: "😀😀😀…" });
    expect(run({ a: "a😀b" }, { maxStringLength: 2, ellipsis: "" })).toEqual({ a: "a😀" });
    expect(truncateString("ab", 1, "😀😀")).toBe("😀");
    expect(codePointOffset("a😀b", 2)).toBe(3);
    expect(codePointOffset("ab", 5)).toBe(2);
  });

  test("maxArrayLength keeps the first items, at any depth", () => {
    expect(run({ a: [1, 2, 3, 4], b: { c: [[1, 2, 3], 5] } }, { maxArrayLength: 2 })).toEqual({ a: [1, 2], b: { c: [[1, 2], 5] } });
    expect(run({ a: [1, 2] }, { maxArrayLength: 0 })).toEqual({ a: [] });
  });

  test("paths limit both rules to values at or below them; wildcards and escapes", () => {
    const input = { title: "abcdef", body: { text: "abcdef", tags: [1, 2, 3] }, "a.b": "abcdef", items: [{ n: "abcdef", m: "abcdef" }] };
    expect(run(input, { maxStringLength: 3, maxArrayLength: 1, paths: ["body", "a\\.b", "items.*.n"] })).toEqual({
      title: "abcdef",
      body: { text: "ab…", tags: [1] },
      "a.b": "ab…",
      items: [{ n: "ab…", m: "abcdef" }],
    });
    expect(() => run({}, { paths: ["[x]"] })).toThrow(UtilityConfigError);
  });

  test("record-wise: a top-level array is a list of records and is not shortened itself", () => {
    expect(run([{ a: "abcdef" }, { a: [1, 2, 3] }, "abcdef"], { maxStringLength: 3, maxArrayLength: 1 })).toEqual([
      { a: "ab…" },
      { a: [1] },
      "ab…",
    ]);
    expect(run([{ a: "abc" }, { b: "abcd" }], { maxStringLength: 3, paths: ["b"] })).toEqual([{ a: "abc" }, { b: "ab…" }]);
  });

  test("empty inputs, scalars and keys are untouched", () => {
    expect(run({}, { maxStringLength: 1 })).toEqual({});
    expect(run([], { maxStringLength: 1 })).toEqual([]);
    expect(run(12345, { maxStringLength: 1 })).toBe(12345);
    expect(run(null)).toBeNull();
    expect(run({ longkeyname: true }, { maxStringLength: 2 })).toEqual({ longkeyname: true });
  });

  test("prototype-named keys are data; the input is not mutated", () => {
    const input = JSON.parse('{"__proto__":{"s":"abcdef"},"l":[1,2,3]}');
    const output = run(input, { maxStringLength: 2, maxArrayLength: 1 });
    expect(JSON.stringify(output)).toBe('{"__proto__":{"s":"a…"},"l":[1]}');
    expect(JSON.stringify(input)).toBe('{"__proto__":{"s":"abcdef"},"l":[1,2,3]}');
  });
});
