/**
 * Large inputs for structure.pick-fields, remove-fields, copy-move, flatten-nest, find-replace and
 * schema.truncate: each utility's run() on ~SIZE_MB and ~2×SIZE_MB of JSON, both as an array of
 * records (record-wise) and as one document holding one big array (wildcards over 100k+ elements), to
 * show the time grows linearly (a ratio near 2, not 4). Best of RUNS runs.
 *
 * Run: bun bench/experiments/structure-large.ts   (SIZE_MB=10, RUNS=3 by default)
 */
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import truncate from "../../src/utilities/schema/truncate";
import copyMove from "../../src/utilities/structure/copy-move";
import findReplace from "../../src/utilities/structure/find-replace";
import flattenNest from "../../src/utilities/structure/flatten-nest";
import pickFields from "../../src/utilities/structure/pick-fields";
import removeFields from "../../src/utilities/structure/remove-fields";
import type { Utility } from "../../src/utilities/types";
import { bestOf } from "../lib/best-of";
import { fillRecords } from "../lib/data";

const sizeMb = Number(process.env.SIZE_MB ?? 10);
const runs = Number(process.env.RUNS ?? 3);

const records = (bytes: number): Record<string, unknown>[] =>
  fillRecords(bytes, (id) => ({
    id,
    name: `Name ${id} foo`,
    email: `user${id}@example.com`,
    address: { street: `${id} Main Street, a rather long description of the place`, city: id % 3 ? "Zürich" : "New York" },
    tags: ["alpha", "beta", "gamma", "delta"],
    meta: { created: "2024-01-01", score: id / 7 },
  }));
const oneDocument = (bytes: number) => ({ items: records(bytes) });
const flattened = (bytes: number) => flattenNest.run({ primary: records(bytes) }, configured(flattenNest, {}) as never);

const configured = (utility: Utility<TObject>, config: Record<string, unknown>) => Value.Default(utility.configSchema, config);
const cases: Array<[string, Utility<TObject>, Record<string, unknown>, (bytes: number) => unknown]> = [
  ["pick-fields records", pickFields, { paths: ["id", "address.city", "tags.*"] }, records],
  ["pick-fields one doc items.*", pickFields, { paths: ["items.*.name", "items[*].meta.score"] }, oneDocument],
  ["remove-fields records", removeFields, { paths: ["tags", "address.*"], removeEmptyParents: true }, records],
  ["remove-fields one doc items.*", removeFields, { paths: ["items.*.email", "items.*.tags.1"] }, oneDocument],
  [
    "copy-move records",
    copyMove,
    {
      operations: [
        { from: "address.city", to: "city", action: "move" },
        { from: "tags", to: "x.y" },
      ],
    },
    records,
  ],
  [
    "copy-move one doc items.* move",
    copyMove,
    { operations: [{ from: "items.*.email", to: "items.*.contact.email", action: "move" }] },
    oneDocument,
  ],
  ["copy-move one doc whole array move", copyMove, { operations: [{ from: "items.*", to: "byIndex.*", action: "move" }] }, oneDocument],
  ["flatten-nest flatten records", flattenNest, {}, records],
  ["flatten-nest flatten one doc", flattenNest, {}, oneDocument],
  ["flatten-nest nest records", flattenNest, { mode: "nest" }, flattened],
  ["find-replace literal", findReplace, { search: "foo", replacement: "bar" }, records],
  ["find-replace case-insensitive both", findReplace, { search: "NAME", replacement: "n", caseSensitive: false, mode: "both" }, records],
  ["find-replace regex groups", findReplace, { search: "user(\\d+)@", replacement: "u$1 at ", regex: true }, records],
  ["find-replace regex (a+)+$", findReplace, { search: "(a+)+$", replacement: "X", regex: true }, records],
  ["find-replace template", findReplace, { search: "foo", replacement: "{{ old.toUpperCase() }}" }, records],
  ["truncate records", truncate, { maxStringLength: 20, maxArrayLength: 2 }, records],
  ["truncate one doc paths", truncate, { maxStringLength: 10, paths: ["items.*.address"] }, oneDocument],
];

console.log(`best of ${runs} runs; input size is the JSON text of primary`);
for (const [label, utility, config, input] of cases) {
  const times: string[] = [];
  let previous = 0;
  for (const factor of [1, 2]) {
    const primary = input(sizeMb * factor * 1024 * 1024);
    const megabytes = JSON.stringify(primary).length / 1024 / 1024;
    const ms = bestOf(runs, () => utility.run({ primary }, configured(utility, config) as never));
    times.push(`${megabytes.toFixed(1)} MB ${ms.toFixed(0).padStart(5)} ms`);
    if (factor === 2) times.push(`ratio ${(ms / previous).toFixed(2)}`);
    previous = ms;
  }
  console.log(`  ${label.padEnd(36)} ${times.join("   ")}`);
}
