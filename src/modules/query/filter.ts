/**
 * A query's filter, read from the request's own bytes (the lossless tree, so `12345678901234567890`
 * and `1.0` keep their exact values) into conditions on fields, and checked on an index entry's values
 * (query/plan.ts). Anything not in the contract ($regex, $where, $expr, an unknown operator, an array
 * where a value belongs) is a query_invalid naming its pointer in the request body.
 */

import { ERRORS } from "../../core/error-codes";
import { type FieldError, httpError } from "../../core/errors";
import { keyValueOf } from "../../core/json/index-entries";
import { compareBytes, encodeValue, type KeyValue, stringPrefix, TAG } from "../../core/json/index-key";
import { parsePointer } from "../../core/json/patch";
import { effectiveMembers, expand, isArray, isObject, type JsonNode, type ObjectNode, readText } from "../../core/json/tree";

export type RangeOp = "$gt" | "$gte" | "$lt" | "$lte";
export type Condition =
  | { field: string; op: "$eq" | "$ne" | RangeOp; value: Uint8Array }
  | { field: string; op: "$in" | "$nin"; values: Uint8Array[] }
  | { field: string; op: "$exists"; exists: boolean }
  | { field: string; op: "$startsWith"; prefix: Uint8Array };

/** Conditions that all hold, and groups of which one branch holds each ($or). */
export interface FilterGroup {
  conditions: Condition[];
  ors: FilterGroup[][];
}

const RANGE_OPS = new Set(["$gt", "$gte", "$lt", "$lte"]);
const escapeToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");

export const queryInvalid = (errors: FieldError[]) =>
  httpError(ERRORS.query_invalid, errors.map((error) => `${error.path}: ${error.message}`).join("; "), { errors });

class Reader {
  errors: FieldError[] = [];
  fail(path: string, message: string): undefined {
    this.errors.push({ path, message });
    return undefined;
  }

  value(node: JsonNode, path: string, scalarOnly = false): Uint8Array | undefined {
    if (isArray(node)) return this.fail(path, "an array is not a value here: give one value, or $in with the values");
    if (scalarOnly && isObject(node)) return this.fail(path, "a range compares scalars (numbers, strings, booleans, null)");
    const value: KeyValue = keyValueOf(node);
    const encoded = encodeValue(value);
    if (!encoded) this.fail(path, "a number whose exponent is past 2^31");
    return encoded;
  }

  operators(field: string, object: ObjectNode, path: string, into: Condition[]) {
    for (const [op, node] of effectiveMembers(object)) {
      const at = `${path}/${escapeToken(op)}`;
      if (op === "$eq" || op === "$ne" || RANGE_OPS.has(op)) {
        const value = this.value(node, at, RANGE_OPS.has(op));
        if (value) into.push({ field, op: op as "$eq", value });
      } else if (op === "$in" || op === "$nin") {
        const list = expand(node);
        if (list.kind !== "array") {
          this.fail(at, `${op} takes an array of values`);
          continue;
        }
        const values = list.elements.map((element, i) => this.value(element.value, `${at}/${i}`));
        if (values.every((value) => value !== undefined)) into.push({ field, op, values: values as Uint8Array[] });
      } else if (op === "$exists") {
        const value = keyValueOf(node);
        if (value.type !== "boolean") this.fail(at, "$exists takes true or false");
        else into.push({ field, op, exists: value.value });
      } else if (op === "$startsWith") {
        const value = keyValueOf(node);
        if (value.type !== "string") this.fail(at, "$startsWith takes a string");
        else into.push({ field, op, prefix: stringPrefix(value.value) });
      } else
        this.fail(
          at,
          op === "$regex" || op === "$where" || op === "$expr"
            ? `${op} is not supported: a query is served by an index (docs/query.md); use $eq, $in, a range or $startsWith`
            : `unknown operator ${op}; the operators are $eq $ne $gt $gte $lt $lte $in $nin $exists $startsWith`,
        );
    }
  }

