import { describe, expect, test } from "bun:test";
import { compileCondition, compileExpression, compileTemplate, MAX_RESULT_STRING_LENGTH } from "../../../src/utilities/shared/expressions";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";

const record = {
  firstName: "Jane",
  lastName: "Doe",
  price: 10,
  quantity: 5,
  age: 20,
  status: "active",
  tags: ["a", "b"],
  items: [{ sku: "X1" }, { sku: "Y2" }],
  nested: { deep: { value: 3 } },
  "first name": "J",
  text: "  Hello World  ",
  when: "2024-03-05T06:07:08Z",
  zero: 0,
  empty: "",
  nothing: null,
};
const evaluate = (source: string, scope: Record<string, unknown> = {}) =>
  compileExpression(source, "/x").evaluate({ record, root: { all: true }, ...scope });

describe("expressions: values and paths", () => {
  test.each([
    ["42", 42],
    ["-1.5", -1.5],
    ["'text'", "text"],
    ['"dq"', "dq"],
    ["true", true],
    ["false", false],
    ["null", null],
    ["firstName", "Jane"],
    ["nested.deep.value", 3],
    ["items.1.sku", "Y2"],
    ["items[0].sku", "X1"],
    ["$.price", 10],
    ['$["first name"]', "J"],
    ["$root.all", true],
    ["missing", null],
    ["missing.deeper.still", null],
    ["items.9.sku", null],
    ["tags.length", 2],
    ["firstName.length", 4],
    ["[1, price, 'x']", [1, 10, "x"]],
    ["(price + 1) * 2", 22],
  ])("%s → %p", (source, expected) => {
    expect(evaluate(source)).toEqual(expected as unknown);
  });

  test("$ is the record itself", () => {
    expect(compileExpression("$", "/x").evaluate({ record: [1, 2] })).toEqual([1, 2]);
  });

  test("extra scope members are variables (find-replace's `old`), record fields stay reachable through $", () => {
    expect(compileExpression("old.toUpperCase()", "/x").evaluate({ record: { old: "field" }, old: "match" })).toBe("MATCH");
    expect(compileExpression("$.old", "/x").evaluate({ record: { old: "field" }, old: "match" })).toBe("field");
  });

  test("member access reads own data only: inherited names give null", () => {
    expect(evaluate("firstName.toUpperCase")).toBeNull();
    expect(evaluate("nested.hasOwnProperty")).toBeNull();
    expect(evaluate("tags.map")).toBeNull();
    expect(compileExpression("__defineGetter__", "/x").evaluate({ record: {} })).toBeNull();
  });

  test("prototype-like keys in the data are plain data (read through a computed key)", () => {
    const data = JSON.parse('{"__proto__": {"x": 1}, "k": "__proto__"}');
    expect(compileExpression("$[k]", "/x").evaluate({ record: data })).toBeNull();
  });
});

describe("expressions: operators", () => {
  test.each([
    ["price * quantity", 50],
    ["price / 4", 2.5],
    ["price % 3", 1],
    ["price - quantity", 5],
    ["price + quantity", 15],
    ["firstName + ' ' + lastName", "Jane Doe"],
    ["'n=' + price", "n=10"],
    ["'x' + nothing", "x"],
    ["price + nothing", null],
    ["price * 'a'", null],
    ["1 / 0", null],
    ["0 / 0", null],
    ["-price", -10],
    ["+'7'", 7],
    ["!status", false],
    ["!missing", true],
    ["price == 10", true],
    ["price == '10'", true],
    ["price === '10'", false],
    ["price === 10", true],
    ["price != 11", true],
    ["price !== 10", false],
    ["tags == ['a', 'b']", true],
    ["price < 11", true],
    ["price <= 10", true],
    ["price > 10", false],
    ["price >= 10", true],
    ["'b' > 'a'", true],
    ["nothing < 5", false],
    ["'5' < 6", true],
    ["'x' < 6", false],
    ["[1] < 2", false],
    ['age >= 18 && status == "active"', true],
    ["zero && price", 0],
    ["zero || price", 10],
    ["missing ?? 'dflt'", "dflt"],
    ["zero ?? 1", 0],
    ["age > 18 ? 'adult' : 'minor'", "adult"],
    ["1 / 0 ?? 5", 5],
  ])("%s → %p", (source, expected) => {
    expect(evaluate(source)).toEqual(expected as unknown);
  });

  test("&& and || short-circuit (the right side is not evaluated)", () => {
    expect(evaluate("false && stringify($)")).toBe(false);
    expect(evaluate("true || stringify($)")).toBe(true);
  });
});

