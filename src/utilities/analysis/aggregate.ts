/**
 * analysis.aggregate: groups an array of objects by `groupBy` paths (first-seen order) and computes
 * the aggregations of each group. A field path with a wildcard contributes every value it reaches.
 *
 * Output bound: none small by construction: each group key and each `distinct`, `first` or `last`
 * holds input values, and a config may name the whole record (`""`) in a thousand of them, so every
 * value put in a row is charged to the budget by its size as the row is made.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { parseConfigPath } from "../shared/config-paths";
import { getAll, isObject, type JsonObject, type Path, setOwn } from "../shared/paths";
import { describeType } from "../shared/records";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";

export const id = "analysis.aggregate";

export const AGGREGATE_OPS = ["count", "sum", "avg", "min", "max", "median", "first", "last", "distinct", "countDistinct"] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];

export const configSchema = t.Object(
  {
    groupBy: t.Array(t.String(), { default: [], description: "paths whose values form the groups; empty: one group for the whole array" }),
    aggregations: t.Array(
      t.Object(
        {
          op: t.Union(AGGREGATE_OPS.map((op) => t.Literal(op))),
          field: t.Optional(
            t.String({ description: "the path aggregated (required except for count; count with a field counts its non-null values)" }),
          ),
          as: t.Optional(t.String({ minLength: 1, description: "output key; default `op` or `op_field` with dots as _" })),
        },
        { additionalProperties: false },
      ),
      { default: [{ op: "count" }] },
    ),
  },
  { additionalProperties: false },
);

export type AggregateConfig = Static<typeof configSchema>;
export type Aggregation = AggregateConfig["aggregations"][number];

const numbers = (values: unknown[]) => values.filter((value): value is number => typeof value === "number");
const present = (values: unknown[]) => values.filter((value) => value !== null && value !== undefined);
const finite = (value: number) => (Number.isFinite(value) ? value : null);
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = values.slice().sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : finite((sorted[middle - 1] + sorted[middle]) / 2);
}

/** Numbers when there are any, else strings (code-unit order); null when neither. */
function extreme(values: unknown[], pickLower: boolean): number | string | null {
  const numeric = numbers(values);
  const candidates: (number | string)[] =
    numeric.length > 0 ? numeric : values.filter((value): value is string => typeof value === "string");
  if (candidates.length === 0) return null;
  return candidates.reduce((best, value) => ((pickLower ? value < best : value > best) ? value : best));
}

function distinct(values: unknown[]): unknown[] {
  const seen = new Map<string, unknown>();
  for (const value of present(values)) {
    const key = JSON.stringify(value);
    if (!seen.has(key)) seen.set(key, value);
  }
  return [...seen.values()];
}

/** Each op over the values its field reached in one group (missing fields reach nothing). */
const OPERATIONS: Record<AggregateOp, (values: unknown[]) => unknown> = {
  count: (values) => present(values).length,
  sum: (values) => finite(sum(numbers(values))),
  avg: (values) => {
    const numeric = numbers(values);
    return numeric.length === 0 ? null : finite(sum(numeric) / numeric.length);
  },
  min: (values) => extreme(values, true),
  max: (values) => extreme(values, false),
  median: (values) => median(numbers(values)),
  first: (values) => present(values)[0] ?? null,
  last: (values) => present(values).at(-1) ?? null,
  distinct,
  countDistinct: (values) => distinct(values).length,
};

interface CompiledAggregation {
  name: string;
  path: Path | null;
  apply: (values: unknown[]) => unknown;
}

function compileAggregations(config: AggregateConfig): CompiledAggregation[] {
  const names = new Set(config.groupBy);
  return config.aggregations.map(({ op, field, as }, index) => {
    if (field === undefined && op !== "count") throw new UtilityConfigError(`aggregations/${index}/field`, `'${op}' needs a field`);
    const name = as ?? (field === undefined ? op : `${op}_${field.replaceAll(".", "_")}`);
    if (names.has(name)) {
      throw new UtilityConfigError(
        `aggregations/${index}/as`,
        `the output key '${name}' is already used (by a group key or another aggregation); name it with 'as'`,
      );
    }
    names.add(name);
    return { name, path: field === undefined ? null : parseConfigPath(field, `aggregations/${index}/field`), apply: OPERATIONS[op] };
  });
}

export function aggregate(primary: unknown, config: AggregateConfig, budget = unlimitedBudget()): unknown[] {
  const groupPaths = config.groupBy.map((path, index) => parseConfigPath(path, `groupBy/${index}`));
  const aggregations = compileAggregations(config);
  if (!Array.isArray(primary)) throw new UtilityError(`${id} takes an array of objects; primary is ${describeType(primary)}`);

  const groups = new Map<string, { keys: unknown[]; records: JsonObject[] }>();
  // without groupBy there is exactly one group, even for an empty array
  if (groupPaths.length === 0) groups.set(JSON.stringify([]), { keys: [], records: [] });
  primary.forEach((record, index) => {
    if (!isObject(record)) throw new UtilityError(`${id} takes an array of objects; element ${index} is ${describeType(record)}`);
    const keys = groupPaths.map((path) => getAll(record, path)[0]?.value ?? null);
    const identity = JSON.stringify(keys);
    let group = groups.get(identity);
    if (!group) groups.set(identity, (group = { keys, records: [] }));
    group.records.push(record);
  });

  return [...groups.values()].map(({ keys, records }) => {
    const row: JsonObject = {};
    const put = (name: string, value: unknown) => {
      budget.charge(name.length + 4);
      budget.chargeCopyOf(value);
      setOwn(row, name, value);
    };
    config.groupBy.forEach((path, index) => {
      put(path, keys[index]);
    });
    for (const { name, path, apply } of aggregations) {
      const values = path === null ? records : records.flatMap((record) => getAll(record, path).map((match) => match.value));
      put(name, apply(values));
    }
    return row;
  });
}

export default defineUtility({
  id,
  name: "Aggregate",
  category: "analysis",
  description:
    "Groups an array of objects by paths and computes count, sum, avg, min, max, median, first, last, distinct and countDistinct per group.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return aggregate(inputs.primary, config, budget);
  },
});
