/**
 * The path syntax of utilities.md "Paths", written once for every utility.
 *
 * Syntax (parsePath):
 *   - dot-separated segments: `user.address.city`, `items.0.sku`;
 *   - `[0]` equals `.0`; `*` or `[*]` matches every element of an array or every member of an object;
 *   - a leading `$.` (or `$[`) is ignored; `$` alone and `""` are the root (no segments);
 *   - a backslash makes the next character literal: `\.` a dot inside a key, `\*` a key that is a
 *     literal star, `\\` a backslash, `\[` a bracket;
 *   - an empty segment (`a..b`, `a.`), an unclosed or unknown bracket (`[x]`, `[-1]`) or a trailing
 *     backslash is a PathSyntaxError (parsePaths turns it into a UtilityConfigError naming the field).
 * A numeric segment addresses an array element when it is a canonical index (`0`, `12`; not `01`)
 * and an ordinary key on an object.
 *
 * Data: every function here treats `__proto__`, `constructor` and `prototype` as ordinary keys: reads
 * check own properties (hasOwn/getOwn), writes never reach a prototype (setOwn).
 *
 * API (stable; other utilities import it):
 *   parsePath(path) → readonly Segment[]         cached; ANY is the wildcard, a string a literal key
 *   parsePathField(path, field) → Segment[]       a config path, errors name `field`
 *   parsePaths(paths, field) → Segment[][]        config paths, errors name `${field}/${index}`
 *   formatPath(keys) → string                     concrete keys back to path text (escaped)
 *   getAll(root, path) → PathMatch[]              every match with its concrete keys, document order
 *   get(root, path) → unknown                     the first match's value, undefined when none
 *   exists(root, path) → boolean
 *   set(root, path, value, budget?)               MUTATES root: writes one concrete path (no wildcard),
 *                                                 creating missing (or null) parents as OBJECTS (also for
 *                                                 numeric segments: `a.0` on a missing `a` gives {"a":{"0":…}});
 *                                                 an existing array takes an index, padding with null
 *                                                 beyond its end (charged to `budget`: `items.99999999`
 *                                                 on a short array pads a hundred million nulls); writing
 *                                                 through a primitive is a UtilityError
 *   remove(root, path, {removeEmptyParents}) → n  MUTATES root: deletes every match, returns the count
 *   removeAll(root, paths | PathSet, options)     the same for several paths in one walk
 *   PathSet                                       a trie of several paths for one walk over the data
 *   hasWildcard(node)                             whether a wildcard continues below a trie node
 *   scopeOf(paths) / enterScope(scope, key)       "limit to these paths": a member is in scope when it
 *                                                 lies at or below one of the paths (no paths: all)
 *   hasOwn / getOwn / setOwn / isObject / isContainer / canonicalIndex
 * Callers that mutate must own the tree (records.ts cloneJson); inputs are never mutated by utilities.
 */

import type { OutputBudget } from "../budget";
import { UtilityConfigError, UtilityError } from "../types";
import { getOwn, hasOwn, isObject, setOwn } from "./own-members";

export { deepEqual, getOwn, hasOwn, isContainer, isObject, type JsonObject, setOwn } from "./own-members";

/** The wildcard segment (`*` or `[*]`). A literal `\*` parses to the string "*". */
export const ANY: unique symbol = Symbol("*");
export type Segment = string | typeof ANY;
export type Path = readonly Segment[];
export type PathLike = string | Path;
/** A concrete step: an object key or an array index. */
export type PathKey = string | number;
export interface PathMatch {
  path: PathKey[];
  value: unknown;
}

export class PathSyntaxError extends Error {
  override name = "PathSyntaxError";
}

/** The array index a segment names, or -1 when it is not a canonical non-negative integer. */
export function canonicalIndex(segment: Segment): number {
  if (typeof segment !== "string" || !/^(0|[1-9]\d{0,15})$/.test(segment)) return -1;
  const index = Number(segment);
  return Number.isSafeInteger(index) ? index : -1;
}

const CACHE_LIMIT = 2000;
const cache = new Map<string, Path>();

export function parsePath(path: string): Path {
  const cached = cache.get(path);
  if (cached) return cached;
  const parsed = Object.freeze(parseUncached(path));
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(path, parsed);
  return parsed;
}

