/**
 * The "record-wise" rule of utilities.md: a utility marked record-wise applies to each element when
 * `primary` is an array (paths relative to the element), otherwise to `primary` itself.
 *
 * API (stable; other utilities import it):
 *   mapRecords(primary, apply)             apply(record, index) per element, or apply(primary, null)
 *   objectRecord(record, index, utility)   the record as an object, else a UtilityError naming the
 *                                          element ("element 3 of primary is a string …")
 *   describeType(value)                    "a string", "an array", "null", … for error messages
 *   Defaulted<Config, Keys>                a config type whose defaulted fields are present: the engine
 *                                          fills defaults before `run` (types.ts), so a utility reads them
 *                                          without repeating the default values
 *   cloneJson(value, budget?)              a deep copy of JSON data (own keys only, `__proto__` kept as
 *                                          data), so a utility can mutate its copy, never its input; with
 *                                          `budget`, the copy is charged there before it is made
 */

import type { OutputBudget } from "../budget";
import { UtilityError } from "../types";
import { isObject, type JsonObject, setOwn } from "./paths";

export type Defaulted<T, K extends keyof T> = Omit<T, K> & Required<Pick<T, K>>;

export function mapRecords(primary: unknown, apply: (record: unknown, index: number | null) => unknown): unknown {
  return Array.isArray(primary) ? primary.map((record, index) => apply(record, index)) : apply(primary, null);
}

export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "missing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** A record that must be an object: an object, or an array of objects, is what the utility takes. */
export function objectRecord(record: unknown, index: number | null, utilityId: string): JsonObject {
  if (isObject(record)) return record;
  const what = index === null ? "primary" : `element ${index} of primary`;
  throw new UtilityError(`${utilityId} takes an object or an array of objects; ${what} is ${describeType(record)}`);
}

export function cloneJson<T>(value: T, budget?: OutputBudget): T {
  // a string is shared, not copied, but it is written out once more all the same
  budget?.chargeCopyOf(value);
  return copyOf(value);
}

function copyOf<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyOf((value as JsonObject)[key]));
  return copy as T;
}
