/**
 * The safe expression language of utilities.md "Expressions" (schema.compute, generate.filter,
 * structure.restructure, find-replace templates). Source text is parsed by `jsep` into a tree, the tree
 * is checked once (length, nesting, node kinds, operators, function names, forbidden names) and turned
 * into closures; evaluating those closures only ever reads own members of JSON data and calls the
 * whitelisted functions below. Nothing is ever handed to eval, Function or vm, and no value produced
 * here is ever a function or a host object, so no expression can reach a prototype or a global.
 *
 * Errors: every refusal of the source is a UtilityConfigError (400 before anything runs) naming the
 * config field. Evaluation never throws for data reasons: a missing field, a wrong type or a result
 * that is not JSON (NaN, Infinity) gives null.
 *
 * Work bound: one evaluation (an expression, or a template with all its parts) builds at most
 * MAX_RESULT_STRING_LENGTH characters and array elements in all, counted before each string or array
 * is made when its size follows from its parts (concat, join, replace, split, stringify, templates),
 * so that no expression of 1,000 characters can allocate gigabytes (`join(split(s, ""), s)`). That
 * bound is per evaluation; what a run does in all its evaluations is bounded by the run's WorkBudget
 * (utilities/budget.ts), checked at each evaluation and at each string or array built.
 */
import jsep from "jsep";
import { jsonSizeOf, type WorkBudget } from "../budget";
import { UtilityConfigError, UtilityError } from "../types";
import { deepEqual } from "./paths";

export const MAX_EXPRESSION_LENGTH = 1_000;
export const MAX_EXPRESSION_DEPTH = 20;
/** characters and array elements one evaluation may build, all its strings and arrays together */
export const MAX_RESULT_STRING_LENGTH = 16 * 1024 * 1024;

/**
 * What an expression sees: `record` (the identifiers and `$`), `root` (`$root`, the whole primary) and
 * any further member as a variable of that name (e.g. `old`, the matched text of find-replace).
 */
export interface ExpressionScope {
  record: unknown;
  root?: unknown;
  [variable: string]: unknown;
}

export interface CompiledExpression {
  readonly source: string;
  /** `work`: the run's budget, checked as the evaluation goes */
  evaluate(scope: ExpressionScope, work?: WorkBudget): unknown;
}

type Evaluator = (scope: ExpressionScope) => unknown;
type Node = jsep.Expression;

const FORBIDDEN_NAMES = new Set(["__proto__", "prototype", "constructor"]);
/**
 * Names of host objects. Identifiers only ever read the record, so these could not reach anything
 * anyway; they are refused so that an attempt fails loudly instead of quietly giving null.
 */
const HOST_NAMES = new Set([
  "this",
  "globalThis",
  "global",
  "window",
  "self",
  "process",
  "Bun",
  "Deno",
  "require",
  "module",
  "exports",
  "Function",
  "eval",
  "import",
  "Reflect",
  "Proxy",
  "Object",
  "Symbol",
]);
const BINARY_OPERATORS = new Set(["+", "-", "*", "/", "%", "==", "!=", "===", "!==", "<", "<=", ">", ">=", "&&", "||", "??"]);
const UNARY_OPERATORS = new Set(["!", "-", "+"]);