  group(node: JsonNode, path: string): FilterGroup {
    const group: FilterGroup = { conditions: [], ors: [] };
    const object = expand(node);
    if (object.kind !== "object") {
      this.fail(path, "a filter is an object");
      return group;
    }
    for (const [key, value] of effectiveMembers(object)) {
      const at = `${path}/${escapeToken(key)}`;
      if (key === "$and" || key === "$or") {
        const list = expand(value);
        if (list.kind !== "array" || list.elements.length === 0) {
          this.fail(at, `${key} takes a non-empty array of filters`);
          continue;
        }
        const branches = list.elements.map((element, i) => this.group(element.value, `${at}/${i}`));
        if (key === "$or") group.ors.push(branches);
        else
          for (const branch of branches) {
            group.conditions.push(...branch.conditions);
            group.ors.push(...branch.ors);
          }
      } else if (key.startsWith("$")) this.fail(at, `unknown operator ${key} at the top of a filter; keys are JSON Pointers, $and or $or`);
      else if (parsePointer(key) === undefined) this.fail(at, "a key is a JSON Pointer into the content, such as /price");
      else {
        const expanded = expand(value);
        if (
          expanded.kind === "object" &&
          expanded.members.length > 0 &&
          [...effectiveMembers(expanded).keys()].every((k) => k.startsWith("$"))
        )
          this.operators(key, expanded, at, group.conditions);
        else {
          const encoded = this.value(value, at);
          if (encoded) group.conditions.push({ field: key, op: "$eq", value: encoded });
        }
      }
    }
    return group;
  }
}

/**
 * The filter's text (the `filter` member of the body, as sent) as conditions; query_invalid otherwise,
 * its errors' paths under `at` (the filter's pointer in the request body).
 */
export function readFilter(bytes: Uint8Array | undefined, maxBytes: number | null, at = "/filter"): FilterGroup {
  if (!bytes) return { conditions: [], ors: [] };
  if (maxBytes !== null && bytes.length > maxBytes)
    throw queryInvalid([
      { path: at, message: `the filter takes ${bytes.length} bytes, more than the account's ${maxBytes} (maxFilterBytes)` },
    ]);
  const reader = new Reader();
  const group = reader.group(readText(bytes).root, at);
  if (reader.errors.length > 0) throw queryInvalid(reader.errors);
  return group;
}

/** Every field a filter names, in the order written. */
export function filterFields(group: FilterGroup, into = new Set<string>()): Set<string> {
  for (const condition of group.conditions) into.add(condition.field);
  for (const branches of group.ors) for (const branch of branches) filterFields(branch, into);
  return into;
}

const sameType = (a: Uint8Array, b: Uint8Array) => a[0] === b[0];

/** Whether one field's value (its ascending encoding) passes a condition: types apart, numbers exact. */
export function holds(condition: Condition, value: Uint8Array): boolean {
  switch (condition.op) {
    case "$eq":
      return compareBytes(value, condition.value) === 0;
    case "$ne":
      return compareBytes(value, condition.value) !== 0;
    case "$gt":
      return sameType(value, condition.value) && compareBytes(value, condition.value) > 0;
    case "$gte":
      return sameType(value, condition.value) && compareBytes(value, condition.value) >= 0;
    case "$lt":
      return sameType(value, condition.value) && compareBytes(value, condition.value) < 0;
    case "$lte":
      return sameType(value, condition.value) && compareBytes(value, condition.value) <= 0;
    case "$in":
      return condition.values.some((candidate) => compareBytes(value, candidate) === 0);
    case "$nin":
      return condition.values.every((candidate) => compareBytes(value, candidate) !== 0);
    case "$exists":
      return (value[0] !== TAG.missing) === condition.exists;
    case "$startsWith":
      return value.length >= condition.prefix.length && compareBytes(value.subarray(0, condition.prefix.length), condition.prefix) === 0;
  }
}

/** Whether an entry (its fields' values by pointer) passes the whole filter. */
export function entryMatches(group: FilterGroup, values: Map<string, Uint8Array>): boolean {
  return (
    group.conditions.every((condition) => holds(condition, values.get(condition.field)!)) &&
    group.ors.every((branches) => branches.some((branch) => entryMatches(branch, values)))
  );
}
