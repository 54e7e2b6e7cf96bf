/**
 * structure.flatten-nest: `flatten` turns each record into one level of delimiter-joined keys;
 * `nest` splits keys on the delimiter and builds the nesting back.
 *
 * Decided: maxDepth N means a flattened key has at most N segments (the value there stays nested).
 * Flattening two members onto the same key (`{"a.b":1,"a":{"b":2}}`) is a 400, like nest's conflicts.
 * `nest` builds an array where the keys at a level are exactly `0..n-1`, below the record: the record
 * itself stays an object. Objects that were values before nesting (an empty `{}`, a part kept by
 * maxDepth) are never merged into or turned into arrays.
 */
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import { hasOwn, type JsonObject, setOwn } from "../shared/paths";
import { type Defaulted, mapRecords, objectRecord } from "../shared/records";
import { defineUtility, UtilityError, type UtilityInputs } from "../types";

export const id = "structure.flatten-nest";

export const configSchema = t.Object(
  {
    mode: t.Optional(t.Union([t.Literal("flatten"), t.Literal("nest")], { default: "flatten" })),
    delimiter: t.Optional(
      t.String({ minLength: 1, maxLength: 5, default: ".", description: "joins (flatten) or splits (nest) key segments" }),
    ),
    flattenArrays: t.Optional(t.Boolean({ default: true, description: "array elements get index segments; false keeps arrays as values" })),
    maxDepth: t.Optional(Type.Integer({ minimum: 1, description: "flatten no deeper: keys have at most this many segments" })),
  },
  { additionalProperties: false },
);

export type FlattenNestConfig = Defaulted<Static<typeof configSchema>, "mode" | "delimiter" | "flattenArrays">;

/**
 * Output bound: each leaf's key repeats the keys of every level above it, so a deep, wide record
 * flattens to much more than itself; each key made is charged to `budget` by its length.
 */
export function flatten(record: JsonObject, config: Omit<FlattenNestConfig, "mode">, budget = unlimitedBudget()): JsonObject {
  const maxDepth = config.maxDepth ?? Infinity;
  const keys = Object.keys(record);
  if (maxDepth <= 1 || !keys.some((key) => opens(record[key], config.flattenArrays))) {
    // already flat: the answer has the record's keys, values and order, so the record is the answer
    for (const key of keys) budget.charge(key.length);
    return record;
  }
  const flat: JsonObject = {};
  const walk: Walk = { flat, delimiter: config.delimiter, flattenArrays: config.flattenArrays, maxDepth, budget };
  for (const key of keys) flattenInto(walk, record[key], key, 1);
  return flat;
}

/** Whether flattening goes into `value` rather than keeping it as a leaf (below maxDepth). */
function opens(value: unknown, flattenArrays: boolean): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return flattenArrays && value.length > 0;
  for (const _ in value) return true;
  return false;
}

/** One record's flattening: what every step of it reads, passed down rather than closed over per record. */
interface Walk {
  flat: JsonObject;
  delimiter: string;
  flattenArrays: boolean;
  maxDepth: number;
  budget: OutputBudget;
}

/** `value` under `key`: a leaf (a primitive, an empty container, or one at maxDepth) or its members, one level down. */
function flattenInto(walk: Walk, value: unknown, key: string, depth: number): void {
  if (depth < walk.maxDepth && opens(value, walk.flattenArrays)) {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) flattenInto(walk, value[index], key + walk.delimiter + index, depth + 1);
    } else {
      for (const member of Object.keys(value as JsonObject))
        flattenInto(walk, (value as JsonObject)[member], key + walk.delimiter + member, depth + 1);
    }
    return;
  }
  if (hasOwn(walk.flat, key)) throw new UtilityError(`two members flatten onto the same key '${key}'; choose another delimiter`);
  walk.budget.charge(key.length);
  setOwn(walk.flat, key, value);
}

export function nest(record: JsonObject, delimiter: string): JsonObject {
  const root: JsonObject = {};
  // objects created here by splitting keys (with the first key that needed each), as opposed to
  // object values carried over whole
  const built = new Map<unknown, string>([[root, ""]]);
  const conflict = (value: string, object: string) =>
    new UtilityError(`keys '${value}' and '${object}' conflict: '${value}' cannot hold a value and nested keys at once`);
  for (const key of Object.keys(record)) {
    const segments = key.split(delimiter);
    let node = root;
    for (let i = 0; i < segments.length - 1; i++) {
      const segment = segments[i]!;
      if (!hasOwn(node, segment)) {
        const child: JsonObject = {};
        built.set(child, key);
        setOwn(node, segment, child);
      }
      const next = node[segment];
      if (!built.has(next)) throw conflict(segments.slice(0, i + 1).join(delimiter), key);
      node = next as JsonObject;
    }
    const last = segments[segments.length - 1]!;
    if (hasOwn(node, last)) throw conflict(key, built.get(node[last]) ?? key);
    setOwn(node, last, record[key]);
  }
  const toArrays = (node: JsonObject): unknown => {
    for (const key of Object.keys(node)) {
      if (built.has(node[key])) setOwn(node, key, toArrays(node[key] as JsonObject));
    }
    if (node === root) return node;
    const keys = Object.keys(node);
    return keys.every((key, index) => key === String(index)) ? keys.map((key) => node[key]) : node;
  };
  return toArrays(root) as JsonObject;
}

export function flattenNest(primary: unknown, config: FlattenNestConfig, budget = unlimitedBudget()): unknown {
  return mapRecords(primary, (record, index) => {
    const object = objectRecord(record, index, id);
    return config.mode === "nest" ? nest(object, config.delimiter) : flatten(object, config, budget);
  });
}

export default defineUtility({
  id,
  name: "Flatten / Nest",
  category: "structure",
  description: "Flattens nested objects into delimiter-joined keys, or nests such keys back.",
  configSchema,
  amplifies: true,
  run: (inputs: UtilityInputs, config, budget) => flattenNest(inputs.primary, config as FlattenNestConfig, budget),
});
