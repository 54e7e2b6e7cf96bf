import { describe, expect, test } from "bun:test";
import utility, { configSchema } from "../../../src/utilities/convert/csv-to-json";
import { UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) =>
  utility.run({ primary }, configure(configSchema, config)) as Record<string, unknown>[];

describe("config", () => {
  test("defaults", () => {
    expect(configure(configSchema)).toEqual({
      delimiter: "auto",
      header: true,
      inferTypes: true,
      emptyAs: "string",
      trim: false,
      skipEmptyLines: true,
      nested: false,
    });
  });
  test("types, enums, one-character delimiters and unknown fields are checked", () => {
    expect(configErrors(configSchema, { delimiter: ",," })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: '"' })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "\n" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "#" })).toEqual([]);
    expect(configErrors(configSchema, { header: "yes" })).toEqual(["/header"]);
    expect(configErrors(configSchema, { inferTypes: 1 })).toEqual(["/inferTypes"]);
    expect(configErrors(configSchema, { emptyAs: "undefined" })).toContain("/emptyAs");
    expect(configErrors(configSchema, { trim: null })).toEqual(["/trim"]);
    expect(configErrors(configSchema, { skipEmptyLines: "true" })).toEqual(["/skipEmptyLines"]);
    expect(configErrors(configSchema, { nested: 0 })).toEqual(["/nested"]);
    expect(configErrors(configSchema, { separator: ";" })).toContain("/separator");
  });
});

describe("the spec's example and RFC 4180", () => {
  test('"name,age\\nAlice,30" → [{"name":"Alice","age":30}]', () => {
    expect(run("name,age\nAlice,30")).toEqual([{ name: "Alice", age: 30 }]);
  });
  test("quoted fields, doubled quotes, embedded line breaks, CRLF, BOM", () => {
    expect(run('\uFEFFname,quote\r\n"Smith, Ann","she said ""hi""\r\nand left"\r\n')).toEqual([
      { name: "Smith, Ann", quote: 'she said "hi"\r\nand left' },
    ]);
  });
  test("empty input and a header alone give no records", () => {
    expect(run("")).toEqual([]);
    expect(run("a,b\n")).toEqual([]);
  });
});

describe("delimiter", () => {
  test.each([
    ["a,b\n1,2", ","],
    ["a;b\n1;2", ";"],
    ["a\tb\n1\t2", "tab"],
    ["a|b\n1|2", "|"],
  ])("auto detects %j (%s)", (text) => {
    expect(run(text)).toEqual([{ a: 1, b: 2 }]);
  });
  test("an explicit delimiter is used as given", () => {
    expect(run("a;b,c\n1;2,5", { delimiter: ";" })).toEqual([{ a: 1, "b,c": "2,5" }]);
    expect(run("a#b\n1#2", { delimiter: "#" })).toEqual([{ a: 1, b: 2 }]);
  });
});

describe("header", () => {
  test("false: keys col_1, col_2, … and the first row is data", () => {
    expect(run("a,b\n1,2", { header: false })).toEqual([
      { col_1: "a", col_2: "b" },
      { col_1: 1, col_2: 2 },
    ]);
  });
  test("duplicate header names get _2, _3; an empty one is named by its column", () => {
    expect(run("id,id,id,,x\n1,2,3,4,5")).toEqual([{ id: 1, id_2: 2, id_3: 3, col_4: 4, x: 5 }]);
  });
  test("a short row fills the rest as empty cells; a long row adds col_N keys, only to itself", () => {
    expect(run("a,b,c\n1\n1,2,3,4,5\n7,8")).toEqual([
      { a: 1, b: "", c: "" },
      { a: 1, b: 2, c: 3, col_4: 4, col_5: 5 },
      { a: 7, b: 8, c: "" },
    ]);
  });
  test("a col_N key that a header already uses is made unique", () => {
    expect(run("col_3,b\n1,2,3")).toEqual([{ col_3: 1, b: 2, col_3_2: 3 }]);
  });
  test("without a header, each row has its own width", () => {
    expect(run("1,2,3\n4", { header: false })).toEqual([{ col_1: 1, col_2: 2, col_3: 3 }, { col_1: 4 }]);
  });
});

