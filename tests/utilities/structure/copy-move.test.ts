import { describe, expect, test } from "bun:test";
import { configSchema, copyMove } from "../../../src/utilities/structure/copy-move";
import { UtilityError } from "../../../src/utilities/types";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown>) => copyMove(primary, configure(configSchema, config));

describe("structure.copy-move", () => {
  test("operations required; action defaults to copy; overwrite to true", () => {
    expect(configErrors(configSchema, {})).toEqual(["/operations"]);
    expect(configure(configSchema, { operations: [{ from: "a", to: "b" }] })).toEqual({
      operations: [{ from: "a", to: "b", action: "copy" }],
      overwrite: true,
    });
    expect(configErrors(configSchema, { operations: [{ from: "a", to: "b", action: "swap" }] })).toContain("/operations/0/action");
    expect(configErrors(configSchema, { operations: [{ from: "a" }] })).toEqual(["/operations/0/to"]);
    expect(configErrors(configSchema, { operations: [{ from: "a", to: "b", extra: 1 }] })).toEqual(["/operations/0/extra"]);
  });

  test("copy keeps the source; move removes it; missing parents of `to` are created", () => {
    const input = { user: { name: "Ada", mail: "a@x" } };
    expect(run(input, { operations: [{ from: "user.name", to: "profile.display.name" }] })).toEqual({
      user: { name: "Ada", mail: "a@x" },
      profile: { display: { name: "Ada" } },
    });
    expect(run(input, { operations: [{ from: "user.mail", to: "contact.email", action: "move" }] })).toEqual({
      user: { name: "Ada" },
      contact: { email: "a@x" },
    });
  });

  test("operations apply in order: a later one sees the earlier result", () => {
    expect(
      run(
        { a: 1 },
        {
          operations: [
            { from: "a", to: "b", action: "move" },
            { from: "b", to: "c" },
          ],
        },
      ),
    ).toEqual({ b: 1, c: 1 });
  });

  test("a missing `from` is skipped", () => {
    expect(
      run(
        { a: 1 },
        {
          operations: [
            { from: "nope", to: "b" },
            { from: "x.y", to: "c", action: "move" },
          ],
        },
      ),
    ).toEqual({ a: 1 });
  });

  test("overwrite false keeps an existing `to` (and a move then leaves its source)", () => {
    const input = { a: 1, b: 2 };
    expect(run(input, { operations: [{ from: "a", to: "b" }] })).toEqual({ a: 1, b: 1 });
    expect(run(input, { operations: [{ from: "a", to: "b" }], overwrite: false })).toEqual({ a: 1, b: 2 });
    expect(run(input, { operations: [{ from: "a", to: "b", action: "move" }], overwrite: false })).toEqual({ a: 1, b: 2 });
    expect(run(input, { operations: [{ from: "a", to: "c", action: "move" }], overwrite: false })).toEqual({ b: 2, c: 1 });
  });

  test("a copied value is independent of its source; copying into its own subtree works", () => {
    const output = run({ a: { x: 1 } }, { operations: [{ from: "a", to: "a.copy" }] }) as any;
    expect(output).toEqual({ a: { x: 1, copy: { x: 1 } } });
    expect(run({ a: { x: 1 } }, { operations: [{ from: "a", to: "a.inner", action: "move" }] })).toEqual({ a: { inner: { x: 1 } } });
    expect(run({ a: 1 }, { operations: [{ from: "", to: "backup" }] })).toEqual({ a: 1, backup: { a: 1 } });
  });

  test("wildcards: each wildcard of `to` takes the key matched by `from`", () => {
    const input = { items: [{ price: 1 }, { price: 2 }, { name: "no price" }] };
    expect(run(input, { operations: [{ from: "items.*.price", to: "items.*.cost", action: "move" }] })).toEqual({
      items: [{ cost: 1 }, { cost: 2 }, { name: "no price" }],
    });
    expect(run({ m: { a: { v: 1 }, b: { v: 2 } } }, { operations: [{ from: "m.*.v", to: "byKey.*" }] })).toEqual({
      m: { a: { v: 1 }, b: { v: 2 } },
      byKey: { a: 1, b: 2 },
    });
    expect(run({ l: [1, 2, 3] }, { operations: [{ from: "l[*]", to: "k.*", action: "move" }] })).toEqual({
      l: [],
      k: { "0": 1, "1": 2, "2": 3 },
    });
    expect(run({ l: [{ v: 1 }, { v: 2 }] }, { operations: [{ from: "l.*.v", to: "last" }] })).toEqual({ l: [{ v: 1 }, { v: 2 }], last: 2 });
  });

  test("escaped keys; writing into existing arrays by index", () => {
    expect(run({ "a.b": 1 }, { operations: [{ from: "a\\.b", to: "x\\*y", action: "move" }] })).toEqual({ "x*y": 1 });
    expect(run({ v: 9, l: [1] }, { operations: [{ from: "v", to: "l[1]" }] })).toEqual({ v: 9, l: [1, 9] });
  });

  test("config errors name the operation field", () => {
    const errorOf = (config: Record<string, unknown>) => {
      const error = configErrorOf(() => run({ a: 1 }, config));
      return typeof error === "string" ? error : error.path;
    };
    expect(
      errorOf({
        operations: [
          { from: "a", to: "b" },
          { from: "a..b", to: "c" },
        ],
      }),
    ).toBe("operations/1/from");
    expect(errorOf({ operations: [{ from: "a", to: "" }] })).toBe("operations/0/to");
    expect(errorOf({ operations: [{ from: "a", to: "b.*" }] })).toBe("operations/0/to");
    expect(errorOf({ operations: [{ from: "$", to: "b", action: "move" }] })).toBe("operations/0/from");
  });

  test("record-wise, empty inputs and wrong types", () => {
    expect(run([{ a: 1 }, { b: 2 }], { operations: [{ from: "a", to: "z" }] })).toEqual([{ a: 1, z: 1 }, { b: 2 }]);
    expect(run([], { operations: [{ from: "a", to: "z" }] })).toEqual([]);
    expect(run({}, { operations: [] })).toEqual({});
    expect(() => run("x", { operations: [] })).toThrow(UtilityError);
    expect(() => run({ a: 1, b: "s" }, { operations: [{ from: "a", to: "b.c" }] })).toThrow("'b' is a string");
  });

  test("prototype-named keys are data; the input is not mutated", () => {
    const input = { a: { x: 1 } };
    const output = run(input, {
      operations: [
        { from: "a", to: "__proto__.polluted" },
        { from: "a", to: "constructor.prototype" },
      ],
    });
    expect(JSON.stringify(output)).toBe('{"a":{"x":1},"__proto__":{"polluted":{"x":1}},"constructor":{"prototype":{"x":1}}}');
    expect(({} as any).polluted).toBeUndefined();
    expect(input).toEqual({ a: { x: 1 } });
  });
});
