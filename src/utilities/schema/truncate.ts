/**
 * schema.truncate: shortens long strings and long arrays of each record.
 *
 * Lengths count code points, so a surrogate pair (an emoji, say) is never cut in half; the ellipsis
 * counts towards maxStringLength. Decided: an ellipsis longer than maxStringLength is itself cut to
 * that length; with `paths`, strings and arrays at or below those paths are shortened; as the rule is
 * record-wise, a top-level array is a list of records and is not shortened itself.
 *
 * Output bound: at most the input's size: a cut string keeps fewer code points than it had, ellipsis
 * included, and arrays only lose items; no budget needed.
 */
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { enterScope, isObject, type JsonObject, parsePaths, type Scope, scopeOf, setOwn } from "../shared/paths";
import { type Defaulted, mapRecords } from "../shared/records";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "schema.truncate";

export const configSchema = t.Object(
  {
    maxStringLength: t.Optional(
      Type.Integer({ minimum: 1, default: 100, description: "characters (code points) of a string, ellipsis included" }),
    ),
    ellipsis: t.Optional(t.String({ default: "…", description: "appended to a cut string" })),
    maxArrayLength: t.Optional(Type.Integer({ minimum: 0, description: "longer arrays keep their first items (default: no limit)" })),
    paths: t.Optional(t.Array(t.String(), { description: "limit to these paths (default: everywhere)" })),
  },
  { additionalProperties: false },
);

export type TruncateConfig = Defaulted<Static<typeof configSchema>, "maxStringLength" | "ellipsis">;

/** The UTF-16 offset just after the first `count` code points of `text` (text.length when it has fewer). */
export function codePointOffset(text: string, count: number): number {
  let offset = 0;
  for (let seen = 0; seen < count && offset < text.length; seen++) {
    const unit = text.charCodeAt(offset);
    const pair = unit >= 0xd800 && unit <= 0xdbff && offset + 1 < text.length && (text.charCodeAt(offset + 1) & 0xfc00) === 0xdc00;
    offset += pair ? 2 : 1;
  }
  return offset;
}

export function truncateString(text: string, maxLength: number, ellipsis: string): string {
  // a string of at most maxLength UTF-16 units has at most maxLength code points
  if (text.length <= maxLength || codePointOffset(text, maxLength) === text.length) return text;
  const ellipsisLength = [...ellipsis].length;
  if (ellipsisLength >= maxLength) return ellipsis.slice(0, codePointOffset(ellipsis, maxLength));
  return text.slice(0, codePointOffset(text, maxLength - ellipsisLength)) + ellipsis;
}

export function truncate(primary: unknown, config: TruncateConfig): unknown {
  const scope = scopeOf(config.paths === undefined ? undefined : parsePaths(config.paths, "paths"));
  const { maxStringLength, ellipsis, maxArrayLength } = config;
  const walk = (value: unknown, scope: Scope): unknown => {
    if (typeof value === "string") return scope === true ? truncateString(value, maxStringLength, ellipsis) : value;
    if (Array.isArray(value)) {
      const kept = scope === true && maxArrayLength !== undefined ? value.slice(0, maxArrayLength) : value;
      return kept.map((element, index) => {
        const inner = enterScope(scope, index);
        return inner === null ? element : walk(element, inner);
      });
    }
    if (!isObject(value)) return value;
    const result: JsonObject = {};
    for (const key of Object.keys(value)) {
      const inner = enterScope(scope, key);
      setOwn(result, key, inner === null ? value[key] : walk(value[key], inner));
    }
    return result;
  };
  return mapRecords(primary, (record) => walk(record, scope));
}

export default defineUtility({
  id,
  name: "Truncate",
  category: "schema",
  description: "Shortens long strings (by characters, ellipsis included) and long arrays.",
  configSchema,
  run: (inputs: UtilityInputs, config) => truncate(inputs.primary, config as TruncateConfig),
});