describe("expressions: functions and methods", () => {
  test.each([
    ["Math.abs(-3)", 3],
    ["Math.ceil(1.2)", 2],
    ["Math.floor(1.8)", 1],
    ["Math.round(2.5)", 3],
    ["Math.max(1, 7, 3)", 7],
    ["Math.min(4, 2)", 2],
    ["Math.max([4, 9])", 9],
    ["Math.sqrt(16)", 4],
    ["Math.pow(2, 10)", 1024],
    ["Math.trunc(-4.7)", -4],
    ["Math.sqrt(-1)", null],
    ["Math.abs('x')", null],
    ["Date.parse('2024-03-05T06:07:08Z')", 1709618828000],
    ["Date.parse('not a date')", null],
    ["Date.format(when, 'YYYY/MM/DD HH:mm:ss')", "2024/03/05 06:07:08"],
    ["Date.format(0, 'DD.MM.YYYY')", "01.01.1970"],
    ["Date.format(0)", "1970-01-01T00:00:00.000Z"],
    ["Date.format('nope', 'YYYY')", null],
    ["lower('AbC')", "abc"],
    ["upper('AbC')", "ABC"],
    ["trim(text)", "Hello World"],
    ["length('abc')", 3],
    ["length(tags)", 2],
    ["length(nested)", 1],
    ["concat(firstName, ' ', lastName, nothing)", "Jane Doe"],
    ["concat(tags, [1])", ["a", "b", 1]],
    ["substring('abcdef', 1, 3)", "bc"],
    ["substring('abcdef', 2)", "cdef"],
    ["replace('a-b-c', '-', '+')", "a+b+c"],
    ["replace('a.b', '.', '')", "ab"],
    ["contains('hello', 'ell')", true],
    ["contains(tags, 'b')", true],
    ["contains(tags, 'z')", false],
    ["startsWith(firstName, 'Ja')", true],
    ["endsWith(firstName, 'ne')", true],
    ["split('a,b', ',')", ["a", "b"]],
    ["join(tags, '|')", "a|b"],
    ["number('12.5')", 12.5],
    ["number('x')", null],
    ["number(true)", 1],
    ["string(12)", "12"],
    ["string(nothing)", ""],
    ["boolean('false')", false],
    ["boolean('yes')", true],
    ["boolean(0)", false],
    ["stringify(items.0)", '{"sku":"X1"}'],
    ["round(1.005, 2)", 1.01],
    ["round(-2.345, 1)", -2.3],
    ["round(2.5)", 3],
    ["round(1234, -2)", 1200],
    ["coalesce(nothing, missing, 'c', 'd')", "c"],
    ["coalesce(nothing)", null],
    ["text.trim().toUpperCase()", "HELLO WORLD"],
    ["firstName.toLowerCase()", "jane"],
    ["firstName.slice(1, 3)", "an"],
    ["firstName.includes('an')", true],
    ["tags.includes('a')", true],
    ["firstName.startsWith('J')", true],
    ["firstName.endsWith('e')", true],
    ["'a b'.split(' ')", ["a", "b"]],
    ["price.toUpperCase()", "10"],
    ["nothing.trim()", null],
  ])("%s → %p", (source, expected) => {
    expect(evaluate(source)).toEqual(expected as unknown);
  });

  test("Date.now() is fixed once per compile, so every record of a request sees the same instant", () => {
    const before = Date.now();
    const compiled = compileExpression("Date.now()", "/x");
    const first = compiled.evaluate({ record: {} }) as number;
    expect(first).toBeGreaterThanOrEqual(before);
    expect(compiled.evaluate({ record: {} })).toBe(first);
  });

  test("a string result beyond the size limit is refused instead of exhausting memory", () => {
    const big = "x".repeat(1000);
    const source = `replace(s, 'x', '${"y".repeat(100)}')`;
    const compiled = compileExpression(source, "/x");
    expect(compiled.evaluate({ record: { s: big } })).toBe("y".repeat(100_000));
    expect(() => compiled.evaluate({ record: { s: "x".repeat(MAX_RESULT_STRING_LENGTH / 50) } })).toThrow(UtilityError);
  });
});

