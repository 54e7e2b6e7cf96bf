import { describe, expect, test } from "bun:test";
import utility, { compute, configSchema } from "../../../src/utilities/schema/compute";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown>) => utility.run({ primary }, configure(configSchema, config));
const field = (target: string, expression: string) => ({ target, expression });

describe("schema.compute", () => {
  test("spec examples: interpolated string and a typed whole expression", () => {
    expect(run({ firstName: "Jane", lastName: "Doe" }, { fields: [field("fullName", "{{firstName}} {{lastName}}")] })).toEqual({
      firstName: "Jane",
      lastName: "Doe",
      fullName: "Jane Doe",
    });
    expect(run({ price: 10, quantity: 5 }, { fields: [field("total", "{{price * quantity}}")] })).toEqual({
      price: 10,
      quantity: 5,
      total: 50,
    });
  });

  test("config: fields required with at least one entry; target non-empty; unknown members refused", () => {
    expect(configErrors(configSchema, {})).toContain("/fields");
    expect(configErrors(configSchema, { fields: [] })).toContain("/fields");
    expect(configErrors(configSchema, { fields: [{ target: "", expression: "x" }] })).toContain("/fields/0/target");
    expect(configErrors(configSchema, { fields: [{ target: "a", expression: "x", extra: 1 }] })).toContain("/fields/0/extra");
    expect(configErrors(configSchema, { fields: [field("a", "x")], other: true })).toContain("/other");
  });

  test("fields run in order: a later field sees earlier results", () => {
    const output = run(
      { price: 4 },
      { fields: [field("net", "{{ price * 2 }}"), field("gross", "{{ net + 1 }}"), field("price", "{{ gross }}")] },
    );
    expect(output).toEqual({ price: 9, net: 8, gross: 9 });
  });

  test("targets are paths: nested members and missing parents are created", () => {
    expect(run({ a: 1 }, { fields: [field("meta.calc.double", "{{ a * 2 }}")] })).toEqual({ a: 1, meta: { calc: { double: 2 } } });
  });

  test("a string without {{ }} is a constant; a missing field gives null", () => {
    expect(run({}, { fields: [field("status", "new"), field("x", "{{ nope }}")] })).toEqual({ status: "new", x: null });
  });

  test("record-wise: each element is computed on its own; $root is the whole primary; the input is not changed", () => {
    const primary = [{ n: 1 }, { n: 2 }];
    expect(run(primary, { fields: [field("share", "{{ n / length($root) }}")] })).toEqual([
      { n: 1, share: 0.5 },
      { n: 2, share: 1 },
    ]);
    expect(primary).toEqual([{ n: 1 }, { n: 2 }]);
  });

  test("config errors name the field: bad target path, wildcard target, bad expression", () => {
    const pathOf = (fields: { target: string; expression: string }[]) => {
      try {
        compute({}, { fields });
      } catch (error) {
        expect(error).toBeInstanceOf(UtilityConfigError);
        return (error as UtilityConfigError).path;
      }
    };
    expect(pathOf([field("a..b", "x")])).toBe("fields/0/target");
    expect(pathOf([field("ok", "x"), field("items.*.x", "x")])).toBe("fields/1/target");
    expect(pathOf([field("ok", "{{ a +* }}")])).toBe("fields/0/expression");
  });

  test("wrong input types are a UtilityError", () => {
    expect(() => run(42, { fields: [field("a", "1")] })).toThrow(UtilityError);
    expect(() => run(["x"], { fields: [field("a", "1")] })).toThrow(/element 0 of primary is a string/);
    expect(() => run({ a: "text" }, { fields: [field("a.b", "1")] })).toThrow(UtilityError);
  });
});
