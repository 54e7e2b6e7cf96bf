/**
 * generate.filter: keeps the elements of an array that match a `condition` expression and/or `where`
 * rules. Everything is compiled once per request (expression, rule paths, regexes); the array may sit
 * at `path` inside primary, and the rest of the document is returned unchanged.
 *
 * Output bound: at most the input's size (a subset of one array, the rest shared); a condition's work
 * per element is bounded by the expression language (shared/expressions.ts), and its work in all by the
 * run's work budget, which the condition's evaluations check.
 */
import { type Static, Type, Type as t } from "@sinclair/typebox";
import type { WorkBudget } from "../budget";
import { parseConfigPath } from "../shared/config-paths";
import { type Comparison, compareValues, compileCondition, looseEqual, toText, truthy } from "../shared/expressions";
import { ANY, deepEqual, getAll, isObject, type JsonObject, type Path, setOwn } from "../shared/paths";
import { describeType } from "../shared/records";
import { compileUserRegex } from "../shared/regex";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";

export const id = "generate.filter";

export const WHERE_OPERATORS = [
  "eq",
  "ne",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "startsWith",
  "endsWith",
  "in",
  "exists",
  "regex",
] as const;
export type WhereOperator = (typeof WHERE_OPERATORS)[number];

export const configSchema = t.Object(
  {
    condition: t.Optional(t.String({ description: 'an expression, with or without {{ }}, e.g. age >= 18 && status == "active"' })),
    where: t.Optional(
      t.Array(
        t.Object(
          {
            field: t.String({ description: "path inside the element (a wildcard matches when any value it reaches matches)" }),
            op: t.Union(WHERE_OPERATORS.map((op) => t.Literal(op))),
            value: t.Optional(
              t.Unknown({ description: "the operand; an array for `in`, a pattern for `regex`, true/false for `exists` (default true)" }),
            ),
          },
          { additionalProperties: false },
        ),
        { minItems: 1 },
      ),
    ),
    match: t.Union([t.Literal("all"), t.Literal("any")], { default: "all", description: "how the `where` rules combine" }),
    path: t.Optional(t.String({ description: "the array to filter inside primary (default: primary itself)" })),
    limit: t.Optional(Type.Integer({ minimum: 0, description: "at most this many matches" })),
  },
  { additionalProperties: false },
);

export type FilterConfig = Static<typeof configSchema>;
export type WhereRule = NonNullable<FilterConfig["where"]>[number];

type Predicate = (element: unknown, root: unknown) => boolean;
type ValueTest = (value: unknown) => boolean;

const COMPARISONS = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const satisfies Record<string, Comparison>;

function valueTest(rule: WhereRule & { op: Exclude<WhereOperator, "exists"> }, at: string): ValueTest {
  const operand = rule.value;
  const needOperand = () => {
    if (operand === undefined) throw new UtilityConfigError(`${at}/value`, `the '${rule.op}' rule needs a value`);
  };
  switch (rule.op) {
    case "eq":
    case "ne":
      needOperand();
      return (value) => looseEqual(value, operand);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      needOperand();
      const operator = COMPARISONS[rule.op];
      return (value) => compareValues(operator, value, operand);
    }
    case "contains": {
      needOperand();
      const text = toText(operand);
      return (value) =>
        Array.isArray(value) ? value.some((item) => deepEqual(item, operand)) : typeof value === "string" && value.includes(text);
    }
    case "startsWith":
    case "endsWith": {
      needOperand();
      const text = toText(operand);
      return rule.op === "startsWith"
        ? (value) => typeof value === "string" && value.startsWith(text)
        : (value) => typeof value === "string" && value.endsWith(text);
    }
    case "in": {
      if (!Array.isArray(operand)) throw new UtilityConfigError(`${at}/value`, "the 'in' rule needs an array of values");
      return (value) => operand.some((candidate) => looseEqual(value, candidate));
    }
    case "regex": {
      if (typeof operand !== "string") throw new UtilityConfigError(`${at}/value`, "the 'regex' rule needs a pattern (a string)");
      const regex = compileUserRegex(operand, { field: `${at}/value` });
      return (value) => typeof value === "string" && regex.test(value);
    }
  }
}

