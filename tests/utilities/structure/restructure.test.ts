import { describe, expect, test } from "bun:test";
import utility, { configSchema, restructure } from "../../../src/utilities/structure/restructure";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown>) => utility.run({ primary }, configure(configSchema, config));

describe("structure.restructure", () => {
  test("the spec example: paths, nesting and a $value literal", () => {
    const primary = { user: { first: "Ada", mail: "a@x" } };
    const template = { name: "user.first", contact: { email: "user.mail" }, v: { $value: 1 } };
    expect(run(primary, { template })).toEqual({ name: "Ada", contact: { email: "a@x" }, v: 1 });
  });

  test("config: template is required, missing defaults to omit, unknown fields and other values refused", () => {
    expect(configure(configSchema, { template: "a" })).toEqual({ template: "a", missing: "omit" });
    expect(configErrors(configSchema, {})).toContain("/template");
    expect(configErrors(configSchema, { template: "a", missing: "drop" })).toContain("/missing");
    expect(configErrors(configSchema, { template: "a", extra: 1 })).toContain("/extra");
  });

  test("missing: omit leaves out unresolved members and array elements; null writes null", () => {
    const template = { a: "nope", b: "x", list: ["x", "nope"] };
    expect(run({ x: 1 }, { template })).toEqual({ b: 1, list: [1] });
    expect(run({ x: 1 }, { template, missing: "null" })).toEqual({ a: null, b: 1, list: [1, null] });
  });

  test("a path resolving to null is a value, not missing", () => {
    expect(run({ x: null }, { template: { a: "x" } })).toEqual({ a: null });
  });

  test("templates keep types when whole and interpolate otherwise; $root is the whole primary", () => {
    const primary = [
      { first: "Ada", last: "L", n: 2 },
      { first: "Bo", last: "M", n: 3 },
    ];
    const template = {
      full: "{{first}} {{last}}",
      double: "{{ n * 2 }}",
      total: "{{ length($root) }}",
      upper: "{{ first.toUpperCase() }}",
    };
    expect(run(primary, { template })).toEqual([
      { full: "Ada L", double: 4, total: 2, upper: "ADA" },
      { full: "Bo M", double: 6, total: 2, upper: "BO" },
    ]);
  });

  test("wildcard paths give every value they reach; index paths work", () => {
    const primary = { items: [{ sku: "A" }, { sku: "B" }] };
    expect(run(primary, { template: { skus: "items.*.sku", first: "items.0.sku", alt: "items[1].sku" } })).toEqual({
      skus: ["A", "B"],
      first: "A",
      alt: "B",
    });
  });

  test("literals: numbers, booleans and null leaves are kept, $value is not walked", () => {
    expect(run({ a: 1 }, { template: { n: 5, b: true, z: null, raw: { $value: { path: "a" } } } })).toEqual({
      n: 5,
      b: true,
      z: null,
      raw: { path: "a" },
    });
  });

  test("a string template as the whole shape gives one value per record; an unresolved one gives null", () => {
    expect(run([{ a: 1 }, { b: 2 }], { template: "a" })).toEqual([1, null]);
  });

  test("record-wise: each element of an array is restructured with paths relative to it", () => {
    expect(run([{ u: { n: "A" } }, { u: { n: "B" } }], { template: { name: "u.n" } })).toEqual([{ name: "A" }, { name: "B" }]);
  });

  test("prototype-named template keys are plain output members", () => {
    const template = JSON.parse('{"__proto__": "a", "constructor": "a"}');
    const output = restructure({ a: 1 }, { template, missing: "omit" }) as Record<string, unknown>;
    expect(Object.keys(output)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(JSON.stringify(output)).toBe('{"__proto__":1,"constructor":1}');
  });

  test("bad template paths and expressions are config errors naming the leaf", () => {
    const failure = (template: unknown) => {
      try {
        restructure({}, { template, missing: "omit" });
      } catch (error) {
        return error;
      }
    };
    const badPath = failure({ a: { b: "x..y" } }) as UtilityConfigError;
    expect(badPath).toBeInstanceOf(UtilityConfigError);
    expect(badPath.path).toBe("template/a/b");
    const badExpression = failure(["{{ nope() }}"]) as UtilityConfigError;
    expect(badExpression.path).toBe("template/0");
    expect(badExpression.message).toMatch(/unknown function 'nope'/);
  });

  test("wrong input types: a primitive primary or element is a UtilityError", () => {
    expect(() => run("text", { template: { a: "a" } })).toThrow(UtilityError);
    expect(() => run([{ a: 1 }, 5], { template: { a: "a" } })).toThrow(/element 1 of primary is a number/);
  });
});
