/** The interpreter on its own: exact numbers, error pointers, the compile step's refusals. */
import { describe, expect, test } from "bun:test";
import { compileSources, metaSchemaProblems } from "../../../src/core/json-schema/check";
import type { SchemaCompileError } from "../../../src/core/json-schema/compile";
import { validateValue } from "../../../src/core/json-schema/validate";
import { isMultipleOf, parseJsonExact } from "../../../src/core/json-schema/values";

const check = (schema: string, instance: string) =>
  validateValue(compileSources([{ uri: "urn:kiln:schema:t", text: schema }], 64), parseJsonExact(instance), {
    deadline: performance.now() + 1_000,
    maxErrors: 100,
  });

describe("numbers as Kiln stores them", () => {
  test("integers past 2^53 compare exactly", () => {
    expect(check('{"maximum": 9007199254740993}', "9007199254740993").valid).toBe(true);
    expect(check('{"maximum": 9007199254740993}', "9007199254740994").valid).toBe(false);
    expect(check('{"const": 12345678901234567890}', "12345678901234567891").valid).toBe(false);
    expect(check('{"enum": [12345678901234567890]}', "12345678901234567890").valid).toBe(true);
    expect(check('{"type": "integer"}', "123456789012345678901234567890").valid).toBe(true);
  });

  test("multipleOf is decided on decimals, not binary floats", () => {
    expect(isMultipleOf(0.0075, 0.0001)).toBe(true);
    expect(isMultipleOf(19.99, 0.01)).toBe(true);
    expect(isMultipleOf(0.3, 0.1)).toBe(true);
    expect(isMultipleOf(0.31, 0.1)).toBe(false);
    expect(isMultipleOf(1e308, 0.5)).toBe(true);
    expect(check('{"multipleOf": 3}', "12345678901234567891").valid).toBe(false);
    expect(check('{"multipleOf": 3}', "12345678901234567890").valid).toBe(true);
  });

  test("1.0 is an integer and equals 1", () => {
    expect(check('{"type": "integer", "const": 1}', "1.0").valid).toBe(true);
  });
});

describe("errors point into the content and the schema", () => {
  test("path, keyword, schemaPath and message for each failure", () => {
    const outcome = check(
      '{"properties": {"items": {"items": {"$ref": "#/$defs/line"}}}, "$defs": {"line": {"required": ["sku"], "properties": {"qty": {"minimum": 1}}}}}',
      '{"items": [{"sku": "a", "qty": 0}, {"qty": 2}]}',
    );
    expect(outcome.valid).toBe(false);
    expect(outcome.errors).toEqual([
      {
        path: "/items/0/qty",
        keyword: "minimum",
        schemaPath: "/properties/items/items/$ref/properties/qty/minimum",
        message: "must be ≥ 1",
      },
      {
        path: "/items/1",
        keyword: "required",
        schemaPath: "/properties/items/items/$ref/required",
        message: 'must have the property "sku"',
      },
    ]);
  });

  test("a key with / and ~ is escaped in the pointer", () => {
    expect(check('{"additionalProperties": false}', '{"a/b~c": 1}').errors[0]).toMatchObject({
      path: "/a~1b~0c",
      keyword: "false",
      schemaPath: "/additionalProperties",
    });
  });
});

describe("compiling refuses what it cannot run, by pointer", () => {
  const problems = (schema: string) => {
    try {
      compileSources([{ uri: "urn:kiln:schema:t", text: schema }], 64);
      return [];
    } catch (error) {
      return (error as SchemaCompileError).problems.map((p) => p.pointer);
    }
  };
  test("backreferences and lookaround, unknown references", () => {
    expect(problems('{"pattern": "(?<=a)b"}')).toEqual(["/pattern"]);
    expect(problems('{"$defs": {"x": {"$ref": "other.json"}}}')).toEqual(["/$defs/x/$ref"]);
  });
  test("the meta-schema names the keyword of the wrong type", () => {
    expect(metaSchemaProblems({ type: "strin" }, performance.now() + 1_000).map((p) => p.pointer)).toContain("/type");
  });
});
