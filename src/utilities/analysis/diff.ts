/**
 * analysis.diff (alias compare.json-diff): compares `primary` (the NEW version) with `secondary` (the
 * OLD one). Both documents are compared once into a diff tree; each mode is a fold over that tree,
 * so every mode sees the same differences in the same document order.
 *
 * Output bound: every input value appears at most once in the output, but `report`, `patch` and
 * `full-annotated` wrap each difference (or each unchanged leaf) in an entry of some thirty bytes,
 * with its full path: `[0,0,…]` against `[]` gives forty bytes per two of input, and a deep document
 * repeats its long paths. Each entry is charged to the budget by its path and wrapper as it is made;
 * the other modes give parts of the inputs and need no budget.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import { deepEqual, formatPath, hasOwn, isObject, type JsonObject, type PathKey, setOwn } from "../shared/paths";
import { defineUtility, UtilityError, type UtilityInputs } from "../types";

export const id = "analysis.diff";

export const DIFF_MODES = ["report", "changed-only", "added-only", "removed-only", "full-annotated", "patch"] as const;

export const configSchema = t.Object(
  {
    mode: t.Union(
      DIFF_MODES.map((mode) => t.Literal(mode)),
      { default: "report", description: "what the output describes" },
    ),
    arrays: t.Union([t.Literal("index"), t.Literal("whole")], {
      default: "index",
      description: "compare arrays element by element, or as single values",
    }),
  },
  { additionalProperties: false },
);

export type DiffConfig = Static<typeof configSchema>;
export type DiffMode = DiffConfig["mode"];

/**
 * `same` subtrees are collapsed (no node per unchanged leaf); `object` and `array` nodes exist only
 * when both sides are containers of that kind and something inside differs.
 */
type DiffNode =
  | { kind: "same"; value: unknown }
  | { kind: "changed"; before: unknown; after: unknown }
  | { kind: "added"; value: unknown }
  | { kind: "removed"; value: unknown }
  | { kind: "object"; members: [string, DiffNode][] }
  | { kind: "array"; elements: DiffNode[] };

function compare(next: unknown, previous: unknown, arrays: DiffConfig["arrays"]): DiffNode {
  if (isObject(next) && isObject(previous)) return compareObjects(next, previous, arrays);
  if (arrays === "index" && Array.isArray(next) && Array.isArray(previous)) return compareArrays(next, previous, arrays);
  return deepEqual(next, previous) ? { kind: "same", value: next } : { kind: "changed", before: previous, after: next };
}

/** Members in the new document's order; a removed member sits where it stood in the old one. */
function compareObjects(next: JsonObject, previous: JsonObject, arrays: DiffConfig["arrays"]): DiffNode {
  const members: [string, DiffNode][] = [];
  const previousKeys = Object.keys(previous);
  const previousIndex = new Map(previousKeys.map((key, index) => [key, index]));
  let changed = false;
  let pending = 0; // old keys before this index have been placed
  const placeRemovedUpTo = (end: number) => {
    for (; pending < end; pending++) {
      const key = previousKeys[pending]!;
      if (hasOwn(next, key)) continue;
      members.push([key, { kind: "removed", value: previous[key] }]);
      changed = true;
    }
  };
  for (const key of Object.keys(next)) {
    const index = previousIndex.get(key);
    if (index === undefined) {
      members.push([key, { kind: "added", value: next[key] }]);
      changed = true;
      continue;
    }
    placeRemovedUpTo(index);
    const node = compare(next[key], previous[key], arrays);
    if (node.kind !== "same") changed = true;
    members.push([key, node]);
  }
  placeRemovedUpTo(previousKeys.length);
  if (!changed) return { kind: "same", value: next };
  return { kind: "object", members };
}

function compareArrays(next: unknown[], previous: unknown[], arrays: DiffConfig["arrays"]): DiffNode {
  const elements: DiffNode[] = [];
  let changed = next.length !== previous.length;
  for (let index = 0; index < Math.max(next.length, previous.length); index++) {
    if (index >= previous.length) elements.push({ kind: "added", value: next[index] });
    else if (index >= next.length) elements.push({ kind: "removed", value: previous[index] });
    else {
      const node = compare(next[index], previous[index], arrays);
      if (node.kind !== "same") changed = true;
      elements.push(node);
    }
  }
  return changed ? { kind: "array", elements } : { kind: "same", value: next };
}

const children = (node: DiffNode & { kind: "object" | "array" }): [PathKey, DiffNode][] =>
  node.kind === "object" ? node.members : node.elements.map((element, index) => [index, element]);

interface DiffReport {
  changed: { path: string; before: unknown; after: unknown }[];
  added: { path: string; value: unknown }[];
  removed: { path: string; value: unknown }[];
  summary: { changed: number; added: number; removed: number };
}

/** What an entry adds around its path and value(s): `{"path":"","before":,"after":}` and the like. */
const ENTRY_BYTES = 32;

function report(root: DiffNode, budget: OutputBudget): DiffReport {
  const result: DiffReport = { changed: [], added: [], removed: [], summary: { changed: 0, added: 0, removed: 0 } };
  const path = (keys: PathKey[]) => {
    const text = formatPath(keys);
    budget.charge(text.length + ENTRY_BYTES);
    return text;
  };
  const walk = (node: DiffNode, keys: PathKey[]) => {
    switch (node.kind) {
      case "same":
        return;
      case "changed":
        result.changed.push({ path: path(keys), before: node.before, after: node.after });
        return;
      case "added":
        result.added.push({ path: path(keys), value: node.value });
        return;
      case "removed":
        result.removed.push({ path: path(keys), value: node.value });
        return;
      default:
        for (const [key, child] of children(node)) {
          keys.push(key);
          walk(child, keys);
          keys.pop();
        }
    }
  };
  walk(root, []);
  result.summary = { changed: result.changed.length, added: result.added.length, removed: result.removed.length };
  return result;
}