function parseUncached(path: string): Segment[] {
  let text = path;
  if (text === "$") return [];
  if (text.startsWith("$.")) text = text.slice(2);
  else if (text.startsWith("$[")) text = text.slice(1);
  if (text === "") return [];

  const segments: Segment[] = [];
  let current = "";
  let escaped = false; // the current segment holds an escaped character, so `\*` is not the wildcard
  let pendingSegment = true; // a segment must follow (start, or after a dot)
  let i = 0;
  const endSegment = () => {
    if (current === "" && !escaped) throw new PathSyntaxError(`empty segment in path '${path}'`);
    segments.push(current === "*" && !escaped ? ANY : current);
    current = "";
    escaped = false;
  };
  while (i < text.length) {
    const char = text[i]!;
    if (char === "\\") {
      if (i + 1 >= text.length) throw new PathSyntaxError(`path '${path}' ends with a lone backslash`);
      current += text[i + 1];
      escaped = true;
      pendingSegment = false;
      i += 2;
    } else if (char === ".") {
      if (pendingSegment || current !== "" || escaped) endSegment();
      pendingSegment = true;
      i += 1;
    } else if (char === "[") {
      if (current !== "" || escaped) endSegment();
      else if (pendingSegment && segments.length > 0) throw new PathSyntaxError(`empty segment in path '${path}'`);
      const close = text.indexOf("]", i);
      const inside = close < 0 ? "" : text.slice(i + 1, close);
      if (inside === "*") segments.push(ANY);
      else if (canonicalIndex(inside) >= 0) segments.push(inside);
      else
        throw new PathSyntaxError(
          `'[${close < 0 ? text.slice(i + 1) : inside}' in path '${path}' is not an index ([0]) or a wildcard ([*])`,
        );
      i = close + 1;
      const next = text[i];
      if (next !== undefined && next !== "." && next !== "[") {
        throw new PathSyntaxError(`'${next}' after ']' in path '${path}': expected '.', '[' or the end`);
      }
      if (next === ".") i += 1;
      pendingSegment = next === ".";
    } else {
      current += char;
      pendingSegment = false;
      i += 1;
    }
  }
  if (pendingSegment || current !== "" || escaped) endSegment();
  return segments;
}

const toPath = (path: PathLike): Path => (typeof path === "string" ? parsePath(path) : path);

/** Parses a config path; a syntax error becomes a UtilityConfigError at `field`. */
export function parsePathField(path: string, field: string): Path {
  try {
    return parsePath(path);
  } catch (error) {
    if (error instanceof PathSyntaxError) throw new UtilityConfigError(field, error.message);
    throw error;
  }
}

/** Parses a list of config paths; errors name `${field}/${index}`. */
export function parsePaths(paths: readonly string[], field: string): Path[] {
  return paths.map((path, index) => parsePathField(path, `${field}/${index}`));
}

