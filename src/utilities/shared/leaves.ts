/**
 * A rebuild of JSON data in which every primitive (string, number, boolean, null) is replaced by what
 * a visitor returns, with one walk for several path sets: the visitor learns which sets select the
 * primitive, directly or through a container that holds it. Keys and structure are kept; prototype
 * keys stay data. Used by the utilities that rewrite values in place (map-values, format-values).
 */
import { isObject, type JsonObject, type PathKey, PathSet, type PathState, setOwn } from "./paths";

/** A path set's position during the walk; `true` once a path has selected this container or one above it. */
type Cursor = PathState | true;

export function mapLeaves(
  value: unknown,
  pathSets: readonly PathSet[],
  visit: (leaf: unknown, selected: readonly boolean[]) => unknown,
): unknown {
  const walk = (current: unknown, cursors: readonly Cursor[]): unknown => {
    if (Array.isArray(current)) return current.map((element, index) => walk(element, step(cursors, index)));
    if (isObject(current)) {
      const out: JsonObject = {};
      for (const key of Object.keys(current)) setOwn(out, key, walk(current[key], step(cursors, key)));
      return out;
    }
    return visit(
      current,
      cursors.map((cursor) => cursor === true),
    );
  };
  return walk(
    value,
    pathSets.map((set) => (PathSet.selected(set.start) ? true : set.start)),
  );
}

function step(cursors: readonly Cursor[], key: PathKey): Cursor[] {
  return cursors.map((cursor) => {
    if (cursor === true || cursor.length === 0) return cursor;
    const next = PathSet.step(cursor, key);
    return PathSet.selected(next) ? true : next;
  });
}