describe("expressions: refusals at compile time", () => {
  test.each([
    ["price +", /Expected expression/],
    ["a b", /one expression/],
    ["", /empty/],
    ["   ", /empty/],
    ["foo(1)", /unknown function 'foo'/],
    ["Math.random()", /unknown function 'Math.random'/],
    ["a.push(1)", /unknown method '.push\(\)'/],
    ["a | b", /operator '\|'/],
    ["2 ** 3", /operator '\*\*'/],
    ["~a", /operator '~'/],
    ["[1,,2]", /empty slot/],
    ["f()()", /listed functions/],
  ])("%s", (source, message) => {
    let error: unknown;
    try {
      compileExpression(source, "/fields/0/expression");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UtilityConfigError);
    expect((error as UtilityConfigError).path).toBe("/fields/0/expression");
    expect((error as Error).message).toMatch(message);
  });

  test("length: 1,000 characters are accepted, 1,001 refused", () => {
    const exactly = `1${" +1".repeat(333)}`;
    expect(exactly.length).toBe(1000);
    expect(compileExpression(exactly, "/x").evaluate({ record: {} })).toBe(334);
    expect(() => compileExpression(`${exactly} `, "/x")).toThrow(/longer than 1000/);
  });

  test("nesting: 20 levels are accepted, 21 refused (parentheses, calls, unary chains, ternaries)", () => {
    const parens = (n: number) => `${"(".repeat(n)}1${")".repeat(n)}`;
    expect(compileExpression(parens(19), "/x").evaluate({ record: {} })).toBe(1);
    expect(() => compileExpression(parens(21), "/x")).toThrow(/nested deeper than 20/);
    expect(() => compileExpression(`${"!".repeat(25)}a`, "/x")).toThrow(/nested deeper than 20/);
    expect(() => compileExpression(`${"Math.abs(".repeat(22)}1${")".repeat(22)}`, "/x")).toThrow(/nested/);
    expect(() => compileExpression(`${"a ? b : ".repeat(22)}c`, "/x")).toThrow(/nested deeper than 20/);
  });

  test("long flat chains are not nesting", () => {
    const chain = Array.from({ length: 60 }, (_, i) => `v${i}`).join(" && ");
    const dotted = Array.from({ length: 30 }, () => "a").join(".");
    expect(compileExpression(chain, "/x").evaluate({ record: {} })).toBeNull();
    expect(compileExpression(dotted, "/x").evaluate({ record: {} })).toBeNull();
  });
});

describe("templates", () => {
  test.each([
    ["{{firstName}} {{lastName}}", "Jane Doe"],
    ["{{price * quantity}}", 50],
    ["{{ age > 18 }}", true],
    ["{{ items.0 }}", { sku: "X1" }],
    ["{{ nothing }}", null],
    ["n: {{ nothing }}!", "n: !"],
    ["items: {{ tags }}", 'items: ["a","b"]'],
    ["plain text", "plain text"],
    [" {{ price }}", " 10"],
    ["{{ '}}' }}", "}}"],
    ["{{price}}{{quantity}}", "105"],
  ])("%s → %p", (source, expected) => {
    expect(compileTemplate(source, "/t").evaluate({ record })).toEqual(expected as unknown);
  });

  test("dynamic tells a template from a constant string", () => {
    expect(compileTemplate("x", "/t").dynamic).toBe(false);
    expect(compileTemplate("{{x}}", "/t").dynamic).toBe(true);
  });

  test("an unclosed part or a bad expression inside is a config error naming the field", () => {
    expect(() => compileTemplate("{{ price ", "/template/a")).toThrow(UtilityConfigError);
    expect(() => compileTemplate("{{ nope() }}", "/template/a")).toThrow(/unknown function/);
  });

  test("compileCondition accepts an expression with or without {{ }}", () => {
    expect(compileCondition("{{ price > 5 }}", "/c").evaluate({ record })).toBe(true);
    expect(compileCondition("price > 50", "/c").evaluate({ record })).toBe(false);
  });
});
