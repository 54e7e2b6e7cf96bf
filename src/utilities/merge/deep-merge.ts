/**
 * merge.deep-merge: `secondary` merged into `primary` (utilities.md). Keys keep primary's order, then
 * secondary's new keys in theirs. Keys such as `__proto__` and `constructor` are ordinary members.
 *
 * Output bound: at most primary's size plus secondary's (each input value appears at most once, also
 * under arrayStrategy concat); no budget needed.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { isObject, setOwn } from "../shared/paths";
import { defineUtility } from "../types";

export const id = "merge.deep-merge";

export const configSchema = t.Object(
  {
    conflictStrategy: t.Union([t.Literal("deepMerge"), t.Literal("preferPrimary"), t.Literal("preferSecondary")], {
      default: "deepMerge",
      description:
        "deepMerge: objects on both sides merge recursively, any other conflict takes the secondary value; preferPrimary / preferSecondary: a key present on both sides takes that side's value whole",
    }),
    arrayStrategy: t.Union([t.Literal("replace"), t.Literal("concat"), t.Literal("unique")], {
      default: "replace",
      description:
        "under deepMerge, two arrays: take secondary's; primary then secondary; or concatenate keeping the first of deep-equal items",
    }),
  },
  { additionalProperties: false },
);

export type DeepMergeConfig = Static<typeof configSchema>;

/** `secondary === undefined` (no secondary input) gives `primary` back unchanged. */
export function deepMerge(primary: unknown, secondary: unknown, config: DeepMergeConfig): unknown {
  if (secondary === undefined) return primary;
  switch (config.conflictStrategy) {
    case "deepMerge":
      return mergeValues(primary, secondary, config.arrayStrategy);
    case "preferPrimary":
      return isObject(primary) && isObject(secondary) ? mergeObjects(primary, secondary, (mine) => mine) : primary;
    case "preferSecondary":
      return isObject(primary) && isObject(secondary) ? mergeObjects(primary, secondary, (_, theirs) => theirs) : secondary;
  }
}

function mergeValues(primary: unknown, secondary: unknown, arrayStrategy: DeepMergeConfig["arrayStrategy"]): unknown {
  if (isObject(primary) && isObject(secondary)) {
    return mergeObjects(primary, secondary, (mine, theirs) => mergeValues(mine, theirs, arrayStrategy));
  }
  if (Array.isArray(primary) && Array.isArray(secondary)) {
    if (arrayStrategy === "replace") return secondary;
    if (arrayStrategy === "concat") return [...primary, ...secondary];
    return uniqueItems([...primary, ...secondary]);
  }
  return secondary;
}

function mergeObjects(
  primary: Record<string, unknown>,
  secondary: Record<string, unknown>,
  onBoth: (mine: unknown, theirs: unknown) => unknown,
): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(primary)) {
    setOwn(merged, key, Object.hasOwn(secondary, key) ? onBoth(primary[key], secondary[key]) : primary[key]);
  }
  for (const key of Object.keys(secondary)) {
    if (!Object.hasOwn(primary, key)) setOwn(merged, key, secondary[key]);
  }
  return merged;
}

/** Keeps the first of deep-equal items; objects are equal whatever their key order. */
function uniqueItems(items: unknown[]): unknown[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = canonicalJson(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export default defineUtility({
  id,
  name: "Deep Merge",
  category: "merge",
  description:
    "Merges `secondary` into `primary`: objects merge recursively, conflicts and arrays follow the configured strategies. A missing `secondary` returns `primary`.",
  configSchema,
  run: (inputs, config) => deepMerge(inputs.primary, inputs.secondary, config),
});