/**
 * The members a selector keeps, nesting kept. Arrays keep the selected elements in their order
 * (positions are what `report` and `patch` give).
 */
function project(node: DiffNode, select: (node: DiffNode) => { value: unknown } | null): unknown {
  if (node.kind === "object") {
    const out: JsonObject = {};
    for (const [key, child] of node.members) {
      const value = project(child, select);
      if (value !== undefined) setOwn(out, key, value);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (node.kind === "array") {
    const out = node.elements.map((element) => project(element, select)).filter((value) => value !== undefined);
    return out.length > 0 ? out : undefined;
  }
  return select(node)?.value;
}

const selectors: Record<"changed-only" | "added-only" | "removed-only", (node: DiffNode) => { value: unknown } | null> = {
  "changed-only": (node) => (node.kind === "changed" ? { value: node.after } : node.kind === "added" ? { value: node.value } : null),
  "added-only": (node) => (node.kind === "added" ? { value: node.value } : null),
  "removed-only": (node) => (node.kind === "removed" ? { value: node.value } : null),
};

/** Nothing selected: an empty container of the root's kind (`null` for a scalar root). */
function emptyLike(value: unknown): unknown {
  if (Array.isArray(value)) return [];
  return isObject(value) ? {} : null;
}

function annotateUnchanged(value: unknown, arrays: DiffConfig["arrays"], budget: OutputBudget): unknown {
  if (arrays === "index" && Array.isArray(value) && value.length > 0)
    return value.map((element) => annotateUnchanged(element, arrays, budget));
  if (isObject(value) && Object.keys(value).length > 0) {
    const out: JsonObject = {};
    for (const key of Object.keys(value)) setOwn(out, key, annotateUnchanged(value[key], arrays, budget));
    return out;
  }
  budget.charge(ENTRY_BYTES);
  return { _diff: "unchanged", value };
}

function annotate(node: DiffNode, arrays: DiffConfig["arrays"], budget: OutputBudget): unknown {
  switch (node.kind) {
    case "same":
      return annotateUnchanged(node.value, arrays, budget);
    case "changed":
      budget.charge(ENTRY_BYTES);
      return { _diff: "changed", before: node.before, after: node.after };
    case "added":
      budget.charge(ENTRY_BYTES);
      return { _diff: "added", value: node.value };
    case "removed":
      budget.charge(ENTRY_BYTES);
      return { _diff: "removed", value: node.value };
    case "array":
      return node.elements.map((element) => annotate(element, arrays, budget));
    case "object": {
      const out: JsonObject = {};
      for (const [key, child] of node.members) setOwn(out, key, annotate(child, arrays, budget));
      return out;
    }
  }
}

export type PatchOperation = { op: "add" | "replace"; path: string; value: unknown } | { op: "remove"; path: string };

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export const pointerToken = (key: PathKey): string => String(key).replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Operations in order: inside an array the kept elements first, then appended elements in rising
 * order, then removed ones from the end, so every index is valid when its operation applies.
 */
function patch(root: DiffNode, budget: OutputBudget): PatchOperation[] {
  const operations: PatchOperation[] = [];
  const push = (operation: PatchOperation) => {
    budget.charge(operation.path.length + ENTRY_BYTES);
    operations.push(operation);
  };
  const walk = (node: DiffNode, pointer: string) => {
    switch (node.kind) {
      case "same":
        return;
      case "changed":
        push({ op: "replace", path: pointer, value: node.after });
        return;
      case "added":
        push({ op: "add", path: pointer, value: node.value });
        return;
      case "removed":
        push({ op: "remove", path: pointer });
        return;
      case "object":
        for (const [key, child] of node.members) walk(child, `${pointer}/${pointerToken(key)}`);
        return;
      case "array": {
        const removals: number[] = [];
        node.elements.forEach((element, index) => {
          if (element.kind === "removed") removals.push(index);
          else walk(element, `${pointer}/${index}`);
        });
        for (const index of removals.reverse()) push({ op: "remove", path: `${pointer}/${index}` });
      }
    }
  };
  walk(root, "");
  return operations;
}

export function diff(next: unknown, previous: unknown, config: DiffConfig, budget = unlimitedBudget()): unknown {
  const root = compare(next, previous, config.arrays);
  switch (config.mode) {
    case "report":
      return report(root, budget);
    case "patch":
      return patch(root, budget);
    case "full-annotated":
      return annotate(root, config.arrays, budget);
    default:
      return project(root, selectors[config.mode]) ?? emptyLike(next);
  }
}

export default defineUtility({
  id,
  aliases: ["compare.json-diff"],
  name: "Diff",
  category: "analysis",
  description:
    "Compares primary (the new version) with secondary (the old one): a report of changed, added and removed paths, the differing parts, an annotated union, or an RFC 6902 JSON Patch.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    if (inputs.secondary === undefined) {
      throw new UtilityError("analysis.diff needs inputs.secondary: the old version to compare primary (the new version) with");
    }
    return diff(inputs.primary, inputs.secondary, config, budget);
  },
});
