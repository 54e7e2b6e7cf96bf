/**
 * structure.find-replace: replaces text inside string values, keys, or both, of each record.
 *
 * Every occurrence is replaced. Literal searches that are case-sensitive use plain string splitting;
 * everything else (regex, case-insensitive, whole-value) runs on the linear-time engine (lib/regex).
 * A replacement holding `{{ }}` is a template evaluated per match with `old` (the matched text),
 * `groups` (the regex groups) and the record's fields in scope; its result is inserted as text.
 *
 * Decided: with `paths`, a member is in scope when it lies at or below one of them; in key mode the
 * key of the member a path names is in scope too (`paths: ["user.name"]` can rename `name`).
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget, type WorkBudget } from "../budget";
import { type CompiledTemplate, compileTemplate, toText } from "../shared/expressions";
import { enterScope, isObject, type JsonObject, parsePaths, type Scope, scopeOf, setOwn } from "../shared/paths";
import { type Defaulted, mapRecords } from "../shared/records";
import { compileUserRegex, literalRegex, type UserRegex } from "../shared/regex";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "structure.find-replace";

export const configSchema = t.Object(
  {
    search: t.String({ minLength: 1, description: "text to find (a regular expression with `regex`)" }),
    replacement: t.Optional(t.String({ default: "", description: "replacement; may be a template where `old` is the matched text" })),
    mode: t.Optional(t.Union([t.Literal("value"), t.Literal("key"), t.Literal("both")], { default: "value" })),
    caseSensitive: t.Optional(t.Boolean({ default: true })),
    wholeValue: t.Optional(t.Boolean({ default: false, description: "only strings (or keys) equal to `search` as a whole" })),
    regex: t.Optional(
      t.Boolean({ default: false, description: "`search` is a regular expression (RE2 syntax); `$1` works in `replacement`" }),
    ),
    paths: t.Optional(t.Array(t.String(), { description: "limit replacements to these paths (default: everywhere)" })),
  },
  { additionalProperties: false },
);

export type FindReplaceConfig = Defaulted<Static<typeof configSchema>, "replacement" | "mode" | "caseSensitive" | "wholeValue" | "regex">;

type Replace = (text: string, record: unknown, root: unknown) => string;

/**
 * Output bound: none by construction (a short match replaced by a long replacement, or by `$'`, the
 * rest of the text, per match), so what each replacement adds over its match is charged to the budget
 * before it is built: once per string for a literal search, per match otherwise.
 */
export function compileReplace(config: FindReplaceConfig, budget: OutputBudget): Replace {
  const template = compileTemplate(config.replacement, "replacement");
  const caseInsensitive = !config.caseSensitive;
  const growth = config.replacement.length - config.search.length;
  const grow = (added: number) => {
    if (added > 0) budget.charge(added);
  };
  if (!config.regex && !config.wholeValue && !caseInsensitive && !template.dynamic) {
    return (text) => {
      if (!text.includes(config.search)) return text;
      const pieces = text.split(config.search);
      grow((pieces.length - 1) * growth);
      return pieces.join(config.replacement);
    };
  }
  let pattern: UserRegex;
  if (config.regex) {
    // validated alone first, so that an error message shows the user's own pattern
    compileUserRegex(config.search, { field: "search" });
    pattern = compileUserRegex(config.wholeValue ? `^(?:${config.search})$` : config.search, { field: "search", caseInsensitive });
  } else {
    pattern = literalRegex(config.search, { caseInsensitive, whole: config.wholeValue });
  }
  if (template.dynamic) return (text, record, root) => pattern.replaceAll(text, evaluateWith(template, record, root, grow, budget.work));
  // a literal search inserts the replacement as it is; only regex replacements interpret `$1`
  if (config.regex) return (text) => pattern.replaceAll(text, config.replacement, grow);
  return (text) =>
    pattern.replaceAll(text, (match) => {
      grow(config.replacement.length - match.length);
      return config.replacement;
    });
}

