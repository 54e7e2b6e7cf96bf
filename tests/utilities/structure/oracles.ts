/**
 * The record walks of pick-fields, remove-fields, find-replace (value mode) and flatten as they were
 * before their fast paths (issue 39): a generic walk over path states that rebuilds or deep-copies every
 * record. Kept here only as the oracle the fast paths are compared with, byte for byte.
 */
import { type OutputBudget, unlimitedBudget } from "../../../src/utilities/budget";
import {
  enterScope,
  hasOwn,
  isContainer,
  isObject,
  type JsonObject,
  PathSet,
  type PathState,
  parsePaths,
  removeAll,
  type Scope,
  scopeOf,
  setOwn,
} from "../../../src/utilities/shared/paths";
import { cloneJson, mapRecords } from "../../../src/utilities/shared/records";
import { compileReplace, type FindReplaceConfig } from "../../../src/utilities/structure/find-replace";
import { UtilityError } from "../../../src/utilities/types";

const NOTHING = Symbol("nothing picked");

function pick(value: unknown, state: PathState): unknown {
  if (PathSet.selected(state)) return value;
  const viaWildcard = PathSet.hasWildcard(state);
  const member = (item: unknown, key: string | number): unknown => {
    const next = PathSet.step(state, key);
    const picked = next.length === 0 ? NOTHING : pick(item, next);
    if (picked !== NOTHING || !viaWildcard || !isContainer(item)) return picked;
    return Array.isArray(item) ? [] : {};
  };
  if (Array.isArray(value)) {
    const kept = value.map(member).filter((picked) => picked !== NOTHING);
    return kept.length > 0 ? kept : NOTHING;
  }
  if (isObject(value)) {
    const kept: JsonObject = {};
    let found = false;
    for (const key of Object.keys(value)) {
      const picked = member(value[key], key);
      if (picked === NOTHING) continue;
      setOwn(kept, key, picked);
      found = true;
    }
    return found ? kept : NOTHING;
  }
  return NOTHING;
}

export function oldPickFields(primary: unknown, paths: string[]): unknown {
  const start = new PathSet(parsePaths(paths, "paths")).start;
  return mapRecords(primary, (record) => {
    const picked = pick(record, start);
    return picked === NOTHING ? {} : picked;
  });
}

export function oldRemoveFields(primary: unknown, paths: string[], removeEmptyParents: boolean): unknown {
  const pathSet = new PathSet(parsePaths(paths, "paths"));
  return mapRecords(primary, (record) => {
    const copy = cloneJson(record);
    removeAll(copy, pathSet, { removeEmptyParents });
    return copy;
  });
}

export function oldFindReplaceValues(primary: unknown, config: FindReplaceConfig, budget = unlimitedBudget()): unknown {
  const replace = compileReplace(config, budget);
  const scope = scopeOf(config.paths === undefined ? undefined : parsePaths(config.paths, "paths"));
  return mapRecords(primary, (record) => {
    const walk = (value: unknown, scope: Scope): unknown => {
      if (typeof value === "string") return scope === true ? replace(value, record, primary) : value;
      if (Array.isArray(value)) {
        return value.map((element, index) => {
          const inner = enterScope(scope, index);
          return inner === null ? element : walk(element, inner);
        });
      }
      if (!isObject(value)) return value;
      const copy: JsonObject = {};
      for (const key of Object.keys(value)) {
        const inner = enterScope(scope, key);
        setOwn(copy, key, inner === null ? value[key] : walk(value[key], inner));
      }
      return copy;
    };
    return walk(record, scope);
  });
}

export function oldFlatten(
  record: JsonObject,
  config: { delimiter: string; flattenArrays: boolean; maxDepth?: number },
  budget: OutputBudget = unlimitedBudget(),
): JsonObject {
  const flat: JsonObject = {};
  const maxDepth = config.maxDepth ?? Infinity;
  const descend = (value: unknown): boolean =>
    Array.isArray(value) ? config.flattenArrays && value.length > 0 : isObject(value) && Object.keys(value).length > 0;
  const walk = (value: unknown, key: string, depth: number) => {
    if (depth >= maxDepth || !descend(value)) {
      if (hasOwn(flat, key)) throw new UtilityError(`two members flatten onto the same key '${key}'; choose another delimiter`);
      budget.charge(key.length);
      setOwn(flat, key, value);
      return;
    }
    const container = value as JsonObject;
    for (const member of Object.keys(container)) walk(container[member], key + config.delimiter + member, depth + 1);
  };
  for (const key of Object.keys(record)) walk(record[key], key, 1);
  return flat;
}