// ---------------------------------------------------------------------------------------------
// Values

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** JSON-only results: undefined, NaN and ±Infinity become null. */
function jsonValue(value: unknown): unknown {
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

function counted<T>(work: WorkBudget | undefined, run: () => T): T {
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
function build(units: number): void {
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
function textOf(value: unknown): string {
  if (value !== null && typeof value === "object") {
    const left = MAX_RESULT_STRING_LENGTH - built;
    if (jsonSizeOf(value, left) > left) throw tooLarge();
  }
  return toText(value);
}

/** Texts joined by `separator`, counted before the join. */
function joined(texts: readonly string[], separator: string): string {
  let length = Math.max(0, texts.length - 1) * separator.length;
  for (const text of texts) length += text.length;
  build(length);
  return texts.join(separator);
}

/** A split that stops at what the evaluation has left instead of making millions of pieces first. */
function splitCounted(text: string, separator: string): string[] {
  const pieces = text.split(separator, MAX_RESULT_STRING_LENGTH - built + 1);
  build(pieces.length);
  return pieces;
}

/** A string made by a function from one other string (case changes): counted once made. */
function derived(text: string): string {
  build(text.length);
  return text;
}

function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && value.trim() !== "") {
    const parsed = Number(value.trim());
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

const FALSE_WORDS = new Set(["", "false", "0", "no", "n", "off"]);
function toBoolean(value: unknown): boolean {
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
function member(target: unknown, key: unknown): unknown {
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

function arithmetic(operator: string, a: unknown, b: unknown): unknown {
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

// ---------------------------------------------------------------------------------------------
// Functions: plain values in, plain values out. Wrong argument types give null.

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

const FUNCTIONS: Readonly<Record<string, Fn>> = Object.freeze(
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

const NAMESPACES: Readonly<Record<string, Readonly<Record<string, Fn>>>> = Object.freeze(
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
const METHODS: Readonly<Record<string, (receiver: unknown, args: unknown[]) => unknown>> = Object.freeze(
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

// ---------------------------------------------------------------------------------------------
// Source checks done before parsing

/**
 * One pass over the source outside string literals: refuses brackets nested deeper than the limit
 * (jsep drops parentheses from its tree, so they are counted here) and rewrites index segments of
 * dotted paths (`items.0.sku`, which jsep cannot read) as `items[0].sku`.
 */
function prepareSource(source: string, fail: (message: string) => never): string {
  let out = "";
  let depth = 0;
  let previous: "name" | "close" | "other" = "other";
  for (let i = 0; i < source.length; ) {
    const char = source[i];
    if (char === '"' || char === "'") {
      let end = i + 1;
      while (end < source.length && source[end] !== char) end += source[end] === "\\" ? 2 : 1;
      out += source.slice(i, end + 1);
      i = end + 1;
      previous = "other";
    } else if (/[A-Za-z_$]/.test(char)) {
      const name = /^[A-Za-z_$][\w$]*/.exec(source.slice(i))![0];
      out += name;
      i += name.length;
      previous = "name";
    } else if (/\d/.test(char) || (char === "." && /\d/.test(source[i + 1] ?? "") && previous === "other")) {
      const number = /^(\d*\.?\d*(e[+-]?\d+)?)/i.exec(source.slice(i))![0];
      out += number;
      i += number.length;
      previous = "other";
    } else if (char === "." && previous !== "other" && /^\.\d+(?![\w$])/.test(source.slice(i))) {
      const index = /^\.(\d+)/.exec(source.slice(i))!;
      out += `[${index[1]}]`;
      i += index[0].length;
      previous = "close";
    } else {
      if (char === "(" || char === "[") depth++;
      if (char === ")" || char === "]") depth--;
      if (depth > MAX_EXPRESSION_DEPTH) fail(`the expression is nested deeper than ${MAX_EXPRESSION_DEPTH} levels`);
      out += char;
      i++;
      if (!/\s/.test(char)) previous = char === ")" || char === "]" ? "close" : "other";
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tree → closures

class Compiler {
  constructor(
    private readonly fail: (message: string) => never,
    private readonly now: number,
  ) {}

  /**
   * `depth` counts nesting. Chains stay at their parent's level (the left operand of a binary operator,
   * the object of a member access or method call), so `a && b && c …` and `a.b.c.d …` are flat.
   */
  compile(node: Node, depth: number): Evaluator {
    if (depth > MAX_EXPRESSION_DEPTH) this.fail(`the expression is nested deeper than ${MAX_EXPRESSION_DEPTH} levels`);
    switch (node.type) {
      case "Literal":
        return this.literal(node as jsep.Literal);
      case "Identifier":
        return this.identifier((node as jsep.Identifier).name);
      case "MemberExpression":
        return this.member(node as jsep.MemberExpression, depth);
      case "CallExpression":
        return this.call(node as jsep.CallExpression, depth);
      case "UnaryExpression":
        return this.unary(node as jsep.UnaryExpression, depth);
      case "BinaryExpression":
        return this.binary(node as jsep.BinaryExpression, depth);
      case "ConditionalExpression": {
        const { test, consequent, alternate } = node as jsep.ConditionalExpression;
        const [ifTest, ifTrue, ifFalse] = [test, consequent, alternate].map((part) => this.compile(part, depth + 1));
        return (scope) => (truthy(ifTest(scope)) ? ifTrue(scope) : ifFalse(scope));
      }
      case "ArrayExpression": {
        const elements = (node as jsep.ArrayExpression).elements.map((element) => {
          if (element === null) this.fail("an array literal has an empty slot");
          return this.compile(element, depth + 1);
        });
        return (scope) => elements.map((element) => element(scope));
      }
      case "ThisExpression":
        return this.fail("'this' is not available in expressions");
      case "Compound":
        return this.fail("expected one expression (found several, or none)");
      default:
        return this.fail(`${node.type} is not supported in expressions`);
    }
  }

  private literal(node: jsep.Literal): Evaluator {
    const value = node.value;
    if (value !== null && !["string", "number", "boolean"].includes(typeof value)) this.fail(`unsupported literal ${node.raw}`);
    const constant = jsonValue(value);
    return () => constant;
  }

  private checkName(name: string): void {
    if (FORBIDDEN_NAMES.has(name)) this.fail(`'${name}' is not allowed in expressions`);
  }

  private identifier(name: string): Evaluator {
    this.checkName(name);
    if (HOST_NAMES.has(name)) this.fail(`'${name}' is not available in expressions (a field of that name is read as $["${name}"])`);
    if (name === "$") return (scope) => jsonValue(scope.record);
    if (name === "$root") return (scope) => jsonValue(scope.root);
    return (scope) =>
      name !== "record" && name !== "root" && Object.hasOwn(scope, name) ? jsonValue(scope[name]) : member(scope.record, name);
  }

  private propertyKey(node: jsep.MemberExpression, depth: number): Evaluator {
    if (!node.computed) {
      const name = (node.property as jsep.Identifier).name;
      this.checkName(name);
      return () => name;
    }
    if (node.property.type === "Literal") this.checkName(String((node.property as jsep.Literal).value));
    return this.compile(node.property, depth + 1);
  }

  private member(node: jsep.MemberExpression, depth: number): Evaluator {
    const object = this.compile(node.object, depth);
    const key = this.propertyKey(node, depth);
    return (scope) => member(object(scope), key(scope));
  }

  private call(node: jsep.CallExpression, depth: number): Evaluator {
    const args = node.arguments.map((argument) => this.compile(argument, depth + 1));
    const evaluateArgs = (scope: ExpressionScope) => args.map((argument) => argument(scope));
    const callee = node.callee;
    if (callee.type === "Identifier") {
      const name = (callee as jsep.Identifier).name;
      this.checkName(name);
      const fn = FUNCTIONS[name];
      if (!fn) this.fail(`unknown function '${name}'`);
      return (scope) => jsonValue(fn(...evaluateArgs(scope)));
    }
    if (callee.type === "MemberExpression" && !(callee as jsep.MemberExpression).computed) {
      const { object, property } = callee as jsep.MemberExpression;
      const name = (property as jsep.Identifier).name;
      this.checkName(name);
      if (object.type === "Identifier" && (object as jsep.Identifier).name in NAMESPACES) {
        const namespace = (object as jsep.Identifier).name;
        if (namespace === "Date" && name === "now") {
          const now = this.now;
          return () => now;
        }
        const fn = NAMESPACES[namespace][name];
        if (!fn) this.fail(`unknown function '${namespace}.${name}'`);
        return (scope) => jsonValue(fn(...evaluateArgs(scope)));
      }
      const receiver = this.compile(object, depth);
      const method = METHODS[name];
      if (!method) this.fail(`unknown method '.${name}()'`);
      return (scope) => jsonValue(method(receiver(scope), evaluateArgs(scope)));
    }
    return this.fail("only the listed functions can be called");
  }

  private unary(node: jsep.UnaryExpression, depth: number): Evaluator {
    if (!UNARY_OPERATORS.has(node.operator)) this.fail(`operator '${node.operator}' is not supported`);
    const argument = this.compile(node.argument, depth + 1);
    switch (node.operator) {
      case "!":
        return (scope) => !truthy(argument(scope));
      case "-":
        return (scope) => {
          const value = argument(scope);
          return typeof value === "number" ? jsonValue(-value) : null;
        };
      default:
        return (scope) => toNumber(argument(scope));
    }
  }

  private binary(node: jsep.BinaryExpression, depth: number): Evaluator {
    const operator = node.operator;
    if (!BINARY_OPERATORS.has(operator)) this.fail(`operator '${operator}' is not supported`);
    const left = this.compile(node.left, depth);
    const right = this.compile(node.right, depth + 1);
    switch (operator) {
      case "&&":
        return (scope) => {
          const value = left(scope);
          return truthy(value) ? right(scope) : value;
        };
      case "||":
        return (scope) => {
          const value = left(scope);
          return truthy(value) ? value : right(scope);
        };
      case "??":
        return (scope) => left(scope) ?? right(scope);
      case "===":
        return (scope) => deepEqual(left(scope), right(scope));
      case "!==":
        return (scope) => !deepEqual(left(scope), right(scope));
      case "==":
        return (scope) => looseEqual(left(scope), right(scope));
      case "!=":
        return (scope) => !looseEqual(left(scope), right(scope));
      case "<":
      case "<=":
      case ">":
      case ">=":
        return (scope) => compareValues(operator, left(scope), right(scope));
      default:
        return (scope) => jsonValue(arithmetic(operator, left(scope), right(scope)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Compiles one expression (without `{{ }}`). `fieldPath` names the config field in errors, as a
 * path relative to the config, as paths.ts names them (e.g. `fields/0/expression`).
 */
export function compileExpression(source: string, fieldPath: string): CompiledExpression {
  const fail = (message: string): never => {
    throw new UtilityConfigError(fieldPath, `invalid expression: ${message}`);
  };
  if (typeof source !== "string") fail("an expression must be a string");
  if (source.length > MAX_EXPRESSION_LENGTH) fail(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  if (source.trim() === "") fail("the expression is empty");
  const prepared = prepareSource(source, fail);
  let tree: Node;
  try {
    tree = jsep(prepared);
  } catch (error) {
    return fail((error as Error).message);
  }
  const evaluator = new Compiler(fail, Date.now()).compile(tree, 1);
  return { source, evaluate: (scope, work) => counted(work, () => jsonValue(evaluator(scope))) };
}

export interface CompiledTemplate {
  readonly source: string;
  /** true when the template holds at least one `{{ }}` part */
  readonly dynamic: boolean;
  evaluate(scope: ExpressionScope, work?: WorkBudget): unknown;
}

/** Splits `text {{ expr }} text` into literal and expression parts; `}}` inside a quoted string does not close a part. */
function splitTemplate(source: string, fail: (message: string) => never): (string | { expression: string })[] {
  const parts: (string | { expression: string })[] = [];
  let cursor = 0;
  while (cursor < source.length) {
    const open = source.indexOf("{{", cursor);
    if (open === -1) break;
    let end = open + 2;
    let quote: string | null = null;
    for (; end < source.length; end++) {
      const char = source[end];
      if (quote) {
        if (char === "\\") end++;
        else if (char === quote) quote = null;
      } else if (char === '"' || char === "'") quote = char;
      else if (char === "}" && source[end + 1] === "}") break;
    }
    if (end >= source.length) fail("a '{{' has no matching '}}'");
    if (open > cursor) parts.push(source.slice(cursor, open));
    parts.push({ expression: source.slice(open + 2, end) });
    cursor = end + 2;
  }
  if (cursor < source.length) parts.push(source.slice(cursor));
  return parts;
}

/**
 * Compiles a template: a string with `{{ expression }}` parts. A template that is exactly one part
 * keeps the value's type; otherwise the parts are interpolated into a string (null as "", objects and
 * arrays as JSON). A string without parts is its own constant value.
 */
export function compileTemplate(source: string, fieldPath: string): CompiledTemplate {
  const fail = (message: string): never => {
    throw new UtilityConfigError(fieldPath, `invalid template: ${message}`);
  };
  if (typeof source !== "string") fail("a template must be a string");
  const parts = splitTemplate(source, fail).map((part) =>
    typeof part === "string" ? part : compileExpression(part.expression, fieldPath),
  );
  const dynamic = parts.some((part) => typeof part !== "string");
  if (parts.length === 1 && typeof parts[0] !== "string") {
    const only = parts[0];
    return { source, dynamic, evaluate: (scope, work) => only.evaluate(scope, work) };
  }
  return {
    source,
    dynamic,
    evaluate: (scope, work) =>
      counted(work, () =>
        joined(
          parts.map((part) => (typeof part === "string" ? part : textOf(part.evaluate(scope)))),
          "",
        ),
      ),
  };
}

/** `{{ expr }}` or a bare expression (generate.filter's `condition` accepts both). */
export function compileCondition(source: string, fieldPath: string): CompiledExpression {
  const trimmed = source.trim();
  const whole = /^\{\{([\s\S]*)\}\}$/.exec(trimmed);
  if (whole && !whole[1].includes("{{")) return compileExpression(whole[1], fieldPath);
  return compileExpression(source, fieldPath);
}
