/**
 * schema.normalize: consistent keys (trimmed, one case convention, optionally sorted) at every depth,
 * and consistent record shapes (every object of an array gets the union of the keys).
 *
 * Output bound: keys change case (at most three times longer, `ß` → `SS`), but filling shapes gives
 * n objects with a key each n × n members, so each member filled in is charged to the budget (its key
 * and a copy of fillValue) before it is made.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { jsonSizeOf, unlimitedBudget } from "../budget";
import { isObject, type JsonObject, setOwn } from "../shared/paths";
import { cloneJson, describeType } from "../shared/records";
import { defineUtility, UtilityError, type UtilityInputs } from "../types";

export const id = "schema.normalize";

export const KEY_CASES = ["preserve", "camel", "snake", "kebab", "pascal", "lower", "upper"] as const;
export type KeyCase = (typeof KEY_CASES)[number];

export const configSchema = t.Object(
  {
    keyCase: t.Union(
      KEY_CASES.map((keyCase) => t.Literal(keyCase)),
      { default: "preserve", description: "rewrite every key, at every depth (First Name, first_name, firstName → firstName under camel)" },
    ),
    trimKeys: t.Boolean({ default: true, description: "trim whitespace around keys" }),
    sortKeys: t.Boolean({ default: false, description: "sort object keys at every depth" }),
    fillMissing: t.Boolean({
      default: true,
      description: "in an array, every object gets the union of the objects' keys, in first-seen order",
    }),
    fillValue: t.Unknown({ default: null, description: "value of a filled key" }),
  },
  { additionalProperties: false },
);
export type NormalizeConfig = Static<typeof configSchema>;

/** Words of a key: split at anything but letters and digits, and at case changes (`userID` → user, ID; `XMLHttp` → XML, Http). */
export function keyWords(key: string): string[] {
  return key
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

const capitalize = (word: string) => {
  const first = String.fromCodePoint(word.codePointAt(0)!);
  return first.toUpperCase() + word.slice(first.length).toLowerCase();
};

export function convertKey(key: string, keyCase: KeyCase): string {
  if (keyCase === "preserve") return key;
  if (keyCase === "lower") return key.toLowerCase();
  if (keyCase === "upper") return key.toUpperCase();
  const words = keyWords(key);
  // a key with no letters or digits (`_`, `$$`) has no words to recase: it stays as it is
  if (words.length === 0) return key;
  switch (keyCase) {
    case "camel":
      return words.map((word, index) => (index === 0 ? word.toLowerCase() : capitalize(word))).join("");
    case "pascal":
      return words.map(capitalize).join("");
    case "snake":
      return words.map((word) => word.toLowerCase()).join("_");
    case "kebab":
      return words.map((word) => word.toLowerCase()).join("-");
  }
}

/**
 * Two keys of one object that normalise to the same key (`first_name`, `firstName`) become one member,
 * at the first one's position, holding the last one's value (as JSON.parse does with repeated keys).
 */
export function normalize(value: unknown, config: NormalizeConfig, budget = unlimitedBudget()): unknown {
  const keys = new Map<string, string>();
  const normalKey = (key: string): string => {
    let normal = keys.get(key);
    if (normal === undefined) {
      normal = convertKey(config.trimKeys ? key.trim() : key, config.keyCase);
      keys.set(key, normal);
    }
    return normal;
  };
  const sorted = (object: JsonObject): JsonObject => {
    if (!config.sortKeys) return object;
    const out: JsonObject = {};
    for (const key of Object.keys(object).sort()) setOwn(out, key, object[key]);
    return out;
  };

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) {
      const elements = node.map(walk);
      return config.fillMissing ? fillShapes(elements) : elements;
    }
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const key of Object.keys(node)) setOwn(out, normalKey(key), walk(node[key]));
    return sorted(out);
  };

  const fillShapes = (elements: unknown[]): unknown[] => {
    const union = new Set<string>();
    for (const element of elements) if (isObject(element)) for (const key of Object.keys(element)) union.add(key);
    const order = config.sortKeys ? [...union].sort() : [...union];
    const fillBytes = jsonSizeOf(config.fillValue);
    const filled = (key: string) => {
      budget.charge(key.length + 4 + fillBytes);
      return cloneJson(config.fillValue);
    };
    return elements.map((element) => {
      if (!isObject(element)) return element;
      const out: JsonObject = {};
      for (const key of order) setOwn(out, key, Object.hasOwn(element, key) ? element[key] : filled(key));
      return out;
    });
  };

  return walk(value);
}

export default defineUtility({
  id,
  name: "Normalize",
  category: "schema",
  description:
    "Makes keys and record shapes consistent: trims keys, rewrites them to one case convention and optionally sorts them at every depth; every object of an array gets the union of the keys.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    const { primary } = inputs;
    if (primary === null || typeof primary !== "object") {
      throw new UtilityError(`${id} takes an object or an array; primary is ${describeType(primary)}`);
    }
    return normalize(primary, config, budget);
  },
});
