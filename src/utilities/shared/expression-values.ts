/**
 * Values of the expression language (expressions.ts): JSON-only results, coercions, equality and
 * ordering, arithmetic, and the per-evaluation allowance.
 *
 * Work bound: one evaluation (an expression, or a template with all its parts) builds at most
 * MAX_RESULT_STRING_LENGTH characters and array elements in all, counted before each string or array
 * is made when its size follows from its parts (concat, join, replace, split, stringify, templates),
 * so that no expression of 1,000 characters can allocate gigabytes (`join(split(s, ""), s)`). That
 * bound is per evaluation; what a run does in all its evaluations is bounded by the run's WorkBudget
 * (utilities/budget.ts), checked at each evaluation and at each string or array built.
 */
import { jsonSizeOf, type WorkBudget } from "../budget";
import { UtilityError } from "../types";
import { deepEqual } from "./paths";

/** characters and array elements one evaluation may build, all its strings and arrays together */
export const MAX_RESULT_STRING_LENGTH = 16 * 1024 * 1024;

export const FORBIDDEN_NAMES = new Set(["__proto__", "prototype", "constructor"]);

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** JSON-only results: undefined, NaN and ±Infinity become null. */
export function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  return value;
}

export function truthy(value: unknown): boolean {
  return Boolean(value);
}

/** How a value reads inside text: null as "", objects and arrays as JSON. */
export function toText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * The allowance of the evaluation under way, and the run's budget. Evaluation is synchronous, so one
 * counter serves: the outermost evaluate() resets it, and a template's parts count towards their template.
 */
let evaluating = 0;
let built = 0;
let runBudget: WorkBudget | undefined;

export function counted<T>(work: WorkBudget | undefined, run: () => T): T {
  if (evaluating === 0) {
    built = 0;
    runBudget = work;
    work?.check();
  }
  evaluating++;
  try {
    return run();
  } finally {
    evaluating--;
  }
}

/** An evaluation passed its own bound: a budget stop, which costs the run its credit (unlike other data failures). */
export class ExpressionTooLargeError extends UtilityError {
  constructor() {
    super(`an expression built more than ${MAX_RESULT_STRING_LENGTH} characters and array elements in one evaluation`);
  }
}

const tooLarge = () => new ExpressionTooLargeError();

/** Counts `units` characters or elements about to be built. */
export function build(units: number): void {
  built += units;
  if (built > MAX_RESULT_STRING_LENGTH) throw tooLarge();
  runBudget?.check();
}

/** A string made by `+`: a rope of its operands, costing no copy until used, so only its own length is capped. */
function limitedString(value: string): string {
  if (value.length > MAX_RESULT_STRING_LENGTH) throw tooLarge();
  runBudget?.check();
  return value;
}

/** toText, measuring an object before serialising it, against what the evaluation has left. */
export function textOf(value: unknown): string {
  if (value !== null && typeof value === "object") {
    const left = MAX_RESULT_STRING_LENGTH - built;
    if (jsonSizeOf(value, left) > left) throw tooLarge();
  }
  return toText(value);
}

/** Texts joined by `separator`, counted before the join. */
export function joined(texts: readonly string[], separator: string): string {
  let length = Math.max(0, texts.length - 1) * separator.length;
  for (const text of texts) length += text.length;
  build(length);
  return texts.join(separator);
}

/** A split that stops at what the evaluation has left instead of making millions of pieces first. */
export function splitCounted(text: string, separator: string): string[] {
  const pieces = text.split(separator, MAX_RESULT_STRING_LENGTH - built + 1);
  build(pieces.length);
  return pieces;
}

/** A string made by a function from one other string (case changes): counted once made. */
export function derived(text: string): string {
  build(text.length);
  return text;
}

export function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && value.trim() !== "") {
    const parsed = Number(value.trim());
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

const FALSE_WORDS = new Set(["", "false", "0", "no", "n", "off"]);
export function toBoolean(value: unknown): boolean {
  if (typeof value === "string") return !FALSE_WORDS.has(value.trim().toLowerCase());
  return Boolean(value);
}

/** `==`: structural equality, where a number also equals a string holding that number (`5 == "5"`). */
export function looseEqual(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "string") return toNumber(b) === a;
  if (typeof a === "string" && typeof b === "number") return toNumber(a) === b;
  return deepEqual(a, b);
}

/** Own members of JSON data only: an object's own key, an array's index or length, a string's length. */
export function member(target: unknown, key: unknown): unknown {
  if (typeof key === "number") key = String(key);
  if (typeof key !== "string" || FORBIDDEN_NAMES.has(key)) return null;
  if (Array.isArray(target) || typeof target === "string") {
    if (key === "length") return target.length;
    if (!/^(0|[1-9]\d*)$/.test(key)) return null;
    return Array.isArray(target) ? jsonValue(target[Number(key)]) : (target[Number(key)] ?? null);
  }
  if (isPlainObject(target) && Object.hasOwn(target, key)) return jsonValue(target[key]);
  return null;
}

export type Comparison = "<" | "<=" | ">" | ">=";

/**
 * Ordering: two numbers, two strings (code-unit order), or a number and a string holding a number
 * (as `==` treats them); any other pair is not ordered and every comparison is false.
 */
export function compareValues(operator: Comparison, a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "string") b = toNumber(b);
  else if (typeof a === "string" && typeof b === "number") a = toNumber(a);
  const comparable = (typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string");
  if (!comparable) return false;
  const [x, y] = [a as number | string, b as number | string];
  switch (operator) {
    case "<":
      return x < y;
    case "<=":
      return x <= y;
    case ">":
      return x > y;
    default:
      return x >= y;
  }
}

export function arithmetic(operator: string, a: unknown, b: unknown): unknown {
  if (operator === "+") {
    if (typeof a === "number" && typeof b === "number") return a + b;
    if (typeof a === "string" || typeof b === "string") {
      const textual = (value: unknown) => value === null || typeof value !== "object";
      return textual(a) && textual(b) ? limitedString(toText(a) + toText(b)) : null;
    }
    return null;
  }
  if (typeof a !== "number" || typeof b !== "number") return null;
  switch (operator) {
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return a / b;
    default:
      return a % b;
  }
}