describe("inferTypes", () => {
  const cells = "30,-1.5,1e3,true,false,007,9007199254740993,-9007199254740993,9007199254740991,0,0.5,+5,.5,TRUE,1e999";
  const header = cells
    .split(",")
    .map((_, index) => `c${index}`)
    .join(",");
  test("true (default): numbers and booleans; leading zeros, beyond 2^53 and non-JSON forms stay strings", () => {
    expect(Object.values(run(`${header}\n${cells}`)[0])).toEqual([
      30,
      -1.5,
      1000,
      true,
      false,
      "007",
      "9007199254740993",
      "-9007199254740993",
      9007199254740991,
      0,
      0.5,
      "+5",
      ".5",
      "TRUE",
      "1e999",
    ]);
  });
  test("false: every cell is a string", () => {
    expect(Object.values(run(`${header}\n${cells}`, { inferTypes: false })[0])).toEqual(cells.split(","));
  });
  test("quoted numbers are inferred too (spreadsheets quote every cell)", () => {
    expect(run('a,b\n"42","x"')).toEqual([{ a: 42, b: "x" }]);
  });
});

describe("emptyAs", () => {
  const text = 'a,b,c\n1,,""';
  test('"string" (default): ""', () => {
    expect(run(text)).toEqual([{ a: 1, b: "", c: "" }]);
  });
  test('"null": null', () => {
    expect(run(text, { emptyAs: "null" })).toEqual([{ a: 1, b: null, c: null }]);
  });
  test('"omit": no key, also for the cells a short row lacks', () => {
    expect(run(text, { emptyAs: "omit" })).toEqual([{ a: 1 }]);
    expect(run("a,b\n1", { emptyAs: "omit" })).toEqual([{ a: 1 }]);
  });
});

describe("trim", () => {
  test("false (default): whitespace is data", () => {
    expect(run("a, b\n 1 , x ")).toEqual([{ a: " 1 ", " b": " x " }]);
  });
  test("true: unquoted cells (and headers) are trimmed, quoted content is not", () => {
    expect(run('a, b\n 1 , " x "', { trim: true })).toEqual([{ a: 1, b: " x " }]);
  });
});

describe("skipEmptyLines", () => {
  test("true (default): empty lines give no record", () => {
    expect(run("a,b\n\n1,2\n\n")).toEqual([{ a: 1, b: 2 }]);
  });
  test("false: an empty line is a record of empty cells", () => {
    expect(run("a,b\n\n1,2", { skipEmptyLines: false })).toEqual([
      { a: "", b: "" },
      { a: 1, b: 2 },
    ]);
  });
});

describe("nested", () => {
  test("false (default): a dotted header is a key", () => {
    expect(run("user.name,user.age\nAda,36")).toEqual([{ "user.name": "Ada", "user.age": 36 }]);
  });
  test("true: a.b headers build objects, in header order", () => {
    expect(run("id,user.name,user.address.city,user.age\n1,Ada,London,36", { nested: true })).toEqual([
      { id: 1, user: { name: "Ada", address: { city: "London" }, age: 36 } },
    ]);
  });
  test("true: escaped dots stay in the key; a star is a character", () => {
    expect(run("a\\.b,c.*\n1,2", { nested: true })).toEqual([{ "a.b": 1, c: { "*": 2 } }]);
  });
  test("true: headers that collide once nested are a UtilityError naming them", () => {
    expect(() => run("a,a.b\n1,2", { nested: true })).toThrow("headers 'a' and 'a.b'");
    expect(() => run("a.b,a\n1,2", { nested: true })).toThrow(UtilityError);
    expect(() => run("a[0],a.0\n1,2", { nested: true })).toThrow(UtilityError);
  });
  test("true: a header that is not a path is a UtilityError", () => {
    expect(() => run("a..b\n1", { nested: true })).toThrow("header 'a..b' (column 1) is not a path");
  });
});

describe("prototype keys are data", () => {
  test("__proto__ and constructor headers become own keys and reach no prototype", () => {
    const [record] = run("__proto__,constructor\n1,2");
    expect(Object.keys(record)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(JSON.stringify(record)).toBe('{"__proto__":1,"constructor":2}');
  });
  test("nested: a __proto__ segment builds an own member, not a prototype", () => {
    const [record] = run("__proto__.polluted,x.constructor.y\n1,2", { nested: true });
    expect(JSON.stringify(record)).toBe('{"__proto__":{"polluted":1},"x":{"constructor":{"y":2}}}');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("wrong input", () => {
  test.each([[42], [null], [{ csv: "a" }], [["a,b"]], [true]])("primary %j is a UtilityError", (primary) => {
    expect(() => run(primary)).toThrow(UtilityError);
    expect(() => run(primary)).toThrow("primary must be a string");
  });
  test("an unterminated quote is a UtilityError", () => {
    expect(() => run('a\n"x')).toThrow(UtilityError);
  });
});