/** Keys (or parsed segments) back to path text; keys holding `.`, `*`, `[` or `\` are escaped. */
export function formatPath(keys: readonly (PathKey | Segment)[]): string {
  return keys.map((key) => (key === ANY ? "*" : typeof key === "number" ? String(key) : key.replace(/[.*[\\]/g, "\\$&"))).join(".");
}

/** Every value the path reaches, with its concrete keys, in document order. */
export function getAll(root: unknown, path: PathLike): PathMatch[] {
  const segments = toPath(path);
  const matches: PathMatch[] = [];
  const walk = (value: unknown, depth: number, keys: PathKey[]) => {
    if (depth === segments.length) {
      matches.push({ path: keys, value });
      return;
    }
    const segment = segments[depth]!;
    if (Array.isArray(value)) {
      if (segment === ANY) {
        value.forEach((element, index) => {
          walk(element, depth + 1, [...keys, index]);
        });
      } else {
        const index = canonicalIndex(segment);
        if (index >= 0 && index < value.length) walk(value[index], depth + 1, [...keys, index]);
      }
    } else if (isObject(value)) {
      if (segment === ANY) for (const key of Object.keys(value)) walk(value[key], depth + 1, [...keys, key]);
      else if (hasOwn(value, segment)) walk(value[segment], depth + 1, [...keys, segment]);
    }
  };
  walk(root, 0, []);
  return matches;
}

export function get(root: unknown, path: PathLike): unknown {
  return getAll(root, path)[0]?.value;
}

export function exists(root: unknown, path: PathLike): boolean {
  return getAll(root, path).length > 0;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Writes `value` at a concrete path of `root` (mutating it), creating missing parents as objects. */
export function set(root: unknown, path: PathLike, value: unknown, budget?: OutputBudget): void {
  const segments = toPath(path);
  if (segments.includes(ANY)) throw new UtilityError(`cannot write to '${formatPath(segments)}': a wildcard path names no single place`);
  if (segments.length === 0) throw new UtilityError("cannot write to the root path");
  const refuse = (depth: number, why: string) => {
    const where = depth === 0 ? "the record" : `'${formatPath(segments.slice(0, depth))}'`;
    return new UtilityError(`cannot write '${formatPath(segments)}': ${where} ${why}`);
  };
  let container: unknown = root;
  for (let depth = 0; depth < segments.length; depth++) {
    const segment = segments[depth] as string;
    const last = depth === segments.length - 1;
    if (Array.isArray(container)) {
      const index = canonicalIndex(segment);
      if (index < 0) throw refuse(depth, `is an array and '${segment}' is not an index`);
      // each padding null serialises as `null,`
      if (container.length < index) budget?.charge((index - container.length) * 5);
      while (container.length < index) container.push(null);
      if (last) container[index] = value;
      else {
        if (container[index] === undefined || container[index] === null) container[index] = {};
        container = container[index];
      }
    } else if (isObject(container)) {
      if (last) setOwn(container, segment, value);
      else {
        const child = getOwn(container, segment);
        if (child === undefined || child === null) setOwn(container, segment, {});
        container = container[segment];
      }
    } else {
      throw refuse(depth, `is ${describe(container)}, not an object or array`);
    }
  }
}

/**
 * Deletes every match of `path` in `root` (mutating it) and returns how many were deleted. Array
 * elements are spliced out (indexes refer to the array before the removal). With removeEmptyParents,
 * an object that became empty through the removal is deleted from its parent too, all the way up
 * (the root itself stays).
 */
export function remove(root: unknown, path: PathLike, options: { removeEmptyParents?: boolean } = {}): number {
  return removeAll(root, [toPath(path)], options);
}

/**
 * remove() for several paths in one walk, so that every array index refers to the array before any
 * removal. A PathSet built once can be passed instead of the paths, for many records.
 */
export function removeAll(root: unknown, paths: readonly Path[] | PathSet, options: { removeEmptyParents?: boolean } = {}): number {
  let removed = 0;
  // drops the members of `value` that a path selects; true when a non-empty object is left empty
  const walk = (value: unknown, state: PathState): boolean => {
    if (Array.isArray(value)) {
      const kept = value.filter((element, index) => !drops(element, PathSet.step(state, index)));
      if (kept.length < value.length) {
        value.length = 0;
        value.push(...kept);
      }
      return false;
    }
    if (!isObject(value)) return false;
    const keys = Object.keys(value);
    for (const key of keys) if (drops(value[key], PathSet.step(state, key))) delete value[key];
    return keys.length > 0 && Object.keys(value).length === 0;
  };
  const drops = (member: unknown, state: PathState): boolean => {
    if (state.length === 0) return false;
    if (PathSet.selected(state)) {
      removed += 1;
      return true;
    }
    return walk(member, state) && options.removeEmptyParents === true;
  };
  const start = (paths instanceof PathSet ? paths : new PathSet(paths)).start;
  if (!PathSet.selected(start)) walk(root, start);
  return removed;
}

/**
 * Several paths compiled into one trie, so a utility can walk the data once and ask, at each member,
 * whether it lies on, at or below one of the paths. States are arrays of trie nodes (overlapping
 * paths such as `*.a` and `x.b` are followed together).
 */
export interface PathNode {
  /** a path ends here: this member is selected (and so is everything inside it) */
  terminal: boolean;
  children: Map<string, PathNode>;
  any: PathNode | null;
  /** the state holding this node alone: stepping along one path allocates nothing */
  alone: PathState;
}
export type PathState = readonly PathNode[];

/** The state no path continues from. */
const NO_PATH: PathState = Object.freeze([]);

export class PathSet {
  readonly start: PathState;

  constructor(paths: readonly Path[]) {
    const root: PathNode = newNode();
    for (const path of paths) {
      let node = root;
      for (const segment of path) {
        if (segment === ANY) node = node.any ??= newNode();
        else {
          let child = node.children.get(segment);
          if (!child) node.children.set(segment, (child = newNode()));
          node = child;
        }
      }
      node.terminal = true;
    }
    this.start = [root];
  }

  /** The state after stepping into member `key` (an array index is given as a number). */
  static step(state: PathState, key: PathKey): PathState {
    const name = typeof key === "number" ? String(key) : key;
    if (state.length === 1) {
      // the usual case, one path or one trie node: a shared state, no new array per member
      const node = state[0];
      const child = node.children.get(name);
      if (!child) return node.any ? node.any.alone : NO_PATH;
      if (!node.any) return child.alone;
    }
    const next: PathNode[] = [];
    for (const node of state) {
      const child = node.children.get(name);
      if (child) next.push(child);
      if (node.any) next.push(node.any);
    }
    return next;
  }

  static selected(state: PathState): boolean {
    return state.some((node) => node.terminal);
  }

  /** a wildcard continues from this state: every member of the container here is on a path */
  static hasWildcard(state: PathState): boolean {
    return state.some((node) => node.any !== null);
  }
}

/** Whether a wildcard continues anywhere below `node` (else every path below it is literal). */
export const hasWildcard = (node: PathNode): boolean => node.any !== null || [...node.children.values()].some(hasWildcard);

function newNode(): PathNode {
  const node: PathNode = { terminal: false, children: new Map(), any: null, alone: NO_PATH };
  node.alone = Object.freeze([node]);
  return node;
}

/**
 * `paths` as a scope for utilities that act "everywhere, or only at these paths": `true` means this
 * value and everything inside it is in scope; a PathState means a path continues below; entering a
 * member that no path reaches gives null.
 */
export type Scope = true | PathState;

export function scopeOf(paths: readonly Path[] | undefined): Scope {
  if (paths === undefined) return true;
  const start = new PathSet(paths).start;
  return PathSet.selected(start) ? true : start;
}

export function enterScope(scope: Scope, key: PathKey): Scope | null {
  if (scope === true) return true;
  const next = PathSet.step(scope, key);
  if (PathSet.selected(next)) return true;
  return next.length === 0 ? null : next;
}
