import { describe, expect, test } from "bun:test";
import utility, { configSchema, type FormatValuesConfig } from "../../../src/utilities/cleanup/format-values";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const configOf = (partial: Record<string, unknown> = {}) => configure<FormatValuesConfig>(configSchema, partial);
const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configOf(config) as never);
const KEEP_STRINGS = { strings: { trim: false } };

describe("config", () => {
  test("defaults: strings are trimmed, the other groups are off", () => {
    expect(configOf()).toEqual({ strings: { trim: true, collapseWhitespace: false } });
    expect(run({ a: "  x  ", n: 1.23456, d: "2024-01-15", b: "yes", t: true })).toEqual({
      a: "x",
      n: 1.23456,
      d: "2024-01-15",
      b: "yes",
      t: true,
    });
  });
  test("group defaults: numbers plain en-US USD, dates iso en-US UTC, booleans as boolean", () => {
    expect(configOf({ numbers: {}, dates: {}, booleans: {} })).toEqual({
      strings: { trim: true, collapseWhitespace: false },
      numbers: { style: "plain", locale: "en-US", currency: "USD" },
      dates: { format: "iso", locale: "en-US", timeZone: "UTC" },
      booleans: { as: "boolean" },
    });
  });
  test("the schema refuses unknown fields, decimals outside 0–20 or given as text, unknown styles", () => {
    expect(configErrors(configSchema, { extra: 1 })).toEqual(["/extra"]);
    expect(configErrors(configSchema, { strings: { shout: true } })).toEqual(["/strings/shout"]);
    for (const decimals of [-1, 21, 1.5, "2"]) expect(configErrors(configSchema, { numbers: { decimals } })).toEqual(["/numbers/decimals"]);
    expect(configErrors(configSchema, { numbers: { style: "scientific" } })).toEqual(["/numbers/style"]);
    expect(configErrors(configSchema, { dates: { format: "rfc2822" } })).toEqual(["/dates/format"]);
    expect(configErrors(configSchema, { booleans: { as: "emoji" } })).toEqual(["/booleans/as"]);
  });
});

describe("strings", () => {
  test("trim, collapseWhitespace, and each case", () => {
    const text = "  hello   wORLD. this IS  kiln!  ";
    expect(run(text, { strings: { trim: true } })).toBe("hello   wORLD. this IS  kiln!");
    expect(run(text, { strings: { trim: false, collapseWhitespace: true } })).toBe(" hello wORLD. this IS kiln! ");
    const tidy = { trim: true, collapseWhitespace: true };
    expect(run(text, { strings: { ...tidy, case: "lower" } })).toBe("hello world. this is kiln!");
    expect(run(text, { strings: { ...tidy, case: "upper" } })).toBe("HELLO WORLD. THIS IS KILN!");
    expect(run(text, { strings: { ...tidy, case: "title" } })).toBe("Hello World. This Is Kiln!");
    expect(run(text, { strings: { ...tidy, case: "sentence" } })).toBe("Hello world. This is kiln!");
  });
  test("trim stays on when other strings options are given, until trim: false", () => {
    expect(run(" a ", { strings: { case: "upper" } })).toBe("A");
    expect(run(" a ", { strings: { case: "upper", trim: false } })).toBe(" A ");
  });
  test("paths limit the group; other strings are untouched", () => {
    expect(run({ a: " x ", b: { c: " y " } }, { strings: { paths: ["b"], trim: true } })).toEqual({ a: " x ", b: { c: "y" } });
  });
  test("numbers and booleans are never touched by strings", () => {
    expect(run({ a: 1, b: true, c: null }, { strings: { paths: ["a", "b", "c"], case: "upper" } })).toEqual({ a: 1, b: true, c: null });
  });
});

