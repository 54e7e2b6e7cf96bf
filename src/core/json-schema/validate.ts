/**
 * The JSON Schema 2020-12 interpreter: walks a compiled schema (./compile.ts) over a value, keyword by
 * keyword; nothing is generated or evaluated as code, so a tenant's schema is only ever data here. Each
 * error names the instance (`path`, a JSON Pointer), the `keyword` and the `schemaPath` (the evaluation
 * path, `$ref`s included). The work is bounded: a step counter looks at the clock every 1,024 schema
 * evaluations against the caller's deadline, the evaluation depth is capped (a recursive schema over a
 * deep value), and errors stop being gathered at `maxErrors`. Patterns run on re2js (linear time).
 */

import { validationKeywords } from "./assertions";
import type { CompiledSchema, Resource, SchemaNode } from "./compile";
import { isNumber, isObject, type Json, pointerToken } from "./values";

export interface SchemaError {
  path: string;
  keyword: string;
  schemaPath: string;
  message: string;
}

/** The validation ran past its deadline or its depth: the value was neither accepted nor refused. */
export class SchemaBudgetError extends Error {
  constructor(
    message: string,
    readonly reason: "time" | "depth",
  ) {
    super(message);
  }
}

/** Nested evaluations one value may take (a recursive schema over a deeply nested document) */
export const MAX_EVALUATION_DEPTH = 2_000;

interface Items {
  all: boolean;
  upTo: number;
  indices?: Set<number>;
}
/** What a successful evaluation says it evaluated, for unevaluatedProperties / unevaluatedItems. */
interface Annotations {
  props?: Set<string> | true;
  items?: Items;
}

class Run {
  steps = 0;
  depth = 0;
  readonly scope: Resource[] = [];
  constructor(
    readonly compiled: CompiledSchema,
    readonly deadline: number,
    readonly maxErrors: number,
  ) {}
}

type Sink = SchemaError[] | null;

function mergeInto(into: Annotations, from: Annotations): void {
  if (from.props === true) into.props = true;
  else if (from.props && into.props !== true) {
    const props = into.props ?? new Set<string>();
    for (const key of from.props) props.add(key);
    into.props = props;
  }
  if (from.items) {
    const items = (into.items ??= { all: false, upTo: 0 });
    items.all ||= from.items.all;
    items.upTo = Math.max(items.upTo, from.items.upTo);
    if (from.items.indices) {
      items.indices ??= new Set();
      for (const index of from.items.indices) items.indices.add(index);
    }
  }
}

const addProp = (ann: Annotations, key: string) => {
  if (ann.props === true) return;
  if (ann.props) ann.props.add(key);
  else ann.props = new Set([key]);
};
const itemsOf = (ann: Annotations): Items => (ann.items ??= { all: false, upTo: 0 });
const isEvaluatedItem = (items: Items | undefined, index: number) =>
  !!items && (items.all || index < items.upTo || !!items.indices?.has(index));

function evaluate(run: Run, schema: SchemaNode, value: Json, path: string, schemaPath: string, sink: Sink): Annotations | null {
  if (schema === true) return {};
  if (schema === false) {
    if (sink && sink.length < run.maxErrors) sink.push({ path, keyword: "false", schemaPath, message: "no value is allowed here" });
    return null;
  }
  if ((++run.steps & 1023) === 0 && performance.now() > run.deadline) throw new SchemaBudgetError("the validation ran out of time", "time");
  if (++run.depth > MAX_EVALUATION_DEPTH) {
    throw new SchemaBudgetError(`the validation nests more than ${MAX_EVALUATION_DEPTH} schemas deep`, "depth");
  }
  const resource = run.compiled.resourceOf.get(schema);
  const entered = resource !== undefined && resource !== run.scope.at(-1);
  if (entered) run.scope.push(resource);
  try {
    return evaluateObject(run, schema, value, path, schemaPath, sink);
  } finally {
    if (entered) run.scope.pop();
    run.depth--;
  }
}

