import { expect, test } from "bun:test";
import fc from "fast-check";
import { diff, type PatchOperation } from "../../../src/utilities/analysis/diff";

/** A minimal RFC 6902 applier (add, remove, replace), written from the RFC, independent of diff.ts. */
function applyPatch(document: unknown, operations: PatchOperation[]): unknown {
  let root = structuredClone(document);
  for (const operation of operations) {
    if (operation.path === "") {
      if (operation.op === "remove") throw new Error("cannot remove the root");
      root = structuredClone(operation.value);
      continue;
    }
    const tokens = operation.path
      .slice(1)
      .split("/")
      .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = tokens.pop()!;
    let parent: any = root;
    for (const token of tokens) {
      if (!Object.hasOwn(parent, token)) throw new Error(`no member ${token} in ${operation.path}`);
      parent = parent[token];
    }
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last);
      const bound = operation.op === "add" ? parent.length : parent.length - 1;
      if (!/^(0|[1-9]\d*)$/.test(last) && last !== "-") throw new Error(`bad index ${last}`);
      if (index > bound) throw new Error(`index ${index} out of bounds in ${operation.path}`);
      if (operation.op === "add") parent.splice(index, 0, structuredClone(operation.value));
      else if (operation.op === "remove") parent.splice(index, 1);
      else parent[index] = structuredClone(operation.value);
    } else {
      const exists = Object.hasOwn(parent, last);
      if (operation.op !== "add" && !exists) throw new Error(`no member ${last} to ${operation.op}`);
      if (operation.op === "remove") delete parent[last];
      else
        Object.defineProperty(parent, last, {
          value: structuredClone(operation.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
  }
  return root;
}

// keys drawn to include pointer escapes and prototype names
const key = fc.oneof(fc.constantFrom("a", "b", "c", "a/b", "~0", "x~1", "__proto__", "constructor", "0"), fc.string({ maxLength: 4 }));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 5 })),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 5 }),
  ),
})).value;

// pairs that share structure, so that the diff is usually small and nested, not a root replacement
const related = json.chain((previous) =>
  fc.tuple(
    fc.constant(previous),
    fc.oneof(
      json,
      fc.constant(previous).map((value) => mutate(value)),
      fc.constant(structuredClone(previous)),
    ),
  ),
);
function mutate(value: unknown): unknown {
  if (Array.isArray(value)) return [...value.slice(1), value.length];
  if (value !== null && typeof value === "object") return { ...value, extra: Object.keys(value).length };
  return value;
}

test("applying the patch output to the old document gives the new one (both array modes)", () => {
  fc.assert(
    fc.property(related, fc.constantFrom("index" as const, "whole" as const), ([previous, next], arrays) => {
      const operations = diff(next, previous, { mode: "patch", arrays }) as PatchOperation[];
      expect(applyPatch(previous, operations)).toEqual(next);
    }),
    { numRuns: 500 },
  );
});

test("the report is empty exactly when the documents are deep-equal", () => {
  fc.assert(
    fc.property(related, ([previous, next]) => {
      const report = diff(next, previous, { mode: "report", arrays: "index" }) as any;
      const total = report.summary.changed + report.summary.added + report.summary.removed;
      expect(total === 0).toBe(Bun.deepEquals(previous, next));
    }),
    { numRuns: 300 },
  );
});