const evaluateWith =
  (template: CompiledTemplate, record: unknown, root: unknown, grow: (added: number) => void, work?: WorkBudget) =>
  (old: string, groups: (string | null)[]) => {
    const text = toText(template.evaluate({ record, root, old, groups }, work));
    grow(text.length - old.length);
    return text;
  };

export function findReplace(primary: unknown, config: FindReplaceConfig, budget = unlimitedBudget()): unknown {
  return mapRecords(primary, replacerOf(config, primary, budget));
}

/** The replacement in one record; `root` (the whole input) is what a template may read as `root`. */
function replacerOf(config: FindReplaceConfig, root: unknown, budget: OutputBudget): (record: unknown) => unknown {
  const replace = compileReplace(config, budget);
  const scope = scopeOf(config.paths === undefined ? undefined : parsePaths(config.paths, "paths"));
  const values = config.mode !== "key";
  const keys = config.mode !== "value";

  if (!keys) return (record) => replacedValues(record, scope, (text) => replace(text, record, root));
  return (record) => {
    const walk = (value: unknown, scope: Scope): unknown => {
      if (typeof value === "string") return values && scope === true ? replace(value, record, root) : value;
      if (Array.isArray(value)) {
        return value.map((element, index) => {
          const inner = enterScope(scope, index);
          return inner === null ? element : walk(element, inner);
        });
      }
      if (!isObject(value)) return value;
      const renamed: [string, unknown][] = [];
      for (const key of Object.keys(value)) {
        const inner = enterScope(scope, key);
        if (inner === null) renamed.push([key, value[key]]);
        else renamed.push([keys && inner === true ? replace(key, record, root) : key, walk(value[key], inner)]);
      }
      return rebuild(Object.keys(value), renamed);
    };
    return walk(record, scope);
  };
}

/**
 * Value mode (keys stay): `value` with its strings in scope replaced, the value itself when nothing in
 * it changes, else a copy of the containers on the way to what changed. Most strings hold no match, so
 * most of a record is shared rather than rebuilt (utilities never mutate their input).
 */
function replacedValues(value: unknown, scope: Scope, replace: (text: string) => string): unknown {
  if (typeof value === "string") return scope === true ? replace(value) : value;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const element = value[index];
      const inner = scope === true ? true : enterScope(scope, index);
      const result = inner === null ? element : replacedValues(element, inner, replace);
      if (result !== element) (copy ??= value.slice())[index] = result;
    }
    return copy ?? value;
  }
  let copy: JsonObject | undefined;
  for (const key of Object.keys(value)) {
    const member = (value as JsonObject)[key];
    const inner = scope === true ? true : enterScope(scope, key);
    const result = inner === null ? member : replacedValues(member, inner, replace);
    if (result !== member) setOwn((copy ??= copyOf(value as JsonObject)), key, result);
  }
  return copy ?? value;
}

/** A shallow copy with the same own members in the same order (`__proto__` as data). */
function copyOf(object: JsonObject): JsonObject {
  const copy: JsonObject = {};
  for (const key of Object.keys(object)) setOwn(copy, key, object[key]);
  return copy;
}

/** The renamed members in their original order; a key renamed onto an existing key replaces it. */
function rebuild(originalKeys: string[], members: [string, unknown][]): JsonObject {
  const result: JsonObject = {};
  const renamedTo = new Set(members.filter(([key], index) => key !== originalKeys[index]).map(([key]) => key));
  members.forEach(([key, value], index) => {
    const unchanged = key === originalKeys[index];
    if (unchanged && renamedTo.has(key)) return;
    setOwn(result, key, value);
  });
  return result;
}

export default defineUtility({
  id,
  name: "Find and Replace",
  category: "structure",
  description: "Replaces text in string values, keys or both; literal or regular expression (linear-time engine).",
  configSchema,
  amplifies: true,
  run: (inputs: UtilityInputs, config, budget) => findReplace(inputs.primary, config as FindReplaceConfig, budget),
  // a template may read `root`, the whole input: such a run needs it all at once
  recordWise: (config, budget) =>
    compileTemplate(config.replacement ?? "", "replacement").dynamic
      ? undefined
      : replacerOf(config as FindReplaceConfig, undefined, budget ?? unlimitedBudget()),
});
