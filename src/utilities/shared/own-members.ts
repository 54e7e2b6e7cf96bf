/**
 * Own-member access and structural equality of JSON values (re-exported by paths.ts, whose API they
 * belong to): reads check own properties, writes never reach a prototype.
 */
export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);
export const isContainer = (value: unknown): value is JsonObject | unknown[] => value !== null && typeof value === "object";
export const hasOwn = (object: object, key: string): boolean => Object.hasOwn(object, key);
export const getOwn = (object: JsonObject, key: string): unknown => (hasOwn(object, key) ? object[key] : undefined);

/** `object[key] = value` that defines an own data property even for `__proto__`. */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/** Structural equality of JSON values (there is no identity in JSON; key order does not count). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((element, index) => deepEqual(element, b[index]));
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  return aKeys.every((key) => hasOwn(b, key) && deepEqual((a as JsonObject)[key], (b as JsonObject)[key]));
}
