/**
 * The fast paths of pick-fields, remove-fields, find-replace (value mode) and flatten give the very
 * bytes the generic walks they replaced gave (oracles.ts), errors included, over random records: nested
 * objects and arrays, big integers, unicode, escapes, keys such as `__proto__`, `a.b` or "", and paths
 * that miss. Neither may change its input, which the fast paths share instead of copying.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { OutputBudget } from "../../../src/utilities/budget";
import { findReplace, configSchema as findReplaceSchema } from "../../../src/utilities/structure/find-replace";
import { flatten } from "../../../src/utilities/structure/flatten-nest";
import { pickFields, configSchema as pickSchema } from "../../../src/utilities/structure/pick-fields";
import { removeFields, configSchema as removeSchema } from "../../../src/utilities/structure/remove-fields";
import { configure } from "../shared/configure";
import { oldFindReplaceValues, oldFlatten, oldPickFields, oldRemoveFields } from "./oracles";

const KEYS = ["a", "b", "id", "name", "0", "1", "__proto__", "constructor", "a.b", "", "é", 'x"y', "alpha"];
const STRINGS = ["alpha", "xalphay", "ALPHA", "éalpha", 'line\nbreak \\ "q"', "", "😀alpha😀", "\u0000", "alphaalpha", "beta"];
const NUMBERS = ["0", "-0", "1.5", "12345678901234567890", "-9007199254740993", "1e300", "2.50", "1E-7"];

/** JSON text of a random value: its own numbers' text (big integers, exponents), its own keys, nesting to depth 4. */
const { json } = fc.letrec<{ json: string; object: string; array: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...STRINGS).map((text) => JSON.stringify(text)),
    fc.constantFrom(...NUMBERS),
    fc.constantFrom("true", "false", "null"),
    tie("object"),
    tie("array"),
  ),
  object: fc
    .array(fc.tuple(fc.constantFrom(...KEYS), tie("json")), { maxLength: 5 })
    .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`),
  array: fc.array(tie("json"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
}));
/** An array of records (objects), as the utilities take it, parsed as the engine parses it. */
const records = fc
  .array(
    fc
      .array(fc.tuple(fc.constantFrom(...KEYS), json), { maxLength: 6 })
      .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
    { minLength: 1, maxLength: 5 },
  )
  .map((items) => `[${items.join(",")}]`);

const SEGMENTS = ["a", "b", "id", "name", "0", "1", "__proto__", "a\\.b", "*", "[0]", "é", "missing"];
const path = fc
  .array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 })
  .map((segments) => segments.join(".").replace(/\.\[/g, "["));
const paths = fc.array(path, { minLength: 1, maxLength: 4 });

/** The output's JSON text, or the error's name and message. */
function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run());
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/** Both runs give the same bytes, and neither changed the input. */
function same(text: string, fast: (input: unknown) => unknown, old: (input: unknown) => unknown): void {
  const input = JSON.parse(text);
  const before = JSON.stringify(input);
  const expected = outcome(() => old(JSON.parse(text)));
  expect(outcome(() => fast(input))).toBe(expected);
  expect(JSON.stringify(input)).toBe(before);
}

const RUNS = { numRuns: 400 };

describe("fast paths against the generic walks they replaced", () => {
  test("pick-fields", () => {
    fc.assert(
      fc.property(records, paths, (text, picked) => {
        same(
          text,
          (input) => pickFields(input, configure(pickSchema, { paths: picked })),
          (input) => oldPickFields(input, picked),
        );
      }),
      RUNS,
    );
  });

  test("remove-fields, with and without removeEmptyParents", () => {
    fc.assert(
      fc.property(records, paths, fc.boolean(), (text, removed, removeEmptyParents) => {
        same(
          text,
          (input) => removeFields(input, configure(removeSchema, { paths: removed, removeEmptyParents })),
          (input) => oldRemoveFields(input, removed, removeEmptyParents),
        );
      }),
      RUNS,
    );
  });

  test("find-replace in values: literal, case-insensitive, whole value, regex, template, paths, budget", () => {
    const config = fc.record(
      {
        search: fc.constantFrom("alpha", "a", "é", '"', "LPH", "😀"),
        replacement: fc.constantFrom("omega", "", "$1", "{{ old }}!", "a much longer replacement text"),
        caseSensitive: fc.boolean(),
        wholeValue: fc.boolean(),
        paths: paths,
      },
      { requiredKeys: ["search", "replacement"] },
    );
    fc.assert(
      fc.property(records, config, fc.boolean(), fc.constantFrom(40, 400, Infinity), (text, given, regex, limit) => {
        const filled = configure(findReplaceSchema, { ...given, regex: regex && given.search === "alpha", mode: "value" });
        if (filled.regex) filled.search = "al(p)ha";
        same(
          text,
          (input) => findReplace(input, filled, new OutputBudget(limit)),
          (input) => oldFindReplaceValues(input, filled, new OutputBudget(limit)),
        );
      }),
      RUNS,
    );
  });

  test("flatten: delimiters, arrays kept or flattened, maxDepth, colliding keys, budget", () => {
    const config = fc.record(
      { delimiter: fc.constantFrom(".", "_", "->"), flattenArrays: fc.boolean(), maxDepth: fc.constantFrom(1, 2, 3, undefined) },
      { requiredKeys: ["delimiter", "flattenArrays"] },
    );
    fc.assert(
      fc.property(records, config, fc.constantFrom(20, Infinity), (text, given, limit) => {
        const { maxDepth, ...rest } = given;
        const filled = maxDepth === undefined ? rest : { ...rest, maxDepth };
        same(
          text,
          (input) => (input as Record<string, unknown>[]).map((record) => flatten(record, filled, new OutputBudget(limit))),
          (input) => (input as Record<string, unknown>[]).map((record) => oldFlatten(record, filled, new OutputBudget(limit))),
        );
      }),
      RUNS,
    );
  });
});
