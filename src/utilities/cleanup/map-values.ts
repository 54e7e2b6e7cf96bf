/**
 * cleanup.map-values: replaces primitive values through a lookup table. Record-wise. A string is
 * looked up by its text, a number, boolean or null by its JSON text (`1` finds the mapping "1").
 *
 * Output bound: none by construction (a one-character value mapped to a megabyte, shared until it is
 * serialised), so what each replacement adds over the value it replaces is charged to the budget.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { jsonSizeOf, unlimitedBudget } from "../budget";
import { mapLeaves } from "../shared/leaves";
import { PathSet, parsePaths } from "../shared/paths";
import { mapRecords } from "../shared/records";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "cleanup.map-values";

export const configSchema = t.Object(
  {
    mappings: t.Record(t.String(), t.Unknown(), {
      description: 'lookup table: text of a value → its replacement (any JSON), e.g. { "Y": true, "N": false }',
    }),
    paths: t.Optional(
      t.Array(t.String(), {
        description: "map the values at these paths (every primitive inside a selected object or array); default: every primitive value",
      }),
    ),
    caseSensitive: t.Boolean({ default: true }),
    unmatched: t.Union([t.Literal("keep"), t.Literal("null"), t.Literal("default")], {
      default: "keep",
      description: "what a value without a mapping becomes",
    }),
    default: t.Unknown({ default: null, description: 'the replacement of unmatched values under unmatched: "default"' }),
  },
  { additionalProperties: false },
);

export type MapValuesConfig = Static<typeof configSchema>;

const lookupText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

export function mapValues(primary: unknown, config: MapValuesConfig, budget = unlimitedBudget()): unknown {
  const fold = config.caseSensitive ? (text: string) => text : (text: string) => text.toLowerCase();
  const table = new Map<string, { value: unknown; size: number }>();
  const entry = (value: unknown) => ({ value, size: jsonSizeOf(value) });
  // case-insensitively, "Y" and "y" are one entry: the first written wins
  for (const key of Object.keys(config.mappings)) if (!table.has(fold(key))) table.set(fold(key), entry(config.mappings[key]));
  const fallback = entry(config.unmatched === "null" ? null : config.default);
  const pathSets = config.paths === undefined ? [] : [new PathSet(parsePaths(config.paths, "paths"))];

  const map = (value: unknown): unknown => {
    const replacement = table.get(fold(lookupText(value))) ?? (config.unmatched === "keep" ? undefined : fallback);
    if (replacement === undefined) return value;
    const added = replacement.size - jsonSizeOf(value);
    if (added > 0) budget.charge(added);
    return replacement.value;
  };
  return mapRecords(primary, (record) =>
    mapLeaves(record, pathSets, (leaf, selected) => (pathSets.length === 0 || selected[0] ? map(leaf) : leaf)),
  );
}

export default defineUtility({
  id,
  name: "Map values",
  category: "cleanup",
  description:
    'Replaces values through a lookup table ({ "Y": true, "N": false }), everywhere or at the given paths, record by record; unmatched values are kept, nulled or defaulted.',
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return mapValues(inputs.primary, config, budget);
  },
});