describe("numbers", () => {
  test("plain rounds half away from zero on the decimal text, and stays a number", () => {
    expect(run([1.005, 2.675, -1.005, 3, 1234.5678], { numbers: { decimals: 2 } })).toEqual([1.01, 2.68, -1.01, 3, 1234.57]);
    expect(run([2.5, 1.4], { numbers: { decimals: 0 } })).toEqual([3, 1]);
  });
  test("plain without decimals leaves numbers as they are", () => {
    expect(run([1.23456], { numbers: {} })).toEqual([1.23456]);
  });
  test("locale, currency and percent styles give text through Intl.NumberFormat", () => {
    expect(run([1234567.891], { numbers: { style: "locale" } })).toEqual(["1,234,567.891"]);
    expect(run([1234567.891], { numbers: { style: "locale", locale: "de-DE", decimals: 1 } })).toEqual(["1.234.567,9"]);
    expect(run([1234.5], { numbers: { style: "currency" } })).toEqual(["$1,234.50"]);
    expect(run([1234.5], { numbers: { style: "currency", currency: "eur", locale: "de-DE" } })).toEqual(["1.234,50\u00a0€"]);
    expect(run([0.256], { numbers: { style: "percent" } })).toEqual(["26%"]);
    expect(run([0.256], { numbers: { style: "percent", decimals: 1 } })).toEqual(["25.6%"]);
  });
  test("with paths, numeric strings are read as numbers; without, only numbers are formatted", () => {
    const primary = { price: "19.999", code: "007x", n: 2.555, other: "1.5" };
    expect(run(primary, { ...KEEP_STRINGS, numbers: { paths: ["price", "code"], decimals: 2 } })).toEqual({
      price: 20,
      code: "007x",
      n: 2.555,
      other: "1.5",
    });
    expect(run(primary, { ...KEEP_STRINGS, numbers: { decimals: 2 } })).toEqual({ price: "19.999", code: "007x", n: 2.56, other: "1.5" });
  });
  test("an invalid locale or currency is a config error naming the field", () => {
    expect(configErrorOf(() => run([1], { numbers: { locale: "not a locale" } }))).toMatchObject({ path: "numbers/locale" });
    expect(configErrorOf(() => run([1], { numbers: { locale: "xx" } }))).toMatchObject({ path: "numbers/locale" });
    expect(configErrorOf(() => run([1], { numbers: { style: "currency", currency: "DOLLARS" } }))).toMatchObject({
      path: "numbers/currency",
    });
    expect(configErrorOf(() => run([1], { numbers: { paths: ["a["] } }))).toMatchObject({ path: "numbers/paths/0" });
  });
});

describe("dates", () => {
  const primary = { at: "2024-01-15T23:30:00Z", day: "2024-01-15", local: "2024-01-15T10:30:00", offset: "2024-01-15T10:30:00+02:00" };
  test("iso: UTC ISO 8601 (a time without an offset is UTC)", () => {
    expect(run(primary, { dates: {} })).toEqual({
      at: "2024-01-15T23:30:00.000Z",
      day: "2024-01-15T00:00:00.000Z",
      local: "2024-01-15T10:30:00.000Z",
      offset: "2024-01-15T08:30:00.000Z",
    });
  });
  test("date: the calendar day in timeZone; a date-only value never shifts", () => {
    expect(run(primary, { dates: { format: "date" } })).toEqual({
      at: "2024-01-15",
      day: "2024-01-15",
      local: "2024-01-15",
      offset: "2024-01-15",
    });
    expect(run(primary, { dates: { format: "date", timeZone: "Asia/Tokyo" } })).toEqual({
      at: "2024-01-16",
      day: "2024-01-15",
      local: "2024-01-15",
      offset: "2024-01-15",
    });
  });
  test("epoch-ms and epoch-s", () => {
    expect(run([primary.at], { dates: { format: "epoch-ms" } })).toEqual([Date.UTC(2024, 0, 15, 23, 30)]);
    expect(run([primary.at], { dates: { format: "epoch-s" } })).toEqual([Date.UTC(2024, 0, 15, 23, 30) / 1000]);
  });
  test("locale: medium date and short time in locale and timeZone", () => {
    expect(run([primary.at, primary.day], { dates: { format: "locale" } })).toEqual(["Jan 15, 2024, 11:30 PM", "Jan 15, 2024"]);
    expect(run([primary.at], { dates: { format: "locale", locale: "de-DE", timeZone: "Europe/Berlin" } })).toEqual(["16.01.2024, 00:30"]);
  });
  test("with paths, epoch numbers are dates too (below 10^11 seconds, else milliseconds)", () => {
    const ms = Date.UTC(2024, 0, 15);
    expect(run({ s: ms / 1000, ms, other: 5 }, { dates: { paths: ["s", "ms"], format: "date" } })).toEqual({
      s: "2024-01-15",
      ms: "2024-01-15",
      other: 5,
    });
    expect(run({ s: ms / 1000 }, { dates: { format: "date" } })).toEqual({ s: ms / 1000 });
  });
  test("strings that are not real ISO 8601 dates are left to the strings group", () => {
    expect(run([" 2024-02-30 ", "15/01/2024", "yesterday"], { dates: {} })).toEqual(["2024-02-30", "15/01/2024", "yesterday"]);
  });
  test("an invalid locale or timeZone is a config error naming the field", () => {
    expect(configErrorOf(() => run([], { dates: { timeZone: "Mars/Olympus" } }))).toMatchObject({ path: "dates/timeZone" });
    expect(configErrorOf(() => run([], { dates: { locale: "??" } }))).toMatchObject({ path: "dates/locale" });
  });
});

