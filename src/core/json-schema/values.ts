/**
 * JSON values as the schema validator sees them. Kiln stores numbers losslessly, so the validator reads
 * integers beyond 2^53 as bigints (JSON.parse's source text, only when the text has such a long digit
 * run: the common document pays nothing) and compares and divides them exactly; `multipleOf` on decimals
 * is decided on their shortest decimal form, so 0.0075 is a multiple of 0.0001.
 */

export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json };

const LONG_DIGIT_RUN = /\d{16}/;

/** JSON text to a value, integers that a double cannot hold as bigints. */
export function parseJsonExact(text: string): Json {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  return JSON.parse(text, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    if (typeof value !== "number" || !Number.isInteger(value) || Number.isSafeInteger(value)) return value;
    const source = context?.source;
    return source !== undefined && /^-?\d+$/.test(source) ? BigInt(source) : value;
  });
}

export type JsonType = "null" | "boolean" | "integer" | "number" | "string" | "array" | "object";

export const isObject = (value: unknown): value is { [key: string]: Json } =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export const isNumber = (value: unknown): value is number | bigint => typeof value === "number" || typeof value === "bigint";

export const isInteger = (value: unknown): boolean => typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value));

/** The JSON type of a value; an integer-valued number (1.0 included) is an integer. */
export function typeOf(value: Json): JsonType {
  if (value === null) return "null";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "string") return "string";
  if (isNumber(value)) return isInteger(value) ? "integer" : "number";
  return Array.isArray(value) ? "array" : "object";
}

export function hasType(value: Json, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

/** JSON equality: numbers by value whatever their form (1, 1.0, 1n), objects whatever their key order. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (isNumber(a) && isNumber(b)) {
    if (typeof a === typeof b) return a === b;
    const [big, other] = typeof a === "bigint" ? [a, b as number] : [b as bigint, a as number];
    return Number.isInteger(other) && BigInt(other) === big;
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => jsonEqual(item, b[index]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** A number as digits × 10^-scale, exactly as its shortest decimal form reads. */
function scaled(value: number | bigint): { digits: bigint; scale: number } {
  if (typeof value === "bigint") return { digits: value, scale: 0 };
  const [mantissa, exponent = "0"] = value.toString().split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  return { digits: BigInt(whole + fraction), scale: fraction.length - Number(exponent) };
}

const pow10 = (n: number) => 10n ** BigInt(n);

/** Whether `value` is an exact multiple of `divisor` (> 0): decided on decimals, never on binary floats. */
export function isMultipleOf(value: number | bigint, divisor: number | bigint): boolean {
  if (typeof value === "number" && !Number.isFinite(value)) return false;
  if (typeof divisor === "number" && !Number.isFinite(divisor)) return false;
  const x = scaled(value);
  const m = scaled(divisor);
  const scale = Math.max(x.scale, m.scale);
  const xDigits = x.digits * pow10(scale - x.scale);
  const mDigits = m.digits * pow10(scale - m.scale);
  return mDigits !== 0n && xDigits % mDigits === 0n;
}

/** Characters as JSON Schema counts them: code points, a surrogate pair is one. */
export function codePointLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        i++;
      }
    }
  }
  return length;
}

/** A JSON Pointer reference token: `~` and `/` escaped. */
export const pointerToken = (key: string | number): string =>
  typeof key === "number" ? String(key) : /[~/]/.test(key) ? key.replaceAll("~", "~0").replaceAll("/", "~1") : key;

export function unescapePointerToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}
