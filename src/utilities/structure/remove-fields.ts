/**
 * structure.remove-fields: removes the given paths (wildcards allowed) from each record; paths that do
 * not exist are ignored. With removeEmptyParents, objects that the removal leaves empty are dropped as
 * well, up the chain (objects already empty before are kept; the record itself always stays).
 *
 * Each record is copied only along the paths that remove something: a member no path reaches, or one
 * a path crosses without removing anything inside it, is the input's own value, shared rather than
 * copied (utilities never mutate their input, so sharing is safe; copying every record cost 6 × the
 * removal itself: bench/README.md, Utilities).
 *
 * Output bound: at most the input's size (members are only removed); no budget needed.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { hasWildcard, isObject, type JsonObject, type PathNode, PathSet, type PathState, parsePaths, setOwn } from "../shared/paths";
import { type Defaulted, mapRecords, objectRecord } from "../shared/records";
import { defineUtility, UtilityConfigError, type UtilityInputs } from "../types";

export const id = "structure.remove-fields";

export const configSchema = t.Object(
  {
    paths: t.Array(t.String(), { description: "paths to remove" }),
    removeEmptyParents: t.Optional(t.Boolean({ default: false, description: "drop objects that become empty" })),
  },
  { additionalProperties: false },
);

export type RemoveFieldsConfig = Defaulted<Static<typeof configSchema>, "removeEmptyParents">;

/** A member that leaves its container: selected by a path, or an object emptied by the removal (removeEmptyParents). */
const DROPPED = Symbol("dropped");

/**
 * `value` without what the paths below `state` select: the value itself when nothing inside it goes,
 * else a copy of the containers on the way; DROPPED when it is an object the removal emptied and
 * `dropEmptied` holds. Arrays never count as emptied.
 */
function pruned(value: unknown, state: PathState, dropEmptied: boolean): unknown {
  if (Array.isArray(value)) {
    let kept: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const element = value[index];
      const result = prunedMember(element, PathSet.step(state, index), dropEmptied);
      if (result !== element) kept ??= value.slice(0, index);
      if (kept && result !== DROPPED) kept.push(result);
    }
    return kept ?? value;
  }
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  let kept: JsonObject | undefined;
  let left = 0;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    const member = value[key];
    const result = prunedMember(member, PathSet.step(state, key), dropEmptied);
    if (result !== member && !kept) {
      kept = {};
      for (let before = 0; before < index; before++) setOwn(kept, keys[before], value[keys[before]]);
    }
    if (result === DROPPED) continue;
    left++;
    if (kept) setOwn(kept, key, result);
  }
  if (!kept) return value;
  return left === 0 && keys.length > 0 && dropEmptied ? DROPPED : kept;
}

/**
 * pruned() for paths without a wildcard, from one trie node: one Map lookup per member instead of a
 * path state, the generic walk only below arrays (whose elements are reached by index).
 */
function prunedLiteral(value: unknown, node: PathNode, dropEmptied: boolean): unknown {
  if (Array.isArray(value)) return pruned(value, node.alone, dropEmptied);
  if (!isObject(value)) return value;
  let kept: JsonObject | undefined;
  let seen = 0;
  let left = 0;
  for (const key in value) {
    const member = value[key];
    const child = node.children.get(key);
    const result = child === undefined ? member : child.terminal ? DROPPED : prunedLiteral(member, child, dropEmptied);
    if (result !== member && !kept) {
      kept = {};
      for (const before in value) {
        if (before === key) break;
        setOwn(kept, before, value[before]);
      }
    }
    seen++;
    if (result === DROPPED) continue;
    left++;
    if (kept) setOwn(kept, key, result);
  }
  if (!kept) return value;
  return left === 0 && seen > 0 && dropEmptied ? DROPPED : kept;
}

function prunedMember(member: unknown, state: PathState, dropEmptied: boolean): unknown {
  if (state.length === 0) return member;
  if (PathSet.selected(state)) return DROPPED;
  return pruned(member, state, dropEmptied);
}

export function removeFields(primary: unknown, config: RemoveFieldsConfig): unknown {
  const paths = parsePaths(config.paths, "paths");
  paths.forEach((path, index) => {
    if (path.length === 0) throw new UtilityConfigError(`paths/${index}`, "the record itself cannot be removed");
  });
  const start = new PathSet(paths).start;
  const [root] = start;
  const prune = hasWildcard(root)
    ? (record: unknown) => pruned(record, start, config.removeEmptyParents)
    : (record: unknown) => prunedLiteral(record, root, config.removeEmptyParents);
  return mapRecords(primary, (record, index) => {
    const result = prune(objectRecord(record, index, id));
    // the record itself always stays, even when the removal emptied it
    return result === DROPPED ? {} : result;
  });
}

export default defineUtility({
  id,
  name: "Remove Fields",
  category: "structure",
  description: "Removes the given paths (wildcards allowed) from each record.",
  configSchema,
  run: (inputs: UtilityInputs, config) => removeFields(inputs.primary, config as RemoveFieldsConfig),
});
