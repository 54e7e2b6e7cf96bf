/**
 * structure.pick-fields: keeps only the given paths of each record, with their nesting, in the
 * record's own key order. One walk over the record follows all paths at once (PathSet).
 *
 * Decided: an element reached through a wildcard is kept even when none of the picked paths exist in it
 * (`{}` or `[]`), so `items.*.sku` keeps the array's length and positions; a member reached through a
 * literal segment is dropped when nothing inside it was picked. Array elements picked by index are
 * kept in their array order, compacted (`items.2` gives a one-element array).
 *
 * Paths without a wildcard (the usual `id`, `address.city`) are followed node by node through the trie
 * (pickLiteral): no path states to build or search per member, the generic walk only below arrays.
 *
 * Output bound: at most the input's size (a part of each record; an element kept empty, `{}` or `[]`,
 * stands for a container at least that large); no budget needed.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import {
  hasWildcard,
  isContainer,
  isObject,
  type JsonObject,
  type PathNode,
  PathSet,
  type PathState,
  parsePaths,
  setOwn,
} from "../shared/paths";
import { pickTextAt, textPathTrie } from "../shared/pick-text";
import { mapRecords, objectRecord } from "../shared/records";
import { defineUtility, UtilityConfigError, type UtilityInputs } from "../types";

export const id = "structure.pick-fields";

export const configSchema = t.Object(
  {
    paths: t.Optional(t.Array(t.String(), { description: "paths to keep (at least one, here or in `fields`)" })),
    fields: t.Optional(t.Array(t.String(), { description: "alias of `paths`" })),
  },
  { additionalProperties: false },
);

export type PickFieldsConfig = Static<typeof configSchema>;

const NOTHING = Symbol("nothing picked");

/** The picked part of `value`, or NOTHING when no path reaches anything inside it. */
function pick(value: unknown, state: PathState): unknown {
  if (PathSet.selected(state)) return value;
  // every member of this container is reached through a wildcard: keep it even when nothing inside it is picked
  const viaWildcard = PathSet.hasWildcard(state);
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const picked = pickMember(value[index], index, state, viaWildcard);
      if (picked !== NOTHING) kept.push(picked);
    }
    return kept.length > 0 ? kept : NOTHING;
  }
  if (isObject(value)) {
    const kept: JsonObject = {};
    let found = false;
    for (const key of Object.keys(value)) {
      const picked = pickMember(value[key], key, state, viaWildcard);
      if (picked === NOTHING) continue;
      setOwn(kept, key, picked);
      found = true;
    }
    return found ? kept : NOTHING;
  }
  return NOTHING;
}

/** One member of a container in `state` (a plain function, not a closure per container: it runs per member). */
function pickMember(member: unknown, key: string | number, state: PathState, viaWildcard: boolean): unknown {
  const next = PathSet.step(state, key);
  const picked = next.length === 0 ? NOTHING : pick(member, next);
  if (picked !== NOTHING || !viaWildcard || !isContainer(member)) return picked;
  return Array.isArray(member) ? [] : {};
}

/** pick() for a trie without wildcards, from one of its nodes: the same answers, one Map lookup per member. */
function pickLiteral(value: unknown, node: PathNode): unknown {
  if (node.terminal) return value;
  if (Array.isArray(value)) return pick(value, node.alone);
  if (!isObject(value)) return NOTHING;
  let kept: JsonObject | undefined;
  // for…in over a parsed object: its own keys in Object.keys order, without building their array
  for (const key in value) {
    const child = node.children.get(key);
    if (child === undefined) continue;
    const picked = pickLiteral(value[key], child);
    if (picked === NOTHING) continue;
    kept ??= {};
    setOwn(kept, key, picked);
  }
  return kept ?? NOTHING;
}

export function pickFields(primary: unknown, config: PickFieldsConfig): unknown {
  return mapRecords(primary, pickerOf(config));
}

function pathSetOf(config: PickFieldsConfig): PathSet {
  const paths = [...parsePaths(config.paths ?? [], "paths"), ...parsePaths(config.fields ?? [], "fields")];
  if (paths.length === 0) throw new UtilityConfigError("paths", "at least one path is required (`paths`, or its alias `fields`)");
  return new PathSet(paths);
}

function pickerOf(config: PickFieldsConfig): (record: unknown, index: number | null) => unknown {
  const start = pathSetOf(config).start;
  const [root] = start;
  const picker = hasWildcard(root) ? pick : (value: unknown) => pickLiteral(value, root);
  return (record, index) => {
    const picked = picker(objectRecord(record, index, id), start);
    return picked === NOTHING ? {} : picked;
  };
}

export default defineUtility({
  id,
  name: "Pick Fields",
  category: "structure",
  description: "Keeps only the given paths of each record (wildcards allowed), with their nesting.",
  configSchema,
  run: (inputs: UtilityInputs, config) => pickFields(inputs.primary, config),
  recordWise: (config) => pickerOf(config),
  runOnText(config, text, start) {
    const trie = textPathTrie(pathSetOf(config).start[0]);
    return trie && pickTextAt(text, start, trie);
  },
});
