import { describe, expect, test } from "bun:test";
import utility, { configSchema, type FilterConfig, filter } from "../../../src/utilities/generate/filter";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown>) => utility.run({ primary }, configure(configSchema, config));
const configError = (primary: unknown, config: Record<string, unknown>) => {
  try {
    filter(primary, configure(configSchema, config) as FilterConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(UtilityConfigError);
    return error as UtilityConfigError;
  }
  throw new Error("expected a config error");
};

const people = [
  { name: "Ada", age: 36, status: "active", tags: ["math"], email: "ada@example.com" },
  { name: "Bo", age: 17, status: "active", tags: [], email: null },
  { name: "Cy", age: 52, status: "inactive", tags: ["art", "math"] },
  { name: "Di", age: "40", status: "active" },
];
const names = (output: unknown) => (output as { name: string }[]).map((person) => person.name);

describe("generate.filter: config", () => {
  test("defaults: match all; condition, where, path and limit absent", () => {
    expect(configure(configSchema, { condition: "true" })).toEqual({ condition: "true", match: "all" });
  });
  test("schema refusals: unknown fields, unknown ops, negative limit, empty where", () => {
    expect(configErrors(configSchema, { condition: "true", extra: 1 })).toContain("/extra");
    expect(configErrors(configSchema, { where: [{ field: "a", op: "like", value: 1 }] })).toContain("/where/0/op");
    expect(configErrors(configSchema, { condition: "true", limit: -1 })).toContain("/limit");
    expect(configErrors(configSchema, { condition: "true", limit: 1.5 })).toContain("/limit");
    expect(configErrors(configSchema, { where: [] })).toContain("/where");
    expect(configErrors(configSchema, { condition: "true", match: "some" })).toContain("/match");
  });
  test("neither condition nor where is a config error", () => {
    expect(configError(people, {}).path).toBe("condition");
  });
  test("rule operands are checked before anything runs", () => {
    expect(configError(people, { where: [{ field: "a", op: "eq" }] }).path).toBe("where/0/value");
    expect(configError(people, { where: [{ field: "a", op: "in", value: 1 }] }).path).toBe("where/0/value");
    expect(configError(people, { where: [{ field: "a", op: "regex", value: "(" }] }).path).toBe("where/0/value");
    expect(configError(people, { where: [{ field: "a", op: "regex", value: 5 }] }).path).toBe("where/0/value");
    expect(configError(people, { where: [{ field: "a", op: "exists", value: "yes" }] }).path).toBe("where/0/value");
    expect(configError(people, { where: [{ field: "a..b", op: "exists" }] }).path).toBe("where/0/field");
    expect(configError(people, { condition: "age >" }).path).toBe("condition");
    expect(configError(people, { condition: "true", path: "a.*" }).path).toBe("path");
  });
});

describe("generate.filter: condition", () => {
  test("the spec example, with and without {{ }} (a numeric string compares as its number)", () => {
    expect(names(run(people, { condition: 'age >= 18 && status == "active"' }))).toEqual(["Ada", "Di"]);
    expect(names(run(people, { condition: '{{ age >= 18 && status == "active" }}' }))).toEqual(["Ada", "Di"]);
  });
  test("$root and functions are available; a missing field is null", () => {
    expect(names(run(people, { condition: "contains(tags, 'math') && length($root) == 4" }))).toEqual(["Ada", "Cy"]);
    expect(names(run(people, { condition: "email == null" }))).toEqual(["Bo", "Cy", "Di"]);
  });
  test("elements that are not objects are tested too ($ is the element)", () => {
    expect(run([1, 5, 10, "x"], { condition: "$ > 4" })).toEqual([5, 10]);
  });
});

describe("generate.filter: where", () => {
  const where = (field: string, op: string, value?: unknown) =>
    names(run(people, { where: [{ field, op, ...(value === undefined ? {} : { value }) }] }));
  test.each([
    ["status", "eq", "inactive", ["Cy"]],
    ["age", "eq", 40, ["Di"]],
    ["status", "ne", "active", ["Cy"]],
    ["age", "gt", 36, ["Cy", "Di"]],
    ["age", "gte", 36, ["Ada", "Cy", "Di"]],
    ["age", "lt", 36, ["Bo"]],
    ["age", "lte", 36, ["Ada", "Bo"]],
    ["name", "contains", "y", ["Cy"]],
    ["tags", "contains", "art", ["Cy"]],
    ["name", "startsWith", "D", ["Di"]],
    ["email", "endsWith", ".com", ["Ada"]],
    ["name", "in", ["Bo", "Di"], ["Bo", "Di"]],
    ["email", "exists", undefined, ["Ada", "Bo"]],
    ["email", "exists", false, ["Cy", "Di"]],
    ["name", "regex", "^[AB]", ["Ada", "Bo"]],
    ["email", "eq", null, ["Bo", "Cy", "Di"]],
    ["email", "ne", null, ["Ada"]],
    ["nickname", "lt", 5, []],
    ["nickname", "ne", "x", ["Ada", "Bo", "Cy", "Di"]],
    ["tags.*", "eq", "math", ["Ada", "Cy"]],
    ["tags.1", "exists", true, ["Cy"]],
  ])("%s %s %p", (field, op, value, expected) => {
    expect(where(field as string, op as string, value)).toEqual(expected as string[]);
  });
  test("match all (default) and any", () => {
    const rules = [
      { field: "status", op: "eq", value: "active" },
      { field: "age", op: "gt", value: 30 },
    ];
    expect(names(run(people, { where: rules }))).toEqual(["Ada", "Di"]);
    expect(names(run(people, { where: rules, match: "any" }))).toEqual(["Ada", "Bo", "Cy", "Di"]);
  });
  test("condition and where together: an element must pass both", () => {
    expect(names(run(people, { condition: "age < 40", where: [{ field: "status", op: "eq", value: "active" }] }))).toEqual(["Ada", "Bo"]);
  });
  test("regex runs on the linear-time engine (no catastrophic backtracking)", () => {
    const output = run([{ s: `${"a".repeat(5000)}!` }], { where: [{ field: "s", op: "regex", value: "^(a+)+$" }] });
    expect(output).toEqual([]);
  });
});

describe("generate.filter: path, limit and input types", () => {
  test("path filters the array inside primary and returns the rest unchanged", () => {
    const primary = { meta: { page: 1 }, data: { rows: [{ v: 1 }, { v: 2 }, { v: 3 }] } };
    expect(run(primary, { condition: "v != 2", path: "data.rows" })).toEqual({ meta: { page: 1 }, data: { rows: [{ v: 1 }, { v: 3 }] } });
    expect(primary.data.rows).toHaveLength(3);
  });
  test("limit keeps at most that many matches; 0 keeps none", () => {
    expect(names(run(people, { condition: "true", limit: 2 }))).toEqual(["Ada", "Bo"]);
    expect(run(people, { condition: "true", limit: 0 })).toEqual([]);
  });
  test("a primary (or path) that is not an array is a UtilityError", () => {
    expect(() => run({ a: 1 }, { condition: "true" })).toThrow(UtilityError);
    expect(() => run({ a: 1 }, { condition: "true" })).toThrow(/primary is an object \(set `path`/);
    expect(() => run("text", { condition: "true" })).toThrow(/primary is a string/);
    expect(() => run({ a: 1 }, { condition: "true", path: "a" })).toThrow(/the value at 'a' is a number/);
    expect(() => run({ a: 1 }, { condition: "true", path: "b" })).toThrow(/no value at 'b'/);
  });
});
