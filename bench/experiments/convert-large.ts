/**
 * Large inputs for convert.csv-to-json, convert.json-to-csv, convert.add-localization and
 * schema.normalize: each utility's run() on ~SIZE_MB and ~2×SIZE_MB of JSON/CSV, to show the time
 * grows linearly (a ratio near 2, not 4). Best of RUNS runs.
 *
 * Run: bun bench/experiments/convert-large.ts   (SIZE_MB=10, RUNS=3 by default)
 */
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import addLocalization from "../../src/utilities/convert/add-localization";
import csvToJson from "../../src/utilities/convert/csv-to-json";
import jsonToCsv from "../../src/utilities/convert/json-to-csv";
import normalize from "../../src/utilities/schema/normalize";
import type { Utility } from "../../src/utilities/types";
import { bestOf } from "../lib/best-of";
import { fillRecords } from "../lib/data";

const sizeMb = Number(process.env.SIZE_MB ?? 10);
const runs = Number(process.env.RUNS ?? 3);

const records = (bytes: number): Record<string, unknown>[] =>
  fillRecords(bytes, (id) => ({
    "Record ID": id,
    "First Name": `Name ${id}`,
    email_address: `user${id}@example.com`,
    address: { "Street Line": `${id} Main St, "Apt" ${id % 50}`, city: id % 3 ? "Zürich" : "New\nYork" },
    tags: ["a", "b"],
    ...(id % 7 === 0 ? { extraNote: "=formula" } : {}),
  }));

const configured = (utility: Utility<TObject>, config: Record<string, unknown>) => Value.Default(utility.configSchema, config);
/** the CSV of records about twice its size in JSON, so that it too is ~`bytes` long */
const csvOf = (bytes: number) => jsonToCsv.run({ primary: records(bytes * 2) }, configured(jsonToCsv, {}) as never);
const cases: Array<[string, Utility<TObject>, Record<string, unknown>, (bytes: number) => unknown]> = [
  ["convert.csv-to-json", csvToJson, {}, csvOf],
  ["convert.csv-to-json nested", csvToJson, { nested: true }, csvOf],
  ["convert.json-to-csv", jsonToCsv, {}, records],
  ["convert.add-localization", addLocalization, { locales: ["en", "fr", "de"] }, records],
  [
    "convert.add-localization suffix+paths",
    addLocalization,
    { locales: ["en", "fr"], mode: "suffix", paths: ["First Name", "address.*"] },
    records,
  ],
  ["schema.normalize camel+sort", normalize, { keyCase: "camel", sortKeys: true }, records],
];

console.log(`best of ${runs} runs; input size is the JSON text of the records (the CSV text for csv-to-json)`);
for (const [label, utility, config, input] of cases) {
  const times: string[] = [];
  let previous = 0;
  for (const factor of [1, 2]) {
    const primary = input(sizeMb * factor * 1024 * 1024);
    const megabytes = (typeof primary === "string" ? primary.length : JSON.stringify(primary).length) / 1024 / 1024;
    const ms = bestOf(runs, () => utility.run({ primary }, configured(utility, config) as never));
    times.push(`${megabytes.toFixed(1)} MB ${ms.toFixed(0).padStart(5)} ms`);
    if (factor === 2) times.push(`ratio ${(ms / previous).toFixed(2)}`);
    previous = ms;
  }
  console.log(`  ${label.padEnd(40)} ${times.join("   ")}`);
}
