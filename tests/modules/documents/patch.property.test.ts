/**
 * Properties of the lossless tree and of the patch functions on arbitrary JSON: reading and writing
 * gives back the very bytes, however far the tree is expanded; a patch's result reads as the same
 * operation applied to plain JavaScript values; a merge patch agrees with RFC 7396's own algorithm.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { applyWithin, JSON_PATCH, MERGE_PATCH, PatchBudget, PatchError, readPatch } from "../../../src/core/json/patch";
import { expand, type JsonNode, readText, writeText } from "../../../src/core/json/tree";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// "__proto__" as a key is plain data for JSON.parse but not for the reference code's object spreads
const json = fc.jsonValue({ maxDepth: 4 }).filter((value) => !JSON.stringify(value).includes('"__proto__"'));
const spacing = fc.constantFrom(undefined, 1, 2, "\t");
const textOf = (value: unknown, space: string | number | undefined) => JSON.stringify(value, null, space);

/** Every container expanded, in place. */
function expandAll(node: JsonNode): JsonNode {
  const expanded = expand(node);
  if (expanded.kind === "object") for (const member of expanded.members) member.value = expandAll(member.value);
  if (expanded.kind === "array") for (const element of expanded.elements) element.value = expandAll(element.value);
  return expanded;
}

/** Every path of a value, as token lists. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const children = Array.isArray(value)
    ? value.map((item, i) => [String(i), item] as const)
    : value !== null && typeof value === "object"
      ? Object.entries(value)
      : [];
  return [prefix, ...children.flatMap(([key, child]) => paths(child, [...prefix, key]))];
}

const pointer = (tokens: string[]) => tokens.map((token) => "/" + token.replaceAll("~", "~0").replaceAll("/", "~1")).join("");

function setAt(value: unknown, tokens: string[], replacement: unknown): unknown {
  if (tokens.length === 0) return replacement;
  const [head, ...rest] = tokens;
  if (Array.isArray(value)) return value.map((item, i) => (String(i) === head ? setAt(item, rest, replacement) : item));
  return { ...(value as object), [head]: setAt((value as Record<string, unknown>)[head], rest, replacement) };
}

function removeAt(value: unknown, tokens: string[]): unknown {
  const [head, ...rest] = tokens;
  if (rest.length === 0) {
    if (Array.isArray(value)) return value.filter((_, i) => String(i) !== head);
    const { [head]: _, ...others } = value as Record<string, unknown>;
    return others;
  }
  if (Array.isArray(value)) return value.map((item, i) => (String(i) === head ? removeAt(item, rest) : item));
  return { ...(value as object), [head]: removeAt((value as Record<string, unknown>)[head], rest) };
}

/** RFC 7396 §2, as the RFC writes it. */
function mergeReference(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === "object" && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergeReference(result[key], value);
  }
  return result;
}

/** What a value reads as once written as JSON (-0 is written 0). */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));

/** The patched document; the size the patch's budget tracked operation by operation must be the result's exact length. */
function apply(format: typeof JSON_PATCH | typeof MERGE_PATCH, patch: string, document: string): unknown {
  const bytes = encoder.encode(document);
  const budget = new PatchBudget(Number.MAX_SAFE_INTEGER, patch.length, bytes.byteLength);
  const result = applyWithin(readPatch(format, encoder.encode(patch)), bytes, budget);
  expect(budget.size).toBe(result.byteLength);
  return JSON.parse(decoder.decode(result));
}

describe("the lossless tree", () => {
  test("read and written back, expanded or not, a text is the same bytes", () => {
    fc.assert(
      fc.property(json, spacing, (value, space) => {
        const bytes = encoder.encode(` ${textOf(value, space)}\n`);
        expect(writeText(readText(bytes))).toEqual(bytes);
        const text = readText(bytes);
        text.root = expandAll(text.root);
        expect(decoder.decode(writeText(text))).toBe(decoder.decode(bytes));
      }),
      { numRuns: RUNS },
    );
  });
});

describe("patches agree with the same edit on plain values", () => {
  test("replace at any existing path", () => {
    fc.assert(
      fc.property(json, spacing, json, fc.nat(), (value, space, replacement, pick) => {
        const all = paths(value);
        const tokens = all[pick % all.length];
        const result = apply(
          JSON_PATCH,
          JSON.stringify([{ op: "replace", path: pointer(tokens), value: replacement }]),
          textOf(value, space),
        );
        expect(result).toEqual(asJson(setAt(value, tokens, replacement)));
      }),
      { numRuns: RUNS },
    );
  });

  test("remove, then test that the rest is intact", () => {
    fc.assert(
      fc.property(json, spacing, fc.nat(), (value, space, pick) => {
        const all = paths(value).filter((tokens) => tokens.length > 0);
        fc.pre(all.length > 0);
        const tokens = all[pick % all.length];
        const expected = removeAt(value, tokens);
        const patch = JSON.stringify([
          { op: "remove", path: pointer(tokens) },
          { op: "test", path: "", value: expected },
        ]);
        expect(apply(JSON_PATCH, patch, textOf(value, space))).toEqual(asJson(expected));
      }),
      { numRuns: RUNS },
    );
  });

  test("copy then move: the value shows up twice, then moves", () => {
    fc.assert(
      fc.property(
        fc
          .dictionary(fc.string({ maxLength: 4 }), json, { minKeys: 1, maxKeys: 5 })
          .filter((value) => !Object.hasOwn(value, "__proto__") && !Object.hasOwn(value, "copied") && !Object.hasOwn(value, "moved")),
        spacing,
        (value, space) => {
          const first = Object.keys(value)[0];
          const patch = JSON.stringify([
            { op: "copy", from: pointer([first]), path: "/copied" },
            { op: "move", from: "/copied", path: "/moved" },
          ]);
          expect(apply(JSON_PATCH, patch, textOf(value, space))).toEqual(asJson({ ...value, moved: value[first] }));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test("any sequence of operations keeps the tracked size equal to the result's length", () => {
    const op = fc.record({
      op: fc.constantFrom("add", "remove", "replace", "copy", "move"),
      path: fc.constantFrom("", "/a", "/a/0", "/a/-", "/b", "/b/c", "/0", "/a/1"),
      from: fc.constantFrom("", "/a", "/a/0", "/b", "/b/c"),
      value: json,
    });
    fc.assert(
      fc.property(json, spacing, fc.array(op, { minLength: 1, maxLength: 8 }), (value, space, operations) => {
        const document = textOf({ a: [value, 1], b: { c: value } }, space);
        for (const operation of operations) {
          try {
            apply(JSON_PATCH, JSON.stringify([operation]), document);
          } catch (error) {
            if (!(error instanceof PatchError)) throw error;
          }
        }
        try {
          apply(JSON_PATCH, JSON.stringify(operations), document);
        } catch (error) {
          if (!(error instanceof PatchError)) throw error;
        }
      }),
      { numRuns: RUNS },
    );
  });

  test("a merge patch gives what RFC 7396's algorithm gives", () => {
    fc.assert(
      fc.property(json, json, spacing, (target, patch, space) => {
        expect(apply(MERGE_PATCH, JSON.stringify(patch), textOf(target, space))).toEqual(asJson(mergeReference(target, patch)));
      }),
      { numRuns: RUNS },
    );
  });
});
