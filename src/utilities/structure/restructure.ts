/**
 * structure.restructure: builds a new shape from a template, record-wise. The template is compiled
 * once per request into builder functions: a string leaf is a template when it holds `{{ }}`, else a
 * path into the record (a wildcard path gives the array of every value it reaches); `{ "$value": x }`
 * is the literal `x`; arrays and objects are walked; other leaves are literals.
 */
import { t } from "elysia";
import { compileTemplate } from "../lib/expressions";
import { parseConfigPath } from "../lib/config-paths";
import { ANY, getAll, isObject, setOwn, type JsonObject } from "../lib/paths";
import { mapRecords, objectRecord } from "../lib/records";
import { defineUtility, type UtilityInputs } from "../types";
import { unlimitedBudget } from "../budget";

export const id = "structure.restructure";

export const configSchema = t.Object(
  {
    template: t.Unknown({
      description:
        'the output shape: a string leaf is a path into the record ("user.email") or a {{ }} template; {"$value": x} is the literal x; arrays and objects are walked',
    }),
    missing: t.Union([t.Literal("omit"), t.Literal("null")], {
      default: "omit",
      description: "what a path that does not resolve gives: the member is left out (also from arrays), or null",
    }),
  },
  { additionalProperties: false },
);

export interface RestructureConfig {
  template: unknown;
  missing: "omit" | "null";
}

/** marks a path that did not resolve under missing = "omit"; its member (or array element) is left out */
const OMITTED = Symbol("omitted");
type Builder = (record: unknown, root: unknown) => unknown;

const pointer = (at: string, key: string | number) => `${at}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

class ShapeCompiler {
  constructor(private readonly missingValue: null | typeof OMITTED) {}

  compile(shape: unknown, at: string): Builder {
    if (typeof shape === "string") {
      if (!shape.includes("{{")) return this.path(shape, at);
      const template = compileTemplate(shape, at);
      return (record, root) => template.evaluate({ record, root });
    }
    if (Array.isArray(shape)) {
      const elements = shape.map((element, index) => this.compile(element, pointer(at, index)));
      return (record, root) => elements.map((element) => element(record, root)).filter((value) => value !== OMITTED);
    }
    if (isObject(shape)) return this.object(shape, at);
    return () => shape;
  }

  private path(source: string, at: string): Builder {
    const path = parseConfigPath(source, at);
    if (path.includes(ANY)) return (record) => getAll(record, path).map((match) => match.value);
    const missingValue = this.missingValue;
    return (record) => {
      const [match] = getAll(record, path);
      return match === undefined ? missingValue : match.value;
    };
  }

  private object(shape: JsonObject, at: string): Builder {
    const keys = Object.keys(shape);
    if (keys.length === 1 && keys[0] === "$value") {
      const literal = shape.$value;
      return () => literal;
    }
    const members = keys.map((key) => [key, this.compile(shape[key], pointer(at, key))] as const);
    return (record, root) => {
      const built: JsonObject = {};
      for (const [key, member] of members) {
        const value = member(record, root);
        if (value !== OMITTED) setOwn(built, key, value);
      }
      return built;
    };
  }
}

/**
 * Output bound: a template can name the whole record or input many times over (shared by reference
 * until serialised), so each record's result is charged to `budget` by its size once it is built.
 */
export function restructure(primary: unknown, config: RestructureConfig, budget = unlimitedBudget()): unknown {
  const build = new ShapeCompiler(config.missing === "null" ? null : OMITTED).compile(config.template, "template");
  return mapRecords(primary, (record, index) => {
    const value = build(objectRecord(record, index, id), primary);
    budget.chargeCopyOf(value);
    // a template that is one unresolved path has no member to leave out: the record becomes null
    return value === OMITTED ? null : value;
  });
}

export default defineUtility({
  id,
  name: "Restructure",
  category: "structure",
  description: "Builds a new shape from a template of paths, {{ }} expressions and literals, for the document or each element of an array.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return restructure(inputs.primary, config as RestructureConfig, budget);
  },
});
