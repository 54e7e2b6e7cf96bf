/**
 * Writing user-supplied keys onto plain objects. `obj[key] = v` with key `__proto__` would replace the
 * object's prototype instead of creating a member; JSON keys are data, so they are always defined as
 * own properties.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** A plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