/**
 * A rule passes when any value its field reaches passes (`ne`: when none equals; `exists`: when one
 * is there, null included). A field that reaches nothing is null, as in expressions: `eq null` matches it.
 */
function compileRule(rule: WhereRule, index: number): Predicate {
  const at = `where/${index}`;
  const path: Path = parseConfigPath(rule.field, `${at}/field`);
  if (rule.op === "exists") {
    if (rule.value !== undefined && typeof rule.value !== "boolean")
      throw new UtilityConfigError(`${at}/value`, "the 'exists' rule takes true or false");
    const wanted = rule.value !== false;
    return (element) => getAll(element, path).length > 0 === wanted;
  }
  const test = valueTest(rule as WhereRule & { op: Exclude<WhereOperator, "exists"> }, at);
  const found = (element: unknown) => {
    const matches = getAll(element, path);
    return matches.length === 0 ? test(null) : matches.some((match) => test(match.value));
  };
  return rule.op === "ne" ? (element) => !found(element) : found;
}

/** `work`: the run's work budget, which the condition's evaluations check */
export function compileFilter(config: FilterConfig, work?: WorkBudget): Predicate {
  if (config.condition === undefined && config.where === undefined) {
    throw new UtilityConfigError("condition", "give a condition, where rules, or both");
  }
  const predicates: Predicate[] = [];
  if (config.condition !== undefined) {
    const condition = compileCondition(config.condition, "condition");
    predicates.push((element, root) => truthy(condition.evaluate({ record: element, root }, work)));
  }
  if (config.where !== undefined) {
    const rules = config.where.map(compileRule);
    predicates.push(
      config.match === "any"
        ? (element, root) => rules.some((rule) => rule(element, root))
        : (element, root) => rules.every((rule) => rule(element, root)),
    );
  }
  return (element, root) => predicates.every((predicate) => predicate(element, root));
}

/** A copy of `root` whose containers along `keys` are shallow copies, with `value` at the end. */
function replaceAt(root: unknown, keys: (string | number)[], value: unknown): unknown {
  if (keys.length === 0) return value;
  const [key, ...rest] = keys;
  if (Array.isArray(root)) {
    const copy = root.slice();
    copy[key as number] = replaceAt(root[key as number], rest, value);
    return copy;
  }
  const copy: JsonObject = {};
  for (const member of Object.keys(root as JsonObject)) setOwn(copy, member, (root as JsonObject)[member]);
  setOwn(copy, key as string, replaceAt((root as JsonObject)[key as string], rest, value));
  return copy;
}

export function filter(primary: unknown, config: FilterConfig, work?: WorkBudget): unknown {
  const matches = compileFilter(config, work);
  const path = config.path === undefined ? [] : parseConfigPath(config.path, "path");
  if (path.includes(ANY)) throw new UtilityConfigError("path", "the path must name one array (no wildcard)");
  const [target] = getAll(primary, path);
  if (target === undefined) throw new UtilityError(`${id}: primary has no value at '${config.path}'`);
  if (!Array.isArray(target.value)) {
    const where = path.length === 0 ? "primary" : `the value at '${config.path}'`;
    throw new UtilityError(
      `${id} filters an array; ${where} is ${describeType(target.value)}${isObject(target.value) ? " (set `path` to the array inside it)" : ""}`,
    );
  }
  const limit = config.limit ?? Infinity;
  const kept: unknown[] = [];
  for (const element of target.value) {
    if (kept.length >= limit) break;
    if (matches(element, primary)) kept.push(element);
  }
  return replaceAt(primary, target.path, kept);
}

export default defineUtility({
  id,
  name: "Filter",
  category: "generate",
  description: "Keeps the elements of an array (primary, or the array at `path`) that match a condition expression and/or where rules.",
  configSchema,
  run(inputs: UtilityInputs, config, budget) {
    return filter(inputs.primary, config, budget?.work);
  },
});
