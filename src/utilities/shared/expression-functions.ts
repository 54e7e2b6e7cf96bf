/**
 * The function library of the expression language (expressions.ts): plain values in, plain values
 * out. Wrong argument types give null.
 */

import { build, derived, isPlainObject, joined, splitCounted, textOf, toBoolean, toNumber, toText } from "./expression-values";
import { deepEqual } from "./paths";

const str = (value: unknown): string | null =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : null;
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const stringOp =
  (operation: (text: string, ...args: unknown[]) => unknown) =>
  (value: unknown, ...args: unknown[]) => {
    const text = str(value);
    return text === null ? null : operation(text, ...args);
  };
const mathOp =
  (operation: (...values: number[]) => number) =>
  (...args: unknown[]) => {
    const values = args.map(num);
    return values.some((value) => value === null) ? null : operation(...(values as number[]));
  };
const extremum =
  (operation: (...values: number[]) => number) =>
  (...args: unknown[]) => {
    const values = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
    return values.length === 0 ? null : mathOp(operation)(...values);
  };

/** Literal (never regex) replacement of every occurrence; the result size is checked before it is built. */
function replaceAll(text: string, search: unknown, replacement: unknown): string {
  const needle = toText(search);
  const substitute = toText(replacement);
  if (needle === "") return text;
  const pieces = splitCounted(text, needle);
  return joined(pieces, substitute);
}

function roundTo(value: unknown, digits: unknown = 0): number | null {
  const x = num(value);
  const places = digits === undefined || digits === null ? 0 : num(digits);
  if (x === null || places === null || !Number.isInteger(places) || Math.abs(places) > 15) return null;
  // exponent arithmetic on the decimal text avoids 1.005 * 100 = 100.49999…
  const shifted = Math.round(Number(`${Math.abs(x)}e${places}`));
  return Math.sign(x) * Number(`${shifted}e${-places}`);
}

function toTime(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string") return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

export function formatDate(value: unknown, format: unknown): string | null {
  const time = toTime(value);
  if (time === null || Math.abs(time) > 8.64e15) return null;
  const date = new Date(time);
  if (format === undefined || format === null) return date.toISOString();
  if (typeof format !== "string") return null;
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const tokens: Record<string, string> = {
    YYYY: pad(date.getUTCFullYear(), 4),
    MM: pad(date.getUTCMonth() + 1),
    DD: pad(date.getUTCDate()),
    HH: pad(date.getUTCHours()),
    mm: pad(date.getUTCMinutes()),
    ss: pad(date.getUTCSeconds()),
  };
  return format.replace(/YYYY|MM|DD|HH|mm|ss/g, (token) => tokens[token]);
}

type Fn = (...args: unknown[]) => unknown;

export const FUNCTIONS: Readonly<Record<string, Fn>> = Object.freeze(
  Object.assign(Object.create(null), {
    lower: stringOp((text) => derived(text.toLowerCase())),
    upper: stringOp((text) => derived(text.toUpperCase())),
    trim: stringOp((text) => text.trim()),
    length: (value: unknown) =>
      typeof value === "string" || Array.isArray(value) ? value.length : isPlainObject(value) ? Object.keys(value).length : null,
    concat: (...args: unknown[]) => {
      if (args.length > 0 && args.every(Array.isArray)) {
        build((args as unknown[][]).reduce((sum, items) => sum + items.length, 0));
        return ([] as unknown[]).concat(...args);
      }
      return joined(args.map(textOf), "");
    },
    substring: stringOp((text, start, end) => text.substring(num(start) ?? 0, num(end) ?? undefined)),
    replace: stringOp((text, search, replacement) => replaceAll(text, search, replacement)),
    contains: (haystack: unknown, needle: unknown) =>
      Array.isArray(haystack) ? haystack.some((item) => deepEqual(item, needle)) : (str(haystack)?.includes(toText(needle)) ?? false),
    startsWith: (value: unknown, prefix: unknown) => str(value)?.startsWith(toText(prefix)) ?? false,
    endsWith: (value: unknown, suffix: unknown) => str(value)?.endsWith(toText(suffix)) ?? false,
    split: stringOp((text, separator) => splitCounted(text, separator === undefined ? "," : toText(separator))),
    join: (items: unknown, separator: unknown) =>
      Array.isArray(items) ? joined(items.map(textOf), separator === undefined ? "," : toText(separator)) : null,
    number: toNumber,
    string: toText,
    boolean: toBoolean,
    stringify: (value: unknown) => derived(value !== null && typeof value === "object" ? textOf(value) : JSON.stringify(value ?? null)),
    round: roundTo,
    coalesce: (...args: unknown[]) => args.find((value) => value !== null && value !== undefined) ?? null,
  }),
);

export const NAMESPACES: Readonly<Record<string, Readonly<Record<string, Fn>>>> = Object.freeze(
  Object.assign(Object.create(null), {
    Math: Object.freeze(
      Object.assign(Object.create(null), {
        abs: mathOp(Math.abs),
        ceil: mathOp(Math.ceil),
        floor: mathOp(Math.floor),
        round: mathOp(Math.round),
        sqrt: mathOp(Math.sqrt),
        pow: mathOp(Math.pow),
        trunc: mathOp(Math.trunc),
        max: extremum(Math.max),
        min: extremum(Math.min),
      }),
    ),
    Date: Object.freeze(
      Object.assign(Object.create(null), {
        parse: toTime,
        format: formatDate,
      }),
    ),
  }),
);

/** Methods callable on a string receiver (`includes` and `slice` also on arrays). */
export const METHODS: Readonly<Record<string, (receiver: unknown, args: unknown[]) => unknown>> = Object.freeze(
  Object.assign(Object.create(null), {
    toUpperCase: (receiver: unknown) => FUNCTIONS.upper(receiver),
    toLowerCase: (receiver: unknown) => FUNCTIONS.lower(receiver),
    trim: (receiver: unknown) => str(receiver)?.trim() ?? null,
    slice: (receiver: unknown, [start, end]: unknown[]) =>
      typeof receiver === "string" || Array.isArray(receiver) ? receiver.slice(num(start) ?? 0, num(end) ?? undefined) : null,
    includes: (receiver: unknown, [needle]: unknown[]) =>
      Array.isArray(receiver)
        ? receiver.some((item) => deepEqual(item, needle))
        : typeof receiver === "string"
          ? receiver.includes(toText(needle))
          : null,
    startsWith: (receiver: unknown, [prefix]: unknown[]) => (typeof receiver === "string" ? receiver.startsWith(toText(prefix)) : null),
    endsWith: (receiver: unknown, [suffix]: unknown[]) => (typeof receiver === "string" ? receiver.endsWith(toText(suffix)) : null),
    split: (receiver: unknown, [separator]: unknown[]) => (typeof receiver === "string" ? FUNCTIONS.split(receiver, separator) : null),
  }),
);
