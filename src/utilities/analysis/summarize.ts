/**
 * analysis.summarize: describes a document in one walk. For an array of objects:
 * `{ type: "array", count, fields }`, the paths relative to each element; for any other value:
 * `{ type, depth, keys, fields }`, the paths relative to the document. Nested members are dotted
 * paths and array elements share the segment `*` (`items.*.sku`), so every element contributes to
 * the same statistics. Every path reports the same members:
 * `{ types, present, nulls, distinct, min, max, mean, minLength, maxLength, top }`.
 *
 * Output bound: at most maxFields entries of about 150 bytes plus the field's path, but a path repeats
 * every key above it, so a document 10,000 levels deep has paths of 20,000 characters from 60 KB of
 * input. Each path is charged to the budget by its length when first seen (also the paths past
 * maxFields, which are kept to be counted), each entry by its size when made.
 */
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import { formatPath, isObject, type JsonObject, setOwn } from "../shared/paths";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "analysis.summarize";

export const configSchema = t.Object(
  {
    topValues: Type.Integer({ minimum: 0, maximum: 50, default: 5, description: "how many most frequent values each field lists" }),
    maxFields: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 500,
      description: "at most this many paths are described; further ones are counted in fieldsOmitted",
    }),
  },
  { additionalProperties: false },
);

export type SummarizeConfig = Static<typeof configSchema>;

export interface FieldSummary {
  /** JSON type → occurrences ("string", "number", "boolean", "null", "object", "array"), first-seen order */
  types: Record<string, number>;
  /** occurrences of the path (null values included) */
  present: number;
  nulls: number;
  /** distinct string, number and boolean values */
  distinct: number;
  min: number | null;
  max: number | null;
  mean: number | null;
  minLength: number | null;
  maxLength: number | null;
  /** the most frequent string, number and boolean values, most frequent first (ties: first seen) */
  top: { value: unknown; count: number }[];
}

const jsonType = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

/**
 * The `limit` entries with the highest counts, ties in first-seen order, in one pass (a field can
 * have as many distinct values as records; sorting them all would dominate the run).
 */
function mostFrequent(entries: Iterable<{ value: unknown; count: number }>, limit: number): { value: unknown; count: number }[] {
  const top: { value: unknown; count: number }[] = [];
  if (limit === 0) return top;
  for (const entry of entries) {
    if (top.length === limit && entry.count <= top[limit - 1].count) continue;
    let at = top.length;
    while (at > 0 && top[at - 1].count < entry.count) at--;
    top.splice(at, 0, entry);
    if (top.length > limit) top.pop();
  }
  return top;
}

class FieldStats {
  private readonly types = new Map<string, number>();
  private present = 0;
  private nulls = 0;
  private readonly counts = new Map<unknown, { value: unknown; count: number }>();
  private numbers = 0;
  private sum = 0;
  private min = Infinity;
  private max = -Infinity;
  private minLength = Infinity;
  private maxLength = -Infinity;

  add(value: unknown): void {
    const type = jsonType(value);
    this.types.set(type, (this.types.get(type) ?? 0) + 1);
    this.present++;
    if (value === null) this.nulls++;
    if (type === "object" || type === "array" || value === null) return;
    if (typeof value === "number") {
      this.numbers++;
      this.sum += value;
      if (value < this.min) this.min = value;
      if (value > this.max) this.max = value;
    } else if (typeof value === "string") {
      if (value.length < this.minLength) this.minLength = value.length;
      if (value.length > this.maxLength) this.maxLength = value.length;
    }
    // keyed by the value itself: a Map keeps 1 and "1" apart
    const entry = this.counts.get(value);
    if (entry) entry.count++;
    else this.counts.set(value, { value, count: 1 });
  }

  summary(topValues: number): FieldSummary {
    const hasStrings = this.types.has("string");
    const orNull = (value: number, when: boolean) => (when && Number.isFinite(value) ? value : null);
    const top = mostFrequent(this.counts.values(), topValues);
    return {
      types: Object.fromEntries(this.types),
      present: this.present,
      nulls: this.nulls,
      distinct: this.counts.size,
      min: orNull(this.min, this.numbers > 0),
      max: orNull(this.max, this.numbers > 0),
      mean: orNull(this.sum / this.numbers, this.numbers > 0),
      minLength: orNull(this.minLength, hasStrings),
      maxLength: orNull(this.maxLength, hasStrings),
      top: top.map(({ value, count }) => ({ value, count })),
    };
  }
}

/** One field's summary without its top values, which are input values (each in one field's summary). */
const SUMMARY_BYTES = 160;

class Collector {
  readonly fields = new Map<string, FieldStats>();
  private readonly omitted = new Set<string>();
  /** members of every object plus elements of every array, at every depth */
  members = 0;

  constructor(
    private readonly maxFields: number,
    private readonly budget: OutputBudget,
  ) {}

  /** Records `value` at `path` and walks inside it; returns the nesting depth of `value`. */
  visit(path: string, value: unknown): number {
    if (path !== "") this.stats(path)?.add(value);
    const child = (segment: string) => (path === "" ? segment : `${path}.${segment}`);
    if (Array.isArray(value)) {
      this.members += value.length;
      let depth = 0;
      const elementPath = child("*");
      for (const element of value) depth = Math.max(depth, this.visit(elementPath, element));
      return depth + 1;
    }
    if (isObject(value)) {
      const keys = Object.keys(value);
      this.members += keys.length;
      let depth = 0;
      for (const key of keys) depth = Math.max(depth, this.visit(child(this.escaped(key)), value[key]));
      return depth + 1;
    }
    return 0;
  }

  private readonly escapedKeys = new Map<string, string>();

  /** A key holding a dot or a star is escaped, so that `*` only ever means "every element". */
  private escaped(key: string): string {
    let escaped = this.escapedKeys.get(key);
    if (escaped === undefined) this.escapedKeys.set(key, (escaped = formatPath([key])));
    return escaped;
  }

  private stats(name: string): FieldStats | undefined {
    let stats = this.fields.get(name);
    if (stats) return stats;
    if (this.fields.size >= this.maxFields) {
      if (!this.omitted.has(name)) this.budget.charge(name.length);
      this.omitted.add(name);
      return undefined;
    }
    this.budget.charge(name.length + SUMMARY_BYTES);
    this.fields.set(name, (stats = new FieldStats()));
    return stats;
  }

  report(topValues: number): { fields: JsonObject; omitted: number } {
    const fields: JsonObject = {};
    for (const [name, stats] of this.fields) setOwn(fields, name, stats.summary(topValues));
    return { fields, omitted: this.omitted.size };
  }
}

export function summarize(primary: unknown, config: SummarizeConfig, budget = unlimitedBudget()): JsonObject {
  const collector = new Collector(config.maxFields, budget);
  const recordsOfObjects = Array.isArray(primary) && primary.every(isObject);
  let head: JsonObject;
  if (recordsOfObjects) {
    for (const record of primary) collector.visit("", record);
    head = { type: "array", count: primary.length };
  } else {
    const depth = collector.visit("", primary);
    head = { type: jsonType(primary), depth, keys: collector.members };
  }
  const { fields, omitted } = collector.report(config.topValues);
  return { ...head, fields, ...(omitted > 0 ? { fieldsOmitted: omitted } : {}) };
}

export default defineUtility({
  id,
  name: "Summarize",
  category: "analysis",
  description:
    "Describes a document: per-path types, presence, nulls, distinct values, numeric range and mean, string lengths and the most frequent values.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return summarize(inputs.primary, config, budget);
  },
});