function evaluateObject(
  run: Run,
  schema: { [key: string]: Json },
  value: Json,
  path: string,
  schemaPath: string,
  sink: Sink,
): Annotations | null {
  const { compiled } = run;
  const ann: Annotations = {};
  let valid = true;
  /** records a failed keyword; true when evaluation can stop (nobody collects errors, or no room for more) */
  const fail = (keyword: string, message: string): boolean => {
    valid = false;
    if (sink && sink.length < run.maxErrors) sink.push({ path, keyword, schemaPath: `${schemaPath}/${keyword}`, message });
    return sink === null || sink.length >= run.maxErrors;
  };
  /** a subschema whose errors are the caller's; true when evaluation can stop */
  const sub = (node: Json, at: Json, atPath: string, keywordPath: string, into?: Annotations): boolean => {
    const result = evaluate(run, node as SchemaNode, at, atPath, `${schemaPath}/${keywordPath}`, sink);
    if (result === null) {
      valid = false;
      return sink === null || sink.length >= run.maxErrors;
    }
    if (into) mergeInto(into, result);
    return false;
  };
  /** a subschema probed for a yes or no (its errors are not the caller's) */
  const probe = (node: Json, at: Json, keywordPath: string) =>
    evaluate(run, node as SchemaNode, at, path, `${schemaPath}/${keywordPath}`, null);

  const ref = compiled.refs.get(schema);
  if (ref !== undefined && sub(ref as Json, value, path, "$ref", ann)) return null;
  const dynamic = compiled.dynamicRefs.get(schema);
  if (dynamic) {
    let target = dynamic.target;
    if (dynamic.anchor !== undefined)
      for (const resource of run.scope)
        if (resource.dynamicAnchors.has(dynamic.anchor)) {
          target = resource.anchors.get(dynamic.anchor) ?? target;
          break;
        }
    if (sub(target as Json, value, path, "$dynamicRef", ann)) return null;
  }

  if (compiled.validationVocabulary && validationKeywords(schema, value, compiled.patterns, fail)) return null;

  if (Array.isArray(schema.allOf))
    for (let i = 0; i < schema.allOf.length; i++) if (sub(schema.allOf[i], value, path, `allOf/${i}`, ann)) return null;
  if (Array.isArray(schema.anyOf)) {
    let passed = false;
    for (let i = 0; i < schema.anyOf.length; i++) {
      const result = probe(schema.anyOf[i], value, `anyOf/${i}`);
      if (result === null) continue;
      passed = true;
      mergeInto(ann, result);
      if (!compiled.tracksProperties && !compiled.tracksItems) break;
    }
    if (!passed && fail("anyOf", "must match at least one of the schemas in anyOf")) return null;
  }
  if (Array.isArray(schema.oneOf)) {
    const passing: number[] = [];
    for (let i = 0; i < schema.oneOf.length && passing.length < 2; i++) {
      const result = probe(schema.oneOf[i], value, `oneOf/${i}`);
      if (result === null) continue;
      passing.push(i);
      if (passing.length === 1) mergeInto(ann, result);
    }
    if (passing.length !== 1) {
      const message =
        passing.length === 0
          ? "must match exactly one of the schemas in oneOf; it matches none"
          : `must match exactly one of the schemas in oneOf; it matches ${passing[0]} and ${passing[1]}`;
      if (fail("oneOf", message)) return null;
    }
  }
  if (schema.not !== undefined && probe(schema.not, value, "not") !== null && fail("not", "must not match the schema in not")) return null;
  if (schema.if !== undefined) {
    const condition = probe(schema.if, value, "if");
    if (condition !== null) {
      mergeInto(ann, condition);
      if (schema.then !== undefined && sub(schema.then, value, path, "then", ann)) return null;
    } else if (schema.else !== undefined && sub(schema.else, value, path, "else", ann)) return null;
  }

  if (isObject(value)) {
    if (isObject(schema.dependentSchemas))
      for (const [key, dependent] of Object.entries(schema.dependentSchemas))
        if (Object.hasOwn(value, key) && sub(dependent, value, path, `dependentSchemas/${pointerToken(key)}`, ann)) return null;
    const properties = isObject(schema.properties) ? schema.properties : undefined;
    const patterns = isObject(schema.patternProperties) ? Object.keys(schema.patternProperties) : [];
    const hasAdditional = schema.additionalProperties !== undefined;
    if (properties || patterns.length > 0 || hasAdditional) {
      for (const key of Object.keys(value)) {
        const at = `${path}/${pointerToken(key)}`;
        let matched = false;
        if (properties && Object.hasOwn(properties, key)) {
          matched = true;
          addProp(ann, key);
          if (sub(properties[key], value[key], at, `properties/${pointerToken(key)}`)) return null;
        }
        for (const pattern of patterns)
          if (compiled.patterns.get(pattern)?.test(key)) {
            matched = true;
            addProp(ann, key);
            if (
              sub(
                (schema.patternProperties as { [key: string]: Json })[pattern],
                value[key],
                at,
                `patternProperties/${pointerToken(pattern)}`,
              )
            )
              return null;
          }
        if (!matched && hasAdditional) {
          addProp(ann, key);
          if (sub(schema.additionalProperties, value[key], at, "additionalProperties")) return null;
        }
      }
    }
    if (schema.propertyNames !== undefined)
      for (const key of Object.keys(value))
        if (
          probe(schema.propertyNames, key, "propertyNames") === null &&
          fail("propertyNames", `the property name ${JSON.stringify(key)} does not match propertyNames`)
        )
          return null;
  }

  if (Array.isArray(value)) {
    let start = 0;
    if (Array.isArray(schema.prefixItems)) {
      start = Math.min(schema.prefixItems.length, value.length);
      for (let i = 0; i < start; i++) if (sub(schema.prefixItems[i], value[i], `${path}/${i}`, `prefixItems/${i}`)) return null;
      const items = itemsOf(ann);
      items.upTo = Math.max(items.upTo, start);
    }
    if (schema.items !== undefined) {
      for (let i = start; i < value.length; i++) if (sub(schema.items, value[i], `${path}/${i}`, "items")) return null;
      itemsOf(ann).all = true;
    }
    if (schema.contains !== undefined && containsFails(run, schema, value, ann, probe, fail)) return null;
  }

  if (compiled.tracksItems && Array.isArray(value) && schema.unevaluatedItems !== undefined) {
    for (let i = 0; i < value.length; i++)
      if (!isEvaluatedItem(ann.items, i) && sub(schema.unevaluatedItems, value[i], `${path}/${i}`, "unevaluatedItems")) return null;
    itemsOf(ann).all = true;
  }
  if (compiled.tracksProperties && isObject(value) && schema.unevaluatedProperties !== undefined) {
    const seen = ann.props;
    for (const key of Object.keys(value))
      if (
        seen !== true &&
        !seen?.has(key) &&
        sub(schema.unevaluatedProperties, value[key], `${path}/${pointerToken(key)}`, "unevaluatedProperties")
      )
        return null;
    ann.props = true;
  }
  return valid ? ann : null;
}

