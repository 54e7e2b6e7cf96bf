/**
 * schema.clean-json: drops nulls, empty strings, empty arrays and (optionally) empty objects at every
 * depth (utilities.md). Emptiness is judged after the children are cleaned, so a container emptied by
 * the other rules is dropped too when its own rule is on. The top-level value itself is never dropped:
 * it has no parent to leave (an input of `null` gives `null`).
 *
 * Output bound: at most the input's size (members are only dropped, strings only trimmed); no budget needed.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { isObject, setOwn } from "../shared/paths";
import { defineUtility } from "../types";

export const id = "schema.clean-json";

export const configSchema = t.Object(
  {
    removeNulls: t.Boolean({ default: true, description: "drop null members and array elements" }),
    removeEmptyStrings: t.Boolean({ default: true, description: "drop empty strings" }),
    removeEmptyArrays: t.Boolean({ default: true, description: "drop empty arrays" }),
    removeEmptyObjects: t.Boolean({ default: false, description: "drop empty objects (including objects emptied by the other rules)" }),
    trimStrings: t.Boolean({ default: false, description: "trim whitespace of strings (before the empty-string rule)" }),
  },
  { additionalProperties: false },
);

export type CleanJsonConfig = Static<typeof configSchema>;

const DROPPED = Symbol("dropped");

export function cleanJson(value: unknown, config: CleanJsonConfig): unknown {
  const cleaned = cleanValue(value, config);
  return cleaned === DROPPED ? emptyLike(value, config) : cleaned;
}

function cleanValue(value: unknown, config: CleanJsonConfig): unknown {
  if (value === null) return config.removeNulls ? DROPPED : null;
  if (typeof value === "string") {
    const text = config.trimStrings ? value.trim() : value;
    return text === "" && config.removeEmptyStrings ? DROPPED : text;
  }
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      const cleaned = cleanValue(item, config);
      if (cleaned !== DROPPED) items.push(cleaned);
    }
    return items.length === 0 && config.removeEmptyArrays ? DROPPED : items;
  }
  if (isObject(value)) {
    const members: Record<string, unknown> = {};
    let count = 0;
    for (const key of Object.keys(value)) {
      const cleaned = cleanValue(value[key], config);
      if (cleaned === DROPPED) continue;
      setOwn(members, key, cleaned);
      count++;
    }
    return count === 0 && config.removeEmptyObjects ? DROPPED : members;
  }
  return value;
}

/** What a dropped top-level value leaves: its emptied container, or the scalar as it was (trimmed). */
function emptyLike(value: unknown, config: CleanJsonConfig): unknown {
  if (Array.isArray(value)) return [];
  if (isObject(value)) return {};
  return typeof value === "string" && config.trimStrings ? value.trim() : value;
}

export default defineUtility({
  id,
  name: "Clean JSON",
  category: "cleanup",
  description:
    "Removes null values, empty strings and empty arrays (and optionally empty objects) at every depth, optionally trimming strings first.",
  configSchema,
  run: (inputs, config) => cleanJson(inputs.primary, config),
});
