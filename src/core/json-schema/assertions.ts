/**
 * The validation vocabulary of JSON Schema 2020-12 (type, enum, const, the numeric, string, array and
 * object bounds, required, dependentRequired): assertions on one value that look at no subschema. The
 * interpreter (./validate.ts) calls them for each schema object it evaluates.
 */

import type { CompiledSchema } from "./compile";
import { codePointLength, hasType, isMultipleOf, isNumber, isObject, type Json, jsonEqual, typeOf } from "./values";

/** A canonical text of a value, equal for values JSON Schema calls equal (1, 1.0 and 1n; any key order). */
function canonical(value: Json): string {
  if (isNumber(value)) return Number.isInteger(value) || typeof value === "bigint" ? `n${BigInt(value)}` : `n${value}`;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
    .join(",")}}`;
}

const show = (value: Json): string => (typeof value === "bigint" ? String(value) : (JSON.stringify(value) ?? String(value)));

/** The validation vocabulary's assertions; true when evaluation can stop. */
export function validationKeywords(
  schema: { [key: string]: Json },
  value: Json,
  patterns: CompiledSchema["patterns"],
  fail: (keyword: string, message: string) => boolean,
): boolean {
  const type = schema.type;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    if (
      !types.some((t) => typeof t === "string" && hasType(value, t)) &&
      fail("type", `must be of type ${types.join(" or ")}, not ${typeOf(value)}`)
    )
      return true;
  }
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((item) => jsonEqual(item, value)) &&
    fail("enum", "must be one of the values in enum")
  )
    return true;
  if (schema.const !== undefined && !jsonEqual(schema.const, value) && fail("const", `must be ${show(schema.const)}`)) return true;
  if (isNumber(value)) {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
    if (isNumber(minimum) && value < minimum && fail("minimum", `must be ≥ ${String(minimum)}`)) return true;
    if (isNumber(maximum) && value > maximum && fail("maximum", `must be ≤ ${String(maximum)}`)) return true;
    if (isNumber(exclusiveMinimum) && value <= exclusiveMinimum && fail("exclusiveMinimum", `must be > ${String(exclusiveMinimum)}`))
      return true;
    if (isNumber(exclusiveMaximum) && value >= exclusiveMaximum && fail("exclusiveMaximum", `must be < ${String(exclusiveMaximum)}`))
      return true;
    if (isNumber(multipleOf) && !isMultipleOf(value, multipleOf) && fail("multipleOf", `must be a multiple of ${String(multipleOf)}`))
      return true;
  }
  if (typeof value === "string") {
    const { minLength, maxLength } = schema;
    const length = isNumber(minLength) || isNumber(maxLength) ? codePointLength(value) : 0;
    if (isNumber(minLength) && length < minLength && fail("minLength", `must be at least ${String(minLength)} characters long`))
      return true;
    if (isNumber(maxLength) && length > maxLength && fail("maxLength", `must be at most ${String(maxLength)} characters long`)) return true;
    if (
      typeof schema.pattern === "string" &&
      !patterns.get(schema.pattern)?.test(value) &&
      fail("pattern", `must match the pattern ${schema.pattern}`)
    )
      return true;
  }
  if (Array.isArray(value)) {
    const { minItems, maxItems } = schema;
    if (isNumber(minItems) && value.length < minItems && fail("minItems", `must have at least ${String(minItems)} items`)) return true;
    if (isNumber(maxItems) && value.length > maxItems && fail("maxItems", `must have at most ${String(maxItems)} items`)) return true;
    if (schema.uniqueItems === true) {
      const seen = new Map<string, number>();
      for (let i = 0; i < value.length; i++) {
        const key = canonical(value[i]);
        const first = seen.get(key);
        if (first !== undefined) {
          if (fail("uniqueItems", `must not repeat items: items ${first} and ${i} are equal`)) return true;
          break;
        }
        seen.set(key, i);
      }
    }
  }
  if (isObject(value)) {
    const { minProperties, maxProperties } = schema;
    const count = isNumber(minProperties) || isNumber(maxProperties) ? Object.keys(value).length : 0;
    if (isNumber(minProperties) && count < minProperties && fail("minProperties", `must have at least ${String(minProperties)} properties`))
      return true;
    if (isNumber(maxProperties) && count > maxProperties && fail("maxProperties", `must have at most ${String(maxProperties)} properties`))
      return true;
    if (Array.isArray(schema.required))
      for (const key of schema.required)
        if (typeof key === "string" && !Object.hasOwn(value, key) && fail("required", `must have the property ${JSON.stringify(key)}`))
          return true;
    if (isObject(schema.dependentRequired))
      for (const [key, needed] of Object.entries(schema.dependentRequired))
        if (Object.hasOwn(value, key) && Array.isArray(needed))
          for (const other of needed)
            if (
              typeof other === "string" &&
              !Object.hasOwn(value, other) &&
              fail("dependentRequired", `must have the property ${JSON.stringify(other)} when it has ${JSON.stringify(key)}`)
            )
              return true;
  }
  return false;
}
