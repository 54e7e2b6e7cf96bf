/**
 * structure.restructure: builds a new shape from a template, record-wise. The template is compiled
 * once per request into builder functions: a string leaf is a template when it holds `{{ }}`, else a
 * path into the record (a wildcard path gives the array of every value it reaches); `{ "$value": x }`
 * is the literal `x`; arrays and objects are walked; other leaves are literals.
 *
 * Output bound: none by construction (a template may name the whole record, or the input through
 * `{{ $root }}`, a thousand times; shared by reference until serialised), so every value a builder
 * puts in the shape is charged to the budget by its size as it is put there.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { jsonSizeOf, type OutputBudget, unlimitedBudget } from "../budget";
import { parseConfigPath } from "../shared/config-paths";
import { compileTemplate } from "../shared/expressions";
import { ANY, getAll, isObject, type JsonObject, setOwn } from "../shared/paths";
import { mapRecords, objectRecord } from "../shared/records";
import { defineUtility, type UtilityInputs } from "../types";

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

export type RestructureConfig = Static<typeof configSchema>;

/** marks a path that did not resolve under missing = "omit"; its member (or array element) is left out */
const OMITTED = Symbol("omitted");
type Builder = (record: unknown, root: unknown) => unknown;

const pointer = (at: string, key: string | number) => `${at}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

class ShapeCompiler {
  constructor(
    private readonly missingValue: null | typeof OMITTED,
    private readonly budget: OutputBudget,
  ) {}

  compile(shape: unknown, at: string): Builder {
    const budget = this.budget;
    if (typeof shape === "string") {
      if (!shape.includes("{{")) return this.path(shape, at);
      const template = compileTemplate(shape, at);
      return (record, root) => {
        const value = template.evaluate({ record, root }, budget.work);
        budget.chargeCopyOf(value);
        return value;
      };
    }
    if (Array.isArray(shape)) {
      const elements = shape.map((element, index) => this.compile(element, pointer(at, index)));
      return (record, root) => {
        budget.charge(elements.length + 1);
        return elements.map((element) => element(record, root)).filter((value) => value !== OMITTED);
      };
    }
    if (isObject(shape)) return this.object(shape, at);
    return this.literal(shape);
  }

  private literal(value: unknown): Builder {
    const size = jsonSizeOf(value);
    return () => {
      this.budget.charge(size);
      return value;
    };
  }

  private path(source: string, at: string): Builder {
    const path = parseConfigPath(source, at);
    const budget = this.budget;
    const found = (value: unknown) => {
      budget.chargeCopyOf(value);
      return value;
    };
    if (path.includes(ANY)) return (record) => getAll(record, path).map((match) => found(match.value));
    const missingValue = this.missingValue;
    return (record) => {
      const [match] = getAll(record, path);
      return match === undefined ? missingValue : found(match.value);
    };
  }

  private object(shape: JsonObject, at: string): Builder {
    const keys = Object.keys(shape);
    if (keys.length === 1 && keys[0] === "$value") return this.literal(shape.$value);
    const members = keys.map((key) => [key, this.compile(shape[key], pointer(at, key))] as const);
    const keyBytes = keys.reduce((sum, key) => sum + key.length + 4, 2);
    return (record, root) => {
      this.budget.charge(keyBytes);
      const built: JsonObject = {};
      for (const [key, member] of members) {
        const value = member(record, root);
        if (value !== OMITTED) setOwn(built, key, value);
      }
      return built;
    };
  }
}

export function restructure(primary: unknown, config: RestructureConfig, budget = unlimitedBudget()): unknown {
  const build = new ShapeCompiler(config.missing === "null" ? null : OMITTED, budget).compile(config.template, "template");
  return mapRecords(primary, (record, index) => {
    const value = build(objectRecord(record, index, id), primary);
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
    return restructure(inputs.primary, config, budget);
  },
});
