/**
 * json-to-csv's fast path (a flat record is its own cells, rows written as they are built) gives the very
 * bytes the implementation it replaced gave (oracles.ts), errors included: over random records, flat and
 * nested, with keys such as `__proto__`, `toString`, `a.b` or "", texts that need quotes or start a
 * formula, and every setting: delimiter, header, flatten, line ending, escapeFormulas, columns, and an
 * output budget small enough to be passed. Neither may change its input.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { OutputBudget } from "../../../src/utilities/budget";
import { configSchema, jsonToCsv } from "../../../src/utilities/convert/json-to-csv";
import { configure } from "../shared/configure";
import { oldJsonToCsv } from "./oracles";

const KEYS = ["a", "b", "id", "0", "__proto__", "toString", "constructor", "a.b", "", "é", 'x"y', "c,d"];
const LEAVES = [
  '"plain"',
  '"=SUM(A1)"',
  '"-1"',
  '"with, comma"',
  '"quote \\" inside"',
  '"line\\nbreak"',
  '"\\r"',
  '"\\ufeffbom"',
  '""',
  "0",
  "-2.5",
  "12345678901234567890",
  "true",
  "null",
  "[]",
  '[1,{"a":2}]',
  "{}",
];

const { json } = fc.letrec<{ json: string; object: string }>((tie) => ({
  json: fc.oneof({ depthSize: "small" }, fc.constantFrom(...LEAVES), tie("object")),
  object: fc
    .array(fc.tuple(fc.constantFrom(...KEYS), tie("json")), { maxLength: 4 })
    .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`),
}));
const flatRecord = fc
  .array(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...LEAVES)), { maxLength: 5 })
  .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`);
const records = fc
  .array(
    fc.oneof(
      flatRecord,
      flatRecord,
      json.filter((text) => text.startsWith("{")),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((items) => `[${items.join(",")}]`);

const settings = fc.record({
  delimiter: fc.constantFrom(",", ";", "\t", "|", "-", "]"),
  header: fc.boolean(),
  flatten: fc.boolean(),
  lineEnding: fc.constantFrom("\n" as const, "\r\n" as const),
  escapeFormulas: fc.boolean(),
  columns: fc.option(
    fc.array(fc.constantFrom("a", "b", "a.b", "id", "toString", "__proto__", "0", "missing"), { minLength: 1, maxLength: 4 }),
    {
      nil: undefined,
    },
  ),
});

function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run());
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

test("json-to-csv gives the bytes and errors of the implementation it replaced", () => {
  fc.assert(
    fc.property(records, settings, fc.constantFrom(undefined, 8, 40, 200), (text, chosen, limit) => {
      const config = configure(configSchema, Object.fromEntries(Object.entries(chosen).filter(([, value]) => value !== undefined)));
      const input = JSON.parse(text);
      const before = JSON.stringify(input);
      const budget = () => (limit === undefined ? undefined : new OutputBudget(limit));
      const expected = outcome(() => oldJsonToCsv(JSON.parse(text), config, budget()));
      expect(outcome(() => jsonToCsv(input, config, budget()))).toBe(expected);
      expect(JSON.stringify(input)).toBe(before);
    }),
    { numRuns: 600 },
  );
});