function containsFails(
  run: Run,
  schema: { [key: string]: Json },
  value: Json[],
  ann: Annotations,
  probe: (node: Json, at: Json, keywordPath: string) => Annotations | null,
  fail: (keyword: string, message: string) => boolean,
): boolean {
  const matches: number[] = [];
  for (let i = 0; i < value.length; i++) if (probe(schema.contains, value[i], "contains") !== null) matches.push(i);
  const items = itemsOf(ann);
  items.indices ??= new Set();
  for (const index of matches) items.indices.add(index);
  const validation = run.compiled.validationVocabulary;
  const min = validation && isNumber(schema.minContains) ? schema.minContains : 1;
  const max = validation && isNumber(schema.maxContains) ? schema.maxContains : undefined;
  if (matches.length < min)
    return fail(
      schema.minContains !== undefined && min !== 1 ? "minContains" : "contains",
      `must contain at least ${String(min)} item(s) matching contains; it has ${matches.length}`,
    );
  if (max !== undefined && matches.length > max)
    return fail("maxContains", `must contain at most ${String(max)} item(s) matching contains; it has ${matches.length}`);
  return false;
}

export interface ValidationOutcome {
  valid: boolean;
  errors: SchemaError[];
}

/** Validates `value`; throws SchemaBudgetError past `deadline` (a performance.now() time) or the depth cap. */
export function validateValue(compiled: CompiledSchema, value: Json, options: { deadline: number; maxErrors: number }): ValidationOutcome {
  const run = new Run(compiled, options.deadline, Math.max(1, options.maxErrors));
  const errors: SchemaError[] = [];
  const result = evaluate(run, compiled.root, value, "", "", errors);
  return {
    valid: result !== null,
    errors:
      result === null && errors.length === 0
        ? [{ path: "", keyword: "false", schemaPath: "", message: "does not match the schema" }]
        : errors,
  };
}