describe("booleans", () => {
  test("as boolean, yes-no, number, string", () => {
    expect(run([true, false], { booleans: {} })).toEqual([true, false]);
    expect(run([true, false], { booleans: { as: "yes-no" } })).toEqual(["yes", "no"]);
    expect(run([true, false], { booleans: { as: "number" } })).toEqual([1, 0]);
    expect(run([true, false], { booleans: { as: "string" } })).toEqual(["true", "false"]);
  });
  test("with paths, true/yes/1/y and their opposites are read as booleans first, any case", () => {
    const primary = { a: "Yes", b: "n", c: "1", d: 0, e: "TRUE", f: "maybe", g: 2, h: "yes" };
    const paths = ["a", "b", "c", "d", "e", "f", "g"];
    expect(run(primary, { booleans: { paths, as: "yes-no" } })).toEqual({
      a: "yes",
      b: "no",
      c: "yes",
      d: "no",
      e: "yes",
      f: "maybe",
      g: 2,
      h: "yes",
    });
  });
  test("without paths, text and numbers are not booleans (a count of 1 stays 1)", () => {
    expect(run({ count: 1, flag: "yes", ok: true }, { booleans: { as: "number" } })).toEqual({ count: 1, flag: "yes", ok: 1 });
  });
});

describe("groups together", () => {
  test("a value takes the first group whose paths select it, then the group of its type", () => {
    const config = {
      strings: { case: "upper", trim: true },
      numbers: { paths: ["n", "price"], decimals: 1 },
      dates: { format: "date" },
      booleans: { paths: ["active"], as: "yes-no" },
    };
    const primary = { name: " ada ", created: "2024-01-15T10:00:00Z", active: "Y", n: "3.14159", price: 9.99, flag: false, other: 2.555 };
    expect(run(primary, config)).toEqual({
      name: "ADA",
      created: "2024-01-15",
      active: "yes",
      n: 3.1,
      price: 10,
      flag: false,
      other: 2.555,
    });
  });
  test("a path in two groups: dates before numbers before booleans before strings, the first that reads the value", () => {
    const config = { strings: { paths: ["v"], case: "upper" }, dates: { paths: ["v"], format: "date" } };
    expect(run([{ v: "2024-01-15T10:00:00Z" }, { v: "text" }], config)).toEqual([{ v: "2024-01-15" }, { v: "TEXT" }]);
  });
});

describe("record-wise", () => {
  test("an array primary: paths are relative to each element", () => {
    expect(run([{ p: 1.26 }, { p: 2.71 }, 3.33], { numbers: { paths: ["p"], decimals: 1 } })).toEqual([{ p: 1.3 }, { p: 2.7 }, 3.33]);
  });
  test("a single object: paths from its root", () => {
    expect(run({ p: 1.26 }, { numbers: { paths: ["p"], decimals: 1 } })).toEqual({ p: 1.3 });
  });
  test("scalars, null and empty containers pass through unchanged", () => {
    for (const value of [null, [], {}, 3]) expect(run(value)).toEqual(value);
  });
});

describe("prototype keys are plain data", () => {
  test("members named __proto__ and constructor are formatted and stay own members", () => {
    const output = run(JSON.parse('{"__proto__":{"x":" a "},"constructor":" b "}'), {
      strings: { trim: true, case: "upper", paths: ["__proto__", "constructor"] },
    }) as object;
    expect(JSON.stringify(output)).toBe('{"__proto__":{"x":"A"},"constructor":"B"}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
  });
});
